// agentctx/turns/detail/blob_cache.hpp: a small LRU of decompressed payloads
// (seed 002 section 10), bounded in bytes. Entries are immutable and shared:
// a hit costs a map lookup and a copy of the payload, not a pread, a zstd
// decompression and a SHA-256.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/turns/blob_index.hpp"
#include "agentctx/turns/format.hpp"

namespace agentctx::turns::detail {

class blob_cache {
 public:
  using payload = std::shared_ptr<const std::vector<std::byte>>;

  /// `capacity` bytes of payloads at most; 0 disables the cache.
  explicit blob_cache(std::size_t capacity) : capacity_(capacity) {}

  payload find(const blob_hash& hash) {
    if (capacity_ == 0) return nullptr;
    std::lock_guard guard(mutex_);
    auto it = entries_.find(hash);
    if (it == entries_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  /// Keeps `bytes` (verified against `hash`); payloads larger than a quarter
  /// of the capacity are not kept, so one image cannot flush everything.
  void insert(const blob_hash& hash, payload bytes) {
    if (capacity_ == 0 || bytes->size() > capacity_ / 4) return;
    std::lock_guard guard(mutex_);
    if (entries_.count(hash) != 0) return;
    used_ += bytes->size();
    order_.emplace_front(hash, std::move(bytes));
    entries_.emplace(hash, order_.begin());
    while (used_ > capacity_ && !order_.empty()) {
      used_ -= order_.back().second->size();
      entries_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  void clear() {
    std::lock_guard guard(mutex_);
    entries_.clear();
    order_.clear();
    used_ = 0;
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::size_t used_ = 0;
  std::list<std::pair<blob_hash, payload>> order_;  // most recent first
  std::unordered_map<blob_hash, std::list<std::pair<blob_hash, payload>>::iterator, blob_hash_hasher> entries_;
};

}  // namespace agentctx::turns::detail
