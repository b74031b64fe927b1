// agentctx/vector/detail/portable_kernels.hpp: the plain C++ kernels.
//
// They run on any CPU and define the results the SIMD kernels are tested
// against. Row values are read with memcpy-based little-endian loads, so rows
// may sit at any address and on any byte order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agentctx/core/endian.hpp"

namespace agentctx::vector::detail {

// Eight partial sums per row keep the add chains short (and the rounding
// error with them); compilers turn the inner loop into vector code.
inline constexpr std::size_t portable_lanes = 8;

/// f32 rows (the row interface of row_loop.hpp).
struct portable_f32_kernel {
  const float* query;
  std::size_t dim;

  template <bool with_norms>
  void row(const std::byte* row, float* dot_out, float* norm_out) const noexcept {
    float dot[portable_lanes] = {};
    float norm[portable_lanes] = {};
    std::size_t j = 0;
    for (; portable_lanes <= dim - j; j += portable_lanes) {
      for (std::size_t k = 0; k < portable_lanes; ++k) {
        const float r = load_f32(row + (j + k) * 4);
        dot[k] += query[j + k] * r;
        if constexpr (with_norms) norm[k] += r * r;
      }
    }
    for (std::size_t k = 0; j < dim; ++j, ++k) {
      const float r = load_f32(row + j * 4);
      dot[k] += query[j] * r;
      if constexpr (with_norms) norm[k] += r * r;
    }
    for (std::size_t width = portable_lanes / 2; width != 0; width /= 2) {
      for (std::size_t k = 0; k < width; ++k) {
        dot[k] += dot[k + width];
        if constexpr (with_norms) norm[k] += norm[k + width];
      }
    }
    *dot_out = dot[0];
    if constexpr (with_norms) *norm_out = norm[0];
  }
};

/// i8 rows.
// Sums wrap modulo 2^32, like the SIMD integer adds, so every path returns
// the same value even when a sum does not fit (and no path has undefined
// behaviour when it does not).
struct portable_i8_kernel {
  const std::int8_t* query;
  std::size_t dim;

  template <bool with_norms>
  void row(const std::byte* row, std::int32_t* dot_out, std::int32_t* norm_out) const noexcept {
    std::uint32_t dot = 0;
    std::uint32_t norm = 0;
    for (std::size_t j = 0; j < dim; ++j) {
      const std::int32_t r = static_cast<std::int8_t>(row[j]);
      dot += static_cast<std::uint32_t>(std::int32_t{query[j]} * r);
      if constexpr (with_norms) norm += static_cast<std::uint32_t>(r * r);
    }
    *dot_out = static_cast<std::int32_t>(dot);
    if constexpr (with_norms) *norm_out = static_cast<std::int32_t>(norm);
  }
};

}  // namespace agentctx::vector::detail
