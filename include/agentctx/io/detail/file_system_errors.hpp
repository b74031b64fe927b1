// agentctx/io/detail/file_system_errors.hpp: the errors file systems return.
//
// The POSIX, in-memory and fault-injecting file systems report failures the
// same way, so code and tests see one vocabulary: the errc mapped from the
// errno, error::sys_errno set to that errno, the path, and a message
// "<operation> failed: <strerror text>", e.g. "open failed: No such file or
// directory". The in-memory file system picks the errno POSIX would have set.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>
#include <system_error>

#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::io::detail {

/// The library code for an errno value of a failed file-system call.
inline errc errc_from_errno(int errno_value) noexcept {
  switch (errno_value) {
    case ENOENT: return errc::not_found;
    case EEXIST: return errc::already_exists;
    case EACCES:
    case EPERM: return errc::permission_denied;
    case ENOSPC:
    case EDQUOT: return errc::no_space;
    default: return errc::io_error;
  }
}

/// An error with an explicit code (e.g. errc::locked for EWOULDBLOCK).
inline error system_error(errc code, std::string_view operation, int errno_value, std::string path) {
  std::string message(operation);
  message += " failed: ";
  message += std::generic_category().message(errno_value);
  error e = make_error(code, std::move(message), std::move(path));
  e.sys_errno = errno_value;
  return e;
}

/// An error whose code is mapped from `errno_value`.
inline error system_error(std::string_view operation, int errno_value, std::string path) {
  return system_error(errc_from_errno(errno_value), operation, errno_value, std::move(path));
}

inline unexpected system_failure(std::string_view operation, int errno_value, std::string path) {
  return unexpected(system_error(operation, errno_value, std::move(path)));
}

/// How many times file_system::lock locks a file that turns out no longer
/// to be at its path (removed or replaced while the call waited) before it
/// gives up: each needs another process to remove or replace the lock file
/// in the moment between open and flock, so this only ends a loop that
/// something outside keeps feeding.
inline constexpr int lock_attempts = 1000;

/// The error of a lock whose file kept being replaced (lock_attempts).
inline unexpected lock_file_keeps_changing(const std::string& path) {
  error e = make_error(errc::io_error,
                       "lock failed: the lock file was removed or replaced each of " + std::to_string(lock_attempts) +
                           " times it was locked",
                       path);
  e.sys_errno = EAGAIN;
  return unexpected(std::move(e));
}

/// Rejects option combinations that have no meaning (create or truncate
/// without write, exclusive without create) with errc::invalid_argument.
inline result<void> check_open_options(const open_options& options, const std::string& path) {
  if ((options.create || options.truncate) && !options.write) {
    return fail(errc::invalid_argument, "open: create and truncate require write", path);
  }
  if (options.exclusive && !options.create) {
    return fail(errc::invalid_argument, "open: exclusive requires create", path);
  }
  return {};
}

}  // namespace agentctx::io::detail
