// agentctx/io/memory_file_system.hpp: an in-memory file system that knows
// what a power loss would keep.
//
// It models durability the way a POSIX file system on a journaling disk
// behaves, so crash tests run without a disk:
//   - a file is an inode shared by every handle opened on it (a rename moves
//     the inode; a removed file stays usable through open handles). Each
//     inode has its durable contents, as of its last file::sync(), and the
//     ordered list of writes and truncates made since;
//   - each directory has its current entries and its durable entries;
//     creations, renames and removals become durable only when sync_dir() of
//     that directory succeeds. A new directory is durable once its parent is
//     synced; files inside a directory that did not survive are lost with it.
//
// simulate_crash() replaces the whole state by what a machine would find
// after a power loss at this instant (see crash_mode), then invalidates every
// open handle and releases every lock: their later calls fail with io_error.
// snapshot() / restore() copy the whole state cheaply (file bytes are shared
// copy-on-write), so a test can run a workload once up to a crash point and
// then try every crash mode on the same state:
//
//   auto saved = fs.snapshot();
//   for (std::size_t kept = 0; kept <= *fs.unsynced_operation_count(path); ++kept) {
//     fs.restore(saved);
//     fs.simulate_crash(crash_mode::keep_prefix(kept));
//     check_recovery(fs);
//   }
//
// Paths: '/' separates components; "." and empty components are ignored and
// ".." removes the previous component, so "a/b", "/a/b" and "./a//b" name the
// same file. The root directory always exists.
//
// Errors mirror what POSIX would report (see detail/file_system_errors.hpp):
// not_found (ENOENT), already_exists (EEXIST), io_error with sys_errno EISDIR,
// ENOTDIR, ENOTEMPTY, EBADF (write through a read-only or closed handle), EFBIG
// (beyond max_file_size) or EIO (handle invalidated by a crash), and locked.
// Unlike POSIX, opening a directory fails (EISDIR) even read-only.
//
// Thread-safety: every call takes one internal mutex; lock(wait=true) waits on
// a condition variable. Handles and locks may outlive the file system object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::io {

namespace detail {
struct memory_node;
struct memory_core;
}  // namespace detail

/// Which unsynced file data survives simulate_crash(). Whatever the policy,
/// the namespace reverts to the durable entries of every directory.
enum class crash_policy {
  drop_unsynced,  ///< every file reverts to its contents at its last sync
  keep_prefix,    ///< the first N unsynced operations of each file survive
  random_prefix,  ///< like keep_prefix, N drawn per file from `seed`
  random_pages,   ///< each page and the length independently keep their synced or current state
};

/// How simulate_crash() treats unsynced data. Build one with the factories.
struct crash_mode {
  static constexpr std::size_t page_size = 4096;  ///< granularity of random_pages

  crash_policy policy = crash_policy::drop_unsynced;
  /// keep_prefix: N for every file (clamped to the file's unsynced count).
  std::size_t kept_operations = 0;
  /// keep_prefix: N for particular files, by their path before the crash
  /// (looked up in the current namespace, then in the durable one).
  std::map<std::string, std::size_t> kept_operations_for_path;
  /// keep_prefix / random_prefix: when the last kept operation is a write,
  /// only its first bytes reach the disk.
  bool tear_last_kept_write = false;
  /// keep_prefix: how many bytes of the torn write survive (clamped to its
  /// size). random_prefix draws a count below the write's size instead.
  std::size_t torn_write_bytes = 0;
  /// random_prefix / random_pages: the same seed gives the same crash image.
  std::uint64_t seed = 0;

  static crash_mode drop_unsynced() { return {}; }
  /// Every unsynced write reached the disk; only the namespace reverts.
  static crash_mode keep_all_unsynced() { return keep_prefix(~std::size_t{0}); }
  static crash_mode keep_prefix(std::size_t kept) {
    crash_mode mode;
    mode.policy = crash_policy::keep_prefix;
    mode.kept_operations = kept;
    return mode;
  }
  static crash_mode keep_prefix_torn(std::size_t kept, std::size_t torn_bytes) {
    crash_mode mode = keep_prefix(kept);
    mode.tear_last_kept_write = true;
    mode.torn_write_bytes = torn_bytes;
    return mode;
  }
  static crash_mode random_prefix(std::uint64_t seed, bool tear = false) {
    crash_mode mode;
    mode.policy = crash_policy::random_prefix;
    mode.seed = seed;
    mode.tear_last_kept_write = tear;
    return mode;
  }
  static crash_mode random_pages(std::uint64_t seed) {
    crash_mode mode;
    mode.policy = crash_policy::random_pages;
    mode.seed = seed;
    return mode;
  }
};

/// One write or truncate made since a file's last sync.
struct unsynced_operation {
  enum class kind { write, truncate };
  kind type = kind::write;
  /// write: where the bytes start; truncate: the new length.
  std::uint64_t offset = 0;
  /// write: how many bytes; truncate: 0.
  std::uint64_t size = 0;
};

struct memory_file_system_options {
  /// Writes or truncates beyond this length fail with io_error (EFBIG).
  std::uint64_t max_file_size = std::uint64_t{1} << 32;
};

/// A saved copy of a memory_file_system's whole state (namespace, durable
/// and current contents, unsynced operations). Cheap to copy; immutable.
class memory_file_system_state {
 public:
  memory_file_system_state() = default;

 private:
  friend class memory_file_system;
  std::shared_ptr<const detail::memory_node> root_;
};

class memory_file_system final : public file_system {
 public:
  memory_file_system();
  explicit memory_file_system(memory_file_system_options options);
  memory_file_system(const memory_file_system&) = delete;
  memory_file_system& operator=(const memory_file_system&) = delete;
  ~memory_file_system() override = default;

  result<std::unique_ptr<file>> open(const std::string& path, open_options options) override;
  /// A snapshot of the current contents; later writes do not change it.
  result<mapped_bytes> map(const std::string& path) override;
  result<void> rename(const std::string& from, const std::string& to) override;
  result<void> remove(const std::string& path) override;
  result<void> remove_dir(const std::string& path) override;
  result<void> sync_dir(const std::string& dir) override;
  result<void> create_dir(const std::string& path) override;
  result<bool> exists(const std::string& path) override;
  result<std::uint64_t> file_size(const std::string& path) override;
  result<std::vector<std::string>> list_dir(const std::string& dir) override;
  /// flock semantics on the file's inode (created if missing): shared locks
  /// coexist, an exclusive one excludes all others, whoever asks. wait=true
  /// blocks until compatible; a crash while waiting fails with io_error.
  result<std::unique_ptr<file_lock>> lock(const std::string& path, lock_mode mode, bool wait) override;
  /// How many lock() calls are waiting for a lock now (tests of what
  /// happens while one waits use it to know that one does).
  std::size_t lock_waiters() const;

  // --- crash simulation -----------------------------------------------------

  /// Replaces the state by what survives a power loss now (see crash_mode),
  /// invalidates all open handles and releases all locks.
  void simulate_crash(const crash_mode& mode = {});
  /// Copies the whole state. Open handles and locks are not part of it.
  memory_file_system_state snapshot() const;
  /// Returns to a saved state; like a crash, invalidates handles and locks.
  /// A state may be restored any number of times.
  void restore(const memory_file_system_state& saved);
  /// How many writes and truncates of the file at `path` are not yet synced.
  /// Errors: not_found, io_error (EISDIR).
  result<std::size_t> unsynced_operation_count(const std::string& path) const;
  /// Those operations, oldest first.
  result<std::vector<unsynced_operation>> unsynced_operations(const std::string& path) const;

  // --- test helpers ---------------------------------------------------------

  /// Creates or replaces `path` with `bytes` and makes both the contents and
  /// the directory entry durable (file sync, then sync_dir of the parent).
  result<void> write_whole(const std::string& path, std::span<const std::byte> bytes);
  result<void> write_whole(const std::string& path, std::string_view text);
  /// The current contents of `path`. Errors: not_found, io_error (EISDIR).
  result<std::vector<std::byte>> read_whole(const std::string& path) const;

 private:
  std::shared_ptr<detail::memory_core> core_;
};

}  // namespace agentctx::io

#include "agentctx/io/detail/memory_file_system-inl.hpp"
