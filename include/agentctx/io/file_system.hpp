// agentctx/io/file_system.hpp: the I/O interface every agentctx writer uses.
//
// Storage code never calls POSIX directly: it takes a `file_system&`. Three
// implementations exist:
//   - posix_file_system        (posix_file_system.hpp): the real disk;
//   - memory_file_system       (memory_file_system.hpp): in-process, tracks what
//                                was synced so it can simulate a crash;
//   - fault_injecting_file_system (fault_injecting_file_system.hpp): wraps any
//                                file system and fails the Nth write or sync, or
//                                tears a write at a byte.
// so crash and fault tests run without a disk.
//
// Paths are plain strings; '/' separates components. All calls return
// result<...>; none throws on I/O failure.
//
// Thread-safety: a file_system object may be used from several threads at
// once. On one `file` handle, read_at(), sync() and size() may run at the
// same time as any other call (pread / fdatasync semantics); the calls that
// change the file (append, write_at, truncate, close) must not overlap each
// other.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"

namespace agentctx::io {

/// How `file_system::open` treats an existing or missing file.
struct open_options {
  bool write = false;      ///< open for writing (otherwise read-only)
  bool create = false;     ///< create the file if missing (requires write)
  bool exclusive = false;  ///< with create: fail with already_exists if present
  bool truncate = false;   ///< with write: drop existing contents
};

inline constexpr open_options read_only{};
inline constexpr open_options read_write{true, false, false, false};
inline constexpr open_options create_or_open{true, true, false, false};
inline constexpr open_options create_new{true, true, true, false};
inline constexpr open_options create_truncate{true, true, false, true};

/// An open file handle. Writes are not durable until sync() returns success.
class file {
 public:
  virtual ~file() = default;

  /// Reads up to out.size() bytes at `offset`; returns the count (short at EOF).
  virtual result<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) = 0;
  /// Appends all of `data` at the current end of the file.
  virtual result<void> append(std::span<const std::byte> data) = 0;
  /// Writes all of `data` at `offset` (extending the file if needed).
  virtual result<void> write_at(std::uint64_t offset, std::span<const std::byte> data) = 0;
  /// Makes every write so far durable (fdatasync semantics).
  virtual result<void> sync() = 0;
  /// Sets the file length.
  virtual result<void> truncate(std::uint64_t length) = 0;
  /// Current length in bytes.
  virtual result<std::uint64_t> size() = 0;
  /// Releases the handle; further calls fail. The destructor closes as well.
  virtual result<void> close() = 0;
  /// The path this handle was opened with.
  virtual const std::string& path() const noexcept = 0;
};

/// A held advisory lock; released when destroyed.
class file_lock {
 public:
  virtual ~file_lock() = default;
};

enum class lock_mode { shared, exclusive };

/// A read-only view of a whole file's bytes: a memory mapping for the POSIX
/// file system, a snapshot for the in-memory one. Move-only. The bytes stay
/// valid while this object lives, even if the file is replaced or removed.
class mapped_bytes {
 public:
  mapped_bytes() noexcept = default;
  mapped_bytes(const mapped_bytes&) = delete;
  mapped_bytes& operator=(const mapped_bytes&) = delete;
  mapped_bytes(mapped_bytes&& other) noexcept { swap(other); }
  mapped_bytes& operator=(mapped_bytes&& other) noexcept {
    mapped_bytes tmp(std::move(other));
    swap(tmp);
    return *this;
  }
  ~mapped_bytes() { release(); }

  /// Takes ownership of a region returned by mmap(); munmap()s it on release.
  static mapped_bytes adopt_mmap(void* address, std::size_t length) noexcept {
    mapped_bytes m;
    m.data_ = static_cast<const std::byte*>(address);
    m.size_ = length;
    m.mmapped_ = true;
    return m;
  }
  /// Shares an immutable buffer (used by in-memory file systems and tests).
  static mapped_bytes share(std::shared_ptr<const std::vector<std::byte>> buffer) noexcept {
    mapped_bytes m;
    if (buffer) {
      m.data_ = buffer->data();
      m.size_ = buffer->size();
    }
    m.owner_ = std::move(buffer);
    return m;
  }
  /// Copies `bytes` into a new owned buffer.
  static mapped_bytes copy_of(std::span<const std::byte> bytes) {
    return share(std::make_shared<const std::vector<std::byte>>(bytes.begin(), bytes.end()));
  }

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  void release() noexcept {
    if (mmapped_ && data_ != nullptr && size_ != 0) {
      ::munmap(const_cast<std::byte*>(data_), size_);
    }
    data_ = nullptr;
    size_ = 0;
    mmapped_ = false;
    owner_.reset();
  }
  void swap(mapped_bytes& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(mmapped_, o.mmapped_);
    std::swap(owner_, o.owner_);
  }

  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool mmapped_ = false;
  std::shared_ptr<const void> owner_;
};

/// The file system interface.
class file_system {
 public:
  virtual ~file_system() = default;

  virtual result<std::unique_ptr<file>> open(const std::string& path, open_options options) = 0;
  /// Maps the whole file read-only. An empty file gives an empty view.
  virtual result<mapped_bytes> map(const std::string& path) = 0;
  /// Atomically replaces `to` with `from` (POSIX rename semantics). Durable
  /// only after sync_dir() of the directory containing `to`.
  virtual result<void> rename(const std::string& from, const std::string& to) = 0;
  /// Removes a file (not a directory).
  virtual result<void> remove(const std::string& path) = 0;
  /// Removes an empty directory (rmdir). Errors: not_found; io_error with
  /// sys_errno ENOTEMPTY when it holds entries, ENOTDIR when it is a file.
  /// Durable only after sync_dir() of the directory containing it.
  virtual result<void> remove_dir(const std::string& path) = 0;
  /// Makes the directory's entries (creations, renames, removals) durable.
  virtual result<void> sync_dir(const std::string& dir) = 0;
  /// Creates a directory; succeeds if it already exists. Parents must exist.
  virtual result<void> create_dir(const std::string& path) = 0;
  virtual result<bool> exists(const std::string& path) = 0;
  virtual result<std::uint64_t> file_size(const std::string& path) = 0;
  /// The file's last modification time in Unix milliseconds. Errors: those
  /// of file_size; unsupported on a file system that keeps no times (the
  /// in-memory one).
  virtual result<std::uint64_t> modified_time_ms(const std::string& path) {
    return fail(errc::unsupported, "this file system keeps no modification times", path);
  }
  /// Names (not paths) of the entries of a directory, sorted, without . and ..
  virtual result<std::vector<std::string>> list_dir(const std::string& dir) = 0;
  /// Takes an advisory lock on `path` (created if missing). With wait=false a
  /// lock held elsewhere fails at once with errc::locked. Locks conflict across
  /// processes and across separate lock() calls in one process.
  ///
  /// The lock returned is on the file at `path` when the call returns: a
  /// file removed or replaced while the call waited for it (or between its
  /// open and its lock) is let go, and the file now at `path` is opened
  /// (created) and locked instead. So a holder may remove the lock file,
  /// and then its directory, before letting go: a waiter never ends up
  /// holding a lock that no one else can take. Errors: not_found when the
  /// directory is gone by then; io_error (EAGAIN) when the file was
  /// replaced each of 1000 times it was locked (detail::lock_attempts).
  virtual result<std::unique_ptr<file_lock>> lock(const std::string& path, lock_mode mode, bool wait) = 0;
};

/// The directory part of a path ("." when it has none).
inline std::string parent_directory(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

/// `name` inside `dir`: "dir/name" (one slash), or `name` when dir is empty.
inline std::string join_path(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (!out.empty() && out.back() != '/') out += '/';
  out += name;
  return out;
}

/// The last component of a path.
inline std::string file_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace agentctx::io
