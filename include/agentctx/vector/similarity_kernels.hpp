// agentctx/vector/similarity_kernels.hpp: dot products of one query against
// many rows, the inner loop of brute-force vector search.
//
// A row matrix is `row_count` rows of `dim` values each, stored contiguously
// in AGDB's embedding layout: little-endian f32 (4 bytes per value) or i8
// (1 byte per value), starting at ANY byte address (the reference writer
// produces unaligned matrices). The query is an ordinary array of native
// values of the same dim.
//
// Each call runs one of three kernel families (see instruction_set.hpp):
// portable C++, AVX2 + FMA, or AVX-512 (F/BW/VL/VNNI). By default the widest
// one the CPU has (best_instruction_set(), which the AGENTCTX_ISA environment
// variable can lower); callers and tests may pass one explicitly. A family the
// CPU does not support is never run: the call falls back to the widest one
// it does support. Which kernel runs also depends on the alignment of the
// rows: f32_kernel_for_rows and i8_kernel_for_rows say which.
//
// Results across families:
//   - i8: identical. Sums are computed exactly in 32-bit integers and wrap
//     modulo 2^32; they cannot wrap while dim <= 131,071 (|q * r| <= 2^14).
//   - f32: the families add the products in different orders (8 partial sums
//     in the portable kernel, four chains of 8 or 16 SIMD lanes plus a final
//     lane sum in the others), so results may differ in the last bits. Each result is within
//     dim * 2^-23 * sum_j |q_j * r_j| of the exact dot product, and in
//     practice far closer (the tests hold the families to 1e-5 of that sum).
//     NaN and infinity propagate as in ordinary float arithmetic.
//
// The kernels never allocate, never fail and never read outside the rows they
// are given; they are safe to call from several threads at once.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "agentctx/vector/detail/avx2_kernels.hpp"
#include "agentctx/vector/detail/avx512_kernels.hpp"
#include "agentctx/vector/detail/portable_kernels.hpp"
#include "agentctx/vector/detail/row_loop.hpp"
#include "agentctx/vector/instruction_set.hpp"

namespace agentctx::vector {

namespace detail {
/// `isa` if the CPU runs it, else the widest family it does run.
inline instruction_set runnable(instruction_set isa) noexcept {
  return is_supported(isa) ? isa : detected_instruction_set();
}

inline bool on_cache_line(const std::byte* rows) noexcept { return reinterpret_cast<std::uintptr_t>(rows) % 64 == 0; }
}  // namespace detail

/// Which kernel a call runs: the instruction set family and the width of its
/// vectors in bits (0 for the portable kernel, whose width is the compiler's).
struct kernel_choice {
  instruction_set isa = instruction_set::portable;
  unsigned vector_bits = 0;
  friend bool operator==(const kernel_choice&, const kernel_choice&) = default;
};

/// The kernel dot_f32_rows runs for a matrix whose first row is at `rows`
/// when asked for `isa`: the widest family the CPU runs, at most `isa`,
/// except that AVX-512 (512-bit) is used only when `rows` is on a 64-byte
/// boundary, and AVX2 (256-bit) otherwise. Rows of AGDB files start wherever
/// the writer put them (the reference's files at odd offsets), and a 64-byte
/// load from an unaligned address always spans two cache lines, which cost
/// the 512-bit kernels 1.4x on the machines of docs/vector-search.md; 32-byte
/// loads split half as often.
inline kernel_choice f32_kernel_for_rows(instruction_set isa, const std::byte* rows) noexcept {
  switch (detail::runnable(isa)) {
    case instruction_set::avx512:
      return detail::on_cache_line(rows) ? kernel_choice{instruction_set::avx512, 512}
                                         : kernel_choice{instruction_set::avx2, 256};
    case instruction_set::avx2: return {instruction_set::avx2, 256};
    default: return {instruction_set::portable, 0};
  }
}

/// The kernel dot_i8_rows runs: as for f32, except that unaligned rows on an
/// AVX-512 CPU keep the AVX-512 VNNI instructions on 256-bit vectors
/// (AVX-512 VL), which measured about twice as fast as AVX2's widening
/// multiply there.
inline kernel_choice i8_kernel_for_rows(instruction_set isa, const std::byte* rows) noexcept {
  switch (detail::runnable(isa)) {
    case instruction_set::avx512: return {instruction_set::avx512, detail::on_cache_line(rows) ? 512u : 256u};
    case instruction_set::avx2: return {instruction_set::avx2, 256};
    default: return {instruction_set::portable, 0};
  }
}

/// Computes, for each row i < row_count of the f32 matrix at `rows`
/// (row_count x query.size() little-endian f32, contiguous, any alignment):
///   dots[i]          = sum_j query[j] * row_i[j]
///   squared_norms[i] = sum_j row_i[j]^2        (only when squared_norms != nullptr)
/// in one pass over the rows. `dots` and `squared_norms` hold row_count
/// values each and must not overlap the rows. An empty query gives 0 for
/// every row. `rows` may be null when row_count is 0. See the header comment
/// for how results differ between instruction sets.
inline void dot_f32_rows(std::span<const float> query, const std::byte* rows, std::size_t row_count, float* dots,
                         float* squared_norms, instruction_set isa = best_instruction_set()) noexcept {
  const std::size_t dim = query.size();
  if (dim == 0) {
    std::fill_n(dots, row_count, 0.0f);
    if (squared_norms != nullptr) std::fill_n(squared_norms, row_count, 0.0f);
    return;
  }
  const std::size_t row_bytes = dim * 4;
  switch (f32_kernel_for_rows(isa, rows).isa) {
#if AGENTCTX_VECTOR_X86
    case instruction_set::avx512:
      detail::score_rows(detail::avx512_f32_kernel{query.data(), dim}, rows, row_bytes, row_count, dots,
                         squared_norms);
      return;
    case instruction_set::avx2:
      detail::score_rows(detail::avx2_f32_kernel{query.data(), dim}, rows, row_bytes, row_count, dots, squared_norms);
      return;
#endif
    default:
      detail::score_rows(detail::portable_f32_kernel{query.data(), dim}, rows, row_bytes, row_count, dots,
                         squared_norms);
      return;
  }
}

/// The i8 counterpart of dot_f32_rows: rows are row_count x query.size()
/// signed bytes (contiguous, any alignment); results are exact 32-bit
/// integer sums (wrapping modulo 2^32, which cannot happen for dim <=
/// 131,071) and identical for every instruction set. To compare with f32
/// scores, multiply by the query's scale (quantize_query_i8) and the
/// matrix's quant_scale.
inline void dot_i8_rows(std::span<const std::int8_t> query, const std::byte* rows, std::size_t row_count,
                        std::int32_t* dots, std::int32_t* squared_norms,
                        instruction_set isa = best_instruction_set()) noexcept {
  const std::size_t dim = query.size();
  if (dim == 0) {
    std::fill_n(dots, row_count, 0);
    if (squared_norms != nullptr) std::fill_n(squared_norms, row_count, 0);
    return;
  }
  const kernel_choice kernel = i8_kernel_for_rows(isa, rows);
  switch (kernel.isa) {
#if AGENTCTX_VECTOR_X86
    case instruction_set::avx512: {
      std::uint32_t query_sum = 0;
      for (std::int8_t q : query) query_sum += static_cast<std::uint32_t>(q);
      if (kernel.vector_bits == 512) {
        detail::score_rows(detail::vnni_i8_kernel<detail::vnni_512>{query.data(), dim, query_sum}, rows, dim,
                           row_count, dots, squared_norms);
      } else {
        detail::score_rows(detail::vnni_i8_kernel<detail::vnni_256>{query.data(), dim, query_sum}, rows, dim,
                           row_count, dots, squared_norms);
      }
      return;
    }
    case instruction_set::avx2:
      detail::score_rows(detail::avx2_i8_kernel{query.data(), dim}, rows, dim, row_count, dots, squared_norms);
      return;
#endif
    default:
      detail::score_rows(detail::portable_i8_kernel{query.data(), dim}, rows, dim, row_count, dots, squared_norms);
      return;
  }
}

/// Quantises a query for dot_i8_rows: scale = max |query[j]| / 127 over the
/// finite values, out[j] = round(query[j] / scale) (to nearest, halves away
/// from zero) clamped to [-127, 127]; NaN becomes 0 and +-infinity +-127.
/// Returns the scale, so that for a row quantised with scale s,
///   dot(query, dequantised row) ~= returned scale * s * integer dot.
/// When no finite value is non-zero, returns 0 and writes zeros. A scale that
/// would underflow to 0 is the smallest positive float instead.
/// `out` should have query.size() values: only the first min(out.size(),
/// query.size()) are computed and any further ones are set to 0.
inline float quantize_query_i8(std::span<const float> query, std::span<std::int8_t> out) noexcept {
  float largest = 0.0f;
  for (float v : query) {
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  }
  const std::size_t n = std::min(query.size(), out.size());
  std::fill(out.begin() + static_cast<std::ptrdiff_t>(n), out.end(), std::int8_t{0});
  if (largest == 0.0f) {
    std::fill_n(out.begin(), n, std::int8_t{0});
    return 0.0f;
  }
  const float scale = std::max(largest / 127.0f, std::numeric_limits<float>::denorm_min());
  for (std::size_t j = 0; j < n; ++j) {
    const float q = query[j] / scale;
    out[j] = std::isnan(q) ? std::int8_t{0} : static_cast<std::int8_t>(std::clamp(std::round(q), -127.0f, 127.0f));
  }
  return scale;
}

}  // namespace agentctx::vector
