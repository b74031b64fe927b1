// agentctx/vector/detail/avx512_kernels.hpp: the AVX-512 (F, BW, VL, VNNI) kernels.
//
// Compiled with per-function target attributes, so including this header
// needs no -mavx512f; callers must check is_supported(instruction_set::avx512)
// before calling. Full steps use plain unaligned loads; the partial last step
// of a row is a masked load, which never touches, or faults on, the bytes
// past the end of the matrix. (Masking every load, as an earlier version did,
// measured about twice as slow when the loads split cache lines.)
#pragma once

#include "agentctx/vector/detail/row_loop.hpp"
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

/// f32 rows (row_loop.hpp): 64 values per step in four FMA chains, then 16
/// at a time, the partial last step masked; lanes are summed once per row.
struct avx512_f32_kernel {
  const float* query;
  std::size_t dim;

  template <bool with_norms>
  AGENTCTX_TARGET_AVX512 void row(const std::byte* row, float* dot_out, float* norm_out) const noexcept {
    constexpr std::size_t chains = 4;
    __m512 dot[chains];
    __m512 norm[chains];
    AGENTCTX_UNROLL_CHAINS
    for (std::size_t c = 0; c < chains; ++c) dot[c] = norm[c] = _mm512_setzero_ps();
    std::size_t j = 0;
    for (; chains * 16 <= dim - j; j += chains * 16) {
      AGENTCTX_UNROLL_CHAINS
      for (std::size_t c = 0; c < chains; ++c) {
        const __m512 v = _mm512_loadu_ps(row + (j + 16 * c) * 4);
        dot[c] = _mm512_fmadd_ps(_mm512_loadu_ps(query + j + 16 * c), v, dot[c]);
        if constexpr (with_norms) norm[c] = _mm512_fmadd_ps(v, v, norm[c]);
      }
    }
    std::size_t c = 0;
    for (; 16 <= dim - j; j += 16, ++c) {
      const __m512 v = _mm512_loadu_ps(row + j * 4);
      dot[c] = _mm512_fmadd_ps(_mm512_loadu_ps(query + j), v, dot[c]);
      if constexpr (with_norms) norm[c] = _mm512_fmadd_ps(v, v, norm[c]);
    }
    if (j < dim) {
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

/// The two vector widths of the VNNI i8 kernel: 512-bit (64 bytes per step)
/// and 256-bit through AVX-512 VL (32 bytes per step; used for rows that are
/// not 64-byte aligned, where every 64-byte load would split a cache line;
/// see i8_kernel_for_rows).
struct vnni_512 {
  using vector = __m512i;
  using mask = __mmask64;
  static constexpr std::size_t lanes = 64;
  AGENTCTX_TARGET_AVX512 static vector zero() noexcept { return _mm512_setzero_si512(); }
  AGENTCTX_TARGET_AVX512 static vector splat(char byte) noexcept { return _mm512_set1_epi8(byte); }
  AGENTCTX_TARGET_AVX512 static vector load(const void* p) noexcept { return _mm512_loadu_si512(p); }
  AGENTCTX_TARGET_AVX512 static vector load(mask m, const void* p) noexcept { return _mm512_maskz_loadu_epi8(m, p); }
  AGENTCTX_TARGET_AVX512 static vector flip(vector a, vector b) noexcept { return _mm512_xor_si512(a, b); }
  AGENTCTX_TARGET_AVX512 static vector dpbusd(vector acc, vector u, vector s) noexcept {
    return _mm512_dpbusd_epi32(acc, u, s);
  }
  AGENTCTX_TARGET_AVX512 static std::uint32_t sum(vector v) noexcept { return sum_lanes(v); }
};

struct vnni_256 {
  using vector = __m256i;
  using mask = __mmask32;
  static constexpr std::size_t lanes = 32;
  AGENTCTX_TARGET_AVX512 static vector zero() noexcept { return _mm256_setzero_si256(); }
  AGENTCTX_TARGET_AVX512 static vector splat(char byte) noexcept { return _mm256_set1_epi8(byte); }
  AGENTCTX_TARGET_AVX512 static vector load(const void* p) noexcept {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
  }
  AGENTCTX_TARGET_AVX512 static vector load(mask m, const void* p) noexcept { return _mm256_maskz_loadu_epi8(m, p); }
  AGENTCTX_TARGET_AVX512 static vector flip(vector a, vector b) noexcept { return _mm256_xor_si256(a, b); }
  AGENTCTX_TARGET_AVX512 static vector dpbusd(vector acc, vector u, vector s) noexcept {
    return _mm256_dpbusd_epi32(acc, u, s);
  }
  AGENTCTX_TARGET_AVX512 static std::uint32_t sum(vector v) noexcept {
    __m128i total = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    total = _mm_add_epi32(total, _mm_unpackhi_epi64(total, total));
    total = _mm_add_epi32(total, _mm_shuffle_epi32(total, 1));
    return static_cast<std::uint32_t>(_mm_cvtsi128_si32(total));
  }
};

/// i8 rows with VNNI (row_loop.hpp), `Width::lanes` bytes per step in four
/// chains, then one step at a time, the partial last step masked.
/// vpdpbusd multiplies UNSIGNED bytes by signed bytes, so each row byte r is
/// biased to the unsigned r + 128 (an xor with 0x80) and the bias is taken
/// out once per row, all modulo 2^32:
///   dot   = sum (r + 128) * q - 128 * sum q
///   sum r = sum (r + 128) * 1 - 128 * padded_dim
///   norm  = sum (r + 128) * r - 128 * sum r
/// In the masked step the missing bytes load as r = q = 0, so they add
/// 128 * 0 to the dot and the norm and 128 each to the biased sum, which the
/// padded dim (dim rounded up to the step) accounts for. Every product fits
/// in 16 bits and vpdpbusd does not saturate, so the results are exact
/// (including for -128) and equal the portable kernel's.
template <class Width>
struct vnni_i8_kernel {
  const std::int8_t* query;
  std::size_t dim;
  std::uint32_t query_sum;  ///< sum of the query values, modulo 2^32

  template <bool with_norms>
  AGENTCTX_TARGET_AVX512 void row(const std::byte* row, std::int32_t* dot_out,
                                  std::int32_t* norm_out) const noexcept {
    using vector = typename Width::vector;
    constexpr std::size_t lanes = Width::lanes;
    constexpr std::size_t chains = 4;
    vector dot[chains];
    vector norm[chains];
    vector biased_sum[chains];
    AGENTCTX_UNROLL_CHAINS
    for (std::size_t c = 0; c < chains; ++c) dot[c] = norm[c] = biased_sum[c] = Width::zero();
    const vector bias = Width::splat(static_cast<char>(0x80));
    const vector ones = Width::splat(1);
    std::size_t j = 0;
    for (; chains * lanes <= dim - j; j += chains * lanes) {
      AGENTCTX_UNROLL_CHAINS
      for (std::size_t c = 0; c < chains; ++c) {
        const vector v = Width::load(row + j + c * lanes);
        const vector biased = Width::flip(v, bias);
        dot[c] = Width::dpbusd(dot[c], biased, Width::load(query + j + c * lanes));
        if constexpr (with_norms) {
          norm[c] = Width::dpbusd(norm[c], biased, v);
          biased_sum[c] = Width::dpbusd(biased_sum[c], biased, ones);
        }
      }
    }
    std::size_t c = 0;
    for (; lanes <= dim - j; j += lanes, ++c) {
      const vector v = Width::load(row + j);
      const vector biased = Width::flip(v, bias);
      dot[c] = Width::dpbusd(dot[c], biased, Width::load(query + j));
      if constexpr (with_norms) {
        norm[c] = Width::dpbusd(norm[c], biased, v);
        biased_sum[c] = Width::dpbusd(biased_sum[c], biased, ones);
      }
    }
    if (j < dim) {
      const auto mask = step_mask<typename Width::mask, lanes>(dim, j);
      const vector v = Width::load(mask, row + j);
      const vector biased = Width::flip(v, bias);
      dot[c] = Width::dpbusd(dot[c], biased, Width::load(mask, query + j));
      if constexpr (with_norms) {
        norm[c] = Width::dpbusd(norm[c], biased, v);
        biased_sum[c] = Width::dpbusd(biased_sum[c], biased, ones);
      }
    }
    const auto padded_dim = static_cast<std::uint32_t>((dim + lanes - 1) / lanes * lanes);
    std::uint32_t dot_total = 0, norm_total = 0, biased_total = 0;
    AGENTCTX_UNROLL_CHAINS
    for (std::size_t k = 0; k < chains; ++k) {
      dot_total += Width::sum(dot[k]);
      if constexpr (with_norms) {
        norm_total += Width::sum(norm[k]);
        biased_total += Width::sum(biased_sum[k]);
      }
    }
    *dot_out = static_cast<std::int32_t>(dot_total - 128u * query_sum);
    if constexpr (with_norms) {
      const std::uint32_t row_sum = biased_total - 128u * padded_dim;
      *norm_out = static_cast<std::int32_t>(norm_total - 128u * row_sum);
    }
  }
};

}  // namespace agentctx::vector::detail

#endif  // AGENTCTX_VECTOR_X86
