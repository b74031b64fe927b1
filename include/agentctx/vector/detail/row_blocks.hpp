// agentctx/vector/detail/row_blocks.hpp: walks a row matrix in blocks of rows.
//
// The SIMD kernels score several rows per pass over the query so that each
// row has its own accumulator chain (a single chain is bound by the latency
// of the add, not by memory) and every query load serves several rows.
#pragma once

#include <cstddef>

// Precedes every loop over the rows of a block in the SIMD kernels. GCC keeps
// an array of vector accumulators in registers only if the loops over it are
// unrolled before its scalar replacement pass; otherwise it stores every
// accumulator to the stack on every step (about 30% slower).
#define AGENTCTX_UNROLL_ROWS _Pragma("GCC unroll 16")

namespace agentctx::vector::detail {

/// Calls `kernel.block<n, with_norms>(first_row, row_bytes, dots, squared_norms)`
/// for consecutive blocks of `block_rows` rows, then for the rows left over in
/// blocks of 4 (when block_rows > 4) and of 1. `squared_norms` is only
/// touched when with_norms is true.
template <std::size_t block_rows, bool with_norms, class Kernel, class Result>
inline void run_in_row_blocks(const Kernel& kernel, const std::byte* rows, std::size_t row_bytes,
                              std::size_t row_count, Result* dots, Result* squared_norms) noexcept {
  std::size_t i = 0;
  auto run = [&]<std::size_t n>() {
    for (; n <= row_count - i; i += n) {
      kernel.template block<n, with_norms>(rows + i * row_bytes, row_bytes, dots + i,
                                           with_norms ? squared_norms + i : nullptr);
    }
  };
  run.template operator()<block_rows>();
  if constexpr (block_rows > 4) run.template operator()<4>();
  if constexpr (block_rows > 1) run.template operator()<1>();
}

/// run_in_row_blocks with the squared norms computed only when asked for
/// (squared_norms != nullptr): each variant is its own compiled loop.
template <std::size_t block_rows, class Kernel, class Result>
inline void score_rows(const Kernel& kernel, const std::byte* rows, std::size_t row_bytes, std::size_t row_count,
                       Result* dots, Result* squared_norms) noexcept {
  if (squared_norms != nullptr) {
    run_in_row_blocks<block_rows, true>(kernel, rows, row_bytes, row_count, dots, squared_norms);
  } else {
    run_in_row_blocks<block_rows, false>(kernel, rows, row_bytes, row_count, dots, squared_norms);
  }
}

}  // namespace agentctx::vector::detail
