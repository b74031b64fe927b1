// tests/support/random.hpp: a deterministic pseudo-random stream for tests
// that generate their inputs (the same numbers on every platform and run).
#pragma once

#include <cstddef>
#include <cstdint>

namespace test_support {

/// Marsaglia's xorshift64. The seed must not be 0.
class random_stream {
 public:
  explicit random_stream(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  /// Uniform enough in [0, bound) for choosing test inputs.
  std::size_t below(std::size_t bound) noexcept { return static_cast<std::size_t>(next() % bound); }

 private:
  std::uint64_t state_;
};

}  // namespace test_support
