// agentctx/agdb/detail/chunk_id_index.hpp: chunk id -> record index, O(1).
//
// An open-addressing table sized once for the layer's chunk count (at most
// half full), so building it makes one allocation and a lookup touches one or
// two cache lines. Id 0 is never stored: it is the empty-slot marker, and a
// chunk id of 0 is invalid anyway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace agentctx::agdb::detail {

class chunk_id_index {
 public:
  static constexpr std::size_t npos = ~std::size_t{0};

  chunk_id_index() = default;
  explicit chunk_id_index(std::size_t expected_ids) {
    std::size_t capacity = 16;
    shift_ = 60;
    while (capacity / 2 < expected_ids) {
      capacity *= 2;
      --shift_;
    }
    slots_.assign(capacity, slot{});
  }

  /// Maps `id` (non-zero) to `index` unless `id` is present already: returns
  /// npos when inserted, else the index stored first. The table must have been
  /// sized for at least as many ids as are inserted.
  std::size_t insert(std::uint32_t id, std::size_t index) noexcept {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(id);; i = (i + 1) & mask) {
      slot& s = slots_[i];
      if (s.id == id) return s.index;
      if (s.id == 0) {
        s = slot{index, id};
        return npos;
      }
    }
  }

  std::optional<std::size_t> find(std::uint32_t id) const noexcept {
    if (id == 0 || slots_.empty()) return std::nullopt;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(id);; i = (i + 1) & mask) {
      const slot& s = slots_[i];
      if (s.id == id) return s.index;
      if (s.id == 0) return std::nullopt;
    }
  }

 private:
  struct slot {
    std::size_t index = 0;
    std::uint32_t id = 0;
  };

  // Fibonacci hashing: spreads sequential and clustered ids over the table.
  std::size_t home(std::uint32_t id) const noexcept {
    return static_cast<std::size_t>((std::uint64_t{id} * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  std::vector<slot> slots_;
  unsigned shift_ = 60;  // 64 - log2(slots_.size())
};

}  // namespace agentctx::agdb::detail
