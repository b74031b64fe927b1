// agentctx/vector/detail/avx2_kernels.hpp: the AVX2 + FMA kernels.
//
// Compiled with per-function target attributes, so including this header
// needs no -mavx2; callers must check is_supported(instruction_set::avx2)
// before calling. Rows are loaded with memcpy into vector registers (one
// unaligned load), never through a misaligned pointer.
#pragma once

#include "agentctx/vector/detail/row_loop.hpp"
#include "agentctx/vector/instruction_set.hpp"

#if AGENTCTX_VECTOR_X86

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "agentctx/core/endian.hpp"

#define AGENTCTX_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace agentctx::vector::detail {

AGENTCTX_TARGET_AVX2 inline __m256 load_f32x8(const void* p) noexcept {
  __m256 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

AGENTCTX_TARGET_AVX2 inline __m128i load_i8x16(const void* p) noexcept {
  __m128i v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

AGENTCTX_TARGET_AVX2 inline float sum_lanes(__m256 v) noexcept {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_shuffle_ps(sum, sum, 1));
  return _mm_cvtss_f32(sum);
}

AGENTCTX_TARGET_AVX2 inline std::uint32_t sum_lanes(__m256i v) noexcept {
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  sum = _mm_add_epi32(sum, _mm_unpackhi_epi64(sum, sum));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 1));
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(sum));
}

/// f32 rows (row_loop.hpp): 32 values per step in four FMA chains, then 8
/// at a time; the last dim % 8 values are added one by one after the lanes
/// are summed.
struct avx2_f32_kernel {
  const float* query;
  std::size_t dim;

  template <bool with_norms>
  AGENTCTX_TARGET_AVX2 void row(const std::byte* row, float* dot_out, float* norm_out) const noexcept {
    constexpr std::size_t chains = 4;
    __m256 dot[chains];
    __m256 norm[chains];
    AGENTCTX_UNROLL_CHAINS
    for (std::size_t c = 0; c < chains; ++c) dot[c] = norm[c] = _mm256_setzero_ps();
    std::size_t j = 0;
    for (; chains * 8 <= dim - j; j += chains * 8) {
      AGENTCTX_UNROLL_CHAINS
      for (std::size_t c = 0; c < chains; ++c) {
        const __m256 v = load_f32x8(row + (j + 8 * c) * 4);
        dot[c] = _mm256_fmadd_ps(_mm256_loadu_ps(query + j + 8 * c), v, dot[c]);
        if constexpr (with_norms) norm[c] = _mm256_fmadd_ps(v, v, norm[c]);
      }
    }
    for (std::size_t c = 0; 8 <= dim - j; j += 8, ++c) {
      const __m256 v = load_f32x8(row + j * 4);
      dot[c] = _mm256_fmadd_ps(_mm256_loadu_ps(query + j), v, dot[c]);
      if constexpr (with_norms) norm[c] = _mm256_fmadd_ps(v, v, norm[c]);
    }
    float d = sum_lanes(_mm256_add_ps(_mm256_add_ps(dot[0], dot[1]), _mm256_add_ps(dot[2], dot[3])));
    float n = with_norms ? sum_lanes(_mm256_add_ps(_mm256_add_ps(norm[0], norm[1]), _mm256_add_ps(norm[2], norm[3])))
                         : 0.0f;
    for (; j < dim; ++j) {
      const float v = load_f32(row + j * 4);
      d += query[j] * v;
      n += v * v;
    }
    *dot_out = d;
    if constexpr (with_norms) *norm_out = n;
  }
};

/// i8 rows (row_loop.hpp): 16 values per step, sign-extended to 16 bits and
/// multiplied with vpmaddwd (pairs of products summed into 32-bit lanes,
/// exact), 64 values per step in four chains, then 16 at a time; the last
/// dim % 16 values are added one by one. Sums wrap modulo 2^32.
struct avx2_i8_kernel {
  const std::int8_t* query;
  std::size_t dim;

  template <bool with_norms>
  AGENTCTX_TARGET_AVX2 void row(const std::byte* row, std::int32_t* dot_out,
                                std::int32_t* norm_out) const noexcept {
    constexpr std::size_t chains = 4;
    __m256i dot[chains];
    __m256i norm[chains];
    AGENTCTX_UNROLL_CHAINS
    for (std::size_t c = 0; c < chains; ++c) dot[c] = norm[c] = _mm256_setzero_si256();
    std::size_t j = 0;
    for (; chains * 16 <= dim - j; j += chains * 16) {
      AGENTCTX_UNROLL_CHAINS
      for (std::size_t c = 0; c < chains; ++c) {
        const __m256i q = _mm256_cvtepi8_epi16(load_i8x16(query + j + 16 * c));
        const __m256i v = _mm256_cvtepi8_epi16(load_i8x16(row + j + 16 * c));
        dot[c] = _mm256_add_epi32(dot[c], _mm256_madd_epi16(q, v));
        if constexpr (with_norms) norm[c] = _mm256_add_epi32(norm[c], _mm256_madd_epi16(v, v));
      }
    }
    for (std::size_t c = 0; 16 <= dim - j; j += 16, ++c) {
      const __m256i q = _mm256_cvtepi8_epi16(load_i8x16(query + j));
      const __m256i v = _mm256_cvtepi8_epi16(load_i8x16(row + j));
      dot[c] = _mm256_add_epi32(dot[c], _mm256_madd_epi16(q, v));
      if constexpr (with_norms) norm[c] = _mm256_add_epi32(norm[c], _mm256_madd_epi16(v, v));
    }
    std::uint32_t d = sum_lanes(_mm256_add_epi32(_mm256_add_epi32(dot[0], dot[1]), _mm256_add_epi32(dot[2], dot[3])));
    std::uint32_t n =
        with_norms ? sum_lanes(_mm256_add_epi32(_mm256_add_epi32(norm[0], norm[1]), _mm256_add_epi32(norm[2], norm[3])))
                   : 0u;
    for (; j < dim; ++j) {
      const std::int32_t v = static_cast<std::int8_t>(row[j]);
      d += static_cast<std::uint32_t>(std::int32_t{query[j]} * v);
      n += static_cast<std::uint32_t>(v * v);
    }
    *dot_out = static_cast<std::int32_t>(d);
    if constexpr (with_norms) *norm_out = static_cast<std::int32_t>(n);
  }
};

}  // namespace agentctx::vector::detail

#endif  // AGENTCTX_VECTOR_X86
