// agentctx/io/fault_injecting_file_system.hpp: a file_system wrapper that
// fails chosen operations, for fault and crash tests.
//
// It forwards every call to an inner file system (usually a
// memory_file_system) and numbers the mutating operations it forwards:
//   write     file::append, file::write_at
//   sync      file::sync
//   sync_dir  file_system::sync_dir
//   rename    file_system::rename
//   remove    file_system::remove, file_system::remove_dir
//   truncate  file::truncate
//   create    open() with create or truncate, create_dir()
// Operations are numbered from 1, globally and per kind, since construction
// or the last reset(). A test runs its workload once to learn the count, then
// for every N arms a fault at N and runs it again:
//
//   fault_injecting_file_system faulty(memory);
//   run_workload(faulty);
//   std::uint64_t total = faulty.operation_count();
//   for (std::uint64_t n = 1; n <= total; ++n) {
//     memory.restore(initial);
//     faulty.reset();
//     faulty.set_crash_after_fault(true);
//     faulty.fail_operation(n);
//     run_workload(faulty);        // fails at operation n
//     memory.simulate_crash();     // power loss right there
//     check_recovery(memory);
//   }
//
// An injected fault returns errc::io_error with sys_errno EIO and does not
// reach the inner file system, except a torn write, whose first bytes do.
// In "crash after fault" mode every later call (reads, opens, maps and locks
// included) fails the same way, as if the process had died; file::close()
// always closes the inner handle.
//
// Thread-safety: counters and armed faults are guarded by a mutex.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <iterator>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::io {

/// The mutating operations the fault-injecting file system counts.
enum class operation_kind { write, sync, sync_dir, rename, remove, truncate, create };
inline constexpr std::size_t operation_kind_count = 7;

/// One counted operation, as recorded in operation_history().
struct recorded_operation {
  operation_kind kind = operation_kind::write;
  std::string path;  ///< for rename, the source
};

/// A fault to inject: at the `n`th operation (1-based) of `kind`, or of any
/// kind when `kind` is empty. With `torn_write_bytes`, a write hit by the
/// fault passes its first bytes to the inner file system before failing.
struct fault {
  std::optional<operation_kind> kind;
  std::uint64_t n = 0;
  std::optional<std::size_t> torn_write_bytes;
};

namespace detail {

struct fault_state {
  std::mutex mutex;
  std::vector<fault> armed;
  std::uint64_t total = 0;
  std::uint64_t per_kind[operation_kind_count] = {};
  std::vector<recorded_operation> history;
  std::uint64_t injected = 0;
  bool crash_after_fault = false;
  bool crashed = false;
  std::chrono::microseconds sync_latency{0};
};

/// What to do with one operation.
struct fault_decision {
  bool fail = false;
  bool after_crash = false;                     // failed because an earlier fault crashed the file system
  std::optional<std::size_t> torn_write_bytes;  // forward this prefix of the write first
};

inline error injected_error(std::string_view operation, const std::string& path, bool after_crash) {
  error e = system_error(operation, EIO, path);
  e.message += after_crash ? " (file system crashed by an injected fault)" : " (injected fault)";
  return e;
}

/// Refuses any call once crashed; `operation` names it in the error.
inline result<void> check_alive(fault_state& state, std::string_view operation, const std::string& path) {
  std::lock_guard guard(state.mutex);
  if (state.crashed) return unexpected(injected_error(operation, path, true));
  return {};
}

/// Counts a mutating operation and decides whether a fault hits it.
inline fault_decision count_operation(fault_state& state, operation_kind kind, const std::string& path) {
  std::lock_guard guard(state.mutex);
  std::uint64_t index = ++state.total;
  std::uint64_t kind_index = ++state.per_kind[static_cast<std::size_t>(kind)];
  state.history.push_back({kind, path});
  fault_decision decision;
  if (state.crashed) {
    decision.fail = true;
    decision.after_crash = true;
    return decision;
  }
  for (const fault& armed : state.armed) {
    bool hit = armed.kind ? (*armed.kind == kind && armed.n == kind_index) : armed.n == index;
    if (!hit) continue;
    decision.fail = true;
    if (kind == operation_kind::write) decision.torn_write_bytes = armed.torn_write_bytes;
    ++state.injected;
    if (state.crash_after_fault) state.crashed = true;
    break;
  }
  return decision;
}

/// Runs `forward` unless the decision says fail; a failed call reports the
/// injected error (after forwarding a torn prefix, for writes).
template <class Forward>
result<void> guarded(fault_state& state, operation_kind kind, std::string_view operation, const std::string& path,
                     Forward&& forward) {
  fault_decision decision = count_operation(state, kind, path);
  if (!decision.fail) return forward();
  return unexpected(injected_error(operation, path, decision.after_crash));
}

class fault_injecting_file final : public file {
 public:
  fault_injecting_file(std::shared_ptr<fault_state> state, std::unique_ptr<file> inner)
      : state_(std::move(state)), inner_(std::move(inner)) {}

  result<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) override {
    AGENTCTX_TRY(check_alive(*state_, "read", path()));
    return inner_->read_at(offset, out);
  }
  result<void> append(std::span<const std::byte> data) override {
    return write(data, [&](std::span<const std::byte> part) { return inner_->append(part); });
  }
  result<void> write_at(std::uint64_t offset, std::span<const std::byte> data) override {
    return write(data, [&](std::span<const std::byte> part) { return inner_->write_at(offset, part); });
  }
  result<void> sync() override {
    std::chrono::microseconds latency;
    {
      std::lock_guard guard(state_->mutex);
      latency = state_->sync_latency;
    }
    if (latency.count() > 0) std::this_thread::sleep_for(latency);
    return guarded(*state_, operation_kind::sync, "sync", path(), [&] { return inner_->sync(); });
  }
  result<void> truncate(std::uint64_t length) override {
    return guarded(*state_, operation_kind::truncate, "truncate", path(), [&] { return inner_->truncate(length); });
  }
  result<std::uint64_t> size() override {
    AGENTCTX_TRY(check_alive(*state_, "stat", path()));
    return inner_->size();
  }
  result<void> close() override { return inner_->close(); }
  const std::string& path() const noexcept override { return inner_->path(); }

 private:
  template <class Forward>
  result<void> write(std::span<const std::byte> data, Forward&& forward) {
    fault_decision decision = count_operation(*state_, operation_kind::write, path());
    if (!decision.fail) return forward(data);
    if (decision.torn_write_bytes) {
      (void)forward(data.first(std::min(*decision.torn_write_bytes, data.size())));
    }
    return unexpected(injected_error("write", path(), decision.after_crash));
  }

  std::shared_ptr<fault_state> state_;
  std::unique_ptr<file> inner_;
};

}  // namespace detail

class fault_injecting_file_system final : public file_system {
 public:
  /// Wraps `inner`, which must outlive this object and every handle it opens.
  explicit fault_injecting_file_system(file_system& inner)
      : inner_(inner), state_(std::make_shared<detail::fault_state>()) {}

  // --- arming -----------------------------------------------------------------

  /// Adds a fault; several may be armed at once.
  void inject(fault f) {
    std::lock_guard guard(state_->mutex);
    state_->armed.push_back(std::move(f));
  }
  /// Fails the nth mutating operation of any kind (a write there is not torn).
  void fail_operation(std::uint64_t n) { inject({std::nullopt, n, std::nullopt}); }
  /// Fails the nth operation that is a write, and passes its first
  /// `kept_bytes` to the inner file system; any other operation there fails.
  void tear_operation(std::uint64_t n, std::size_t kept_bytes) { inject({std::nullopt, n, kept_bytes}); }
  void fail_write(std::uint64_t n) { inject({operation_kind::write, n, std::nullopt}); }
  /// The first `kept_bytes` of the nth write reach the inner file system, then the call fails.
  void tear_write(std::uint64_t n, std::size_t kept_bytes) { inject({operation_kind::write, n, kept_bytes}); }
  void fail_sync(std::uint64_t n) { inject({operation_kind::sync, n, std::nullopt}); }
  void fail_rename(std::uint64_t n) { inject({operation_kind::rename, n, std::nullopt}); }
  /// When on, every call after the first injected fault fails too.
  void set_crash_after_fault(bool on) {
    std::lock_guard guard(state_->mutex);
    state_->crash_after_fault = on;
  }
  /// Makes every file::sync() take at least this long, like a disk's
  /// flush, so tests can see concurrent writers share syncs.
  void set_sync_latency(std::chrono::microseconds latency) {
    std::lock_guard guard(state_->mutex);
    state_->sync_latency = latency;
  }
  /// Disarms all faults, turns crash-after-fault off, leaves crashed mode and
  /// zeroes every counter and the history.
  void reset() {
    std::lock_guard guard(state_->mutex);
    state_->armed.clear();
    state_->total = 0;
    std::fill(std::begin(state_->per_kind), std::end(state_->per_kind), 0);
    state_->history.clear();
    state_->injected = 0;
    state_->crash_after_fault = false;
    state_->crashed = false;
  }

  // --- counters ---------------------------------------------------------------

  /// Mutating operations attempted since construction or reset().
  std::uint64_t operation_count() const {
    std::lock_guard guard(state_->mutex);
    return state_->total;
  }
  std::uint64_t operation_count(operation_kind kind) const {
    std::lock_guard guard(state_->mutex);
    return state_->per_kind[static_cast<std::size_t>(kind)];
  }
  /// The counted operations in order: entry i is operation number i + 1.
  std::vector<recorded_operation> operation_history() const {
    std::lock_guard guard(state_->mutex);
    return state_->history;
  }
  /// How many faults fired.
  std::uint64_t faults_injected() const {
    std::lock_guard guard(state_->mutex);
    return state_->injected;
  }
  bool crashed() const {
    std::lock_guard guard(state_->mutex);
    return state_->crashed;
  }
  file_system& inner() noexcept { return inner_; }

  // --- file_system ------------------------------------------------------------

  result<std::unique_ptr<file>> open(const std::string& path, open_options options) override {
    if (options.create || options.truncate) {
      AGENTCTX_TRY(detail::guarded(*state_, operation_kind::create, "open", path, [] { return result<void>{}; }));
    } else {
      AGENTCTX_TRY(detail::check_alive(*state_, "open", path));
    }
    auto inner = inner_.open(path, options);
    if (!inner) return unexpected(std::move(inner).error());
    return std::unique_ptr<file>(std::make_unique<detail::fault_injecting_file>(state_, std::move(*inner)));
  }
  result<mapped_bytes> map(const std::string& path) override {
    AGENTCTX_TRY(detail::check_alive(*state_, "map", path));
    return inner_.map(path);
  }
  result<void> rename(const std::string& from, const std::string& to) override {
    return detail::guarded(*state_, operation_kind::rename, "rename", from, [&] { return inner_.rename(from, to); });
  }
  result<void> remove(const std::string& path) override {
    return detail::guarded(*state_, operation_kind::remove, "remove", path, [&] { return inner_.remove(path); });
  }
  result<void> remove_dir(const std::string& path) override {
    return detail::guarded(*state_, operation_kind::remove, "remove directory", path,
                           [&] { return inner_.remove_dir(path); });
  }
  result<void> sync_dir(const std::string& dir) override {
    return detail::guarded(*state_, operation_kind::sync_dir, "sync", dir, [&] { return inner_.sync_dir(dir); });
  }
  result<void> create_dir(const std::string& path) override {
    return detail::guarded(*state_, operation_kind::create, "create directory", path,
                           [&] { return inner_.create_dir(path); });
  }
  result<bool> exists(const std::string& path) override {
    AGENTCTX_TRY(detail::check_alive(*state_, "stat", path));
    return inner_.exists(path);
  }
  result<std::uint64_t> file_size(const std::string& path) override {
    AGENTCTX_TRY(detail::check_alive(*state_, "stat", path));
    return inner_.file_size(path);
  }
  result<std::uint64_t> modified_time_ms(const std::string& path) override {
    AGENTCTX_TRY(detail::check_alive(*state_, "stat", path));
    return inner_.modified_time_ms(path);
  }
  result<std::vector<std::string>> list_dir(const std::string& dir) override {
    AGENTCTX_TRY(detail::check_alive(*state_, "list directory", dir));
    return inner_.list_dir(dir);
  }
  result<std::unique_ptr<file_lock>> lock(const std::string& path, lock_mode mode, bool wait) override {
    AGENTCTX_TRY(detail::check_alive(*state_, "lock", path));
    return inner_.lock(path, mode, wait);
  }

 private:
  file_system& inner_;
  std::shared_ptr<detail::fault_state> state_;
};

}  // namespace agentctx::io
