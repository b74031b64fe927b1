// agentctx/io/confined_file_system.hpp: a file_system on the real disk that
// cannot reach outside one directory tree (its root).
//
//   auto repo = io::confined_file_system::open("/home/me/project");
//   if (!repo) return unexpected(repo.error());      // relative, missing, a symlink, not a directory
//   auto text = (*repo)->map(".github/agent-memory/aristotle/_summary.md");
//
// Paths given to it are relative to the root: components separated by '/',
// none of them empty, "." or "..", and no NUL byte ("." alone names the root
// itself, as io::parent_directory returns it). Anything else, an absolute
// path above all, is refused with errc::outside_root before any system call.
//
// The root is held open as a directory descriptor from open() on, and every
// path is resolved beneath it one component at a time, each directory with
// openat(O_DIRECTORY | O_NOFOLLOW) from the one before, the last component
// with O_NOFOLLOW or the *at call's AT_SYMLINK_NOFOLLOW. A symbolic link
// anywhere below the root, whether it points outside, inside, nowhere
// (dangling) or at itself (a loop), and whether it was there before the call
// or planted by another process during it, is never followed: the call fails
// with errc::outside_root (sys_errno ELOOP) naming the link. No string prefix
// check is involved, so "/repo" never admits "/repo_evil".
//
// The root's own path must be absolute and canonical (no symlink, ".", ".."
// or repeated '/' in it: realpath(root) == root, a trailing '/' aside), so
// that one directory has one name; open() refuses others with
// errc::outside_root. Once open, renaming the root's path changes nothing:
// the descriptor keeps naming the same directory.
//
// Errors are those of posix_file_system (errno mapped to errc, sys_errno,
// the path as given, relative to the root, in error::path; full_path() makes
// it absolute for messages) plus errc::outside_root.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"

namespace agentctx::io {

namespace detail {

/// The components of `path` relative to a confined root, or outside_root
/// for a path that is empty, absolute, or has an empty, "." or ".."
/// component or a NUL byte. "." alone gives no components (the root).
inline result<std::vector<std::string_view>> confined_components(std::string_view path) {
  const auto refuse = [&](const char* why) {
    return fail(errc::outside_root, "path " + quote_for_message(path, 200) + " " + why);
  };
  if (path.empty()) return refuse("is empty");
  if (path.find('\0') != std::string_view::npos) return refuse("contains a NUL byte");
  if (path.front() == '/') return refuse("is absolute; paths here are relative to the root");
  std::vector<std::string_view> components;
  if (path == ".") return components;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view component = path.substr(start, slash - start);
    if (component.empty()) return refuse("has an empty component");
    if (component == "." || component == "..") return refuse("has a \".\" or \"..\" component");
    components.push_back(component);
    start = slash + 1;
  }
  return components;
}

/// openat() retried on EINTR, always with O_CLOEXEC.
inline int openat_retrying(int dir, const std::string& name, int flags, mode_t mode = 0) noexcept {
  int fd;
  do {
    fd = ::openat(dir, name.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

/// True when `name` in `dir` is a symbolic link (not followed).
inline bool is_symlink_at(int dir, const std::string& name) noexcept {
  struct stat st {};
  return ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace detail

/// The real file system, confined to the tree below one directory.
class confined_file_system final : public file_system {
 public:
  /// Opens the directory `root` (absolute and canonical: see the file
  /// comment). Errors: outside_root (relative, not canonical, reached
  /// through a symlink), not_found, permission_denied, io_error (sys_errno
  /// ENOTDIR when it is not a directory).
  static result<std::unique_ptr<confined_file_system>> open(const std::string& root) {
    if (root.empty() || root.front() != '/') {
      return fail(errc::outside_root, "the root must be an absolute path, not \"" + root + "\"");
    }
    std::string name = root;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    const int raw_fd = detail::open_retrying(name.c_str(), O_RDONLY | O_DIRECTORY);
    if (raw_fd < 0) {
      const int e = errno;
      if (e == ENOTDIR) {
        struct stat st {};
        if (::lstat(name.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) return detail::system_failure("open", e, name);
      }
      if (e != ENOTDIR && e != ELOOP) return detail::system_failure("open", e, name);
    }
    detail::unique_fd fd(raw_fd);
    char resolved[PATH_MAX];
    if (fd.get() < 0 || ::realpath(name.c_str(), resolved) == nullptr || name != resolved) {
      return fail(errc::outside_root,
                  "the root must be given by its canonical path (no symlink, \".\", \"..\" or \"//\"), not \"" +
                      root + "\"",
                  root);
    }
    return std::unique_ptr<confined_file_system>(new confined_file_system(std::move(fd), std::move(name)));
  }

  /// The root's path, as given to open() without trailing '/'.
  const std::string& root() const noexcept { return root_; }

  /// The absolute path of `relative`, for messages: "<root>/<relative>".
  std::string full_path(std::string_view relative) const {
    if (relative == ".") return root_;
    return root_ == "/" ? "/" + std::string(relative) : root_ + "/" + std::string(relative);
  }

  /// Opens `path` below the root; never follows a symlink, never creates
  /// a directory. Errors: those of posix_file_system::open, outside_root.
  result<std::unique_ptr<file>> open(const std::string& path, open_options options) override {
    AGENTCTX_TRY(detail::check_open_options(options, path));
    int flags = (options.write ? O_RDWR : O_RDONLY) | O_NOFOLLOW;
    if (options.create) flags |= O_CREAT;
    if (options.exclusive) flags |= O_EXCL;
    if (options.truncate) flags |= O_TRUNC;
    auto parent_found = resolve_parent(path);
    if (!parent_found) return unexpected(std::move(parent_found).error());
    auto& parent = *parent_found;
    const int fd = detail::openat_retrying(parent.dir.get(), parent.name, flags, 0666);
    if (fd < 0) return last_component_failure("open", errno, parent, path);
    return std::unique_ptr<file>(std::make_unique<detail::posix_file>(fd, path, options.write));
  }

  result<mapped_bytes> map(const std::string& path) override {
    auto parent_found = resolve_parent(path);
    if (!parent_found) return unexpected(std::move(parent_found).error());
    auto& parent = *parent_found;
    const int fd = detail::openat_retrying(parent.dir.get(), parent.name, O_RDONLY | O_NOFOLLOW);
    if (fd < 0) return last_component_failure("open", errno, parent, path);
    return detail::map_descriptor(detail::unique_fd(fd), path);
  }

  /// renameat(): a symlink at `from` or `to` is itself renamed or replaced,
  /// never followed; the directories on the way are checked as always.
  result<void> rename(const std::string& from, const std::string& to) override {
    auto source_found = resolve_parent(from);
    if (!source_found) return unexpected(std::move(source_found).error());
    auto& source = *source_found;
    auto target_found = resolve_parent(to);
    if (!target_found) return unexpected(std::move(target_found).error());
    auto& target = *target_found;
    if (::renameat(source.dir.get(), source.name.c_str(), target.dir.get(), target.name.c_str()) != 0) {
      return detail::system_failure("rename", errno, from);
    }
    return {};
  }

  result<void> remove(const std::string& path) override {
    auto parent_found = resolve_parent(path);
    if (!parent_found) return unexpected(std::move(parent_found).error());
    auto& parent = *parent_found;
    if (::unlinkat(parent.dir.get(), parent.name.c_str(), 0) != 0) {
      return detail::system_failure("remove", errno, path);
    }
    return {};
  }

  /// A symbolic link named by `path` is not followed: unlinkat fails with
  /// ENOTDIR on it.
  result<void> remove_dir(const std::string& path) override {
    auto parent_found = resolve_parent(path);
    if (!parent_found) return unexpected(std::move(parent_found).error());
    auto& parent = *parent_found;
    if (::unlinkat(parent.dir.get(), parent.name.c_str(), AT_REMOVEDIR) != 0) {
      return detail::system_failure("remove directory", errno, path);
    }
    return {};
  }

  result<void> sync_dir(const std::string& dir) override {
    auto fd_found = open_directory(dir);
    if (!fd_found) return unexpected(std::move(fd_found).error());
    return detail::sync_descriptor(*fd_found, dir);
  }

  result<void> create_dir(const std::string& path) override {
    auto parent_found = resolve_parent(path);
    if (!parent_found) return unexpected(std::move(parent_found).error());
    auto& parent = *parent_found;
    if (::mkdirat(parent.dir.get(), parent.name.c_str(), 0777) == 0) return {};
    const int e = errno;
    if (e != EEXIST) return detail::system_failure("create directory", e, path);
    struct stat st {};
    if (::fstatat(parent.dir.get(), parent.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISDIR(st.st_mode)) return {};
      if (S_ISLNK(st.st_mode)) return symlink_failure("create directory", path);
    }
    return detail::system_failure("create directory", EEXIST, path);
  }

  /// False for a missing entry or a missing directory on the way; an entry
  /// that is a symlink, or a symlink on the way, is outside_root.
  result<bool> exists(const std::string& path) override {
    auto parent = resolve_parent(path);
    if (!parent) {
      if (parent.error().code == errc::not_found || parent.error().sys_errno == ENOTDIR) return false;
      return unexpected(std::move(parent).error());
    }
    struct stat st {};
    if (::fstatat(parent->dir.get(), parent->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(st.st_mode)) return symlink_failure("stat", path);
      return true;
    }
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return detail::system_failure("stat", errno, path);
  }

  result<std::uint64_t> file_size(const std::string& path) override {
    auto st = stat_file(path);
    if (!st) return unexpected(std::move(st).error());
    return static_cast<std::uint64_t>(st->st_size);
  }

  result<std::uint64_t> modified_time_ms(const std::string& path) override {
    auto st = stat_file(path);
    if (!st) return unexpected(std::move(st).error());
    return detail::modified_ms(*st);
  }

  result<std::vector<std::string>> list_dir(const std::string& dir) override {
    auto fd_found = open_directory(dir);
    if (!fd_found) return unexpected(std::move(fd_found).error());
    // The root's descriptor is a dup of root_fd_, whose read position every
    // dup shares: the listing reads its own open of the directory, or a
    // second listing of the root would start where the first ended (empty).
    const int own = detail::openat_retrying(fd_found->get(), ".", O_RDONLY | O_DIRECTORY);
    if (own < 0) return detail::system_failure("list directory", errno, dir);
    DIR* handle = ::fdopendir(own);
    if (handle == nullptr) {
      const int e = errno;
      ::close(own);
      return detail::system_failure("list directory", e, dir);
    }
    return detail::read_directory(handle, dir);  // closedir() closes `own`
  }

  /// As posix_file_system::lock, the path resolved below the root again
  /// after each lock that found another file (or none) at it. Whether the
  /// locked file is still at the path is looked up from the root too, so a
  /// folder renamed away (and another made in its place) is seen.
  result<std::unique_ptr<file_lock>> lock(const std::string& path, lock_mode mode, bool wait) override {
    for (int attempt = 1;; ++attempt) {
      if (attempt > detail::lock_attempts) return detail::lock_file_keeps_changing(path);
      auto parent_found = resolve_parent(path);
      if (!parent_found) return unexpected(std::move(parent_found).error());
      auto& parent = *parent_found;
      int fd = detail::openat_retrying(parent.dir.get(), parent.name, O_RDWR | O_CREAT | O_NOFOLLOW, 0666);
      if (fd < 0 && (errno == EACCES || errno == EROFS)) {
        fd = detail::openat_retrying(parent.dir.get(), parent.name, O_RDONLY | O_NOFOLLOW);
      }
      if (fd < 0) return last_component_failure("open", errno, parent, path);
      auto held = detail::lock_descriptor(detail::unique_fd(fd), mode, wait, path, [&](const struct stat& locked) {
        auto now_parent = resolve_parent(path);
        struct stat now {};
        return now_parent &&
               ::fstatat(now_parent->dir.get(), now_parent->name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
               detail::same_file(locked, now);
      });
      if (!held || *held) return held;
    }
  }

 private:
  /// lstat of a file below the root: a symlink is outside_root, a directory
  /// io_error (EISDIR).
  result<struct stat> stat_file(const std::string& path) const {
    auto parent_found = resolve_parent(path);
    if (!parent_found) return unexpected(std::move(parent_found).error());
    auto& parent = *parent_found;
    struct stat st {};
    if (::fstatat(parent.dir.get(), parent.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return detail::system_failure("stat", errno, path);
    }
    if (S_ISLNK(st.st_mode)) return symlink_failure("stat", path);
    if (S_ISDIR(st.st_mode)) return detail::system_failure("stat", EISDIR, path);
    return st;
  }

  /// The directory holding a path's last component, open, and that component.
  struct parent_entry {
    detail::unique_fd dir;
    std::string name;
  };

  confined_file_system(detail::unique_fd root_fd, std::string root)
      : root_fd_(std::move(root_fd)), root_(std::move(root)) {}

  unexpected symlink_failure(std::string_view operation, std::string_view path) const {
    error e = make_error(errc::outside_root,
                         std::string(operation) + " refused: " + std::string(path) +
                             " is a symbolic link, and links below the root are never followed",
                         std::string(path));
    e.sys_errno = ELOOP;
    return unexpected(std::move(e));
  }

  /// The failure of an open of the last component: a symlink there is
  /// outside_root, anything else the errno's error.
  unexpected last_component_failure(std::string_view operation, int e, const parent_entry& parent,
                                    const std::string& path) const {
    if ((e == ELOOP || e == ENOTDIR || e == EEXIST) && detail::is_symlink_at(parent.dir.get(), parent.name)) {
      return symlink_failure(operation, path);
    }
    return detail::system_failure(operation, e, path);
  }

  /// Opens the directories `components` name below the root, one by one.
  result<detail::unique_fd> walk(const std::vector<std::string_view>& components, std::size_t count) const {
    detail::unique_fd current(::fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0));
    if (current.get() < 0) return detail::system_failure("open", errno, root_);
    std::string walked;
    for (std::size_t i = 0; i < count; ++i) {
      const std::string name(components[i]);
      if (!walked.empty()) walked += '/';
      walked += name;
      const int fd = detail::openat_retrying(current.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      if (fd < 0) {
        const int e = errno;
        if ((e == ENOTDIR || e == ELOOP) && detail::is_symlink_at(current.get(), name)) {
          return symlink_failure("open", walked);
        }
        return detail::system_failure("open", e, walked);
      }
      current = detail::unique_fd(fd);
    }
    return current;
  }

  result<parent_entry> resolve_parent(const std::string& path) const {
    auto components_found = detail::confined_components(path);
    if (!components_found) return unexpected(std::move(components_found).error());
    auto& components = *components_found;
    if (components.empty()) return fail(errc::invalid_argument, "\".\" names the root, not an entry in it", root_);
    auto dir_found = walk(components, components.size() - 1);
    if (!dir_found) return unexpected(std::move(dir_found).error());
    auto& dir = *dir_found;
    return parent_entry{std::move(dir), std::string(components.back())};
  }

  result<detail::unique_fd> open_directory(const std::string& path) const {
    auto components_found = detail::confined_components(path);
    if (!components_found) return unexpected(std::move(components_found).error());
    auto& components = *components_found;
    return walk(components, components.size());
  }

  detail::unique_fd root_fd_;
  std::string root_;
};

}  // namespace agentctx::io
