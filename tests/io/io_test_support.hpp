// Helpers shared by the I/O tests: byte/text conversion, a scratch folder
// on disk, and the four fixtures the shared file-system suite runs against.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "agentctx/io/confined_file_system.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "support/result_checks.hpp"

namespace io_test {

inline std::vector<std::byte> bytes_of(std::string_view text) {
  auto view = std::as_bytes(std::span<const char>(text.data(), text.size()));
  return {view.begin(), view.end()};
}

inline std::string text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// The current contents of `path` as text, read through map().
inline std::string read_text(agentctx::io::file_system& fs, const std::string& path) {
  auto mapped = fs.map(path);
  REQUIRE_MESSAGE(mapped.has_value(), test_support::error_text(mapped));
  return text_of(mapped->bytes());
}

/// The current contents of `path` in a memory file system, as text.
inline std::string whole(agentctx::io::memory_file_system& fs, const std::string& path) {
  auto bytes = fs.read_whole(path);
  REQUIRE_MESSAGE(bytes.has_value(), test_support::error_text(bytes));
  return text_of(*bytes);
}

/// Creates or truncates `path` and writes `text` (nothing is synced).
inline void write_text(agentctx::io::file_system& fs, const std::string& path, std::string_view text) {
  auto handle = fs.open(path, agentctx::io::create_truncate);
  REQUIRE_MESSAGE(handle.has_value(), test_support::error_text(handle));
  REQUIRE((*handle)->append(bytes_of(text)).has_value());
  REQUIRE((*handle)->close().has_value());
}

/// A fresh folder under `parent` (by default the temporary folder: $TMPDIR
/// or /tmp), removed with everything in it when destroyed.
class temporary_directory {
 public:
  explicit temporary_directory(const std::filesystem::path& parent = std::filesystem::temp_directory_path()) {
    std::string pattern = (parent / "agentctx-io-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
  ~temporary_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// Where a simulated crash struck: mutating operation `n` (1-based, as
/// fault_injecting_file_system numbers them) of `operations` (those of the
/// workload run without a fault) failed, and if `torn`, that operation was a
/// write whose first bytes reached the file system.
struct crash_point {
  std::uint64_t n = 0;
  bool torn = false;
  std::span<const agentctx::io::recorded_operation> operations;

  /// Whether an operation of `kind` completed before the crash.
  bool completed(agentctx::io::operation_kind kind) const {
    for (std::uint64_t i = 0; i + 1 < n; ++i) {
      if (operations[i].kind == kind) return true;
    }
    return false;
  }
};

/// Runs `workload(file_system&)` (which returns a result) through a
/// fault-injecting file system over `memory`: once without a fault to learn
/// its operations, then once per crash point, every operation and each write
/// again torn after `torn_bytes`, the process dying there (crash-after-fault
/// mode). Every run starts from `initial`. After each crashed run,
/// `inspect(point)` looks at `memory` as the process left it (open handles
/// dead, unsynced data not yet lost: simulate_crash() it to model a power
/// loss). Returns the operations of the run without a fault.
template <class Workload, class Inspect>
std::vector<agentctx::io::recorded_operation> crash_at_every_operation(
    agentctx::io::memory_file_system& memory, const agentctx::io::memory_file_system_state& initial,
    std::size_t torn_bytes, Workload&& workload, Inspect&& inspect) {
  agentctx::io::fault_injecting_file_system faulty(memory);
  memory.restore(initial);
  REQUIRE(workload(faulty).has_value());
  const std::vector<agentctx::io::recorded_operation> history = faulty.operation_history();
  for (std::uint64_t n = 1; n <= history.size(); ++n) {
    const bool is_write = history[n - 1].kind == agentctx::io::operation_kind::write;
    for (const bool torn : {false, true}) {
      if (torn && !is_write) continue;
      CAPTURE(n);
      CAPTURE(torn);
      memory.restore(initial);
      faulty.reset();
      faulty.set_crash_after_fault(true);
      if (torn) {
        faulty.tear_operation(n, torn_bytes);
      } else {
        faulty.fail_operation(n);
      }
      CHECK_FALSE(workload(faulty).has_value());
      CHECK(faulty.faults_injected() == 1);
      inspect(crash_point{n, torn, history});
    }
  }
  return history;
}

/// Whether a thread of this process waits for a flock() on the file at the
/// real path `path` now: Linux lists a waiting lock in /proc/locks with "->"
/// before it, then the process id, then the file's device and inode
/// ("1: -> FLOCK  ADVISORY  WRITE 3977 fe:00:10952705 0 EOF"). The device is
/// not compared: on btrfs and overlayfs it is not the one stat() gives.
inline bool disk_lock_waited(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  const std::string pid = " " + std::to_string(::getpid()) + " ";
  const std::string inode = ":" + std::to_string(st.st_ino) + " ";
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    const std::size_t arrow = line.find("->");
    const std::size_t by = line.find(pid);
    if (arrow != std::string::npos && by != std::string::npos && line.find(inode, by) != std::string::npos) {
      return true;
    }
  }
  return false;
}

/// Returns once `waited()` is true (a lock() call waits for a held lock),
/// polling; fails the test when it is not after 60 seconds, which only a
/// lock() that never waits can take (or a file system whose waiting locks
/// /proc/locks does not list).
inline void wait_until(const std::function<bool()>& waited) {
  for (int i = 0; i < 60000 && !waited(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE_MESSAGE(waited(), "no lock() call came to wait for the lock");
}

/// A thread that waits for a lock the test holds. Should the test fail
/// before it joins (a REQUIRE throws), the destructor calls `release` (which
/// lets go of the test's lock) and then joins, so the thread can finish and
/// the failure is reported rather than std::terminate called.
class waiting_thread {
 public:
  waiting_thread(std::function<void()> body, std::function<void()> release)
      : release_(std::move(release)), thread_(std::move(body)) {}
  waiting_thread(const waiting_thread&) = delete;
  waiting_thread& operator=(const waiting_thread&) = delete;
  ~waiting_thread() {
    if (!thread_.joinable()) return;
    release_();
    thread_.join();
  }
  void join() { thread_.join(); }

 private:
  std::function<void()> release_;
  std::thread thread_;
};

// Fixtures: `fs` is the file system under test, `base` an empty directory in
// it; lock_waited(path) says whether a lock() on `path` (a path of `fs`)
// waits now.
struct posix_fixture {
  temporary_directory directory;
  agentctx::io::posix_file_system posix;
  agentctx::io::file_system& fs = posix;
  std::string base = directory.path();
  std::function<bool()> lock_waited(const std::string& path) const {
    return [path] { return disk_lock_waited(path); };
  }
};

struct memory_fixture {
  memory_fixture() { REQUIRE(memory.create_dir(base).has_value()); }
  agentctx::io::memory_file_system memory;
  agentctx::io::file_system& fs = memory;
  std::string base = "/base";
  std::function<bool()> lock_waited(const std::string&) const {
    return [this] { return memory.lock_waiters() != 0; };
  }
};

/// An unarmed fault-injecting file system must behave exactly like its inner one.
struct fault_fixture {
  fault_fixture() { REQUIRE(memory.create_dir(base).has_value()); }
  agentctx::io::memory_file_system memory;
  agentctx::io::fault_injecting_file_system faulty{memory};
  agentctx::io::file_system& fs = faulty;
  std::string base = "/base";
  std::function<bool()> lock_waited(const std::string&) const {
    return [this] { return memory.lock_waiters() != 0; };
  }
};

/// The real disk confined to a scratch folder: paths are relative to it.
struct confined_fixture {
  confined_fixture() { REQUIRE(fs.create_dir(base).has_value()); }
  static std::unique_ptr<agentctx::io::confined_file_system> open_root(const std::string& root) {
    auto opened = agentctx::io::confined_file_system::open(std::filesystem::canonical(root).string());
    REQUIRE_MESSAGE(opened.has_value(), test_support::error_text(opened));
    return std::move(*opened);
  }
  temporary_directory directory;
  std::unique_ptr<agentctx::io::confined_file_system> confined = open_root(directory.path());
  agentctx::io::file_system& fs = *confined;
  std::string base = "base";
  std::function<bool()> lock_waited(const std::string& path) const {
    return [real = directory.path() + "/" + path] { return disk_lock_waited(real); };
  }
};

}  // namespace io_test

/// The fixtures for TEST_CASE_TEMPLATE suites that must hold for every file system.
#define IO_TEST_FILE_SYSTEMS \
  io_test::posix_fixture, io_test::memory_fixture, io_test::fault_fixture, io_test::confined_fixture
