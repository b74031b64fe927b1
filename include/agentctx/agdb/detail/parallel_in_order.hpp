// agentctx/agdb/detail/parallel_in_order.hpp: parallel work, consumed in order.
//
// compile_layer reads, chunks and embeds on several threads, while what they
// produce must be used in input order to keep the output deterministic: the
// ids a chunk gets depend on the chunks before it, and errors and progress
// must come in path order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "agentctx/core/result.hpp"

namespace agentctx::agdb::detail {

// Runs produce(i) for every i in [0, count) on up to `threads` threads, the
// calling one included, and consume(i) on the calling thread in increasing
// order of i, each once produce(i) has finished. The calling thread produces
// too while items are left, and only waits for the item it must consume next.
// When consume returns an error, no further item is started, the other
// threads are joined and the error is returned. A thread that cannot be
// started leaves its share to the others.
template <class Produce, class Consume>
result<void> produce_in_parallel_consume_in_order(std::size_t count, std::size_t threads, Produce&& produce,
                                                  Consume&& consume) {
  const std::unique_ptr<std::atomic<bool>[]> produced(new std::atomic<bool>[count]());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stopped{false};
  // Returns false once there is nothing left to start.
  auto produce_next = [&]() -> bool {
    if (stopped.load(std::memory_order_relaxed)) return false;
    const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
    if (i >= count) return false;
    produce(i);
    produced[i].store(true, std::memory_order_release);
    produced[i].notify_one();
    return true;
  };
  std::vector<std::jthread> helpers;  // declared after what they use: joined first
  for (std::size_t t = 1; t < std::min(threads, count); ++t) {
    try {
      helpers.emplace_back([&] {
        while (produce_next()) {
        }
      });
    } catch (const std::system_error&) {
      break;
    }
  }
  for (std::size_t consumed = 0; consumed < count; ++consumed) {
    while (!produced[consumed].load(std::memory_order_acquire)) {
      if (!produce_next()) produced[consumed].wait(false, std::memory_order_acquire);
    }
    if (result<void> done = consume(consumed); !done) {
      stopped.store(true, std::memory_order_relaxed);
      return done;
    }
  }
  return {};
}

/// One per CPU core, or 1 when the count is unknown.
inline std::size_t hardware_threads() noexcept { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace agentctx::agdb::detail
