// agentctx/vector/detail/row_loop.hpp: scores a row matrix one row at a time.
//
// Every kernel reads each row front to back, alone, with several independent
// accumulator chains inside the row (a single chain is bound by the latency
// of the add, not by memory). Rows are not interleaved: scoring several rows
// per pass (one chain each) turns the scan into several concurrent memory
// streams, which measured up to 1.9x the memory floor for f32 and 2.5x for
// i8 on the machines of docs/vector-search.md, against 1.1-1.2x for one
// stream.
#pragma once

#include <cstddef>

// Precedes every loop over an array of vector accumulators in the SIMD
// kernels. GCC keeps such an array in registers only if the loops over it are
// unrolled before its scalar replacement pass; otherwise it stores every
// accumulator to the stack on every step (about 30% slower).
#define AGENTCTX_UNROLL_CHAINS _Pragma("GCC unroll 16")

namespace agentctx::vector::detail {

/// Calls kernel.row<with_norms>(row, &dots[i], &squared_norms[i]) for every
/// row, with the squared norms computed only when asked for
/// (squared_norms != nullptr): each variant is its own compiled loop.
template <class Kernel, class Result>
inline void score_rows(const Kernel& kernel, const std::byte* rows, std::size_t row_bytes, std::size_t row_count,
                       Result* dots, Result* squared_norms) noexcept {
  if (squared_norms != nullptr) {
    for (std::size_t i = 0; i < row_count; ++i) {
      kernel.template row<true>(rows + i * row_bytes, dots + i, squared_norms + i);
    }
  } else {
    for (std::size_t i = 0; i < row_count; ++i) kernel.template row<false>(rows + i * row_bytes, dots + i, nullptr);
  }
}

}  // namespace agentctx::vector::detail
