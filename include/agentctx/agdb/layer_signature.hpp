// agentctx/agdb/layer_signature.hpp: detached Ed25519 signatures of AGENTS.db
// layer files (seed 000 section 13, "Layers MAY be cryptographically signed",
// and the `agentsdb sign` step of section 15.1).
//
//   auto key = agdb::ed25519_private_key::generate();
//   if (!key) return unexpected(key.error());
//   AGENTCTX_TRY(agdb::write_key_pair(fs, "agentsdb.key", "agentsdb.key.pub", *key, agdb::key_overwrite::refuse));
//
//   auto signature = agdb::sign_layer_file(fs, "AGENTS.db", *key);  // refuses a layer that does not validate
//   if (!signature) return unexpected(signature.error());
//   AGENTCTX_TRY(agdb::write_signature_file(fs, "AGENTS.db.sig", *signature));
//
//   auto verified = agdb::verify_layer_file(fs, "AGENTS.db", "AGENTS.db.sig", "agentsdb.key.pub");
//   if (!verified) std::cerr << verified.error().describe() << '\n';  // says which check failed
//
// What is signed. The layer file is never modified: a signature is a separate
// small text file (a ".sig" next to the layer). It records the layer's size
// and SHA-256, and an Ed25519 signature (RFC 8032, pure Ed25519: no prehash,
// no context) of the 68-byte statement
//
//   "agentsdb-layer-signature-v1" || 0x00 || u64le(layer size) || sha256(layer)
//
// (signed_statement()). The domain string keeps a layer signature from being
// mistaken for a signature over anything else the same key might sign; the
// fixed-width fields leave no framing to interpret.
//
// Key id: the first 16 lowercase hex digits (8 bytes) of SHA-256 of the raw
// 32-byte public key (key_id_of()). It names keys in files and messages; it is
// not what makes a signature valid (the signature check is).
//
// File formats (all three are ASCII text, one "name: value" line per field,
// every line ended by a single LF, fields in a fixed order, nothing after the
// last line; exactly one spelling of each record, so parse and format round
// trip byte for byte). The full grammar, the checks a reader makes and a
// worked example are in docs/format/signature.md.
//
//   agentsdb layer signature        agentsdb public key        agentsdb private key
//   version: 1                      version: 1                 version: 1
//   algorithm: ed25519              algorithm: ed25519         algorithm: ed25519
//   key-id: <16 hex>                key-id: <16 hex>           key-id: <16 hex>
//   layer-size: <decimal>           public-key: <64 hex>       public-key: <64 hex>
//   layer-sha256: <64 hex>                                     private-key: <64 hex: the RFC 8032 seed>
//   signature: <128 hex>
//
// Errors of the parsers name the file (the `name` argument) and the byte
// offset of the offending line or value:
//   truncated            empty file, a missing field, a last line without LF
//   bad_magic            the first line is not the kind of file expected (the
//                        message says when it is another of the three kinds)
//   corrupt              a line that is not the expected field, a CR before LF,
//                        bytes after the last line
//   unsupported_version  version is a number other than 1
//   invalid_value        a value of the wrong form (not lowercase hex of the
//                        right length, not a canonical decimal), an algorithm
//                        other than ed25519
//   checksum_mismatch    (key files) key-id is not the id of public-key, or
//                        public-key is not the key of private-key
//
// Errors of verification (verify_layer_bytes, verify_layer_file), one per
// check, in the order they are made; they name the layer:
//   incompatible         the signature's key id is not the public key's id
//   checksum_mismatch    the layer's size differs from the signed size
//                        ("... bytes"), or else its SHA-256 differs from the
//                        signed one ("SHA-256 ...")
//   invalid_value        the Ed25519 signature does not verify (the signature
//                        file was edited, or made with another key that
//                        claims this key's id)
//
// Private keys are stored unencrypted: the private key file is created with
// mode 0600 (see write_key_pair) and in-memory copies of the seed are wiped
// when a key is destroyed. All file access goes through io::file_system.
//
// Thread-safety: every function may be called from several threads at once;
// a key object is immutable after construction.
#pragma once

#include <openssl/crypto.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

// ============================================================================
// Constants of the format (docs/format/signature.md).

/// The domain-separation prefix of the signed statement (without its 0x00).
inline constexpr std::string_view signature_domain = "agentsdb-layer-signature-v1";
/// Bytes of the signed statement: domain, 0x00, u64 size, 32-byte SHA-256.
inline constexpr std::size_t signed_statement_size = signature_domain.size() + 1 + 8 + 32;
/// The version every file of this format records; the only one this build reads.
inline constexpr std::uint32_t signature_format_version = 1;
/// The only signature algorithm of version 1.
inline constexpr std::string_view signature_algorithm = "ed25519";

/// First lines of the three file kinds.
inline constexpr std::string_view signature_file_first_line = "agentsdb layer signature";
inline constexpr std::string_view public_key_file_first_line = "agentsdb public key";
inline constexpr std::string_view private_key_file_first_line = "agentsdb private key";

// ============================================================================
// Keys.

/// An Ed25519 public key: the 32-byte encoding of RFC 8032 section 5.1.5.
struct ed25519_public_key {
  static constexpr std::size_t size = 32;
  std::array<std::uint8_t, size> bytes{};

  friend bool operator==(const ed25519_public_key&, const ed25519_public_key&) = default;
};

/// An Ed25519 signature (R || S, RFC 8032 section 5.1.6).
using ed25519_signature = std::array<std::uint8_t, 64>;

/// The key id of `key`: the first 16 lowercase hex digits of SHA-256 of its
/// 32 bytes ("21fe31dfa154a261" for the key of RFC 8032 test 1).
inline std::string key_id_of(const ed25519_public_key& key) {
  const sha256_digest digest = sha256(std::as_bytes(std::span(key.bytes)));
  return to_hex(std::span(digest).first(8));
}

/// An Ed25519 private key: the 32-byte seed of RFC 8032 section 5.1.5 and the
/// public key derived from it. Move-only; the seed is wiped (OPENSSL_cleanse)
/// when the object is destroyed or moved from, so the secret lives in one place.
class ed25519_private_key {
 public:
  static constexpr std::size_t seed_size = 32;

  /// A new key from OpenSSL's private random generator. Errors: io_error when
  /// the generator fails (not seeded), unsupported when OpenSSL offers no Ed25519.
  static result<ed25519_private_key> generate();
  /// The key of `seed`. Errors: unsupported when OpenSSL offers no Ed25519.
  static result<ed25519_private_key> from_seed(std::span<const std::uint8_t, seed_size> seed);

  ed25519_private_key(ed25519_private_key&& other) noexcept : seed_(other.seed_), public_key_(other.public_key_) {
    other.wipe();
  }
  ed25519_private_key& operator=(ed25519_private_key&& other) noexcept {
    if (this != &other) {
      seed_ = other.seed_;
      public_key_ = other.public_key_;
      other.wipe();
    }
    return *this;
  }
  ed25519_private_key(const ed25519_private_key&) = delete;
  ed25519_private_key& operator=(const ed25519_private_key&) = delete;
  ~ed25519_private_key() { wipe(); }

  const ed25519_public_key& public_key() const noexcept { return public_key_; }
  /// The secret seed; valid while this object lives.
  std::span<const std::uint8_t, seed_size> seed() const noexcept { return seed_; }
  /// Signs `message` (pure Ed25519, deterministic). Errors: unsupported when
  /// OpenSSL cannot load the key or sign.
  result<ed25519_signature> sign(std::span<const std::byte> message) const;

 private:
  ed25519_private_key() = default;
  void wipe() noexcept { OPENSSL_cleanse(seed_.data(), seed_.size()); }

  std::array<std::uint8_t, seed_size> seed_{};
  ed25519_public_key public_key_{};
};

/// True when `signature` is a valid Ed25519 signature of `message` by `key`
/// (OpenSSL's RFC 8032 verification, which also rejects a non-canonical S).
/// Errors: unsupported when OpenSSL cannot load the key.
result<bool> verify_ed25519(const ed25519_public_key& key, std::span<const std::byte> message,
                            const ed25519_signature& signature);

// ============================================================================
// Signatures.

/// The bytes an Ed25519 layer signature signs (see the file comment):
/// signature_domain, one 0x00 byte, the layer size as u64 little-endian and
/// the layer's SHA-256, 68 bytes in all.
inline std::array<std::byte, signed_statement_size> signed_statement(std::uint64_t layer_size,
                                                                    const sha256_digest& layer_sha256) noexcept {
  std::array<std::byte, signed_statement_size> out{};
  std::memcpy(out.data(), signature_domain.data(), signature_domain.size());
  // out[signature_domain.size()] is the 0x00 separator.
  store_u64(out.data() + signature_domain.size() + 1, layer_size);
  std::memcpy(out.data() + signature_domain.size() + 9, layer_sha256.data(), layer_sha256.size());
  return out;
}

/// The contents of a signature file (its version and algorithm are implied:
/// 1 and ed25519, the only ones there are).
struct layer_signature {
  std::string key_id;  ///< key_id_of() the signing key: 16 lowercase hex digits
  std::uint64_t layer_size = 0;
  sha256_digest layer_sha256{};
  ed25519_signature signature{};

  friend bool operator==(const layer_signature&, const layer_signature&) = default;
};

/// Signs the bytes of a layer as they are (no format check; sign_layer_file
/// validates first). Errors: those of ed25519_private_key::sign.
result<layer_signature> sign_layer_bytes(std::span<const std::byte> layer, const ed25519_private_key& key);

/// Maps the layer at `path`, checks it with agdb::validate (every rule of
/// docs/format/agdb.md) and signs the very bytes it checked. A layer that
/// does not open or validate is refused with its first violation (a data
/// error with the offset), the message ending "(the layer does not validate;
/// refusing to sign it)". Errors also: those of file_system::map.
result<layer_signature> sign_layer_file(io::file_system& fs, const std::string& path, const ed25519_private_key& key);

/// What a successful verification established.
struct verified_layer {
  std::string key_id;
  std::uint64_t layer_size = 0;
  sha256_digest layer_sha256{};
};

/// Checks `layer` against `signature` and `key`: key id, then size, then
/// SHA-256, then the Ed25519 signature of signed_statement() rebuilt from the
/// layer's own size and digest. Errors (naming `layer_name`): see the file
/// comment (incompatible, checksum_mismatch, invalid_value), and unsupported
/// when OpenSSL cannot load the key. The layer's format is not checked: run
/// agdb::validate as well to know it is a well-formed layer.
result<verified_layer> verify_layer_bytes(std::span<const std::byte> layer, const layer_signature& signature,
                                          const ed25519_public_key& key, std::string_view layer_name = {});

/// Reads the public key and the signature file, maps the layer and calls
/// verify_layer_bytes. Errors: those of the three reads (file system errors;
/// parse errors naming the key or signature file) and of verify_layer_bytes.
result<verified_layer> verify_layer_file(io::file_system& fs, const std::string& layer_path,
                                         const std::string& signature_path, const std::string& public_key_path);

// ============================================================================
// Files: text in, text out (pure), and through a file_system.

/// The signature file of `signature` (version 1). `signature.key_id` is
/// written as it is: give key_id_of() of the signing key.
std::string format_signature_file(const layer_signature& signature);
/// Parses a signature file; `name` is used as the path in errors. Errors: see
/// the file comment.
result<layer_signature> parse_signature_file(std::string_view text, std::string_view name = {});

std::string format_public_key_file(const ed25519_public_key& key);
/// Parses a public key file, checking that key-id is the key's id.
result<ed25519_public_key> parse_public_key_file(std::string_view text, std::string_view name = {});

/// The private key file of `key`. The text holds the secret seed: wipe it
/// (OPENSSL_cleanse) when done, as write_key_pair does.
std::string format_private_key_file(const ed25519_private_key& key);
/// Parses a private key file, checking that public-key is the key of the seed
/// and key-id its id.
result<ed25519_private_key> parse_private_key_file(std::string_view text, std::string_view name = {});

/// Writes `signature` to `path`, atomically (io::write_file_atomically).
result<void> write_signature_file(io::file_system& fs, const std::string& path, const layer_signature& signature);
/// Reads and parses the signature file at `path`.
result<layer_signature> read_signature_file(io::file_system& fs, const std::string& path);
result<ed25519_public_key> read_public_key_file(io::file_system& fs, const std::string& path);
result<ed25519_private_key> read_private_key_file(io::file_system& fs, const std::string& path);

/// Whether write_key_pair may replace existing files.
enum class key_overwrite { refuse, replace };

/// Writes the private key file to `private_path` and the public key file to
/// `public_path`, each atomically. With key_overwrite::refuse nothing is
/// written when either path exists (errc::already_exists naming it; a file
/// created by someone else between that check and the rename is replaced).
/// The private key file is created with mode 0600 on the POSIX file system:
/// the process umask is set to 077 while its temporary file is created (the
/// umask is per process: a file another thread creates in that instant is
/// owner-only too, never more open). If writing the public key fails, the
/// private key file stays. Errors: invalid_argument when both paths are the
/// same, already_exists, and those of the atomic writes.
result<void> write_key_pair(io::file_system& fs, const std::string& private_path, const std::string& public_path,
                            const ed25519_private_key& key, key_overwrite overwrite);

}  // namespace agentctx::agdb

#include "agentctx/agdb/detail/layer_signature-inl.hpp"
