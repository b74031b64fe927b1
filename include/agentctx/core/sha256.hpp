// agentctx/core/sha256.hpp: SHA-256 (FIPS 180-4) through OpenSSL 3's EVP API.
//
//   agentctx::sha256_digest d = agentctx::sha256("abc");
//   std::string hex = agentctx::to_hex(d);  // "ba7816bf..."
//   auto back = agentctx::parse_hex_digest(hex);  // == d
//
//   agentctx::sha256_hasher h;               // incremental form
//   h.update(part1);
//   h.update(part2);
//   agentctx::sha256_digest d2 = h.finish(); // h is ready for a new message
//
// OpenSSL picks the fastest implementation for the CPU (SHA-NI, ARMv8 crypto
// extensions). The algorithm object is fetched once per process and each
// hasher keeps one EVP_MD_CTX for its whole life; the one-shot sha256()
// functions reuse a per-thread hasher, so hashing allocates nothing after the
// first call on a thread.
//
// Failure handling: every call here is infallible and noexcept. OpenSSL can
// fail to supply SHA-256 only when its provider cannot be loaded (a broken
// installation or configuration) or a context allocation fails; in both cases
// the hasher computes the digest with a built-in portable implementation
// instead, so the digest is always correct and callers have nothing to check.
// Once a context is initialised, OpenSSL's SHA-256 update cannot fail and its
// final step fails only when a FIPS provider has shut itself down after a
// failed self-test; finish() then returns an all-zero digest, which will not
// verify against any stored checksum.
//
// Thread-safety: distinct hashers may be used concurrently; one hasher must
// not be used from two threads at once. The one-shot functions are safe to
// call from any thread.
#pragma once

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace agentctx {

/// A SHA-256 digest, in the byte order the standard defines (big-endian words).
using sha256_digest = std::array<std::uint8_t, 32>;

namespace detail {

struct evp_md_deleter {
  void operator()(EVP_MD* md) const noexcept { EVP_MD_free(md); }
};
struct evp_md_context_deleter {
  void operator()(EVP_MD_CTX* context) const noexcept { EVP_MD_CTX_free(context); }
};

/// The process-wide SHA-256 algorithm object, or null when no OpenSSL
/// provider offers SHA-256. Released at exit; constructing it initialises
/// OpenSSL first, so it is destroyed before OpenSSL's own atexit cleanup.
inline const EVP_MD* openssl_sha256() noexcept {
  static const std::unique_ptr<EVP_MD, evp_md_deleter> md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  return md.get();
}

/// Portable SHA-256 used only when OpenSSL cannot supply one (see the file
/// comment). Straightforward FIPS 180-4; no heap, no failure.
class sha256_portable {
 public:
  sha256_portable() noexcept { reset(); }

  void reset() noexcept {
    state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    buffered_ = 0;
    total_bytes_ = 0;
  }

  void update(const std::uint8_t* data, std::size_t size) noexcept {
    total_bytes_ += size;
    if (buffered_ != 0) {
      std::size_t take = std::min(size, block_.size() - buffered_);
      std::copy_n(data, take, block_.data() + buffered_);
      buffered_ += take;
      data += take;
      size -= take;
      if (buffered_ < block_.size()) return;
      compress(block_.data());
      buffered_ = 0;
    }
    for (; size >= block_.size(); data += block_.size(), size -= block_.size()) compress(data);
    std::copy_n(data, size, block_.data());
    buffered_ = size;
  }

  sha256_digest finish() noexcept {
    const std::uint64_t total_bits = total_bytes_ * 8;
    static constexpr std::array<std::uint8_t, 64> padding{0x80};
    // Pad with 0x80 then zeros so that 8 bytes remain in the last block.
    std::size_t pad = buffered_ < 56 ? 56 - buffered_ : 120 - buffered_;
    update(padding.data(), pad);
    std::array<std::uint8_t, 8> length_field{};
    for (std::size_t i = 0; i < 8; ++i) length_field[i] = static_cast<std::uint8_t>(total_bits >> (56 - 8 * i));
    update(length_field.data(), length_field.size());
    sha256_digest out{};
    for (std::size_t i = 0; i < 32; ++i) out[i] = static_cast<std::uint8_t>(state_[i / 4] >> (24 - 8 * (i % 4)));
    reset();
    return out;
  }

 private:
  static constexpr std::uint32_t rotate_right(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

  void compress(const std::uint8_t* block) noexcept {
    static constexpr std::array<std::uint32_t, 64> round_constants = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = static_cast<std::uint32_t>(block[4 * i]) << 24 | static_cast<std::uint32_t>(block[4 * i + 1]) << 16 |
             static_cast<std::uint32_t>(block[4 * i + 2]) << 8 | static_cast<std::uint32_t>(block[4 * i + 3]);
    }
    for (std::size_t i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotate_right(w[i - 15], 7) ^ rotate_right(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotate_right(w[i - 2], 17) ^ rotate_right(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, h] = state_;
    for (std::size_t i = 0; i < 64; ++i) {
      std::uint32_t t1 = h + (rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25)) + ((e & f) ^ (~e & g)) +
                         round_constants[i] + w[i];
      std::uint32_t t2 = (rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
  }

  std::array<std::uint32_t, 8> state_{};
  std::array<std::uint8_t, 64> block_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace detail

/// Incremental SHA-256. Move-only: it owns an OpenSSL digest context.
/// A moved-from hasher is valid and holds the empty message.
class sha256_hasher {
 public:
  sha256_hasher() noexcept { start(); }

  sha256_hasher(sha256_hasher&& other) noexcept
      : context_(std::move(other.context_)), fallback_(other.fallback_) {
    other.fallback_.reset();
  }
  sha256_hasher& operator=(sha256_hasher&& other) noexcept {
    if (this != &other) {
      context_ = std::move(other.context_);
      fallback_ = other.fallback_;
      other.fallback_.reset();
    }
    return *this;
  }
  sha256_hasher(const sha256_hasher&) = delete;
  sha256_hasher& operator=(const sha256_hasher&) = delete;
  ~sha256_hasher() = default;

  /// Appends bytes to the message.
  void update(std::span<const std::byte> data) noexcept {
    if (data.empty()) return;
    if (context_ != nullptr) {
      // Cannot fail for an initialised SHA-256 context (see the file comment).
      (void)EVP_DigestUpdate(context_.get(), data.data(), data.size());
    } else {
      fallback_.update(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
    }
  }
  void update(std::string_view text) noexcept { update(std::as_bytes(std::span(text.data(), text.size()))); }

  /// Returns the digest of everything passed to update() since construction
  /// or the last finish()/reset(), and starts a new, empty message.
  sha256_digest finish() noexcept {
    sha256_digest out{};
    if (context_ == nullptr) return fallback_.finish();
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context_.get(), out.data(), &length) != 1 || length != out.size()) out.fill(0);
    start();
    return out;
  }

  /// Discards the current message.
  void reset() noexcept { start(); }

  /// True when OpenSSL computes the digest; false when the portable fallback
  /// does (OpenSSL could not supply SHA-256). For diagnostics only.
  bool uses_openssl() const noexcept { return context_ != nullptr; }

 private:
  // (Re)initialises the OpenSSL context, keeping an existing one so that its
  // allocation is reused; falls back to the portable code when that fails.
  void start() noexcept {
    fallback_.reset();
    const EVP_MD* md = detail::openssl_sha256();
    if (md == nullptr) {
      context_.reset();
      return;
    }
    if (context_ == nullptr) context_.reset(EVP_MD_CTX_new());
    if (context_ != nullptr && EVP_DigestInit_ex2(context_.get(), md, nullptr) != 1) context_.reset();
  }

  std::unique_ptr<EVP_MD_CTX, detail::evp_md_context_deleter> context_;
  detail::sha256_portable fallback_;
};

/// One-shot SHA-256 of `data`.
inline sha256_digest sha256(std::span<const std::byte> data) noexcept {
  thread_local sha256_hasher hasher;
  hasher.update(data);
  return hasher.finish();
}

/// One-shot SHA-256 of the bytes of `text`.
inline sha256_digest sha256(std::string_view text) noexcept {
  return sha256(std::as_bytes(std::span(text.data(), text.size())));
}

/// Lowercase hexadecimal, two characters per byte ("ba7816bf...").
inline std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 0x0F];
  }
  return out;
}

/// The digest whose to_hex() is `hex`: exactly 64 lowercase hex digits, no
/// prefix or white space; nullopt for any other text.
inline std::optional<sha256_digest> parse_hex_digest(std::string_view hex) noexcept {
  sha256_digest digest{};
  if (hex.size() != 2 * digest.size()) return std::nullopt;
  auto value = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  for (std::size_t i = 0; i < digest.size(); ++i) {
    const int high = value(hex[2 * i]);
    const int low = value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    digest[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return digest;
}

/// The prefix of a hash written as text: "sha256:<64 lowercase hex digits>".
inline constexpr std::string_view sha256_text_prefix = "sha256:";

/// "sha256:<hex>" of the bytes of `text` (content hashes of Relay packages,
/// versions of agent-memory files).
inline std::string sha256_text(std::string_view text) {
  std::string out(sha256_text_prefix);
  out += to_hex(sha256(text));
  return out;
}

/// True for "sha256:" followed by exactly 64 lowercase hex digits.
inline bool is_sha256_text(std::string_view text) noexcept {
  return text.starts_with(sha256_text_prefix) && parse_hex_digest(text.substr(sha256_text_prefix.size())).has_value();
}

}  // namespace agentctx
