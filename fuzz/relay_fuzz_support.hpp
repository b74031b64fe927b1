// What the Relay fuzz targets (relay_log_fuzz, relay_import_fuzz) share: a
// broken rule traps, and stores open with a fixed clock and fixed ids, so
// that an input runs the same way every time.
#pragma once

#include <cstdint>

#include "agentctx/relay/store.hpp"

namespace relay_fuzz {

/// Traps (__builtin_trap) when `condition` is false, so libFuzzer keeps the input.
inline void require(bool condition) {
  if (!condition) __builtin_trap();
}

/// Store options with a fixed clock (2026-04-18T20:00:00Z) and random source.
inline agentctx::relay::store_options options(bool read_only) {
  agentctx::relay::store_options o;
  o.read_only = read_only;
  o.clock = [] { return std::uint64_t{1'776'542'400'000}; };
  o.random = [] { return std::uint64_t{0x1234'5678'9ABC'DEF0}; };
  return o;
}

}  // namespace relay_fuzz
