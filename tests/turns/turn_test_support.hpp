// Helpers shared by the turn store tests: payloads, opening stores in a
// memory file system, and checks that print the library's error on failure.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/turns/turn_store.hpp"
#include "support/result_checks.hpp"

namespace turns_test {

using namespace agentctx;
using namespace agentctx::turns;

inline std::vector<std::byte> bytes_of(std::string_view text) {
  auto view = std::as_bytes(std::span<const char>(text.data(), text.size()));
  return {view.begin(), view.end()};
}

inline std::string text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// A deterministic chat-turn-like payload: compressible JSON text of about
/// `size` bytes, different for every seed.
inline std::vector<std::byte> payload(std::uint64_t seed, std::size_t size = 300) {
  std::mt19937_64 random(seed * 0x9E3779B97F4A7C15ull + 1);
  static constexpr std::string_view words[] = {"the", "store", "turn", "context", "blob", "agent", "tool",
                                               "result", "replay", "fork", "head", "durable", "page"};
  std::string text = "{\"seed\":" + std::to_string(seed) + ",\"role\":\"assistant\",\"content\":\"";
  while (text.size() + 2 < size) {
    text += words[random() % std::size(words)];
    text += ' ';
  }
  text.resize(size > 2 ? size - 2 : 0);
  text += "\"}";
  return bytes_of(text);
}

/// Random bytes that zstd cannot shrink.
inline std::vector<std::byte> noise(std::uint64_t seed, std::size_t size) {
  std::mt19937_64 random(seed);
  std::vector<std::byte> out(size);
  for (auto& b : out) b = static_cast<std::byte>(random());
  return out;
}

/// Options with a fixed clock and a deterministic random source.
inline store_options test_options(std::uint64_t seed = 1) {
  store_options options;
  auto counter = std::make_shared<std::mt19937_64>(seed);
  options.random = [counter] { return (*counter)(); };
  auto clock = std::make_shared<std::uint64_t>(1'700'000'000'000);
  options.clock = [clock] { return (*clock)++; };
  return options;
}

/// test_options() with small thresholds, so that index runs (and merges),
/// checkpoints and head snapshots are written by short workloads too.
inline store_options small_thresholds(std::uint64_t seed, std::size_t seal, std::uint64_t checkpoint,
                                      std::uint64_t snapshot) {
  store_options options = test_options(seed);
  options.seal_threshold = seal;
  options.checkpoint_interval = checkpoint;
  options.snapshot_threshold = snapshot;
  return options;
}

using test_support::require_ok;
using test_support::require_value;

/// A new store in `dir` of `fs`, opened as its writer.
inline std::unique_ptr<turn_store> fresh_store(io::file_system& fs, const std::string& dir = "store",
                                               store_options options = test_options()) {
  require_ok(turn_store::init(fs, dir, options));
  return require_value(turn_store::open(fs, dir, options));
}

}  // namespace turns_test
