// agentctx/agdb/detail/layer_signature-inl.hpp: definitions for
// layer_signature.hpp (included at its end; do not include directly).
#pragma once

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_signature.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/io/atomic_file.hpp"

namespace agentctx::agdb {

namespace detail {

struct evp_pkey_deleter {
  void operator()(EVP_PKEY* key) const noexcept { EVP_PKEY_free(key); }
};
using evp_pkey_pointer = std::unique_ptr<EVP_PKEY, evp_pkey_deleter>;
using evp_md_context_pointer = std::unique_ptr<EVP_MD_CTX, agentctx::detail::evp_md_context_deleter>;

/// An error for a failed OpenSSL call, with OpenSSL's reason when it queued
/// one. Clears the thread's OpenSSL error queue so later calls start clean.
inline error openssl_error(errc code, std::string what) {
  const unsigned long queued = ERR_get_error();
  if (queued != 0) {
    char reason[256] = {};
    ERR_error_string_n(queued, reason, sizeof reason);
    what += " (";
    what += reason;
    what += ')';
  }
  ERR_clear_error();
  return make_error(code, std::move(what));
}

inline const unsigned char* unsigned_bytes(std::span<const std::byte> bytes) noexcept {
  return reinterpret_cast<const unsigned char*>(bytes.data());
}

/// Holds the process umask at 077 while it lives (see write_key_pair). The
/// mutex keeps two guards of this library from interleaving their restores.
class owner_only_umask {
 public:
  owner_only_umask() : lock_(mutex()), previous_(::umask(077)) {}
  owner_only_umask(const owner_only_umask&) = delete;
  owner_only_umask& operator=(const owner_only_umask&) = delete;
  ~owner_only_umask() { ::umask(previous_); }

 private:
  static std::mutex& mutex() {
    static std::mutex instance;
    return instance;
  }
  std::lock_guard<std::mutex> lock_;
  mode_t previous_;
};

/// Wipes a string holding a secret when it goes out of scope.
class wiped_string {
 public:
  explicit wiped_string(std::string text) noexcept : text_(std::move(text)) {}
  wiped_string(const wiped_string&) = delete;
  wiped_string& operator=(const wiped_string&) = delete;
  ~wiped_string() { OPENSSL_cleanse(text_.data(), text_.size()); }
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
};

/// `text` quoted for an error message: at most 40 bytes, bytes outside
/// printable ASCII as \xNN, so a binary file cannot garble a terminal.
inline std::string printable_excerpt(std::string_view text) {
  static constexpr std::size_t limit = 40;
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 0x0F];
    }
  }
  out += text.size() > limit ? "'..." : "'";
  return out;
}

/// A field's value and the file offset where it starts.
struct text_field {
  std::string_view value;
  std::uint64_t offset = 0;
};

/// Reads the common shape of the three files: a first line naming the kind
/// of file, then "name: value" lines in a fixed order, each ended by LF, and
/// nothing after the last. Errors carry `name` as the path and the offset of
/// the line or value at fault. With `holds_secret`, errors never quote what a
/// line holds.
class field_reader {
 public:
  field_reader(std::string_view text, std::string_view first_line, std::string_view name, bool holds_secret = false)
      : text_(text), first_line_(first_line), name_(name), holds_secret_(holds_secret) {}

  result<void> read_first_line() {
    if (text_.size() > first_line_.size() && text_.starts_with(first_line_) && text_[first_line_.size()] == '\n') {
      at_ = first_line_.size() + 1;
      line_ = 2;
      return {};
    }
    const std::string expected = std::string(first_line_) + "\n";
    if (std::string_view(expected).starts_with(text_)) {
      return failure(errc::truncated, text_.size(),
                     text_.empty() ? "empty file" : "the file ends inside its first line");
    }
    const std::string_view found = text_.substr(0, text_.find('\n'));
    if (found.size() == first_line_.size() + 1 && found.starts_with(first_line_) && found.back() == '\r') {
      return failure(errc::corrupt, found.size() - 1, "line 1 ends with CR LF; lines end with LF alone");
    }
    const std::string wanted(first_line_);
    std::string message = "not an " + wanted + " file: the first line must be '" + wanted + "'";
    for (const std::string_view other :
         {signature_file_first_line, public_key_file_first_line, private_key_file_first_line}) {
      if (found == other) message = "this is an " + std::string(other) + " file, not an " + wanted + " file";
    }
    return failure(errc::bad_magic, 0, std::move(message));
  }

  /// The next line, which must be the field `field_name`.
  result<text_field> read_field(std::string_view field_name) {
    if (at_ == text_.size()) {
      return failure(errc::truncated, at_, "the file ends before the '" + std::string(field_name) + "' field");
    }
    const std::size_t end = text_.find('\n', at_);
    if (end == std::string_view::npos) {
      return failure(errc::truncated, at_, "line " + std::to_string(line_) + " has no final newline");
    }
    const std::string_view line = text_.substr(at_, end - at_);
    if (!line.empty() && line.back() == '\r') {
      return failure(errc::corrupt, end - 1,
                     "line " + std::to_string(line_) + " ends with CR LF; lines end with LF alone");
    }
    const std::string prefix = std::string(field_name) + ": ";
    if (!line.starts_with(prefix)) {
      // Only a short name before a colon is quoted, so that a garbled line
      // cannot flood the message.
      const std::string_view found = line.substr(0, line.find(':'));
      const bool quotable = !holds_secret_ && found.size() < line.size() && found.size() <= 16;
      return failure(errc::corrupt, at_,
                     "line " + std::to_string(line_) + " must be the '" + std::string(field_name) + "' field ('" +
                         prefix + "...')" + (quotable ? ", not " + printable_excerpt(found) : std::string()));
    }
    text_field field{line.substr(prefix.size()), at_ + prefix.size()};
    at_ = end + 1;
    ++line_;
    return field;
  }

  /// The version and algorithm lines every file starts with.
  result<void> read_version_and_algorithm() {
    auto version = read_field("version");
    if (!version) return unexpected(std::move(version).error());
    auto number = decimal(*version, "version");
    if (!number) return unexpected(std::move(number).error());
    if (*number != signature_format_version) {
      return failure(errc::unsupported_version, version->offset,
                     "format version " + std::to_string(*number) + " is not supported (this build reads version " +
                         std::to_string(signature_format_version) + ")");
    }
    auto algorithm = read_field("algorithm");
    if (!algorithm) return unexpected(std::move(algorithm).error());
    if (algorithm->value != signature_algorithm) {
      return failure(errc::invalid_value, algorithm->offset,
                     "the algorithm must be 'ed25519', not " + printable_excerpt(algorithm->value));
    }
    return {};
  }

  /// The value of `field` as a canonical decimal u64 (digits only, no
  /// leading zero unless it is "0").
  result<std::uint64_t> decimal(const text_field& field, std::string_view field_name) const {
    std::uint64_t value = 0;
    const char* first = field.value.data();
    const char* last = first + field.value.size();
    const auto [end, problem] = std::from_chars(first, last, value);
    const bool leading_zero = field.value.size() > 1 && field.value[0] == '0';
    if (problem != std::errc{} || end != last || leading_zero) {
      return failure(errc::invalid_value, field.offset,
                     std::string(field_name) + " must be a decimal number from 0 to 18446744073709551615 without " +
                         "leading zeros, not " + printable_excerpt(field.value));
    }
    return value;
  }

  /// The value of `field` as exactly 2 * out.size() lowercase hex digits.
  /// The value is never quoted in errors (private-key is a secret); a wrong
  /// character is pointed at by the offset.
  result<void> hex(const text_field& field, std::string_view field_name, std::span<std::uint8_t> out) const {
    const std::string expected = std::string(field_name) + " must be " + std::to_string(2 * out.size()) +
                                 " lowercase hex digits";
    const auto digit = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    for (std::size_t i = 0; i < field.value.size() && i < 2 * out.size(); ++i) {
      if (digit(field.value[i]) < 0) {
        return failure(errc::invalid_value, field.offset + i, expected + "; this character is not one");
      }
    }
    if (field.value.size() != 2 * out.size()) {
      return failure(errc::invalid_value, field.offset,
                     expected + ", not " + std::to_string(field.value.size()) + " characters");
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<std::uint8_t>(digit(field.value[2 * i]) * 16 + digit(field.value[2 * i + 1]));
    }
    return {};
  }

  result<void> read_end() const {
    if (at_ == text_.size()) return {};
    return failure(errc::corrupt, at_, "unexpected bytes after the last field (line " + std::to_string(line_ - 1) + ")");
  }

  unexpected failure(errc code, std::uint64_t offset, std::string message) const {
    return fail(code, std::move(message), std::string(name_), offset);
  }

 private:
  std::string_view text_;
  std::string_view first_line_;
  std::string_view name_;
  bool holds_secret_ = false;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
};

/// The first lines common to the three files: kind, version, algorithm.
inline std::string first_lines_of(std::string_view first_line) {
  std::string out(first_line);
  out += "\nversion: " + std::to_string(signature_format_version) + "\nalgorithm: ";
  out += signature_algorithm;
  out += '\n';
  return out;
}

inline void append_field(std::string& out, std::string_view field_name, std::string_view value) {
  out += field_name;
  out += ": ";
  out += value;
  out += '\n';
}

/// The key-id field, checked against the id of `key`.
inline result<void> check_key_id(const field_reader& reader, const text_field& field, const ed25519_public_key& key) {
  std::array<std::uint8_t, 8> ignored{};
  AGENTCTX_TRY(reader.hex(field, "key-id", ignored));
  const std::string expected = key_id_of(key);
  if (field.value != expected) {
    return reader.failure(errc::checksum_mismatch, field.offset,
                          "key-id " + std::string(field.value) + " is not the id of the public key (" + expected +
                              "): the file was damaged or edited");
  }
  return {};
}

/// The lines the two key files share: first line, version, algorithm,
/// key-id and public-key (key-id is checked by check_key_id once the whole
/// file has been read).
struct key_file_fields {
  text_field key_id;
  text_field public_key_field;
  ed25519_public_key public_key;
};

inline result<key_file_fields> read_key_file_fields(field_reader& reader) {
  AGENTCTX_TRY(reader.read_first_line());
  AGENTCTX_TRY(reader.read_version_and_algorithm());
  key_file_fields out;
  auto key_id = reader.read_field("key-id");
  if (!key_id) return unexpected(std::move(key_id).error());
  out.key_id = *key_id;
  auto public_key = reader.read_field("public-key");
  if (!public_key) return unexpected(std::move(public_key).error());
  out.public_key_field = *public_key;
  AGENTCTX_TRY(reader.hex(*public_key, "public-key", out.public_key.bytes));
  return out;
}

/// Maps `path` and hands its text to `parse(text, path)`.
template <class Parse>
auto read_text_file(io::file_system& fs, const std::string& path, Parse&& parse)
    -> decltype(parse(std::string_view(), std::string_view())) {
  auto mapped = fs.map(path);
  if (!mapped) return unexpected(std::move(mapped).error().with_path(path));
  const std::string_view text(reinterpret_cast<const char*>(mapped->data()), mapped->size());
  return parse(text, path);
}

inline std::span<const std::byte> as_byte_span(const std::string& text) noexcept {
  return std::as_bytes(std::span(text.data(), text.size()));
}

}  // namespace detail

inline result<ed25519_private_key> ed25519_private_key::from_seed(std::span<const std::uint8_t, seed_size> seed) {
  detail::evp_pkey_pointer pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
  if (pkey == nullptr) return unexpected(detail::openssl_error(errc::unsupported, "OpenSSL cannot load an Ed25519 key"));
  ed25519_private_key key;
  std::size_t length = key.public_key_.bytes.size();
  if (EVP_PKEY_get_raw_public_key(pkey.get(), key.public_key_.bytes.data(), &length) != 1 ||
      length != key.public_key_.bytes.size()) {
    return unexpected(detail::openssl_error(errc::unsupported, "OpenSSL cannot derive an Ed25519 public key"));
  }
  std::copy(seed.begin(), seed.end(), key.seed_.begin());
  return key;
}

inline result<ed25519_private_key> ed25519_private_key::generate() {
  std::array<std::uint8_t, seed_size> seed{};
  if (RAND_priv_bytes(seed.data(), static_cast<int>(seed.size())) != 1) {
    return unexpected(detail::openssl_error(errc::io_error, "the random number generator failed"));
  }
  auto key = from_seed(seed);
  OPENSSL_cleanse(seed.data(), seed.size());
  return key;
}

inline result<ed25519_signature> ed25519_private_key::sign(std::span<const std::byte> message) const {
  detail::evp_pkey_pointer pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed_.data(), seed_.size()));
  detail::evp_md_context_pointer context(EVP_MD_CTX_new());
  ed25519_signature signature{};
  std::size_t length = signature.size();
  if (pkey == nullptr || context == nullptr ||
      EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, pkey.get()) != 1 ||
      EVP_DigestSign(context.get(), signature.data(), &length, detail::unsigned_bytes(message), message.size()) != 1 ||
      length != signature.size()) {
    return unexpected(detail::openssl_error(errc::unsupported, "OpenSSL cannot make an Ed25519 signature"));
  }
  return signature;
}

inline result<bool> verify_ed25519(const ed25519_public_key& key, std::span<const std::byte> message,
                                   const ed25519_signature& signature) {
  detail::evp_pkey_pointer pkey(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.bytes.data(), key.bytes.size()));
  detail::evp_md_context_pointer context(EVP_MD_CTX_new());
  if (pkey == nullptr || context == nullptr ||
      EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) {
    return unexpected(detail::openssl_error(errc::unsupported, "OpenSSL cannot load an Ed25519 public key"));
  }
  const int verdict = EVP_DigestVerify(context.get(), signature.data(), signature.size(),
                                       detail::unsigned_bytes(message), message.size());
  // A signature that does not verify leaves a reason in the error queue.
  ERR_clear_error();
  return verdict == 1;
}

inline result<layer_signature> sign_layer_bytes(std::span<const std::byte> layer, const ed25519_private_key& key) {
  layer_signature out;
  out.key_id = key_id_of(key.public_key());
  out.layer_size = layer.size();
  out.layer_sha256 = sha256(layer);
  auto signature = key.sign(signed_statement(out.layer_size, out.layer_sha256));
  if (!signature) return unexpected(std::move(signature).error());
  out.signature = *signature;
  return out;
}

inline result<layer_signature> sign_layer_file(io::file_system& fs, const std::string& path,
                                               const ed25519_private_key& key) {
  static constexpr std::string_view refusal = " (the layer does not validate; refusing to sign it)";
  auto reader = layer_reader::open(fs, path);
  if (!reader) {
    error e = std::move(reader).error().with_path(path);
    if (is_data_error(e.code)) e.message += refusal;
    return unexpected(std::move(e));
  }
  const std::vector<violation> violations = validate(*reader, 1);
  if (!violations.empty()) {
    error e = to_error(violations.front(), path);
    e.message += refusal;
    return unexpected(std::move(e));
  }
  return sign_layer_bytes(reader->bytes(), key);
}

inline result<verified_layer> verify_layer_bytes(std::span<const std::byte> layer, const layer_signature& signature,
                                                 const ed25519_public_key& key, std::string_view layer_name) {
  const std::string name(layer_name);
  verified_layer out{key_id_of(key), layer.size(), {}};
  if (signature.key_id != out.key_id) {
    return fail(errc::incompatible,
                "signature check failed: the layer was signed by key " + signature.key_id +
                    ", but the public key is key " + out.key_id,
                name);
  }
  if (out.layer_size != signature.layer_size) {
    return fail(errc::checksum_mismatch,
                "signature check failed: the layer is " + std::to_string(out.layer_size) +
                    " bytes, but the signed layer was " + std::to_string(signature.layer_size) + " bytes",
                name);
  }
  out.layer_sha256 = sha256(layer);
  if (out.layer_sha256 != signature.layer_sha256) {
    return fail(errc::checksum_mismatch,
                "signature check failed: the layer's SHA-256 is " + to_hex(out.layer_sha256) +
                    ", but the signed layer's was " + to_hex(signature.layer_sha256),
                name);
  }
  auto valid = verify_ed25519(key, signed_statement(out.layer_size, out.layer_sha256), signature.signature);
  if (!valid) return unexpected(std::move(valid).error().with_path(name));
  if (!*valid) {
    return fail(errc::invalid_value,
                "signature check failed: the Ed25519 signature does not verify with key " + out.key_id +
                    " (the signature file was altered, or made with another key)",
                name);
  }
  return out;
}

inline std::string format_signature_file(const layer_signature& signature) {
  std::string out = detail::first_lines_of(signature_file_first_line);
  detail::append_field(out, "key-id", signature.key_id);
  detail::append_field(out, "layer-size", std::to_string(signature.layer_size));
  detail::append_field(out, "layer-sha256", to_hex(signature.layer_sha256));
  detail::append_field(out, "signature", to_hex(signature.signature));
  return out;
}

inline result<layer_signature> parse_signature_file(std::string_view text, std::string_view name) {
  detail::field_reader reader(text, signature_file_first_line, name);
  AGENTCTX_TRY(reader.read_first_line());
  AGENTCTX_TRY(reader.read_version_and_algorithm());
  layer_signature out;
  auto key_id = reader.read_field("key-id");
  if (!key_id) return unexpected(std::move(key_id).error());
  std::array<std::uint8_t, 8> key_id_bytes{};
  AGENTCTX_TRY(reader.hex(*key_id, "key-id", key_id_bytes));
  out.key_id = std::string(key_id->value);
  auto size = reader.read_field("layer-size");
  if (!size) return unexpected(std::move(size).error());
  auto size_value = reader.decimal(*size, "layer-size");
  if (!size_value) return unexpected(std::move(size_value).error());
  out.layer_size = *size_value;
  auto digest = reader.read_field("layer-sha256");
  if (!digest) return unexpected(std::move(digest).error());
  AGENTCTX_TRY(reader.hex(*digest, "layer-sha256", out.layer_sha256));
  auto signature = reader.read_field("signature");
  if (!signature) return unexpected(std::move(signature).error());
  AGENTCTX_TRY(reader.hex(*signature, "signature", out.signature));
  AGENTCTX_TRY(reader.read_end());
  return out;
}

inline std::string format_public_key_file(const ed25519_public_key& key) {
  std::string out = detail::first_lines_of(public_key_file_first_line);
  detail::append_field(out, "key-id", key_id_of(key));
  detail::append_field(out, "public-key", to_hex(key.bytes));
  return out;
}

inline result<ed25519_public_key> parse_public_key_file(std::string_view text, std::string_view name) {
  detail::field_reader reader(text, public_key_file_first_line, name);
  auto fields = detail::read_key_file_fields(reader);
  if (!fields) return unexpected(std::move(fields).error());
  AGENTCTX_TRY(reader.read_end());
  AGENTCTX_TRY(detail::check_key_id(reader, fields->key_id, fields->public_key));
  return fields->public_key;
}

inline std::string format_private_key_file(const ed25519_private_key& key) {
  std::string out = detail::first_lines_of(private_key_file_first_line);
  detail::append_field(out, "key-id", key_id_of(key.public_key()));
  detail::append_field(out, "public-key", to_hex(key.public_key().bytes));
  // Reserved up front so that appending the secret never reallocates and
  // leaves a copy of it in freed memory.
  static constexpr std::string_view seed_field = "private-key: ";
  out.reserve(out.size() + seed_field.size() + 2 * ed25519_private_key::seed_size + 1);
  out += seed_field;
  static constexpr char digits[] = "0123456789abcdef";
  for (const std::uint8_t byte : key.seed()) {
    out += digits[byte >> 4];
    out += digits[byte & 0x0F];
  }
  out += '\n';
  return out;
}

inline result<ed25519_private_key> parse_private_key_file(std::string_view text, std::string_view name) {
  detail::field_reader reader(text, private_key_file_first_line, name, /*holds_secret=*/true);
  auto fields = detail::read_key_file_fields(reader);
  if (!fields) return unexpected(std::move(fields).error());
  std::array<std::uint8_t, ed25519_private_key::seed_size> seed{};
  auto key = [&]() -> result<ed25519_private_key> {
    auto seed_field = reader.read_field("private-key");
    if (!seed_field) return unexpected(std::move(seed_field).error());
    AGENTCTX_TRY(reader.hex(*seed_field, "private-key", seed));
    AGENTCTX_TRY(reader.read_end());
    auto derived = ed25519_private_key::from_seed(seed);
    if (!derived) return unexpected(std::move(derived).error().with_path(name));
    return derived;
  }();
  OPENSSL_cleanse(seed.data(), seed.size());
  if (!key) return key;
  if (key->public_key() != fields->public_key) {
    return reader.failure(errc::checksum_mismatch, fields->public_key_field.offset,
                          "public-key is not the public key of private-key: the file was damaged or edited");
  }
  AGENTCTX_TRY(detail::check_key_id(reader, fields->key_id, fields->public_key));
  return key;
}

inline result<void> write_signature_file(io::file_system& fs, const std::string& path,
                                         const layer_signature& signature) {
  return io::write_file_atomically(fs, path, detail::as_byte_span(format_signature_file(signature)));
}

inline result<layer_signature> read_signature_file(io::file_system& fs, const std::string& path) {
  return detail::read_text_file(
      fs, path, [](std::string_view text, std::string_view name) { return parse_signature_file(text, name); });
}

inline result<ed25519_public_key> read_public_key_file(io::file_system& fs, const std::string& path) {
  return detail::read_text_file(
      fs, path, [](std::string_view text, std::string_view name) { return parse_public_key_file(text, name); });
}

inline result<ed25519_private_key> read_private_key_file(io::file_system& fs, const std::string& path) {
  return detail::read_text_file(
      fs, path, [](std::string_view text, std::string_view name) { return parse_private_key_file(text, name); });
}

inline result<void> write_key_pair(io::file_system& fs, const std::string& private_path,
                                   const std::string& public_path, const ed25519_private_key& key,
                                   key_overwrite overwrite) {
  if (private_path == public_path) {
    return fail(errc::invalid_argument, "the private and the public key file must be different files", private_path);
  }
  if (overwrite == key_overwrite::refuse) {
    for (const std::string* path : {&private_path, &public_path}) {
      auto exists = fs.exists(*path);
      if (!exists) return unexpected(std::move(exists).error());
      if (*exists) return fail(errc::already_exists, "a key file already exists here; it is not overwritten", *path);
    }
  }
  {
    const detail::wiped_string secret(format_private_key_file(key));
    result<io::atomic_file_writer> writer = [&] {
      const detail::owner_only_umask owner_only;
      return io::atomic_file_writer::begin(fs, private_path);
    }();
    if (!writer) return unexpected(std::move(writer).error());
    AGENTCTX_TRY(writer->append(detail::as_byte_span(secret.text())));
    AGENTCTX_TRY(writer->commit());
  }
  return io::write_file_atomically(fs, public_path, detail::as_byte_span(format_public_key_file(key.public_key())));
}

inline result<verified_layer> verify_layer_file(io::file_system& fs, const std::string& layer_path,
                                                const std::string& signature_path,
                                                const std::string& public_key_path) {
  auto key = read_public_key_file(fs, public_key_path);
  if (!key) return unexpected(std::move(key).error());
  auto signature = read_signature_file(fs, signature_path);
  if (!signature) return unexpected(std::move(signature).error());
  auto layer = fs.map(layer_path);
  if (!layer) return unexpected(std::move(layer).error().with_path(layer_path));
  return verify_layer_bytes(layer->bytes(), *signature, *key, layer_path);
}

}  // namespace agentctx::agdb
