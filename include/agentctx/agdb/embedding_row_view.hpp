// agentctx/agdb/embedding_row_view.hpp: one row of an embedding matrix, in place.
//
// A row of an AGDB embedding matrix (seed 000, section 8.4.6) is `dim`
// little-endian f32 values or `dim` i8 values that dequantise as i8 * scale.
// The bytes may start at any offset (the reference writer produces unaligned
// matrices), so values are loaded with memcpy; no float* is ever formed.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "agentctx/agdb/format.hpp"
#include "agentctx/core/endian.hpp"

namespace agentctx::agdb {

/// Bytes per value of an element type: 4 for f32, 1 for i8, 0 for a type
/// this version does not define.
constexpr std::size_t element_size_bytes(std::uint32_t type) noexcept {
  switch (static_cast<element_type>(type)) {
    case element_type::f32: return 4;
    case element_type::i8: return 1;
  }
  return 0;
}

/// A view of one embedding row. Cheap to copy; valid while the bytes it was
/// made from live (for a layer_reader: while the reader lives).
class embedding_row_view {
 public:
  embedding_row_view() noexcept = default;
  /// `bytes` holds exactly dim * element_size_bytes(type) bytes.
  embedding_row_view(std::span<const std::byte> bytes, std::uint32_t dim, element_type type, float scale) noexcept
      : bytes_(bytes), dim_(dim), type_(type), scale_(scale) {}

  std::uint32_t dim() const noexcept { return dim_; }
  element_type type() const noexcept { return type_; }
  /// The matrix's quant_scale (1.0 in a valid f32 matrix).
  float scale() const noexcept { return scale_; }
  /// The row as stored: dim little-endian f32 values or dim i8 values.
  std::span<const std::byte> bytes() const noexcept { return bytes_; }

  /// Value `i` (precondition: i < dim()): the f32 as stored, or i8 * scale.
  float operator[](std::size_t i) const noexcept {
    if (type_ == element_type::i8) return static_cast<float>(static_cast<std::int8_t>(bytes_[i])) * scale_;
    return load_f32(bytes_.data() + i * 4);
  }

  /// Writes the first min(out.size(), dim()) values, dequantised like operator[].
  void to_f32(std::span<float> out) const noexcept {
    const std::size_t n = std::min<std::size_t>(out.size(), dim_);
    if (type_ == element_type::i8) {
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<float>(static_cast<std::int8_t>(bytes_[i])) * scale_;
      }
    } else if constexpr (std::endian::native == std::endian::little) {
      // Stored little-endian IEEE-754 is already the in-memory representation.
      if (n != 0) std::memcpy(out.data(), bytes_.data(), n * 4);
    } else {
      for (std::size_t i = 0; i < n; ++i) out[i] = load_f32(bytes_.data() + i * 4);
    }
  }

 private:
  std::span<const std::byte> bytes_;
  std::uint32_t dim_ = 0;
  element_type type_ = element_type::f32;
  float scale_ = 1.0f;
};

}  // namespace agentctx::agdb
