// agentctx/io/posix_file_system.hpp: the file_system of the real disk.
//
// A thin layer over POSIX calls:
//   - every descriptor is opened with O_CLOEXEC;
//   - reads use pread, writes pwrite (write_at) or write after lseek to the
//     end (append); EINTR and short transfers are retried until done;
//   - file::sync is fdatasync, sync_dir is fsync on the directory;
//   - map() is mmap(PROT_READ, MAP_PRIVATE) and closes the descriptor right
//     away; an empty file gives an empty view without a mapping;
//   - lock() is flock(), which, unlike fcntl locks, conflicts both across
//     processes and across separate lock() calls within one process.
//
// Errors: the code follows the errno (ENOENT -> not_found, EEXIST ->
// already_exists, EACCES/EPERM -> permission_denied, ENOSPC/EDQUOT ->
// no_space, anything else -> io_error); error::sys_errno holds the errno,
// error::path the path, and the message reads "open failed: No such file or
// directory". A lock held elsewhere gives errc::locked.
//
// A mapping must not be used after the mapped file is truncated in place
// (the kernel would raise SIGBUS); replacing or removing the file is safe.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::io {

namespace detail {

/// Offsets and lengths beyond off_t cannot be passed to the kernel.
inline bool fits_off_t(std::uint64_t offset, std::uint64_t length) noexcept {
  constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());
  return offset <= max && length <= max - offset;
}

inline int open_retrying(const char* path, int flags, mode_t mode = 0) noexcept {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

/// Owns a descriptor; closes it when destroyed unless release()d.
class unique_fd {
 public:
  explicit unique_fd(int fd = -1) noexcept : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = other.release();
    }
    return *this;
  }
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  /// Gives up ownership without closing.
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  /// Closes now; returns the errno of close() or 0.
  int close() noexcept {
    int fd = fd_;
    fd_ = -1;
    // close() is not retried on EINTR: Linux frees the descriptor regardless.
    return ::close(fd) == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

class posix_file final : public file {
 public:
  posix_file(int fd, std::string path, bool writable) : fd_(fd), path_(std::move(path)), writable_(writable) {}

  result<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) override {
    if (!fits_off_t(offset, out.size())) return fail(errc::invalid_argument, "read: offset out of range", path_);
    AGENTCTX_TRY(check_open("read"));
    return transfer("read", out.size(), [&](std::size_t done) {
      return ::pread(fd_.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    });
  }

  result<void> append(std::span<const std::byte> data) override {
    AGENTCTX_TRY(check_writable("write"));
    off_t end = ::lseek(fd_.get(), 0, SEEK_END);
    if (end < 0) return system_failure("seek", errno, path_);
    return write_all(static_cast<std::uint64_t>(end), data);
  }

  result<void> write_at(std::uint64_t offset, std::span<const std::byte> data) override {
    AGENTCTX_TRY(check_writable("write"));
    return write_all(offset, data);
  }

  result<void> sync() override {
    AGENTCTX_TRY(check_open("sync"));
    int rc;
    do {
#if defined(__APPLE__)
      rc = ::fcntl(fd_.get(), F_FULLFSYNC);
#else
      rc = ::fdatasync(fd_.get());
#endif
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return system_failure("sync", errno, path_);
    return {};
  }

  result<void> truncate(std::uint64_t length) override {
    AGENTCTX_TRY(check_writable("truncate"));
    if (!fits_off_t(length, 0)) return fail(errc::invalid_argument, "truncate: length out of range", path_);
    int rc;
    do {
      rc = ::ftruncate(fd_.get(), static_cast<off_t>(length));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return system_failure("truncate", errno, path_);
    return {};
  }

  result<std::uint64_t> size() override {
    AGENTCTX_TRY(check_open("stat"));
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0) return system_failure("stat", errno, path_);
    return static_cast<std::uint64_t>(st.st_size);
  }

  result<void> close() override {
    AGENTCTX_TRY(check_open("close"));
    if (int e = fd_.close(); e != 0) return system_failure("close", e, path_);
    return {};
  }

  const std::string& path() const noexcept override { return path_; }

 private:
  result<void> check_open(const char* operation) const {
    if (fd_.get() < 0) return system_failure(operation, EBADF, path_);
    return {};
  }
  result<void> check_writable(const char* operation) const {
    if (!writable_) return system_failure(operation, EBADF, path_);
    return check_open(operation);
  }

  result<void> write_all(std::uint64_t offset, std::span<const std::byte> data) {
    if (!fits_off_t(offset, data.size())) return fail(errc::invalid_argument, "write: offset out of range", path_);
    auto written = transfer("write", data.size(), [&](std::size_t done) {
      return ::pwrite(fd_.get(), data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    });
    if (!written) return unexpected(std::move(written).error());
    // pwrite returning 0 for a non-empty buffer would otherwise loop forever.
    if (*written != data.size()) return system_failure("write", EIO, path_);
    return {};
  }

  // Repeats `call(bytes_done)` (pread or pwrite of the rest) until `total`
  // bytes moved or it returns 0 (end of file); retries EINTR.
  template <class Call>
  result<std::size_t> transfer(const char* operation, std::size_t total, Call&& call) {
    std::size_t done = 0;
    while (done < total) {
      ssize_t n = call(done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return system_failure(operation, errno, path_);
      }
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  unique_fd fd_;
  std::string path_;
  bool writable_;
};

class posix_file_lock final : public file_lock {
 public:
  explicit posix_file_lock(int fd) noexcept : fd_(fd) {}  // closing the descriptor releases the flock

 private:
  unique_fd fd_;
};

/// st_mtim in Unix milliseconds (0 for times before 1970).
inline std::uint64_t modified_ms(const struct stat& st) noexcept {
  if (st.st_mtim.tv_sec < 0) return 0;
  return static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000 + static_cast<std::uint64_t>(st.st_mtim.tv_nsec) / 1'000'000;
}

inline result<struct stat> stat_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return system_failure("stat", errno, path);
  return st;
}

/// fsync() of an open directory (file_system::sync_dir).
inline result<void> sync_descriptor(const unique_fd& fd, const std::string& path) {
  int rc;
  do {
    rc = ::fsync(fd.get());
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return system_failure("sync", errno, path);
  return {};
}

/// The sorted entry names of the open directory `handle`, without . and ..
/// (file_system::list_dir); closes it.
inline result<std::vector<std::string>> read_directory(DIR* handle, const std::string& path) {
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(handle);
    if (entry == nullptr) break;
    std::string_view name(entry->d_name);
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  const int e = errno;
  ::closedir(handle);
  if (e != 0) return system_failure("list directory", e, path);
  std::sort(names.begin(), names.end());
  return names;
}

/// Maps the whole regular file open as `fd` read-only (file_system::map);
/// the descriptor is closed on return. Errors: io_error (sys_errno EISDIR
/// for a directory, ENODEV for anything but a regular file).
inline result<mapped_bytes> map_descriptor(unique_fd fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_failure("stat", errno, path);
  if (S_ISDIR(st.st_mode)) return system_failure("map", EISDIR, path);
  if (!S_ISREG(st.st_mode)) return system_failure("map", ENODEV, path);
  if (st.st_size == 0) return mapped_bytes{};
  if (static_cast<std::uint64_t>(st.st_size) > std::numeric_limits<std::size_t>::max()) {
    return system_failure("map", EFBIG, path);
  }
  auto length = static_cast<std::size_t>(st.st_size);
  void* address = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (address == MAP_FAILED) return system_failure("map", errno, path);
  return mapped_bytes::adopt_mmap(address, length);
}

/// flock() on the open descriptor `fd` (file_system::lock), which the lock
/// then owns; then `at_path(st)`, given fstat of the locked file, says
/// whether it is still the file at the lock's path. When it is not (removed
/// or replaced meanwhile), the lock is let go and the result is a null
/// pointer: the caller opens the path again. Errors: locked (wait=false and
/// held elsewhere), io_error.
template <class AtPath>
result<std::unique_ptr<file_lock>> lock_descriptor(unique_fd fd, lock_mode mode, bool wait, const std::string& path,
                                                   AtPath&& at_path) {
  int operation = (mode == lock_mode::shared ? LOCK_SH : LOCK_EX) | (wait ? 0 : LOCK_NB);
  int rc;
  do {
    rc = ::flock(fd.get(), operation);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno == EWOULDBLOCK) return unexpected(system_error(errc::locked, "lock", errno, path));
    return system_failure("lock", errno, path);
  }
  struct stat held {};
  if (::fstat(fd.get(), &held) != 0) return system_failure("stat", errno, path);
  if (!at_path(held)) return std::unique_ptr<file_lock>();
  return std::unique_ptr<file_lock>(std::make_unique<posix_file_lock>(fd.release()));
}

/// True when `now` (a stat of the lock's path) is the file `held`.
inline bool same_file(const struct stat& held, const struct stat& now) noexcept {
  return held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

}  // namespace detail

/// The real file system. Stateless: one instance may serve every thread.
class posix_file_system final : public file_system {
 public:
  /// Opens `path`. Errors: not_found (missing without create), already_exists
  /// (create_new on an existing file), permission_denied, invalid_argument
  /// (inconsistent options), io_error.
  result<std::unique_ptr<file>> open(const std::string& path, open_options options) override {
    AGENTCTX_TRY(detail::check_open_options(options, path));
    int flags = options.write ? O_RDWR : O_RDONLY;
    if (options.create) flags |= O_CREAT;
    if (options.exclusive) flags |= O_EXCL;
    if (options.truncate) flags |= O_TRUNC;
    int fd = detail::open_retrying(path.c_str(), flags, 0666);
    if (fd < 0) return detail::system_failure("open", errno, path);
    return std::unique_ptr<file>(std::make_unique<detail::posix_file>(fd, path, options.write));
  }

  /// Maps the whole file. Errors: not_found, permission_denied, io_error
  /// (also for a directory, with sys_errno EISDIR).
  result<mapped_bytes> map(const std::string& path) override {
    int raw_fd = detail::open_retrying(path.c_str(), O_RDONLY);
    if (raw_fd < 0) return detail::system_failure("open", errno, path);
    return detail::map_descriptor(detail::unique_fd(raw_fd), path);
  }

  result<void> rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return detail::system_failure("rename", errno, from);
    return {};
  }

  result<void> remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return detail::system_failure("remove", errno, path);
    return {};
  }

  result<void> remove_dir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return detail::system_failure("remove directory", errno, path);
    return {};
  }

  result<void> sync_dir(const std::string& dir) override {
    int raw_fd = detail::open_retrying(dir.c_str(), O_RDONLY | O_DIRECTORY);
    if (raw_fd < 0) return detail::system_failure("open", errno, dir);
    return detail::sync_descriptor(detail::unique_fd(raw_fd), dir);
  }

  result<void> create_dir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0777) == 0) return {};
    int e = errno;
    if (e != EEXIST) return detail::system_failure("create directory", e, path);
    auto st = detail::stat_path(path);
    if (st && S_ISDIR(st->st_mode)) return {};
    return detail::system_failure("create directory", EEXIST, path);
  }

  result<bool> exists(const std::string& path) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return true;
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return detail::system_failure("stat", errno, path);
  }

  /// Errors: not_found, io_error (sys_errno EISDIR for a directory).
  result<std::uint64_t> file_size(const std::string& path) override {
    auto st = detail::stat_path(path);
    if (!st) return unexpected(std::move(st).error());
    if (S_ISDIR(st->st_mode)) return detail::system_failure("stat", EISDIR, path);
    return static_cast<std::uint64_t>(st->st_size);
  }

  result<std::uint64_t> modified_time_ms(const std::string& path) override {
    auto st = detail::stat_path(path);
    if (!st) return unexpected(std::move(st).error());
    if (S_ISDIR(st->st_mode)) return detail::system_failure("stat", EISDIR, path);
    return detail::modified_ms(*st);
  }

  result<std::vector<std::string>> list_dir(const std::string& dir) override {
    DIR* handle = ::opendir(dir.c_str());  // glibc opens it with O_CLOEXEC
    if (handle == nullptr) return detail::system_failure("list directory", errno, dir);
    return detail::read_directory(handle, dir);
  }

  /// flock() on `path`, created if missing (opened read-only when it cannot
  /// be opened for writing, so shared locks work on read-only files), then
  /// stat(path) against fstat of the locked descriptor: another file there
  /// (or none) means it was removed or replaced meanwhile, and the path is
  /// opened and locked again, at most detail::lock_attempts times.
  /// Errors: locked (wait=false and held elsewhere), not_found (the parent
  /// directory is missing), permission_denied, io_error (also when the file
  /// kept being replaced: EAGAIN).
  result<std::unique_ptr<file_lock>> lock(const std::string& path, lock_mode mode, bool wait) override {
    for (int attempt = 1;; ++attempt) {
      if (attempt > detail::lock_attempts) return detail::lock_file_keeps_changing(path);
      int raw_fd = detail::open_retrying(path.c_str(), O_RDWR | O_CREAT, 0666);
      if (raw_fd < 0 && (errno == EACCES || errno == EROFS)) raw_fd = detail::open_retrying(path.c_str(), O_RDONLY);
      if (raw_fd < 0) return detail::system_failure("open", errno, path);
      auto held = detail::lock_descriptor(detail::unique_fd(raw_fd), mode, wait, path, [&](const struct stat& locked) {
        struct stat now {};
        return ::stat(path.c_str(), &now) == 0 && detail::same_file(locked, now);
      });
      if (!held || *held) return held;
    }
  }
};

/// The process-wide POSIX file system.
inline posix_file_system& default_file_system() {
  static posix_file_system instance;
  return instance;
}

}  // namespace agentctx::io
