// Checking the FILE of an `-o FILE` option before a tool replaces it
// atomically (io::write_file_atomically renames a new file over the path):
// only a regular file (or a new one) is replaced. A device, FIFO, socket or
// folder is refused, as is a file in a folder the tool must not write into
// (a store's own folder); a symbolic link is written through, so the link
// stays and its target gets the new contents; the file's permission bits
// are kept.
#pragma once

#include <filesystem>
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

/// The target of `-o FILE` (or of the option named `option`), or a one-line
/// reason it is refused (a usage error). `protected_dir`, when not empty, is
/// a folder FILE must not be in.
inline std::variant<output_file, std::string> check_output_file(const std::string& file,
                                                               const std::string& protected_dir = {},
                                                               std::string_view option = "-o") {
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
      return named + ": not a regular file (a device, FIFO or socket is not replaced)";
    }
    out.keep_mode = status.permissions();
    if (fs::is_symlink(fs::symlink_status(file, ec))) {
      const fs::path target = fs::canonical(file, ec);
      if (ec) return named + ": cannot follow the symbolic link: " + ec.message();
      out.path = target.string();
    }
  }
  if (!protected_dir.empty()) {
    const fs::path inside = fs::weakly_canonical(fs::absolute(out.path, ec), ec).lexically_relative(
        fs::weakly_canonical(fs::absolute(protected_dir, ec), ec));
    if (!inside.empty() && *inside.begin() != "..") return named + ": is inside the store's folder, which the tool keeps";
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
