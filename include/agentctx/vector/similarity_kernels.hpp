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
// it does support.
//
// Results across families:
//   - i8: identical. Sums are computed exactly in 32-bit integers and wrap
//     modulo 2^32; they cannot wrap while dim <= 131,071 (|q * r| <= 2^14).
//   - f32: the families add the products in different orders (8 partial sums
//     in the portable kernel, 8 or 16 SIMD lanes plus a final lane sum in the
//     others), so results may differ in the last bits. Each result is within
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
#include "agentctx/vector/detail/row_blocks.hpp"
#include "agentctx/vector/instruction_set.hpp"

namespace agentctx::vector {

namespace detail {
// Rows per pass. f32 rows (384 values: 24 zmm steps) are read one at a time,
// front to back, with four accumulator chains inside the row: one memory
// stream. i8 rows are four times shorter, so a row alone cannot hide the
// latency of its adds: four rows share each pass, which measured faster than
// one or eight (bench/vector_search_bench, docs/vector-search.md).
inline constexpr std::size_t f32_block_rows = 1;
inline constexpr std::size_t avx2_i8_block_rows = 4;
inline constexpr std::size_t avx512_i8_block_rows = 4;

/// `isa` if the CPU runs it, else the widest family it does run.
inline instruction_set runnable(instruction_set isa) noexcept {
  return is_supported(isa) ? isa : detected_instruction_set();
}
}  // namespace detail

/// The instruction set dot_f32_rows and dot_i8_rows use for a matrix whose
/// first row is at `rows` when asked for `isa`: the widest family the CPU
/// runs, at most `isa`, except that AVX-512 is used only when `rows` is on a
/// 64-byte boundary; otherwise AVX2. Rows of AGDB files start wherever the
/// writer put them (the reference's files put them at odd offsets), and a
/// 64-byte load from an unaligned address always splits across two cache
/// lines: on the machines of docs/vector-search.md that cost AVX-512 1.4x,
/// while AVX2's 32-byte loads, which split half as often, were then faster.
inline instruction_set instruction_set_for_rows(instruction_set isa, const std::byte* rows) noexcept {
  const instruction_set chosen = detail::runnable(isa);
  const bool aligned = reinterpret_cast<std::uintptr_t>(rows) % 64 == 0;
  return chosen == instruction_set::avx512 && !aligned ? instruction_set::avx2 : chosen;
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
  switch (instruction_set_for_rows(isa, rows)) {
#if AGENTCTX_VECTOR_X86
    case instruction_set::avx512:
      detail::score_rows<detail::f32_block_rows>(detail::avx512_f32_kernel{query.data(), dim}, rows, row_bytes,
                                                    row_count, dots, squared_norms);
      return;
    case instruction_set::avx2:
      detail::score_rows<detail::f32_block_rows>(detail::avx2_f32_kernel{query.data(), dim}, rows, row_bytes,
                                                  row_count, dots, squared_norms);
      return;
#endif
    default:
      detail::score_rows<1>(detail::portable_f32_kernel{query.data(), dim}, rows, row_bytes, row_count, dots,
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
  switch (instruction_set_for_rows(isa, rows)) {
#if AGENTCTX_VECTOR_X86
    case instruction_set::avx512: {
      std::uint32_t query_sum = 0;
      for (std::int8_t q : query) query_sum += static_cast<std::uint32_t>(q);
      detail::score_rows<detail::avx512_i8_block_rows>(detail::avx512_i8_kernel{query.data(), dim, query_sum}, rows, dim,
                                                    row_count, dots, squared_norms);
      return;
    }
    case instruction_set::avx2:
      detail::score_rows<detail::avx2_i8_block_rows>(detail::avx2_i8_kernel{query.data(), dim}, rows, dim, row_count,
                                                  dots, squared_norms);
      return;
#endif
    default:
      detail::score_rows<1>(detail::portable_i8_kernel{query.data(), dim}, rows, dim, row_count, dots, squared_norms);
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
