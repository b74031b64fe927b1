// agentctx/vector/detail/avx2_kernels.hpp: the AVX2 + FMA kernels.
//
// Compiled with per-function target attributes, so including this header
// needs no -mavx2; callers must check is_supported(instruction_set::avx2)
// before calling. Rows are loaded with memcpy into vector registers (one
// unaligned load), never through a misaligned pointer.
#pragma once

#include "agentctx/vector/detail/row_blocks.hpp"
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

/// f32 rows, one after the other, each read front to back: 32 values per
/// step in four FMA chains, then 8 at a time; the last dim % 8 values are
/// added one by one after the lanes are summed (see avx512_f32_kernel for
/// why rows are not interleaved).
struct avx2_f32_kernel {
  const float* query;
  std::size_t dim;

  template <std::size_t rows, bool with_norms>
  AGENTCTX_TARGET_AVX2 void block(const std::byte* first_row, std::size_t row_bytes, float* dots,
                                  float* squared_norms) const noexcept {
    for (std::size_t r = 0; r < rows; ++r) {
      one_row<with_norms>(first_row + r * row_bytes, dots + r, with_norms ? squared_norms + r : nullptr);
    }
  }

  template <bool with_norms>
  AGENTCTX_TARGET_AVX2 void one_row(const std::byte* row, float* dot_out, float* norm_out) const noexcept {
    __m256 dot[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    __m256 norm[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    std::size_t j = 0;
    for (; 32 <= dim - j; j += 32) {
      AGENTCTX_UNROLL_ROWS
      for (std::size_t c = 0; c < 4; ++c) {
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

/// i8 rows: 16 values per step, sign-extended to 16 bits and multiplied with
/// vpmaddwd (pairs of products summed into 32-bit lanes, exact); the last
/// dim % 16 values are added one by one. Sums wrap modulo 2^32.
struct avx2_i8_kernel {
  const std::int8_t* query;
  std::size_t dim;

  template <std::size_t rows, bool with_norms>
  AGENTCTX_TARGET_AVX2 void block(const std::byte* first_row, std::size_t row_bytes, std::int32_t* dots,
                                  std::int32_t* squared_norms) const noexcept {
    __m256i dot[rows];
    __m256i norm[rows];
    AGENTCTX_UNROLL_ROWS
    for (std::size_t r = 0; r < rows; ++r) dot[r] = norm[r] = _mm256_setzero_si256();
    std::size_t j = 0;
    for (; 16 <= dim - j; j += 16) {
      const __m256i q = _mm256_cvtepi8_epi16(load_i8x16(query + j));
      AGENTCTX_UNROLL_ROWS
      for (std::size_t r = 0; r < rows; ++r) {
        const __m256i v = _mm256_cvtepi8_epi16(load_i8x16(first_row + r * row_bytes + j));
        dot[r] = _mm256_add_epi32(dot[r], _mm256_madd_epi16(q, v));
        if constexpr (with_norms) norm[r] = _mm256_add_epi32(norm[r], _mm256_madd_epi16(v, v));
      }
    }
    AGENTCTX_UNROLL_ROWS
    for (std::size_t r = 0; r < rows; ++r) {
      const std::byte* row = first_row + r * row_bytes;
      std::uint32_t d = sum_lanes(dot[r]);
      std::uint32_t n = with_norms ? sum_lanes(norm[r]) : 0;
      for (std::size_t t = j; t < dim; ++t) {
        const std::int32_t v = static_cast<std::int8_t>(row[t]);
        d += static_cast<std::uint32_t>(std::int32_t{query[t]} * v);
        n += static_cast<std::uint32_t>(v * v);
      }
      dots[r] = static_cast<std::int32_t>(d);
      if constexpr (with_norms) squared_norms[r] = static_cast<std::int32_t>(n);
    }
  }
};

}  // namespace agentctx::vector::detail

#endif  // AGENTCTX_VECTOR_X86
