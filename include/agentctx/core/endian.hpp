// agentctx/core/endian.hpp: explicit little-endian loads and stores.
//
// Every integer and float that agentctx puts on disk is little-endian and may
// sit at any (unaligned) offset. These helpers go through memcpy, which
// compilers turn into a single move on little-endian targets, and never
// reinterpret_cast a pointer onto mapped bytes. Callers bounds-check first.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace agentctx {

namespace detail {
template <class T>
constexpr T byteswap_if_big(T v) noexcept {
  if constexpr (std::endian::native == std::endian::little || sizeof(T) == 1) {
    return v;
  } else {
    using U = std::make_unsigned_t<T>;
    U u = static_cast<U>(v);
    U out = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) out = static_cast<U>((out << 8) | ((u >> (8 * i)) & 0xFF));
    return static_cast<T>(out);
  }
}
}  // namespace detail

/// Loads an integer of type T stored little-endian at `p` (any alignment).
template <class T>
  requires std::is_integral_v<T>
inline T load_le(const void* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return detail::byteswap_if_big(v);
}

/// Stores `v` little-endian at `p` (any alignment).
template <class T>
  requires std::is_integral_v<T>
inline void store_le(void* p, T v) noexcept {
  v = detail::byteswap_if_big(v);
  std::memcpy(p, &v, sizeof(T));
}

inline std::uint16_t load_u16(const void* p) noexcept { return load_le<std::uint16_t>(p); }
inline std::uint32_t load_u32(const void* p) noexcept { return load_le<std::uint32_t>(p); }
inline std::uint64_t load_u64(const void* p) noexcept { return load_le<std::uint64_t>(p); }
inline float load_f32(const void* p) noexcept { return std::bit_cast<float>(load_u32(p)); }

inline void store_u16(void* p, std::uint16_t v) noexcept { store_le(p, v); }
inline void store_u32(void* p, std::uint32_t v) noexcept { store_le(p, v); }
inline void store_u64(void* p, std::uint64_t v) noexcept { store_le(p, v); }
inline void store_f32(void* p, float v) noexcept { store_u32(p, std::bit_cast<std::uint32_t>(v)); }

/// Appends little-endian values to a growing byte buffer (used by encoders).
class byte_writer {
 public:
  explicit byte_writer(std::vector<std::byte>& out) noexcept : out_(&out) {}

  void u8(std::uint8_t v) { out_->push_back(static_cast<std::byte>(v)); }
  void u16(std::uint16_t v) { put(v); }
  void u32(std::uint32_t v) { put(v); }
  void u64(std::uint64_t v) { put(v); }
  void f32(float v) { put(std::bit_cast<std::uint32_t>(v)); }
  void bytes(const void* data, std::size_t n) {
    if (n == 0) return;
    const auto* b = static_cast<const std::byte*>(data);
    out_->insert(out_->end(), b, b + n);
  }
  void zeros(std::size_t n) { out_->insert(out_->end(), n, std::byte{0}); }
  std::size_t size() const noexcept { return out_->size(); }

 private:
  template <class T>
  void put(T v) {
    std::size_t at = out_->size();
    out_->resize(at + sizeof(T));
    store_le(out_->data() + at, v);
  }
  std::vector<std::byte>* out_;
};

}  // namespace agentctx
