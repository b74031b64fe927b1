// agentctx/core/error.hpp: the library's error codes and the error value.
//
// Every fallible call in agentctx returns `result<T>` (see result.hpp) whose
// error side is `agentctx::error`: a code from the library's own `errc` range,
// a human-readable message, and, where they apply, the file path and the byte
// offset at which a problem was found. The library never throws on bad data,
// never aborts and never prints; callers decide how to report.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace agentctx {

/// The library's own error codes. Values are stable: they may be persisted in
/// logs and used as process exit-code inputs by the CLIs.
enum class errc : std::uint16_t {
  ok = 0,
  // Caller errors.
  invalid_argument = 1,  ///< an argument is malformed or out of range
  not_found = 2,         ///< a file, chunk, key or record does not exist
  already_exists = 3,    ///< exclusive creation of something that exists
  unsupported = 4,       ///< a feature or version this build does not handle
  incompatible = 5,      ///< things that must agree do not (embedding profiles, dimensions)
  invalid_transition = 6,  ///< not allowed in the object's current state (a status change from a terminal state)
  archived = 7,            ///< the target is archived, so writes to it are refused
  outside_root = 8,        ///< a path leads outside the directory it is confined to (.., absolute, a symlink)
  conflict = 9,            ///< the target changed since the version a request was based on
  // Environment errors.
  io_error = 10,           ///< a system call failed (see error::sys_errno)
  permission_denied = 11,  ///< EACCES / EPERM
  no_space = 12,           ///< ENOSPC / EDQUOT
  locked = 13,             ///< an advisory lock is held by someone else
  // Data errors: the bytes of a file or message are not what the format says.
  corrupt = 20,              ///< generic format violation
  bad_magic = 21,            ///< the magic number is wrong
  unsupported_version = 22,  ///< a format version this build cannot read
  truncated = 23,            ///< data ends before a structure it promises
  out_of_bounds = 24,        ///< an offset/length points outside its container
  overlap = 25,              ///< two regions that must be disjoint overlap
  missing_section = 26,      ///< a required section is absent
  duplicate_section = 27,    ///< a section that must be unique appears twice
  invalid_utf8 = 28,         ///< text that must be UTF-8 is not
  invalid_id = 29,           ///< an id is zero or out of range
  duplicate_id = 30,         ///< an id that must be unique is repeated
  invalid_value = 31,        ///< a field holds a value outside its domain
  reserved_nonzero = 32,     ///< a reserved field is not zero
  checksum_mismatch = 33,    ///< a stored checksum does not match the data
  unknown_section = 34,      ///< a section kind this version does not define
};

/// Stable snake_case name of a code, e.g. "bad_magic".
constexpr std::string_view to_string(errc code) noexcept {
  switch (code) {
    case errc::ok: return "ok";
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::already_exists: return "already_exists";
    case errc::unsupported: return "unsupported";
    case errc::incompatible: return "incompatible";
    case errc::invalid_transition: return "invalid_transition";
    case errc::archived: return "archived";
    case errc::outside_root: return "outside_root";
    case errc::conflict: return "conflict";
    case errc::io_error: return "io_error";
    case errc::permission_denied: return "permission_denied";
    case errc::no_space: return "no_space";
    case errc::locked: return "locked";
    case errc::corrupt: return "corrupt";
    case errc::bad_magic: return "bad_magic";
    case errc::unsupported_version: return "unsupported_version";
    case errc::truncated: return "truncated";
    case errc::out_of_bounds: return "out_of_bounds";
    case errc::overlap: return "overlap";
    case errc::missing_section: return "missing_section";
    case errc::duplicate_section: return "duplicate_section";
    case errc::invalid_utf8: return "invalid_utf8";
    case errc::invalid_id: return "invalid_id";
    case errc::duplicate_id: return "duplicate_id";
    case errc::invalid_value: return "invalid_value";
    case errc::reserved_nonzero: return "reserved_nonzero";
    case errc::checksum_mismatch: return "checksum_mismatch";
    case errc::unknown_section: return "unknown_section";
  }
  return "unknown_error";
}

/// True for codes that describe damaged or non-conforming data (as opposed to
/// caller mistakes or environment failures).
constexpr bool is_data_error(errc code) noexcept {
  return static_cast<std::uint16_t>(code) >= 20;
}

/// An error value. `offset` is `no_offset` when no byte position applies.
struct error {
  static constexpr std::uint64_t no_offset = ~std::uint64_t{0};

  errc code = errc::ok;
  std::string message;  ///< one line, no trailing period, no path/offset
  std::string path;     ///< file the error concerns, or empty
  std::uint64_t offset = no_offset;
  int sys_errno = 0;  ///< errno of the failing system call, or 0

  bool has_offset() const noexcept { return offset != no_offset; }

  /// One line: "PATH: at byte N: MESSAGE" (parts that do not apply are left out).
  std::string describe() const {
    std::string out;
    if (!path.empty()) {
      out += path;
      out += ": ";
    }
    if (has_offset()) {
      out += "at byte ";
      out += std::to_string(offset);
      out += ": ";
    }
    out += message.empty() ? std::string(to_string(code)) : message;
    return out;
  }

  /// Returns a copy naming `file` when no path was set yet.
  error with_path(std::string_view file) const& {
    error copy = *this;
    if (copy.path.empty()) copy.path = std::string(file);
    return copy;
  }
  error with_path(std::string_view file) && {
    if (path.empty()) path = std::string(file);
    return std::move(*this);
  }
};

/// Convenience constructor.
inline error make_error(errc code, std::string message, std::string path = {},
                        std::uint64_t offset = error::no_offset) {
  return error{code, std::move(message), std::move(path), offset, 0};
}

}  // namespace agentctx
