// agentctx/io/writer_lock.hpp: the single-writer lock of an on-disk store.
//
// A store directory (a turn store, a Relay store) admits one writer at a time
// across processes: the writer holds an exclusive advisory lock on a lock file
// in the directory for as long as it is open, and writes its process id into
// that file, so that a second writer is told who holds it:
//
//   auto lock = io::acquire_writer_lock(fs, io::join_path(dir, "store.lock"), false);
//   // errc::locked, "store is locked by pid 4242", when another writer has it
//
// Readers take no lock. The lock is released when the returned object is
// destroyed (or the process dies: the kernel drops flock locks).
#pragma once

#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::io {

/// Takes the exclusive writer lock on `lock_path` (created if missing),
/// waiting for it when `wait`. When another process holds it: errc::locked
/// with the message "store is locked by pid N" (or "... by another writer"
/// when the file names no pid), path = the lock file's directory.
inline result<std::unique_ptr<file_lock>> acquire_writer_lock(file_system& fs, const std::string& lock_path, bool wait) {
  auto lock = fs.lock(lock_path, lock_mode::exclusive, wait);
  if (!lock) {
    error e = std::move(lock).error();
    if (e.code != errc::locked) return unexpected(std::move(e));
    std::string message = "store is locked by another writer";
    if (auto mapped = fs.map(lock_path); mapped && !mapped->empty()) {
      std::string_view text(reinterpret_cast<const char*>(mapped->data()), mapped->size());
      std::int64_t pid = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
      if (ec == std::errc() && pid > 0) message = "store is locked by pid " + std::to_string(pid);
    }
    return fail(errc::locked, std::move(message), parent_directory(lock_path));
  }
  // Name ourselves in the lock file so a second writer can say who holds it.
  if (auto pid_file = fs.open(lock_path, read_write)) {
    const std::string pid = std::to_string(static_cast<long long>(::getpid())) + "\n";
    (void)(*pid_file)->truncate(0);
    (void)(*pid_file)->write_at(0, std::as_bytes(std::span(pid.data(), pid.size())));
  }
  return std::move(*lock);
}

}  // namespace agentctx::io
