// fuzz/signature_file_fuzz.cpp: libFuzzer target for the parser of detached
// layer signature files (agdb::parse_signature_file, behind `agentsdb verify`;
// docs/format/signature.md).
//
// The input is a whole signature file. The parser may not crash, leak or trip
// a sanitizer, and:
//   - a refusal has a code of the documented set, a one-line message, and an
//     offset within the input;
//   - an accepted file is canonical: formatting what was parsed gives back
//     the input byte for byte (so there is one spelling of each signature);
//   - an accepted file is then checked against a fixed layer and public key:
//     only the one genuine signature of that layer by that key verifies, and
//     every other accepted file fails with one of the verification errors.
//
// Seeds: fuzz/seeds/signature_file_fuzz/ (genuine.sig is that genuine
// signature). Build and run (clang only):
//   cmake --build build-fuzz --target signature_file_fuzz
//   build-fuzz/fuzz/signature_file_fuzz -dict=fuzz/signature_file_fuzz.dict corpus/ fuzz/seeds/signature_file_fuzz/
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "agentctx/agdb/layer_signature.hpp"

namespace {

namespace agdb = agentctx::agdb;
using agentctx::errc;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

// The layer and key of the genuine seed: the worked example of
// docs/format/signature.md (RFC 8032 test 1 key, the layer "AGDB").
constexpr std::string_view layer = "AGDB";
constexpr std::array<std::uint8_t, 32> seed = {0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a,
                                               0xf4, 0x92, 0xec, 0x2c, 0xc4, 0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32,
                                               0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60};

bool is_parse_error(errc code) {
  return code == errc::truncated || code == errc::bad_magic || code == errc::corrupt ||
         code == errc::unsupported_version || code == errc::invalid_value;
}

bool is_verification_error(errc code) {
  return code == errc::incompatible || code == errc::checksum_mismatch || code == errc::invalid_value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto key = agdb::ed25519_private_key::from_seed(seed);
  require(key.has_value());
  static const std::string genuine = [] {
    auto signature = agdb::sign_layer_bytes(std::as_bytes(std::span(layer.data(), layer.size())), *key);
    require(signature.has_value());
    return agdb::format_signature_file(*signature);
  }();

  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = agdb::parse_signature_file(text, "fuzz.sig");
  if (!parsed) {
    const agentctx::error& e = parsed.error();
    require(is_parse_error(e.code));
    require(!e.message.empty() && e.message.find('\n') == std::string::npos);
    require(e.path == "fuzz.sig");
    require(e.has_offset() && e.offset <= size);
    return 0;
  }
  require(agdb::format_signature_file(*parsed) == text);

  const auto verified =
      agdb::verify_layer_bytes(std::as_bytes(std::span(layer.data(), layer.size())), *parsed, key->public_key());
  if (verified) {
    require(text == genuine);
  } else {
    require(text != genuine);
    require(is_verification_error(verified.error().code));
  }
  return 0;
}
