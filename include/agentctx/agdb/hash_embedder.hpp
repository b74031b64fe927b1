// agentctx/agdb/hash_embedder.hpp: the reference-compatible "hash" embedder.
//
// A dependency-free bag-of-tokens embedder whose vectors are bit for bit those
// of the Rust reference implementation's `hash` backend, so layers and
// embedding caches written by either tool are interchangeable:
//
//   1. split the text on Unicode White_Space (U+0009..U+000D, U+0020, U+0085,
//      U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F,
//      U+3000), dropping empty tokens; no case folding, no punctuation
//      stripping;
//   2. for each token, h = FNV-1a 32 of its UTF-8 bytes; v[h % dim] += -1.0f
//      when h's top bit is set, else +1.0f;
//   3. L2-normalise in f32: sum of squares accumulated from index 0 upwards,
//      then every element times (1.0f / sqrt(sum)); an all-zero vector (no
//      tokens) stays all zero.
//
// Its profile is {"backend":"hash","model":null,"revision":null,"dim":D,
// "output_norm":"none"}. The vectors *are* L2-normalised, yet output_norm
// says "none": that is what the reference writes into layer metadata and
// hashes into cache keys, and saying "l2" would make this library's layers
// and cache keys incompatible with the reference's.
//
// Bit-exactness needs IEEE binary32 arithmetic evaluated as written, in the
// order written: this header refuses -ffast-math (it reorders sums), and keeps
// compilers from fusing the sum of squares into multiply-adds even where they
// would by default (GCC's -ffp-contract=fast on FMA hardware). Don't build it
// with -fassociative-math or x87 excess precision either.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"

#if defined(__FAST_MATH__)
#error "agentctx/agdb/hash_embedder.hpp: -ffast-math breaks bit-exact compatibility with reference embeddings"
#endif

namespace agentctx::agdb {

static_assert(std::numeric_limits<float>::is_iec559, "the hash embedder needs IEEE 754 binary32 floats");

namespace detail {

inline constexpr std::uint32_t fnv1a32_offset_basis = 0x811C9DC5u;
inline constexpr std::uint32_t fnv1a32_prime = 0x01000193u;

// Bits 9..13 (TAB, LF, VT, FF, CR) and 32 (SPACE).
inline constexpr std::uint64_t ascii_white_space_mask = 0x0000000100003E00ull;

constexpr bool is_ascii_white_space(unsigned char c) noexcept {
  return c < 64 && ((ascii_white_space_mask >> c) & 1u) != 0;
}

// Length of the UTF-8 encoding of a non-ASCII White_Space code point at the
// start of `s` (which holds `left` >= 1 bytes, s[0] >= 0x80), or 0. Matching
// exact byte sequences keeps invalid UTF-8 harmless: such bytes are token bytes.
// No continuation byte equals one of the lead bytes matched here, so a space
// is never recognised in the middle of another character.
constexpr std::size_t non_ascii_white_space_length(const unsigned char* s, std::size_t left) noexcept {
  switch (s[0]) {
    case 0xC2:  // U+0085, U+00A0
      return left >= 2 && (s[1] == 0x85 || s[1] == 0xA0) ? 2 : 0;
    case 0xE1:  // U+1680
      return left >= 3 && s[1] == 0x9A && s[2] == 0x80 ? 3 : 0;
    case 0xE2:
      if (left < 3) return 0;
      if (s[1] == 0x80) {  // U+2000..U+200A, U+2028, U+2029, U+202F
        const unsigned char last = s[2];
        return (last >= 0x80 && last <= 0x8A) || last == 0xA8 || last == 0xA9 || last == 0xAF ? 3 : 0;
      }
      return s[1] == 0x81 && s[2] == 0x9F ? 3 : 0;  // U+205F
    case 0xE3:  // U+3000
      return left >= 3 && s[1] == 0x80 && s[2] == 0x80 ? 3 : 0;
    default:
      return 0;
  }
}

// The f32 product x * x, kept apart from whatever consumes it: with FMA
// hardware GCC (-ffp-contract=fast, its default in GNU mode) and clang fuse
// `sum += x * x` into one fused multiply-add, which skips the product's
// rounding and changes the sum's bits once |x| > 4096. The empty asm makes the
// product an opaque value the optimiser can neither fuse nor see through;
// other compilers get the same effect from a volatile round trip.
inline float f32_square(float x) noexcept {
  float product = x * x;
#if defined(__GNUC__)
  auto bits = std::bit_cast<std::uint32_t>(product);
  __asm__("" : "+r"(bits));
  product = std::bit_cast<float>(bits);
#else
  volatile float opaque = product;
  product = opaque;
#endif
  return product;
}

}  // namespace detail

/// 32-bit FNV-1a of the bytes of `bytes` (offset basis 0x811C9DC5, prime 0x01000193).
constexpr std::uint32_t fnv1a32(std::string_view bytes) noexcept {
  std::uint32_t h = detail::fnv1a32_offset_basis;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= detail::fnv1a32_prime;
  }
  return h;
}

namespace detail {

// Length of the White_Space encoding at s[0] (`left` >= 1 bytes), or 0.
constexpr std::size_t white_space_length(const unsigned char* s, std::size_t left) noexcept {
  return s[0] < 0x80 ? (is_ascii_white_space(s[0]) ? 1 : 0) : non_ascii_white_space_length(s, left);
}

// ---- the fast path of hash_embed: 64 ASCII bytes at a time ----
//
// Byte by byte, every token ends in a branch the CPU cannot predict (token
// lengths vary), which costs more than hashing the token. For a block of 64
// bytes that are all ASCII, the white-space bytes are found as one 64-bit
// mask instead, each token's start and length read from it with bit scans,
// and tokens of up to 8 bytes hashed without a branch on their length.

inline constexpr std::size_t ascii_block_bytes = 64;
inline constexpr std::uint64_t every_byte = 0x0101010101010101ull;
inline constexpr std::uint64_t byte_high_bits = 0x8080808080808080ull;

// Bit k set when byte k of `word` (every byte < 0x80) is TAB, LF, VT, FF, CR
// or SPACE. Each byte's test lands in its high bit without carries between
// bytes; one multiply then gathers the eight high bits into the top byte.
constexpr std::uint64_t ascii_white_space_bits(std::uint64_t word) noexcept {
  const std::uint64_t is_space = ~((word ^ (every_byte * 0x20)) + every_byte * 0x7F) & byte_high_bits;
  const std::uint64_t at_least_9 = (word + every_byte * (0x80 - 9)) & byte_high_bits;
  const std::uint64_t below_14 = ~(word + every_byte * (0x80 - 14)) & byte_high_bits;
  return (((is_space | (at_least_9 & below_14)) >> 7) * 0x0102040810204080ull) >> 56;
}

// FNV-1a 32 of the first `length` (<= 8) bytes of `word`, byte 0 first: all
// nine prefixes are hashed and one is picked, so there is no branch on the
// length to mispredict.
inline std::uint32_t fnv1a32_prefix(std::uint64_t word, std::size_t length) noexcept {
  std::uint32_t prefix[9];
  prefix[0] = fnv1a32_offset_basis;
#pragma GCC unroll 8
  for (std::size_t k = 0; k < 8; ++k) {
    prefix[k + 1] = (prefix[k] ^ static_cast<std::uint32_t>((word >> (8 * k)) & 0xFFu)) * fnv1a32_prime;
  }
  return prefix[length];
}

// h % dim by two multiplies instead of a division (Lemire's "fastmod", exact
// for every 32-bit h and divisor; for dim 1 the multiplier wraps to 0, which
// still gives 0); a dim above 2^32 - 1 leaves h as it is.
class bucket_of_hash {
 public:
  explicit bucket_of_hash(std::size_t dim) noexcept
      : dim_(dim), multiplier_(~std::uint64_t{0} / dim + 1), narrow_(dim <= 0xFFFFFFFFu) {}
  std::size_t operator()(std::uint32_t h) const noexcept {
    if (!narrow_) return h;
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::size_t>((static_cast<u128>(multiplier_ * h) * dim_) >> 64);
  }

 private:
  std::uint64_t dim_;
  std::uint64_t multiplier_;
  bool narrow_;
};

// Hashes the tokens that end inside the 64 bytes at `s` (`left` >= 64 bytes
// from s to the end of the text; s is not inside a token) and returns the
// bytes consumed, up to and including the block's last white space; 0 when
// the block holds a non-ASCII byte or no white space (the caller then goes
// byte by byte).
template <class AddToken>
std::size_t hash_ascii_block(const unsigned char* s, std::size_t left, AddToken& add_token) noexcept {
  std::uint64_t words[8];
  std::uint64_t all = 0;
  for (std::size_t k = 0; k < 8; ++k) {
    words[k] = load_u64(s + 8 * k);
    all |= words[k];
  }
  if ((all & byte_high_bits) != 0) return 0;
  std::uint64_t spaces = 0;
  for (std::size_t k = 0; k < 8; ++k) spaces |= ascii_white_space_bits(words[k]) << (8 * k);
  if (spaces == 0) return 0;
  const auto last_space = static_cast<unsigned>(63 - std::countl_zero(spaces));
  // Token bytes after a space (or at the start), before the last space.
  std::uint64_t starts = ~spaces & ((spaces << 1) | 1u) & ((std::uint64_t{1} << last_space) - 1);
  while (starts != 0) {
    const auto at = static_cast<unsigned>(std::countr_zero(starts));
    starts &= starts - 1;
    const auto length = static_cast<std::size_t>(std::countr_zero(spaces >> at));
    const unsigned char* token = s + at;
    add_token(length <= 8 && left - at >= 8
                  ? fnv1a32_prefix(load_u64(token), length)
                  : fnv1a32(std::string_view(reinterpret_cast<const char*>(token), length)));
  }
  return last_space + 1;
}

// The byte-by-byte path: skips the white space at s[at..] and hashes the
// token after it; returns where that token ends (at white space or n).
template <class AddToken>
std::size_t hash_next_token(const unsigned char* s, std::size_t at, std::size_t n, AddToken& add_token) noexcept {
  for (std::size_t space; at < n && (space = white_space_length(s + at, n - at)) != 0;) at += space;
  if (at == n) return n;
  std::uint32_t h = fnv1a32_offset_basis;
  do {
    h = (h ^ s[at]) * fnv1a32_prime;
    ++at;
  } while (at < n && white_space_length(s + at, n - at) == 0);
  add_token(h);
  return at;
}

}  // namespace detail

/// Scales `values` to unit L2 norm exactly as the reference does (f32, sum of
/// squares from index 0 upwards, times 1.0f / sqrt(sum)); leaves an all-zero
/// vector unchanged.
inline void l2_normalize_like_reference(std::span<float> values) noexcept {
  float sum = 0.0f;
  for (const float x : values) sum += detail::f32_square(x);
  if (sum == 0.0f) return;
  const float scale = 1.0f / std::sqrt(sum);
  for (float& x : values) x *= scale;
}

/// Calls add_token(h) with h the FNV-1a 32 hash of each token of `text`
/// (steps 1 and 2 of the file comment), in text order. Invalid UTF-8 is not
/// rejected: only the exact encodings of the White_Space code points separate
/// tokens; every other byte belongs to a token.
template <class AddToken>
void for_each_token_hash(std::string_view text, AddToken&& add_token) noexcept {
  // Both paths hash whole tokens and leave `at` outside a token, so tokens
  // are found in text order whichever path finds them.
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t at = 0;
  while (at < n) {
    if (n - at >= detail::ascii_block_bytes) {
      if (const std::size_t consumed = detail::hash_ascii_block(s + at, n - at, add_token); consumed != 0) {
        at += consumed;
        continue;
      }
    }
    at = detail::hash_next_token(s, at, n, add_token);
  }
}

/// Calls f(token) for each token of `text` as for_each_token_hash splits it
/// (at the exact encodings of the White_Space code points; every other byte
/// belongs to a token), in text order, until f returns true; returns whether
/// it did. The tokens themselves, for callers that compare words rather than
/// hashes (two tokens' 32-bit hashes may collide).
template <class F>
bool any_token(std::string_view text, F&& f) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t at = 0;
  while (at < n) {
    if (const std::size_t space = detail::white_space_length(s + at, n - at); space != 0) {
      at += space;
      continue;
    }
    const std::size_t start = at;
    while (at < n && detail::white_space_length(s + at, n - at) == 0) ++at;
    if (f(text.substr(start, at - start))) return true;
  }
  return false;
}

/// Writes the reference hash embedding of `text` at dim = out.size() into
/// `out` (every element is overwritten). Does nothing when `out` is empty.
/// Allocates nothing. The tokens are added in text order, so the f32 sums
/// are those of a plain left-to-right pass.
inline void hash_embed(std::string_view text, std::span<float> out) noexcept {
  std::fill(out.begin(), out.end(), 0.0f);
  if (out.empty()) return;
  const detail::bucket_of_hash bucket(out.size());
  for_each_token_hash(text, [&](std::uint32_t h) { out[bucket(h)] += (h & 0x80000000u) != 0 ? -1.0f : 1.0f; });
  l2_normalize_like_reference(out);
}

/// {"hash", null, null, dim, "none"}: the profile of hash_embedder(dim).
inline embedding_profile hash_embedding_profile(std::uint32_t dim) {
  return embedding_profile{"hash", std::nullopt, std::nullopt, dim, "none"};
}

/// The reference hash embedder as an `embedder`. Stateless apart from its
/// profile: embed() may be called from several threads at once.
class hash_embedder final : public embedder {
 public:
  static constexpr std::uint32_t default_dim = 128;

  /// A dim of 0 is accepted here and reported by embed() as invalid_argument.
  explicit hash_embedder(std::uint32_t dim = default_dim) : profile_(hash_embedding_profile(dim)) {}

  const embedding_profile& profile() const override { return profile_; }

  /// Errors: invalid_argument when dim is 0 or out.size() != texts.size() * dim.
  result<void> embed(std::span<const std::string_view> texts, std::span<float> out) override {
    AGENTCTX_TRY(check_embedding_output_size(texts.size(), profile_.dim, out.size()));
    for (std::size_t i = 0; i < texts.size(); ++i) hash_embed(texts[i], out.subspan(i * profile_.dim, profile_.dim));
    return {};
  }

 private:
  embedding_profile profile_;
};

}  // namespace agentctx::agdb
