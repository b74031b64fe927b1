// agentctx/agdb/detail/string_hash.hpp: the hash of the string tables
// (layer_writer.hpp's interner, lexical_index.hpp's term table).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agentctx/core/endian.hpp"

namespace agentctx::agdb::detail {

// A fast 64-bit hash of `text` for hash tables of strings (wyhash-style: each
// 16 bytes are folded in by one 64x64->128-bit multiply, two lanes at a time
// on long strings so that the multiplies overlap). It only spreads strings
// over table slots: the string interner of layer_writer.hpp and the term
// table of lexical_index.hpp number strings in first-seen order, so no
// output byte depends on it. std::hash reads 8 bytes per dependent multiply,
// several times slower on chunk-sized strings.
inline std::uint64_t string_table_hash(std::string_view text) noexcept {
  constexpr std::uint64_t k0 = 0xA0761D6478BD642Full, k1 = 0xE7037ED1A0B428DBull, k2 = 0x8EBC6AF09C88C6E3ull;
  const auto mix = [](std::uint64_t a, std::uint64_t b) noexcept {
    __extension__ using u128 = unsigned __int128;
    const u128 product = static_cast<u128>(a) * b;
    return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
  };
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t n = text.size();
  std::uint64_t seed = k0 ^ mix(n ^ k0, k1);
  std::uint64_t a = 0, b = 0;
  if (n <= 16) {
    if (n >= 4) {
      const std::size_t middle = (n >> 3) << 2;  // 0 or 4: the two halves overlap for n < 8
      a = (std::uint64_t{load_u32(p)} << 32) | load_u32(p + middle);
      b = (std::uint64_t{load_u32(p + n - 4)} << 32) | load_u32(p + n - 4 - middle);
    } else if (n > 0) {
      a = (std::uint64_t{p[0]} << 16) | (std::uint64_t{p[n >> 1]} << 8) | p[n - 1];
    }
  } else {
    if (n > 32) {
      std::uint64_t second = seed;
      do {
        seed = mix(load_u64(p) ^ k1, load_u64(p + 8) ^ seed);
        second = mix(load_u64(p + 16) ^ k2, load_u64(p + 24) ^ second);
        p += 32;
        n -= 32;
      } while (n > 32);
      seed ^= second;
    }
    if (n > 16) {
      seed = mix(load_u64(p) ^ k1, load_u64(p + 8) ^ seed);
      p += 16;
      n -= 16;
    }
    a = load_u64(p + n - 16);  // the last 16 bytes, overlapping what came before
    b = load_u64(p + n - 8);
  }
  return mix(k1 ^ text.size(), mix(a ^ k1, b ^ seed));
}

}  // namespace agentctx::agdb::detail
