// agentctx/io/atomic_file.hpp: replace a whole file atomically, through any
// file_system.
//
// The new contents go to a temporary file in the same directory as the
// target, named ".<target-name>.tmp.<pid>.<number>"; commit() flushes and
// syncs it, renames it over the target and syncs the directory. Whenever a
// crash happens, the target afterwards holds either the complete old or the
// complete new contents, never a mix.
//
//   auto writer = atomic_file_writer::begin(fs, "ctx/layer.agdb");
//   if (!writer) return unexpected(writer.error());
//   AGENTCTX_TRY(writer->append(header));
//   AGENTCTX_TRY(writer->append(body));
//   AGENTCTX_TRY(writer->commit());
//
// Appends smaller than the buffer (1 MiB by default) are gathered and written
// in buffer-sized pieces; larger ones go straight to the file, so streaming a
// file of hundreds of megabytes costs one copy of the small pieces only.
//
// Temporary files left by a crash are removed when the same target is next
// written (begin() calls remove_stale_temporary_files): a temporary belongs
// to a dead writer when its pid is not a live process, or when its pid is
// this process's and no writer of this process has it open. The second rule
// also cleans up after simulated crashes in tests, and after pid reuse.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::io {

struct atomic_write_options {
  /// Appends smaller than this are buffered; 0 writes every append at once.
  std::size_t buffer_size = std::size_t{1} << 20;
  /// Whether the process `pid` is alive, to decide if its temporary files
  /// are stale. Empty: kill(pid, 0) does not fail with ESRCH.
  std::function<bool(std::int64_t pid)> process_is_alive;
};

namespace detail {

// Names (not paths) of the temporary files that writers of this process have
// open: same-pid temporaries not listed here are leftovers. Names are unique
// in the process (pid plus a counter), whatever the directory.
struct in_flight_temporaries {
  std::mutex mutex;
  std::set<std::string, std::less<>> names;
};

inline in_flight_temporaries& in_flight() {
  static in_flight_temporaries registry;
  return registry;
}

inline void register_temporary(const std::string& name) {
  std::lock_guard guard(in_flight().mutex);
  in_flight().names.insert(name);
}

inline void unregister_temporary(const std::string& name) noexcept {
  std::lock_guard guard(in_flight().mutex);
  in_flight().names.erase(name);
}

inline bool temporary_in_flight(std::string_view name) {
  std::lock_guard guard(in_flight().mutex);
  return in_flight().names.find(name) != in_flight().names.end();
}

inline std::uint64_t next_temporary_number() noexcept {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

inline bool process_is_alive_by_signal(std::int64_t pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

/// A temporary file's target name and the pid of its writer.
struct temporary_name {
  std::string_view target_name;
  std::int64_t pid = 0;
};

/// What a temporary name ".<target>.tmp.<pid>.<number>" is of, or nothing
/// when `entry` is not such a name (or its pid could not be signalled safely).
inline std::optional<temporary_name> parse_temporary_name(std::string_view entry) {
  auto all_digits = [](std::string_view text, std::uint64_t& value) {
    auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && code == std::errc() && end == text.data() + text.size();
  };
  auto marker = entry.rfind(".tmp.");
  if (entry.empty() || entry[0] != '.' || marker == std::string_view::npos || marker < 2) return std::nullopt;
  std::string_view rest = entry.substr(marker + 5);
  auto dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::uint64_t pid = 0;
  std::uint64_t number = 0;
  if (!all_digits(rest.substr(0, dot), pid) || !all_digits(rest.substr(dot + 1), number)) return std::nullopt;
  // pid 0 would signal our own process group; pids never exceed INT_MAX.
  if (pid == 0 || pid > INT_MAX) return std::nullopt;
  return temporary_name{entry.substr(1, marker - 1), static_cast<std::int64_t>(pid)};
}

/// The target's path without its file name ("dir/" or "").
inline std::string directory_prefix(const std::string& target) {
  auto slash = target.find_last_of('/');
  return slash == std::string::npos ? std::string() : target.substr(0, slash + 1);
}

}  // namespace detail

/// Removes the temporary files in `dir` left by dead writers (see the
/// header comment) of every target whose file name `is_target` accepts, and
/// returns how many it removed. Errors: those of list_dir on `dir`, or the
/// first failed removal (others are still attempted; files another cleaner
/// removed first are not an error).
inline result<std::size_t> remove_stale_temporary_files_in(file_system& fs, const std::string& dir,
                                                           const std::function<bool(std::string_view)>& is_target,
                                                           const atomic_write_options& options = {}) {
  auto entries = fs.list_dir(dir);
  if (!entries) return unexpected(std::move(entries).error());
  const std::int64_t own_pid = ::getpid();
  auto owner_alive = [&](std::int64_t pid) {
    return options.process_is_alive ? options.process_is_alive(pid) : detail::process_is_alive_by_signal(pid);
  };
  std::size_t removed = 0;
  std::optional<error> first_error;
  for (const std::string& entry : *entries) {
    auto temporary = detail::parse_temporary_name(entry);
    if (!temporary || !is_target(temporary->target_name)) continue;
    if (temporary->pid == own_pid ? detail::temporary_in_flight(entry) : owner_alive(temporary->pid)) continue;
    auto outcome = fs.remove(dir == "." ? entry : join_path(dir, entry));
    if (outcome) {
      ++removed;
    } else if (outcome.error().code != errc::not_found && !first_error) {
      first_error = outcome.error();
    }
  }
  if (first_error) return unexpected(std::move(*first_error));
  return removed;
}

/// Removes the temporary files of `target` left by dead writers; as
/// remove_stale_temporary_files_in, and invalid_argument when the target has
/// no file name.
inline result<std::size_t> remove_stale_temporary_files(file_system& fs, const std::string& target,
                                                        const atomic_write_options& options = {}) {
  std::string name = file_name(target);
  if (name.empty()) return fail(errc::invalid_argument, "atomic write: target has no file name", target);
  return remove_stale_temporary_files_in(
      fs, parent_directory(target), [&](std::string_view candidate) { return candidate == name; }, options);
}

/// Writes a new version of one file. Move-only. Destroying a writer that was
/// not committed removes its temporary file (the target is untouched).
class atomic_file_writer {
 public:
  /// Starts a replacement of `target`: removes stale temporaries (best
  /// effort), then creates a new temporary file. Errors: invalid_argument
  /// (no file name), those of file_system::open (not_found when the directory
  /// is missing, permission_denied, no_space, io_error).
  static result<atomic_file_writer> begin(file_system& fs, const std::string& target,
                                          const atomic_write_options& options = {}) {
    std::string name = file_name(target);
    if (name.empty()) return fail(errc::invalid_argument, "atomic write: target has no file name", target);
    (void)remove_stale_temporary_files(fs, target, options);
    std::string temporary_name = "." + name + ".tmp." + std::to_string(::getpid()) + "." +
                                 std::to_string(detail::next_temporary_number());
    // Registered before it exists, so no concurrent cleanup takes it for stale.
    detail::register_temporary(temporary_name);
    std::string temporary_path = detail::directory_prefix(target) + temporary_name;
    auto opened = fs.open(temporary_path, create_new);
    if (!opened) {
      detail::unregister_temporary(temporary_name);
      // Named by the target: the temporary's name means nothing to a caller
      // (its folder is missing, or may not be written).
      error refused = std::move(opened).error();
      refused.path = target;
      return unexpected(std::move(refused));
    }
    return atomic_file_writer(fs, target, std::move(temporary_name), std::move(temporary_path), std::move(*opened),
                              options.buffer_size);
  }

  atomic_file_writer(atomic_file_writer&& other) noexcept { swap(other); }
  atomic_file_writer& operator=(atomic_file_writer&& other) noexcept {
    atomic_file_writer moved(std::move(other));
    swap(moved);
    return *this;
  }
  atomic_file_writer(const atomic_file_writer&) = delete;
  atomic_file_writer& operator=(const atomic_file_writer&) = delete;
  ~atomic_file_writer() { (void)cancel(); }

  /// Adds bytes at the end. After any failure the writer is broken: later
  /// calls, commit() included, return that error.
  result<void> append(std::span<const std::byte> data) {
    AGENTCTX_TRY(check_usable("append"));
    if (data.empty()) return {};
    if (data.size() >= buffer_size_) {
      AGENTCTX_TRY(flush());
      return write_through(data);
    }
    if (data.size() > buffer_size_ - buffer_.size()) AGENTCTX_TRY(flush());
    buffer_.insert(buffer_.end(), data.begin(), data.end());
    return {};
  }

  /// Overwrites bytes already appended (e.g. a header whose fields are known
  /// only at the end). Errors: out_of_bounds when [offset, offset + size)
  /// is not within size().
  result<void> write_at(std::uint64_t offset, std::span<const std::byte> data) {
    AGENTCTX_TRY(check_usable("write"));
    if (offset > size() || data.size() > size() - offset) {
      return fail(errc::out_of_bounds, "atomic write: write_at beyond the appended bytes", temporary_path_, offset);
    }
    if (offset < flushed_) {
      auto count = static_cast<std::size_t>(std::min<std::uint64_t>(data.size(), flushed_ - offset));
      auto written = file_->write_at(offset, data.first(count));
      if (!written) return break_with(std::move(written).error());
      data = data.subspan(count);
      offset += count;
    }
    if (!data.empty()) std::memcpy(buffer_.data() + (offset - flushed_), data.data(), data.size());
    return {};
  }

  /// Bytes appended so far.
  std::uint64_t size() const noexcept { return flushed_ + buffer_.size(); }

  /// Flushes, syncs the temporary file, renames it over the target and syncs
  /// the directory. On a failure before the rename the temporary is removed
  /// and the target is untouched; if only the final directory sync fails the
  /// target already holds the new contents but may not survive a crash.
  /// The writer is finished afterwards either way.
  result<void> commit() {
    if (auto usable = check_usable("commit"); !usable) {
      (void)cancel();
      return usable;
    }
    // Failures are named by the target, as begin() names them.
    auto written = write_out();
    if (!written) {
      (void)cancel();
      return named_by_target(std::move(written).error());
    }
    auto renamed = fs_->rename(temporary_path_, target_);
    if (!renamed) {
      (void)cancel();
      return named_by_target(std::move(renamed).error());
    }
    finish();
    return fs_->sync_dir(parent_directory(target_));
  }

  /// Abandons the new version: closes and removes the temporary file. Does
  /// nothing on a finished writer. Errors: those of the removal.
  result<void> cancel() {
    if (!active_) return {};
    if (file_) (void)file_->close();
    auto removed = fs_->remove(temporary_path_);
    finish();
    return removed;
  }

  const std::string& target_path() const noexcept { return target_; }
  const std::string& temporary_path() const noexcept { return temporary_path_; }

 private:
  atomic_file_writer() = default;
  atomic_file_writer(file_system& fs, std::string target, std::string temporary_name, std::string temporary_path,
                     std::unique_ptr<file> temporary, std::size_t buffer_size)
      : fs_(&fs),
        target_(std::move(target)),
        temporary_name_(std::move(temporary_name)),
        temporary_path_(std::move(temporary_path)),
        file_(std::move(temporary)),
        buffer_size_(buffer_size),
        active_(true) {}

  void swap(atomic_file_writer& other) noexcept {
    std::swap(fs_, other.fs_);
    std::swap(target_, other.target_);
    std::swap(temporary_name_, other.temporary_name_);
    std::swap(temporary_path_, other.temporary_path_);
    std::swap(file_, other.file_);
    std::swap(buffer_, other.buffer_);
    std::swap(buffer_size_, other.buffer_size_);
    std::swap(flushed_, other.flushed_);
    std::swap(broken_, other.broken_);
    std::swap(active_, other.active_);
  }

  result<void> named_by_target(error e) const {
    e.path = target_;
    return unexpected(std::move(e));
  }

  result<void> check_usable(const char* operation) const {
    if (!active_) {
      return fail(errc::invalid_argument, std::string("atomic write: ") + operation + " on a finished writer", target_);
    }
    if (broken_) return unexpected(*broken_);
    return {};
  }

  result<void> break_with(error e) {
    broken_ = e;
    return unexpected(std::move(e));
  }

  result<void> write_through(std::span<const std::byte> data) {
    auto written = file_->write_at(flushed_, data);
    if (!written) return break_with(std::move(written).error());
    flushed_ += data.size();
    return {};
  }

  result<void> flush() {
    if (buffer_.empty()) return {};
    AGENTCTX_TRY(write_through(buffer_));
    buffer_.clear();
    return {};
  }

  result<void> write_out() {
    AGENTCTX_TRY(flush());
    AGENTCTX_TRY(file_->sync());
    return file_->close();
  }

  void finish() noexcept {
    detail::unregister_temporary(temporary_name_);
    file_.reset();
    buffer_ = {};
    active_ = false;
  }

  file_system* fs_ = nullptr;
  std::string target_;
  std::string temporary_name_;
  std::string temporary_path_;
  std::unique_ptr<file> file_;
  std::vector<std::byte> buffer_;
  std::size_t buffer_size_ = 0;
  std::uint64_t flushed_ = 0;
  std::optional<error> broken_;
  bool active_ = false;
};

/// Makes the file `path` durable, its bytes and its name in its folder: for a
/// file a writer finds rather than writes. A writer killed before its own
/// syncs (the machine living on) leaves what it wrote in the page cache,
/// readable, and what is acknowledged on top of it must not rest on it.
/// (Linux syncs a file opened for reading.)
inline result<void> sync_file_and_directory(file_system& fs, const std::string& path) {
  auto file = fs.open(path, read_only);
  if (!file) return unexpected(std::move(file).error());
  AGENTCTX_TRY((*file)->sync());
  return fs.sync_dir(parent_directory(path));
}

/// Replaces `path` with `bytes` atomically and durably (see atomic_file_writer).
inline result<void> write_file_atomically(file_system& fs, const std::string& path, std::span<const std::byte> bytes,
                                          const atomic_write_options& options = {}) {
  auto writer = atomic_file_writer::begin(fs, path, options);
  if (!writer) return unexpected(std::move(writer).error());
  AGENTCTX_TRY(writer->append(bytes));
  return writer->commit();
}

}  // namespace agentctx::io
