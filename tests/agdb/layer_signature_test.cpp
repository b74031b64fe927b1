// layer_signature: keys, the signed statement, signature and key files (the
// worked example of docs/format/signature.md byte for byte, round trips,
// table-driven suites of damaged files), verification refusing every kind of
// tampering with its own error, and the file-system entry points (refusal of
// damaged layers, key files never overwritten, mode 0600, atomic writes).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agdb/hand_built_layer.hpp"
#include "agentctx/agdb/layer_signature.hpp"
#include "agentctx/core/sha256.hpp"
#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace agdb_layer_signature_test {

using agentctx::errc;
using namespace agentctx::agdb;
using agentctx::io::fault_injecting_file_system;
using agentctx::io::memory_file_system;
using io_test::bytes_of;

namespace {

// RFC 8032 section 7.1, TEST 1.
constexpr std::string_view rfc_seed_hex = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
constexpr std::string_view rfc_public_hex = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

// The worked example of docs/format/signature.md: the RFC key signs the four
// bytes "AGDB". Computed independently of agentctx (Python's cryptography).
constexpr std::string_view example_key_id = "21fe31dfa154a261";
constexpr std::string_view example_statement_hex =
    "6167656e747364622d6c617965722d7369676e61747572652d763100"  // domain, 0x00
    "0400000000000000"                                          // size 4, u64 little-endian
    "110e9ef9a395072d22014bcdcbbe69368af34fbfa16e9d6036518534c6adc489";  // sha256("AGDB")
constexpr std::string_view example_signature_file =
    "agentsdb layer signature\n"
    "version: 1\n"
    "algorithm: ed25519\n"
    "key-id: 21fe31dfa154a261\n"
    "layer-size: 4\n"
    "layer-sha256: 110e9ef9a395072d22014bcdcbbe69368af34fbfa16e9d6036518534c6adc489\n"
    "signature: c66b00e494426dfa056e9c19e634e4653900d3786d331fa5f34f8b6cc95f689c"
    "8c62d7c97996a20ea846062aeef42f2ae65243102474e820856658301b1a1608\n";
constexpr std::string_view example_public_key_file =
    "agentsdb public key\n"
    "version: 1\n"
    "algorithm: ed25519\n"
    "key-id: 21fe31dfa154a261\n"
    "public-key: d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\n";
constexpr std::string_view example_private_key_file =
    "agentsdb private key\n"
    "version: 1\n"
    "algorithm: ed25519\n"
    "key-id: 21fe31dfa154a261\n"
    "public-key: d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\n"
    "private-key: 9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60\n";

std::array<std::uint8_t, 32> seed_of_hex(std::string_view hex) {
  std::array<std::uint8_t, 32> seed{};
  for (std::size_t i = 0; i < seed.size(); ++i) {
    seed[i] = static_cast<std::uint8_t>(std::stoi(std::string(hex.substr(2 * i, 2)), nullptr, 16));
  }
  return seed;
}

ed25519_private_key rfc_key() {
  auto key = ed25519_private_key::from_seed(seed_of_hex(rfc_seed_hex));
  REQUIRE_MESSAGE(key.has_value(), test_support::error_text(key));
  return std::move(*key);
}

ed25519_private_key new_key() {
  auto key = ed25519_private_key::generate();
  REQUIRE_MESSAGE(key.has_value(), test_support::error_text(key));
  return std::move(*key);
}

std::string hex_of(std::span<const std::byte> bytes) {
  return agentctx::to_hex(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

layer_signature sign_or_fail(std::span<const std::byte> layer, const ed25519_private_key& key) {
  auto signature = sign_layer_bytes(layer, key);
  REQUIRE_MESSAGE(signature.has_value(), test_support::error_text(signature));
  return *signature;
}

/// `text` with the first occurrence of `from` replaced by `to` (which must occur).
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' not in the text");
  return text.replace(at, from.size(), to);
}

/// The failure `outcome` holds has `code` and a message containing `fragment`.
template <class T>
void check_failure(const agentctx::result<T>& outcome, errc code, std::string_view fragment) {
  REQUIRE_FALSE(outcome.has_value());
  INFO(outcome.error().describe());
  CHECK(outcome.error().code == code);
  CHECK(outcome.error().message.find(fragment) != std::string::npos);
}

/// A valid AGDB layer (tests/agdb/hand_built_layer.hpp).
std::vector<std::byte> valid_layer() { return agdb_test::build(agdb_test::base_spec()).bytes; }

void put(memory_file_system& fs, const std::string& path, std::span<const std::byte> bytes) {
  io_test::write_text(fs, path, io_test::text_of(bytes));
}

}  // namespace

TEST_CASE("layer_signature: the worked example of docs/format/signature.md, byte for byte") {
  const ed25519_private_key key = rfc_key();
  CHECK(agentctx::to_hex(key.public_key().bytes) == rfc_public_hex);
  CHECK(key_id_of(key.public_key()) == example_key_id);

  const auto layer = bytes_of("AGDB");
  const auto statement = signed_statement(layer.size(), agentctx::sha256(layer));
  CHECK(statement.size() == 68);
  CHECK(hex_of(statement) == example_statement_hex);

  const layer_signature signature = sign_or_fail(layer, key);
  CHECK(format_signature_file(signature) == example_signature_file);
  CHECK(format_public_key_file(key.public_key()) == example_public_key_file);
  CHECK(format_private_key_file(key) == example_private_key_file);

  auto parsed = parse_signature_file(example_signature_file);
  REQUIRE_MESSAGE(parsed.has_value(), test_support::error_text(parsed));
  CHECK(*parsed == signature);
  auto verified = verify_layer_bytes(layer, *parsed, key.public_key());
  REQUIRE_MESSAGE(verified.has_value(), test_support::error_text(verified));
  CHECK(verified->key_id == example_key_id);
  CHECK(verified->layer_size == 4);
  CHECK(verified->layer_sha256 == agentctx::sha256("AGDB"));

  // The signature is Ed25519 of the statement alone: OpenSSL's plain check agrees.
  auto plain = verify_ed25519(key.public_key(), statement, signature.signature);
  REQUIRE(plain.has_value());
  CHECK(*plain);
}

TEST_CASE("layer_signature: generated keys are distinct and survive their files") {
  const ed25519_private_key first = new_key();
  const ed25519_private_key second = new_key();
  CHECK(first.public_key() != second.public_key());
  CHECK(key_id_of(first.public_key()) != key_id_of(second.public_key()));
  CHECK(key_id_of(first.public_key()).size() == 16);

  auto reread = parse_private_key_file(format_private_key_file(first), "k");
  REQUIRE_MESSAGE(reread.has_value(), test_support::error_text(reread));
  CHECK(reread->public_key() == first.public_key());
  CHECK(std::equal(reread->seed().begin(), reread->seed().end(), first.seed().begin()));
  auto reread_public = parse_public_key_file(format_public_key_file(first.public_key()), "k.pub");
  REQUIRE_MESSAGE(reread_public.has_value(), test_support::error_text(reread_public));
  CHECK(*reread_public == first.public_key());

  // A key re-read from its file signs exactly as the original (Ed25519 is deterministic).
  const auto layer = valid_layer();
  CHECK(sign_or_fail(layer, *reread) == sign_or_fail(layer, first));

  // Moving a key moves the secret and wipes the source.
  ed25519_private_key moved = std::move(*reread);
  CHECK(moved.public_key() == first.public_key());
  CHECK(std::equal(moved.seed().begin(), moved.seed().end(), first.seed().begin()));
  CHECK(std::all_of(reread->seed().begin(), reread->seed().end(), [](std::uint8_t b) { return b == 0; }));
}

TEST_CASE("layer_signature: a signed layer verifies; every kind of tampering is refused with its own error") {
  const ed25519_private_key key = new_key();
  const ed25519_private_key other_key = new_key();
  const std::vector<std::byte> layer = valid_layer();
  const layer_signature signature = sign_or_fail(layer, key);
  auto verified = verify_layer_bytes(layer, signature, key.public_key(), "AGENTS.db");
  REQUIRE_MESSAGE(verified.has_value(), test_support::error_text(verified));
  CHECK(verified->layer_size == layer.size());

  std::vector<std::byte> other_layer = layer;
  other_layer.push_back(std::byte{0x00});
  const layer_signature other_signature = sign_or_fail(other_layer, key);

  struct tamper_case {
    const char* name;
    std::function<void(std::vector<std::byte>&, layer_signature&)> tamper;
    bool verify_with_other_key;
    errc code;
    std::string fragment;
  };
  const auto flip = [](std::size_t at) {
    return [at](std::vector<std::byte>& l, layer_signature&) { l[at == SIZE_MAX ? l.size() - 1 : at] ^= std::byte{1}; };
  };
  const std::vector<tamper_case> cases = {
      {"first byte flipped", flip(0), false, errc::checksum_mismatch, "the layer's SHA-256 is "},
      {"middle byte flipped", flip(layer.size() / 2), false, errc::checksum_mismatch, "the layer's SHA-256 is "},
      {"last byte flipped", flip(SIZE_MAX), false, errc::checksum_mismatch, "the layer's SHA-256 is "},
      {"truncated by one byte", [](auto& l, auto&) { l.pop_back(); }, false, errc::checksum_mismatch,
       "the layer is " + std::to_string(layer.size() - 1) + " bytes, but the signed layer was " +
           std::to_string(layer.size()) + " bytes"},
      {"truncated to nothing", [](auto& l, auto&) { l.clear(); }, false, errc::checksum_mismatch,
       "the layer is 0 bytes"},
      {"a byte appended", [](auto& l, auto&) { l.push_back(std::byte{0}); }, false, errc::checksum_mismatch,
       "bytes, but the signed layer was"},
      {"checked with another key", [](auto&, auto&) {}, true, errc::incompatible, "but the public key is key"},
      {"key id edited to the other key's",
       [&](auto&, layer_signature& s) { s.key_id = key_id_of(other_key.public_key()); }, true, errc::invalid_value,
       "the Ed25519 signature does not verify with key"},
      {"layer-size edited", [](auto&, layer_signature& s) { s.layer_size += 1; }, false, errc::checksum_mismatch,
       "bytes, but the signed layer was"},
      {"layer-sha256 edited", [](auto&, layer_signature& s) { s.layer_sha256[31] ^= 0x80; }, false,
       errc::checksum_mismatch, "the layer's SHA-256 is "},
      {"size and sha256 of another layer, which is the one checked",
       [&](std::vector<std::byte>& l, layer_signature& s) {
         l = other_layer;
         s.layer_size = other_signature.layer_size;
         s.layer_sha256 = other_signature.layer_sha256;
       },
       false, errc::invalid_value, "does not verify"},
      {"first signature byte (R) flipped", [](auto&, layer_signature& s) { s.signature[0] ^= 1; }, false,
       errc::invalid_value, "does not verify"},
      {"last signature byte (S) flipped", [](auto&, layer_signature& s) { s.signature[63] ^= 0x01; }, false,
       errc::invalid_value, "does not verify"},
      {"signature all zero", [](auto&, layer_signature& s) { s.signature.fill(0); }, false, errc::invalid_value,
       "does not verify"},
      {"S replaced by S + L (the same signature, malleated)",
       [](auto&, layer_signature& s) {
         // L = 2^252 + 27742317777372353535851937790883648493, little-endian.
         static constexpr std::array<std::uint8_t, 32> order = {
             0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
         unsigned carry = 0;
         for (std::size_t i = 0; i < 32; ++i) {
           const unsigned sum = s.signature[32 + i] + order[i] + carry;
           s.signature[32 + i] = static_cast<std::uint8_t>(sum);
           carry = sum >> 8;
         }
       },
       false, errc::invalid_value, "does not verify"},
  };
  for (const tamper_case& c : cases) {
    CAPTURE(c.name);
    std::vector<std::byte> tampered_layer = layer;
    layer_signature tampered = signature;
    c.tamper(tampered_layer, tampered);
    const ed25519_public_key& checker = c.verify_with_other_key ? other_key.public_key() : key.public_key();
    const auto outcome = verify_layer_bytes(tampered_layer, tampered, checker, "AGENTS.db");
    check_failure(outcome, c.code, c.fragment);
    CHECK(outcome.error().path == "AGENTS.db");
    CHECK(outcome.error().message.rfind("signature check failed: ", 0) == 0);
  }
}

TEST_CASE("layer_signature: edits to a signature file are refused when parsed or when checked") {
  const ed25519_private_key key = rfc_key();
  const auto layer = bytes_of("AGDB");
  const std::string good(example_signature_file);
  struct edit_case {
    const char* name;
    std::string text;
    errc code;
    const char* fragment;
  };
  const std::vector<edit_case> cases = {
      {"version 2", replaced(good, "version: 1", "version: 2"), errc::unsupported_version,
       "format version 2 is not supported"},
      {"algorithm", replaced(good, "ed25519", "ed448"), errc::invalid_value, "the algorithm must be 'ed25519'"},
      {"key id", replaced(good, "21fe31dfa154a261", "21fe31dfa154a262"), errc::incompatible, "signed by key"},
      {"layer size", replaced(good, "layer-size: 4", "layer-size: 5"), errc::checksum_mismatch,
       "the layer is 4 bytes, but the signed layer was 5 bytes"},
      {"layer sha256", replaced(good, "layer-sha256: 110e", "layer-sha256: 110f"), errc::checksum_mismatch,
       "SHA-256"},
      {"signature", replaced(good, "signature: c66b", "signature: c66c"), errc::invalid_value, "does not verify"},
  };
  for (const edit_case& c : cases) {
    CAPTURE(c.name);
    const auto parsed = parse_signature_file(c.text, "AGENTS.db.sig");
    if (!parsed) {
      check_failure(parsed, c.code, c.fragment);
      continue;
    }
    check_failure(verify_layer_bytes(layer, *parsed, key.public_key()), c.code, c.fragment);
  }
}

namespace {

struct bad_file_case {
  const char* name;
  std::string text;
  errc code;
  std::uint64_t offset;
  const char* fragment;
};

template <class Parse>
void check_bad_files(const std::vector<bad_file_case>& cases, Parse&& parse) {
  for (const bad_file_case& c : cases) {
    CAPTURE(c.name);
    const auto outcome = parse(c.text, "the.file");
    check_failure(outcome, c.code, c.fragment);
    CHECK(outcome.error().path == "the.file");
    CHECK(outcome.error().offset == c.offset);
    CHECK(outcome.error().message.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("layer_signature: the signature file parser names the rule and the byte of every damage") {
  const std::string good(example_signature_file);
  const std::uint64_t key_id_value = good.find("21fe");
  const std::uint64_t size_line = good.find("layer-size");
  const std::uint64_t sha_value = good.find("110e");
  const std::uint64_t signature_line = good.find("signature: ");
  const std::uint64_t signature_value = signature_line + 11;
  const std::vector<bad_file_case> cases = {
      {"empty", "", errc::truncated, 0, "empty file"},
      {"first line cut", "agentsdb layer sig", errc::truncated, 18, "ends inside its first line"},
      {"first line without newline", "agentsdb layer signature", errc::truncated, 24, "ends inside its first line"},
      {"binary garbage", std::string("\x00\xff\x01garbage\n", 11), errc::bad_magic, 0,
       "not an agentsdb layer signature file"},
      {"a layer file", "AGDB\x01\x00\x00\x00", errc::bad_magic, 0, "the first line must be 'agentsdb layer signature'"},
      {"a public key file", std::string(example_public_key_file), errc::bad_magic, 0,
       "this is an agentsdb public key file, not an agentsdb layer signature file"},
      {"a private key file", std::string(example_private_key_file), errc::bad_magic, 0,
       "this is an agentsdb private key file"},
      {"first line in upper case", replaced(good, "agentsdb layer", "AGENTSDB layer"), errc::bad_magic, 0,
       "the first line must be"},
      {"CR LF line ends", replaced(replaced(good, "signature\n", "signature\r\n"), "1\n", "1\r\n"), errc::corrupt, 24,
       "line 1 ends with CR LF"},
      {"CR LF on a later line", replaced(good, "layer-size: 4\n", "layer-size: 4\r\n"), errc::corrupt, size_line + 13,
       "line 5 ends with CR LF"},
      {"only the first line", "agentsdb layer signature\n", errc::truncated, 25,
       "the file ends before the 'version' field"},
      {"version missing", replaced(good, "version: 1\n", ""), errc::corrupt, 25, "line 2 must be the 'version' field"},
      {"version 2", replaced(good, "version: 1", "version: 2"), errc::unsupported_version, 34,
       "format version 2 is not supported (this build reads version 1)"},
      {"version 0", replaced(good, "version: 1", "version: 0"), errc::unsupported_version, 34, "format version 0"},
      {"version 01", replaced(good, "version: 1", "version: 01"), errc::invalid_value, 34,
       "version must be a decimal number"},
      {"version -1", replaced(good, "version: 1", "version: -1"), errc::invalid_value, 34, "not '-1'"},
      {"version beyond u64", replaced(good, "version: 1", "version: 18446744073709551616"), errc::invalid_value, 34,
       "version must be a decimal number"},
      {"version with a space", replaced(good, "version: 1", "version:  1"), errc::invalid_value, 34, "not ' 1'"},
      {"version without the space", replaced(good, "version: 1", "version:1"), errc::corrupt, 25,
       "line 2 must be the 'version' field ('version: ...'), not 'version'"},
      {"algorithm", replaced(good, "algorithm: ed25519", "algorithm: rsa"), errc::invalid_value, 47,
       "the algorithm must be 'ed25519', not 'rsa'"},
      {"algorithm in capitals", replaced(good, "ed25519", "Ed25519"), errc::invalid_value, 47, "not 'Ed25519'"},
      {"fields swapped", replaced(good, "key-id: 21fe31dfa154a261\nlayer-size: 4\n", "layer-size: 4\nkey-id: 21fe31dfa154a261\n"),
       errc::corrupt, good.find("key-id"), "line 4 must be the 'key-id' field ('key-id: ...'), not 'layer-size'"},
      {"key id too short", replaced(good, "21fe31dfa154a261", "21fe31dfa154a26"), errc::invalid_value, key_id_value,
       "key-id must be 16 lowercase hex digits, not 15 characters"},
      {"key id in capitals", replaced(good, "21fe31dfa154a261", "21FE31DFA154A261"), errc::invalid_value,
       key_id_value + 2, "this character is not one"},
      {"layer-size empty", replaced(good, "layer-size: 4", "layer-size: "), errc::invalid_value, size_line + 12,
       "layer-size must be a decimal number"},
      {"layer-size with leading zero", replaced(good, "layer-size: 4", "layer-size: 04"), errc::invalid_value,
       size_line + 12, "without leading zeros, not '04'"},
      {"layer-size negative", replaced(good, "layer-size: 4", "layer-size: -4"), errc::invalid_value, size_line + 12,
       "not '-4'"},
      {"layer-size hex", replaced(good, "layer-size: 4", "layer-size: 0x4"), errc::invalid_value, size_line + 12,
       "not '0x4'"},
      {"layer-size with a trailing space", replaced(good, "layer-size: 4", "layer-size: 4 "), errc::invalid_value,
       size_line + 12, "not '4 '"},
      {"layer-sha256 too long", replaced(good, "c489\n", "c4890\n"), errc::invalid_value, sha_value,
       "layer-sha256 must be 64 lowercase hex digits, not 65 characters"},
      {"layer-sha256 with a non-hex character", replaced(good, "110e9ef9", "110e9eg9"), errc::invalid_value,
       sha_value + 6, "this character is not one"},
      {"signature missing", good.substr(0, signature_line), errc::truncated, signature_line,
       "the file ends before the 'signature' field"},
      {"signature cut", good.substr(0, good.size() - 10), errc::truncated, signature_line, "line 7 has no final newline"},
      {"no final newline", good.substr(0, good.size() - 1), errc::truncated, signature_line,
       "line 7 has no final newline"},
      {"signature too short", replaced(good, "1608\n", "16\n"), errc::invalid_value, signature_value,
       "signature must be 128 lowercase hex digits, not 126 characters"},
      {"signature field renamed", replaced(good, "signature: ", "sig: "), errc::corrupt, signature_line,
       "line 7 must be the 'signature' field ('signature: ...'), not 'sig'"},
      {"an extra line", good + "comment: hello\n", errc::corrupt, good.size(),
       "unexpected bytes after the last field (line 7)"},
      {"an extra newline", good + "\n", errc::corrupt, good.size(), "unexpected bytes after the last field"},
      {"a NUL byte after the file", good + std::string(1, '\0'), errc::corrupt, good.size(), "unexpected bytes"},
      {"a NUL byte inside a value", replaced(good, "layer-size: 4", std::string("layer-size: 4\0", 14)),
       errc::invalid_value, size_line + 12, "not '4\\x00'"},
  };
  check_bad_files(cases, [](std::string_view text, std::string_view name) { return parse_signature_file(text, name); });
}

TEST_CASE("layer_signature: the key file parsers name the rule and the byte of every damage") {
  const std::string pub(example_public_key_file);
  const std::string priv(example_private_key_file);
  const std::uint64_t pub_key_id = pub.find("21fe");
  const std::uint64_t pub_value = pub.find("d75a");
  const std::uint64_t priv_key_id = priv.find("21fe");
  const std::uint64_t priv_public_value = priv.find("d75a");
  const std::uint64_t seed_line = priv.find("private-key: ");
  const std::uint64_t seed_value = seed_line + 13;
  // Another valid key's public key, to pair with the example's private key.
  const std::string other_public = agentctx::to_hex(new_key().public_key().bytes);

  SUBCASE("public key files") {
    const std::vector<bad_file_case> cases = {
        {"empty", "", errc::truncated, 0, "empty file"},
        {"garbage", "\x7f" "ELF\x02\x01\x01", errc::bad_magic, 0, "not an agentsdb public key file"},
        {"a private key file", priv, errc::bad_magic, 0,
         "this is an agentsdb private key file, not an agentsdb public key file"},
        {"a signature file", std::string(example_signature_file), errc::bad_magic, 0,
         "this is an agentsdb layer signature file"},
        {"version 2", replaced(pub, "version: 1", "version: 2"), errc::unsupported_version, 29, "format version 2"},
        {"algorithm", replaced(pub, "ed25519", "x25519"), errc::invalid_value, 42, "not 'x25519'"},
        {"key id missing", replaced(pub, "key-id: 21fe31dfa154a261\n", ""), errc::corrupt, pub_key_id - 8,
         "line 4 must be the 'key-id' field"},
        {"key id not hex", replaced(pub, "21fe31dfa154a261", "21fe31dfa154a26z"), errc::invalid_value,
         pub_key_id + 15, "key-id must be 16 lowercase hex digits"},
        {"key id of another key", replaced(pub, "21fe31dfa154a261", "0000000000000000"), errc::checksum_mismatch,
         pub_key_id, "key-id 0000000000000000 is not the id of the public key (21fe31dfa154a261)"},
        {"public key edited", replaced(pub, "d75a98", "d75a99"), errc::checksum_mismatch, pub_key_id,
         "is not the id of the public key"},
        {"public key too short", replaced(pub, "511a\n", "51\n"), errc::invalid_value, pub_value,
         "public-key must be 64 lowercase hex digits, not 62 characters"},
        {"public key missing", pub.substr(0, pub_value - 12), errc::truncated, pub_value - 12,
         "the file ends before the 'public-key' field"},
        {"no final newline", pub.substr(0, pub.size() - 1), errc::truncated, pub_value - 12,
         "line 5 has no final newline"},
        {"trailing bytes", pub + "private-key: 00\n", errc::corrupt, pub.size(), "unexpected bytes after the last field"},
    };
    check_bad_files(cases,
                    [](std::string_view text, std::string_view name) { return parse_public_key_file(text, name); });
  }
  SUBCASE("private key files") {
    const std::vector<bad_file_case> cases = {
        {"empty", "", errc::truncated, 0, "empty file"},
        {"a public key file", pub, errc::bad_magic, 0,
         "this is an agentsdb public key file, not an agentsdb private key file"},
        {"an OpenSSH key", "-----BEGIN OPENSSH PRIVATE KEY-----\n", errc::bad_magic, 0,
         "not an agentsdb private key file"},
        {"version 3", replaced(priv, "version: 1", "version: 3"), errc::unsupported_version, 30, "format version 3"},
        {"private key missing", priv.substr(0, seed_line), errc::truncated, seed_line,
         "the file ends before the 'private-key' field"},
        {"private key too short", replaced(priv, "7f60\n", "7f\n"), errc::invalid_value, seed_value,
         "private-key must be 64 lowercase hex digits, not 62 characters"},
        {"private key not hex", replaced(priv, "9d61b1", "9d61g1"), errc::invalid_value, seed_value + 4,
         "this character is not one"},
        {"private key field renamed", replaced(priv, "private-key: ", "secret: "), errc::corrupt, seed_line,
         "line 6 must be the 'private-key' field ('private-key: ...')"},
        {"private key edited", replaced(priv, "9d61b1", "9d61b2"), errc::checksum_mismatch, priv_public_value,
         "public-key is not the public key of private-key"},
        {"public key of another key", replaced(priv, std::string(rfc_public_hex), other_public),
         errc::checksum_mismatch, priv_public_value, "public-key is not the public key of private-key"},
        {"key id of another key", replaced(priv, "21fe31dfa154a261", "21fe31dfa154a260"), errc::checksum_mismatch,
         priv_key_id, "is not the id of the public key"},
        {"CR LF", replaced(priv, "7f60\n", "7f60\r\n"), errc::corrupt, seed_value + 64, "line 6 ends with CR LF"},
        {"trailing bytes", priv + "x", errc::corrupt, priv.size(), "unexpected bytes after the last field (line 6)"},
    };
    check_bad_files(cases,
                    [](std::string_view text, std::string_view name) { return parse_private_key_file(text, name); });
  }
  SUBCASE("errors about a private key file never quote the secret") {
    const std::vector<std::string> damaged = {
        replaced(priv, "7f60\n", "7f6\n"),
        replaced(priv, "9d61b1", "9d61G1"),
        replaced(priv, "private-key: ", "private-key:"),
        replaced(priv, "private-key: ", ""),
        replaced(priv, "private-key: 9d61", "9d61b19deffd5a60: 9d61"),
    };
    for (const std::string& text : damaged) {
      const auto outcome = parse_private_key_file(text, "k");
      REQUIRE_FALSE(outcome.has_value());
      INFO(outcome.error().describe());
      CHECK(outcome.error().message.find("9d61b19d") == std::string::npos);
      CHECK(outcome.error().message.find("deffd5a6") == std::string::npos);
    }
  }
}

TEST_CASE("layer_signature: formatting and parsing round trip byte for byte") {
  const ed25519_private_key key = new_key();
  for (const std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    CAPTURE(size);
    layer_signature s;
    s.key_id = key_id_of(key.public_key());
    s.layer_size = size;
    s.layer_sha256 = agentctx::sha256(std::to_string(size));
    s.signature.fill(static_cast<std::uint8_t>(size & 0xFF));
    const std::string text = format_signature_file(s);
    auto parsed = parse_signature_file(text);
    REQUIRE_MESSAGE(parsed.has_value(), test_support::error_text(parsed));
    CHECK(*parsed == s);
    CHECK(format_signature_file(*parsed) == text);
  }
}

TEST_CASE("layer_signature: sign_layer_file signs a valid layer and refuses a damaged one") {
  memory_file_system fs;
  const ed25519_private_key key = new_key();
  const std::vector<std::byte> layer = valid_layer();
  put(fs, "/AGENTS.db", layer);

  auto signature = sign_layer_file(fs, "/AGENTS.db", key);
  REQUIRE_MESSAGE(signature.has_value(), test_support::error_text(signature));
  CHECK(*signature == sign_or_fail(layer, key));
  REQUIRE(write_signature_file(fs, "/AGENTS.db.sig", *signature).has_value());
  CHECK(io_test::whole(fs, "/AGENTS.db.sig") == format_signature_file(*signature));
  auto reread = read_signature_file(fs, "/AGENTS.db.sig");
  REQUIRE_MESSAGE(reread.has_value(), test_support::error_text(reread));
  CHECK(*reread == *signature);

  SUBCASE("a layer that violates a rule of the format is refused with the violation") {
    agdb_test::layer_spec spec = agdb_test::base_spec();
    spec.chunks[0].confidence = 2.0f;
    const agdb_test::built_layer damaged = agdb_test::build(spec);
    put(fs, "/damaged.db", damaged.bytes);
    const auto refused = sign_layer_file(fs, "/damaged.db", key);
    check_failure(refused, errc::invalid_value, "(the layer does not validate; refusing to sign it)");
    CHECK(refused.error().path == "/damaged.db");
    CHECK(refused.error().offset == damaged.record(0) + 16);
  }
  SUBCASE("a file that is not a layer is refused") {
    io_test::write_text(fs, "/notes.txt", "not a layer at all, but long enough to hold a header....");
    const auto refused = sign_layer_file(fs, "/notes.txt", key);
    check_failure(refused, errc::bad_magic, "refusing to sign it");
    CHECK(refused.error().path == "/notes.txt");
  }
  SUBCASE("a truncated layer is refused") {
    put(fs, "/cut.db", std::span(layer).first(layer.size() - 1));
    const auto refused = sign_layer_file(fs, "/cut.db", key);
    REQUIRE_FALSE(refused.has_value());
    CHECK(agentctx::is_data_error(refused.error().code));
    CHECK(refused.error().message.find("refusing to sign it") != std::string::npos);
  }
  SUBCASE("a missing layer is a file-system error, not a refusal") {
    const auto missing = sign_layer_file(fs, "/missing.db", key);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().code == errc::not_found);
    CHECK(missing.error().path == "/missing.db");
    CHECK(missing.error().message.find("refusing") == std::string::npos);
  }
}

TEST_CASE("layer_signature: verify_layer_file reads the three files and names the one at fault") {
  memory_file_system fs;
  const ed25519_private_key key = new_key();
  const std::vector<std::byte> layer = valid_layer();
  put(fs, "/AGENTS.db", layer);
  auto signature = sign_layer_file(fs, "/AGENTS.db", key);
  REQUIRE(signature.has_value());
  REQUIRE(write_signature_file(fs, "/AGENTS.db.sig", *signature).has_value());
  REQUIRE(write_key_pair(fs, "/k", "/k.pub", key, key_overwrite::refuse).has_value());

  auto verified = verify_layer_file(fs, "/AGENTS.db", "/AGENTS.db.sig", "/k.pub");
  REQUIRE_MESSAGE(verified.has_value(), test_support::error_text(verified));
  CHECK(verified->key_id == key_id_of(key.public_key()));
  CHECK(verified->layer_sha256 == agentctx::sha256(layer));

  const auto fails = [&](const std::string& layer_path, const std::string& signature_path,
                         const std::string& key_path) {
    auto outcome = verify_layer_file(fs, layer_path, signature_path, key_path);
    REQUIRE_FALSE(outcome.has_value());
    return outcome.error();
  };
  CHECK(fails("/missing.db", "/AGENTS.db.sig", "/k.pub").path == "/missing.db");
  CHECK(fails("/missing.db", "/AGENTS.db.sig", "/k.pub").code == errc::not_found);
  CHECK(fails("/AGENTS.db", "/missing.sig", "/k.pub").path == "/missing.sig");
  CHECK(fails("/AGENTS.db", "/AGENTS.db.sig", "/missing.pub").path == "/missing.pub");
  // The private key file is not a public key file.
  const agentctx::error swapped = fails("/AGENTS.db", "/AGENTS.db.sig", "/k");
  CHECK(swapped.code == errc::bad_magic);
  CHECK(swapped.path == "/k");
  // The signature file given as the layer: its bytes are not what was signed.
  const agentctx::error wrong_layer = fails("/AGENTS.db.sig", "/AGENTS.db.sig", "/k.pub");
  CHECK(wrong_layer.code == errc::checksum_mismatch);
  CHECK(wrong_layer.path == "/AGENTS.db.sig");
  // A damaged signature file is named with the byte at fault.
  io_test::write_text(fs, "/bad.sig", replaced(format_signature_file(*signature), "version: 1", "version: 9"));
  const agentctx::error damaged = fails("/AGENTS.db", "/bad.sig", "/k.pub");
  CHECK(damaged.code == errc::unsupported_version);
  CHECK(damaged.path == "/bad.sig");
  CHECK(damaged.offset == 34);
}

TEST_CASE("layer_signature: write_key_pair never overwrites unless asked, and reads back what it wrote") {
  memory_file_system fs;
  const ed25519_private_key key = new_key();
  const ed25519_private_key replacement = new_key();
  REQUIRE(write_key_pair(fs, "/k", "/k.pub", key, key_overwrite::refuse).has_value());
  CHECK(io_test::whole(fs, "/k") == format_private_key_file(key));
  CHECK(io_test::whole(fs, "/k.pub") == format_public_key_file(key.public_key()));
  auto read_back = read_private_key_file(fs, "/k");
  REQUIRE_MESSAGE(read_back.has_value(), test_support::error_text(read_back));
  CHECK(read_back->public_key() == key.public_key());
  auto read_public = read_public_key_file(fs, "/k.pub");
  REQUIRE_MESSAGE(read_public.has_value(), test_support::error_text(read_public));
  CHECK(*read_public == key.public_key());

  SUBCASE("an existing private key file is kept, and no public key file is written") {
    const auto refused = write_key_pair(fs, "/k", "/other.pub", replacement, key_overwrite::refuse);
    check_failure(refused, errc::already_exists, "a key file already exists here");
    CHECK(refused.error().path == "/k");
    CHECK(io_test::whole(fs, "/k") == format_private_key_file(key));
    CHECK_FALSE(fs.exists("/other.pub").value());
  }
  SUBCASE("an existing public key file is kept, and no private key file is written") {
    const auto refused = write_key_pair(fs, "/other", "/k.pub", replacement, key_overwrite::refuse);
    check_failure(refused, errc::already_exists, "a key file already exists here");
    CHECK(refused.error().path == "/k.pub");
    CHECK(io_test::whole(fs, "/k.pub") == format_public_key_file(key.public_key()));
    CHECK_FALSE(fs.exists("/other").value());
  }
  SUBCASE("replace overwrites both") {
    REQUIRE(write_key_pair(fs, "/k", "/k.pub", replacement, key_overwrite::replace).has_value());
    CHECK(io_test::whole(fs, "/k") == format_private_key_file(replacement));
    CHECK(io_test::whole(fs, "/k.pub") == format_public_key_file(replacement.public_key()));
  }
  SUBCASE("one path for both files is refused") {
    check_failure(write_key_pair(fs, "/same", "/same", key, key_overwrite::replace), errc::invalid_argument,
                  "must be different files");
    CHECK_FALSE(fs.exists("/same").value());
  }
}

TEST_CASE("layer_signature: a failed write leaves no partial key or signature file") {
  const ed25519_private_key key = new_key();
  const layer_signature signature = sign_or_fail(valid_layer(), key);
  // Fail each mutating operation in turn until a run completes.
  for (std::uint64_t n = 1;; ++n) {
    CAPTURE(n);
    memory_file_system memory;
    fault_injecting_file_system faulty(memory);
    faulty.fail_operation(n);
    const auto keys = write_key_pair(faulty, "/k", "/k.pub", key, key_overwrite::refuse);
    const auto signed_file = keys ? write_signature_file(faulty, "/s.sig", signature) : keys;
    // Whatever exists is complete (the rename is the last step; a failed sync
    // of the directory after it still leaves the whole file).
    if (memory.exists("/k").value()) CHECK(io_test::whole(memory, "/k") == format_private_key_file(key));
    if (memory.exists("/k.pub").value()) {
      CHECK(io_test::whole(memory, "/k.pub") == format_public_key_file(key.public_key()));
    }
    if (memory.exists("/s.sig").value()) CHECK(io_test::whole(memory, "/s.sig") == format_signature_file(signature));
    // No temporary file is left behind.
    const std::vector<std::string> names = memory.list_dir("/").value();
    for (const std::string& name : names) CHECK(name.find(".tmp.") == std::string::npos);
    if (faulty.faults_injected() == 0) {
      CHECK(signed_file.has_value());
      CHECK(n > 3);
      break;
    }
    CHECK_FALSE(signed_file.has_value());
  }
}

TEST_CASE("layer_signature: on the real disk the private key file is created with mode 0600") {
  io_test::temporary_directory dir;
  agentctx::io::posix_file_system posix;
  const ed25519_private_key key = new_key();
  const std::string private_path = dir.path() + "/agentsdb.key";
  const std::string public_path = dir.path() + "/agentsdb.key.pub";
  const auto mode_of = [](const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  // With the most permissive umask, which must also be the umask afterwards.
  const mode_t previous = ::umask(0);
  const auto written = write_key_pair(posix, private_path, public_path, key, key_overwrite::refuse);
  const mode_t during = ::umask(previous);
  REQUIRE_MESSAGE(written.has_value(), test_support::error_text(written));
  CHECK(during == 0);
  CHECK(mode_of(private_path) == 0600);
  CHECK(mode_of(public_path) == 0666);

  // Replacing keeps it private, whatever the old file's mode was.
  REQUIRE(::chmod(private_path.c_str(), 0644) == 0);
  REQUIRE(write_key_pair(posix, private_path, public_path, key, key_overwrite::replace).has_value());
  CHECK(mode_of(private_path) == 0600);
  auto read_back = read_private_key_file(posix, private_path);
  REQUIRE_MESSAGE(read_back.has_value(), test_support::error_text(read_back));
  CHECK(read_back->public_key() == key.public_key());
}

}  // namespace agdb_layer_signature_test
