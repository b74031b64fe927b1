// agentctx/turns/detail/sync_worker.hpp: one helper thread that syncs a file
// while the caller syncs another, so that two fdatasync() calls on the same
// disk overlap (on ext4 they share a journal commit: about the latency of one).
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::turns::detail {

class sync_worker {
 public:
  sync_worker() = default;
  sync_worker(const sync_worker&) = delete;
  sync_worker& operator=(const sync_worker&) = delete;
  ~sync_worker() {
    {
      std::lock_guard guard(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  /// Syncs `first` on the helper thread and `second` on this one; returns
  /// when both are done, with the first failure. One caller at a time.
  result<void> sync_both(io::file& first, io::file& second) {
    {
      std::lock_guard guard(mutex_);
      if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
      job_ = &first;
      done_.reset();
    }
    changed_.notify_all();
    result<void> mine = second.sync();
    std::unique_lock guard(mutex_);
    changed_.wait(guard, [&] { return done_.has_value(); });
    result<void> theirs = std::move(*done_);
    done_.reset();
    if (!theirs) return theirs;
    return mine;
  }

 private:
  void run() {
    std::unique_lock guard(mutex_);
    for (;;) {
      changed_.wait(guard, [&] { return stopping_ || job_ != nullptr; });
      if (job_ == nullptr) return;
      io::file* job = job_;
      job_ = nullptr;
      guard.unlock();
      result<void> outcome = job->sync();
      guard.lock();
      done_ = std::move(outcome);
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread thread_;
  io::file* job_ = nullptr;
  std::optional<result<void>> done_;
  bool stopping_ = false;
};

}  // namespace agentctx::turns::detail
