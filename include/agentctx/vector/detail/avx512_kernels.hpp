// agentctx/vector/detail/avx512_kernels.hpp: the AVX-512 (F, BW, VL, VNNI) kernels.
//
// Compiled with per-function target attributes, so including this header
// needs no -mavx512f; callers must check is_supported(instruction_set::avx512)
// before calling. Every load is a masked load (all lanes but in the last step
// of a row), which never touches, or faults on, the masked-off bytes past the
// end of the matrix.
#pragma once

#include "agentctx/vector/detail/row_blocks.hpp"
#include "agentctx/vector/instruction_set.hpp"

#if AGENTCTX_VECTOR_X86

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#define AGENTCTX_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace agentctx::vector::detail {

// The lane sums use the zero-masking forms of the 256-bit extracts: GCC 12's
// plain _mm512_extract*, _mm512_cast*512_*256 and _mm512_reduce_add_* pass
// an _mm256_undefined_* value, which -Wuninitialized reports once inlined.
// (Going through memory instead makes GCC keep the accumulators on the stack.)
AGENTCTX_TARGET_AVX512 inline float sum_lanes(__m512 v) noexcept {
  const __m512d bits = _mm512_castps_pd(v);
  const __m256 half = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xFF, bits, 0)),
                                    _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xFF, bits, 1)));
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_shuffle_ps(sum, sum, 1));
  return _mm_cvtss_f32(sum);
}

// Integer lane sums wrap modulo 2^32 (vector adds, no signed overflow).
AGENTCTX_TARGET_AVX512 inline std::uint32_t sum_lanes(__m512i v) noexcept {
  const __m256i half =
      _mm256_add_epi32(_mm512_maskz_extracti64x4_epi64(0xFF, v, 0), _mm512_maskz_extracti64x4_epi64(0xFF, v, 1));
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  sum = _mm_add_epi32(sum, _mm_unpackhi_epi64(sum, sum));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 1));
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(sum));
}

/// The load mask of the step at value `j` of `dim`: all `lanes` lanes, or
/// the dim - j that are left.
template <class Mask, std::size_t lanes>
AGENTCTX_TARGET_AVX512 inline Mask step_mask(std::size_t dim, std::size_t j) noexcept {
  const std::size_t left = dim - j;
  return left >= lanes ? static_cast<Mask>(~Mask{0}) : static_cast<Mask>((Mask{1} << left) - 1);
}

/// f32 rows, one after the other, each read front to back: 64 values per
/// step in four independent FMA chains, then 16 at a time (the last step
/// masked); lanes are summed once per row. Reading rows in turn keeps one
/// sequential memory stream: interleaving several rows (one chain each)
/// measured up to 1.9x the memory floor on the Zen 5 machines of
/// docs/vector-search.md, one stream about 1.1x. (i8 rows, four times
/// shorter, do gain from interleaving: avx512_i8_kernel.)
struct avx512_f32_kernel {
  const float* query;
  std::size_t dim;

  template <std::size_t rows, bool with_norms>
  AGENTCTX_TARGET_AVX512 void block(const std::byte* first_row, std::size_t row_bytes, float* dots,
                                    float* squared_norms) const noexcept {
    for (std::size_t r = 0; r < rows; ++r) {
      one_row<with_norms>(first_row + r * row_bytes, dots + r, with_norms ? squared_norms + r : nullptr);
    }
  }

  template <bool with_norms>
  AGENTCTX_TARGET_AVX512 void one_row(const std::byte* row, float* dot_out, float* norm_out) const noexcept {
    __m512 dot[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    __m512 norm[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    std::size_t j = 0;
    for (; 64 <= dim - j; j += 64) {
      AGENTCTX_UNROLL_ROWS
      for (std::size_t c = 0; c < 4; ++c) {
        const __m512 v = _mm512_loadu_ps(row + (j + 16 * c) * 4);
        dot[c] = _mm512_fmadd_ps(_mm512_loadu_ps(query + j + 16 * c), v, dot[c]);
        if constexpr (with_norms) norm[c] = _mm512_fmadd_ps(v, v, norm[c]);
      }
    }
    for (std::size_t c = 0; j < dim; j += 16, ++c) {
      const __mmask16 mask = step_mask<__mmask16, 16>(dim, j);
      const __m512 v = _mm512_maskz_loadu_ps(mask, row + j * 4);
      dot[c] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, query + j), v, dot[c]);
      if constexpr (with_norms) norm[c] = _mm512_fmadd_ps(v, v, norm[c]);
    }
    *dot_out = sum_lanes(_mm512_add_ps(_mm512_add_ps(dot[0], dot[1]), _mm512_add_ps(dot[2], dot[3])));
    if constexpr (with_norms) {
      *norm_out = sum_lanes(_mm512_add_ps(_mm512_add_ps(norm[0], norm[1]), _mm512_add_ps(norm[2], norm[3])));
    }
  }
};

/// i8 rows with VNNI. vpdpbusd multiplies UNSIGNED bytes by signed bytes, so
/// each row byte r is biased to the unsigned r + 128 (an xor with 0x80) and
/// the bias is taken out once per row, all modulo 2^32:
///   dot   = sum (r + 128) * q - 128 * sum q
///   sum r = sum (r + 128) * 1 - 128 * padded_dim
///   norm  = sum (r + 128) * r - 128 * sum r
/// The last step is masked: its missing bytes load as r = q = 0, so they add
/// 128 * 0 to the dot and the norm and 128 each to the biased sum, which the
/// padded dim (dim rounded up to 64) accounts for. Every product fits in 16
/// bits and vpdpbusd does not saturate, so the results are exact (including
/// for -128) and equal the portable kernel's.
struct avx512_i8_kernel {
  const std::int8_t* query;
  std::size_t dim;
  std::uint32_t query_sum;  ///< sum of the query values, modulo 2^32

  template <std::size_t rows, bool with_norms>
  AGENTCTX_TARGET_AVX512 void block(const std::byte* first_row, std::size_t row_bytes, std::int32_t* dots,
                                    std::int32_t* squared_norms) const noexcept {
    __m512i dot[rows];
    __m512i norm[with_norms ? rows : 1];
    __m512i biased_sum[with_norms ? rows : 1];
    AGENTCTX_UNROLL_ROWS
    for (std::size_t r = 0; r < rows; ++r) dot[r] = _mm512_setzero_si512();
    AGENTCTX_UNROLL_ROWS
    for (std::size_t r = 0; r < (with_norms ? rows : 1); ++r) norm[r] = biased_sum[r] = _mm512_setzero_si512();
    const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
    const __m512i ones = _mm512_set1_epi8(1);
    for (std::size_t j = 0; j < dim; j += 64) {
      const __mmask64 mask = step_mask<__mmask64, 64>(dim, j);
      const __m512i q = _mm512_maskz_loadu_epi8(mask, query + j);
      AGENTCTX_UNROLL_ROWS
      for (std::size_t r = 0; r < rows; ++r) {
        const __m512i v = _mm512_maskz_loadu_epi8(mask, first_row + r * row_bytes + j);
        const __m512i biased = _mm512_xor_si512(v, bias);
        dot[r] = _mm512_dpbusd_epi32(dot[r], biased, q);
        if constexpr (with_norms) {
          norm[r] = _mm512_dpbusd_epi32(norm[r], biased, v);
          biased_sum[r] = _mm512_dpbusd_epi32(biased_sum[r], biased, ones);
        }
      }
    }
    const auto padded_dim = static_cast<std::uint32_t>((dim + 63) / 64 * 64);
    AGENTCTX_UNROLL_ROWS
    for (std::size_t r = 0; r < rows; ++r) {
      dots[r] = static_cast<std::int32_t>(sum_lanes(dot[r]) - 128u * query_sum);
      if constexpr (with_norms) {
        const std::uint32_t row_sum = sum_lanes(biased_sum[r]) - 128u * padded_dim;
        squared_norms[r] = static_cast<std::int32_t>(sum_lanes(norm[r]) - 128u * row_sum);
      }
    }
  }
};

}  // namespace agentctx::vector::detail

#endif  // AGENTCTX_VECTOR_X86
