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

/// Writes the reference hash embedding of `text` at dim = out.size() into
/// `out` (every element is overwritten). Does nothing when `out` is empty.
/// Allocates nothing. Invalid UTF-8 is not rejected: only the exact encodings
/// of the White_Space code points separate tokens; every other byte belongs
/// to a token.
inline void hash_embed(std::string_view text, std::span<float> out) noexcept {
  std::fill(out.begin(), out.end(), 0.0f);
  if (out.empty()) return;
  const std::size_t dim = out.size();
  const auto add_token = [&](std::uint32_t h) { out[h % dim] += (h & 0x80000000u) != 0 ? -1.0f : 1.0f; };
  // One pass that splits and hashes at once (fnv1a32 inlined), so token bytes are read once.
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::uint32_t h = detail::fnv1a32_offset_basis;
  bool in_token = false;
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    const std::size_t space_length =
        c < 0x80 ? (detail::is_ascii_white_space(c) ? 1 : 0) : detail::non_ascii_white_space_length(s + i, n - i);
    if (space_length == 0) {
      h = (h ^ c) * detail::fnv1a32_prime;
      in_token = true;
      ++i;
      continue;
    }
    if (in_token) add_token(h);
    h = detail::fnv1a32_offset_basis;
    in_token = false;
    i += space_length;
  }
  if (in_token) add_token(h);
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
