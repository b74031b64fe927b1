// agentctx/core/crc32.hpp: CRC-32 checksums.
//
// agentctx uses zlib's CRC-32: the IEEE 802.3 polynomial (0x04C11DB7,
// reflected 0xEDB88320), initial value and final XOR 0xFFFFFFFF, the same
// checksum as zlib, gzip, PNG and Ethernet ("123456789" -> 0xCBF43926).
// Why this one: every language and tool can compute it (Python's
// zlib.crc32, `gzip -l`, Go's hash/crc32 IEEE table), so a checksum stored by
// agentctx can be checked by anyone; and zlib is already a dependency and
// fast enough for the data it guards (about 3 GB/s measured on the
// development machine with zlib 1.2.13's braided implementation, well above
// the disk and decompression rates it runs next to).
//
//   std::uint32_t c = agentctx::crc32(bytes);
//   std::uint32_t c2 = agentctx::crc32(more, c);  // continue: crc of bytes+more
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace agentctx {

/// CRC-32 of `data`. `seed` is the CRC of the bytes that precede `data`
/// (0 for none), so crc32(b, crc32(a)) == crc32(a followed by b).
inline std::uint32_t crc32(std::span<const std::byte> data, std::uint32_t seed = 0) noexcept {
  if (data.empty()) return seed;
  return static_cast<std::uint32_t>(
      ::crc32_z(seed, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

/// CRC-32 of the bytes of `text`; `seed` as above.
inline std::uint32_t crc32(std::string_view text, std::uint32_t seed = 0) noexcept {
  return crc32(std::as_bytes(std::span(text.data(), text.size())), seed);
}

/// Incremental CRC-32: the value after any sequence of update() calls equals
/// crc32() of the concatenated input.
class crc32_hasher {
 public:
  void update(std::span<const std::byte> data) noexcept { value_ = crc32(data, value_); }
  void update(std::string_view text) noexcept { value_ = crc32(text, value_); }

  /// The CRC-32 of everything passed to update() since construction or reset().
  std::uint32_t value() const noexcept { return value_; }

  void reset() noexcept { value_ = 0; }

 private:
  std::uint32_t value_ = 0;
};

}  // namespace agentctx
