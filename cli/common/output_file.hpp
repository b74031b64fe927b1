// Checking the FILE of an `-o FILE` option before a tool replaces it
// atomically (io::write_file_atomically renames a new file over the path):
// only a regular file (or a new one) is replaced. A device, FIFO, socket or
// folder is refused, as is a file in a folder the tool must not write into
// (a store's own folder); a symbolic link is written through, so the link
// stays and its target gets the new contents; the file's permission bits
// are kept.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>

#include "agentctx/core/quote.hpp"

namespace agentctx_cli {

/// Where an `-o FILE` writes.
struct output_file {
  std::string path;                                  ///< FILE, or the file its symbolic link names
  std::optional<std::filesystem::perms> keep_mode;   ///< the replaced file's permission bits
};

/// How check_output_file() names and guards what it checks.
struct output_check {
  std::string_view option = "-o";  ///< the option, for messages
  std::string_view hint;           ///< added to the refusal of a device, FIFO or socket
  /// A store's folder: FILE must not be in it (`is_protected_name` empty) or
  /// be a file there whose name it accepts (the store's own files, when the
  /// folder may hold the user's files too, as the current directory does).
  std::string protected_dir;
  std::function<bool(std::string_view name)> is_protected_name;
};

/// An output_check of the option `option`, with `hint` for a device.
inline output_check output_option(std::string_view option, std::string_view hint = {}) {
  output_check check;
  check.option = option;
  check.hint = hint;
  return check;
}

/// The target of `-o FILE` (or of the option `check.option`), or a one-line
/// reason it is refused (a usage error).
inline std::variant<output_file, std::string> check_output_file(const std::string& file, const output_check& check = {}) {
  const std::string_view option = check.option;
  namespace fs = std::filesystem;
  const std::string named = std::string(option) + " " + agentctx::escape_for_message(file, 200);
  if (file.empty()) return std::string(option) + ": the file must be named (it is empty)";
  if (file.back() == '/') return named + ": names a folder, not a file";
  output_file out{file, std::nullopt};
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);
  if (!ec && fs::exists(status)) {
    if (fs::is_directory(status)) return named + ": is a folder, not a file";
    if (!fs::is_regular_file(status)) {
      return named + ": not a regular file (a device, FIFO or socket is not replaced" +
             (check.hint.empty() ? std::string() : "; " + std::string(check.hint)) + ")";
    }
    out.keep_mode = status.permissions();
    if (fs::is_symlink(fs::symlink_status(file, ec))) {
      const fs::path target = fs::canonical(file, ec);
      if (ec) return named + ": cannot follow the symbolic link: " + ec.message();
      out.path = target.string();
    }
  } else if (std::error_code link_ec; fs::is_symlink(fs::symlink_status(file, link_ec))) {
    // A link to a file that does not exist yet is written through too: its
    // target is created (through a chain of such links, as open() would).
    fs::path target = file;
    for (int hops = 0; fs::is_symlink(fs::symlink_status(target, link_ec)); ++hops) {
      if (hops == 40) return named + ": cannot follow the symbolic link: too many levels of symbolic links";
      const fs::path next = fs::read_symlink(target, link_ec);
      if (link_ec) return named + ": cannot follow the symbolic link: " + link_ec.message();
      target = next.is_absolute() ? next : target.parent_path() / next;
    }
    if (!target.has_filename()) return named + ": names a folder, not a file (through its symbolic link)";
    out.path = target.string();
  }
  if (!check.protected_dir.empty()) {
    const fs::path inside = fs::weakly_canonical(fs::absolute(out.path, ec), ec).lexically_relative(
        fs::weakly_canonical(fs::absolute(check.protected_dir, ec), ec));
    const bool in_folder = !inside.empty() && *inside.begin() != "..";
    if (in_folder && !check.is_protected_name) return named + ": is inside the store's folder, which the tool keeps";
    if (in_folder && !inside.has_parent_path() && check.is_protected_name(inside.string())) {
      return named + ": is one of the store's own files";
    }
  }
  return out;
}

/// Gives a replaced file back its permission bits (best effort: the new
/// contents are in place whether or not this succeeds).
inline void restore_mode(const output_file& target) {
  if (!target.keep_mode) return;
  std::error_code ignored;
  std::filesystem::permissions(target.path, *target.keep_mode, std::filesystem::perm_options::replace, ignored);
}

}  // namespace agentctx_cli
