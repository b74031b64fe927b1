// agentctx/agdb/source_collector.hpp: finds the files a compile reads.
//
// `collect_sources` walks a directory tree and returns the paths, relative to
// the root, that match the include globs and none of the exclude globs,
// sorted by bytes, so the result never depends on directory order.
//
// Glob syntax (`path_glob`), matched against '/'-separated relative paths:
//   *       any run of characters within one path component (also empty, also
//           a leading '.': hidden files are not special);
//   ?       exactly one character (a UTF-8 code point) other than '/';
//   [abc]   one character of the set; ranges [a-z]; [!abc] or [^abc] negates;
//           ']' first in the set is literal; an unclosed '[' is literal;
//   **      as a whole component: zero or more components ("**/x.md" also
//           matches "x.md", "docs/**" everything under docs); elsewhere
//           ("a**b") it is the same as '*';
//   \c      the character c itself.
// Patterns are anchored at the root: "AGENTS.md" matches only the root's
// AGENTS.md; write "**/AGENTS.md" for every one. A leading "./" and repeated
// '/' are ignored; a trailing '/' means everything below ("docs/" is
// "docs/**"). Matching is case-sensitive and compares bytes otherwise.
//
// The walk:
//   - never enters a directory named ".git";
//   - never follows a symbolic link to a directory (so it cannot leave the
//     root or loop); a symbolic link to a regular file is listed under the
//     link's own path; other entries (sockets, fifos, broken links) are not;
//   - skips a directory when an exclude pattern matches its relative path
//     (exclude "node_modules" or "build/**" prunes the whole subtree) and when
//     no include pattern could match anything below it (include "AGENTS.md"
//     reads only the root directory).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"

namespace agentctx::agdb {

namespace detail {

// A UTF-8 code point decoded leniently: a byte that does not start a
// well-formed sequence is one character of its own.
struct glob_character {
  std::uint32_t code_point = 0;
  std::size_t length = 1;
};

inline glob_character decode_glob_character(std::string_view s, std::size_t at) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 1;
  std::uint32_t value = lead;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07u;
  }
  if (length == 1 || length > s.size() - at) return {lead, 1};
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(at + k) & 0xC0u) != 0x80u) return {lead, 1};
    value = (value << 6) | (byte(at + k) & 0x3Fu);
  }
  return {value, length};
}

// Matches the character class starting at pattern[at] == '[' against `c`.
// Returns the index after the class, or `at` when the class is unclosed (the
// '[' is then literal).
inline std::size_t match_glob_class(std::string_view pattern, std::size_t at, std::uint32_t c, bool& matched) {
  std::size_t i = at + 1;
  bool negated = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negated = true;
    ++i;
  }
  bool found = false;
  bool first = true;
  while (i < pattern.size() && (pattern[i] != ']' || first)) {
    first = false;
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    const glob_character low = decode_glob_character(pattern, i);
    i += low.length;
    std::uint32_t high = low.code_point;
    if (i + 1 < pattern.size() && pattern[i] == '-' && pattern[i + 1] != ']') {
      ++i;
      if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
      const glob_character last = decode_glob_character(pattern, i);
      i += last.length;
      high = last.code_point;
    }
    if (c >= low.code_point && c <= high) found = true;
  }
  if (i >= pattern.size()) return at;
  matched = found != negated;
  return i + 1;
}

// Matches one pattern component (no '/') against one path component.
inline bool match_glob_component(std::string_view pattern, std::string_view name) {
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star_p = std::string_view::npos;
  std::size_t star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      while (p < pattern.size() && pattern[p] == '*') ++p;
      star_p = p;
      star_n = n;
      continue;
    }
    if (p < pattern.size()) {
      std::size_t next = p + 1;  // pattern index after this token
      std::size_t consumed = 0;  // name bytes the token matched, 0 for no match
      bool literal = true;
      if (pattern[p] == '?') {
        consumed = decode_glob_character(name, n).length;
        literal = false;
      } else if (pattern[p] == '[') {
        const glob_character c = decode_glob_character(name, n);
        bool matched = false;
        if (const std::size_t after = match_glob_class(pattern, p, c.code_point, matched); after != p) {
          next = after;
          consumed = matched ? c.length : 0;
          literal = false;
        }
      }
      if (literal) {
        const std::size_t at = pattern[p] == '\\' && p + 1 < pattern.size() ? p + 1 : p;
        consumed = pattern[at] == name[n] ? 1 : 0;  // literals compare bytes
        next = at + 1;
      }
      if (consumed != 0) {
        p = next;
        n += consumed;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    star_n += decode_glob_character(name, star_n).length;
    p = star_p;
    n = star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The components of a '/'-separated path, without empty ones.
inline void split_path(std::string_view path, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t at = 0;
  while (at <= path.size()) {
    std::size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > at) out.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
}

}  // namespace detail

/// A parsed glob pattern (syntax at the top of this header).
class path_glob {
 public:
  /// Parses `pattern`. Errors: invalid_argument when it is empty, absolute
  /// (starts with '/') or has a ".." component (it could never match a path
  /// below the root).
  static result<path_glob> parse(std::string_view pattern) {
    path_glob glob;
    glob.text_ = std::string(pattern);
    if (pattern.empty()) return fail(errc::invalid_argument, "empty glob pattern");
    if (pattern.front() == '/') {
      return fail(errc::invalid_argument, "glob pattern '" + glob.text_ + "' is absolute; patterns are relative to the root");
    }
    std::vector<std::string_view> parts;
    detail::split_path(pattern, parts);
    for (const std::string_view part : parts) {
      if (part == ".") continue;
      if (part == "..") {
        return fail(errc::invalid_argument, "glob pattern '" + glob.text_ + "' has a '..' component");
      }
      glob.components_.emplace_back(part);
    }
    if (pattern.back() == '/') glob.components_.emplace_back("**");
    if (glob.components_.empty()) return fail(errc::invalid_argument, "glob pattern '" + glob.text_ + "' names no path");
    return glob;
  }

  /// The pattern as written.
  const std::string& text() const noexcept { return text_; }

  /// True when the pattern matches the path whose components are `path`.
  bool matches(std::span<const std::string_view> path) const {
    std::size_t p = 0;
    std::size_t c = 0;
    std::size_t star_p = std::string::npos;
    std::size_t star_c = 0;
    while (c < path.size()) {
      if (p < components_.size() && components_[p] == "**") {
        star_p = ++p;
        star_c = c;
        continue;
      }
      if (p < components_.size() && detail::match_glob_component(components_[p], path[c])) {
        ++p;
        ++c;
        continue;
      }
      if (star_p == std::string::npos) return false;
      p = star_p;
      c = ++star_c;
    }
    while (p < components_.size() && components_[p] == "**") ++p;
    return p == components_.size();
  }

  /// True when the pattern matches the '/'-separated relative `path`.
  bool matches(std::string_view path) const {
    std::vector<std::string_view> parts;
    detail::split_path(path, parts);
    return matches(parts);
  }

  /// True when some path strictly below the directory `directory` (given by
  /// its components) could match: the walk uses it to skip subtrees.
  bool could_match_below(std::span<const std::string_view> directory) const {
    for (std::size_t i = 0; i < directory.size(); ++i) {
      if (i >= components_.size()) return false;
      if (components_[i] == "**") return true;
      if (!detail::match_glob_component(components_[i], directory[i])) return false;
    }
    return components_.size() > directory.size();
  }

 private:
  std::string text_;
  std::vector<std::string> components_;
};

/// True when glob `pattern` matches the relative path `path`; a pattern that
/// path_glob::parse rejects matches nothing.
inline bool glob_match(std::string_view pattern, std::string_view path) {
  auto glob = path_glob::parse(pattern);
  return glob && glob->matches(path);
}

namespace detail {

class source_walker {
 public:
  source_walker(std::vector<path_glob> includes, std::vector<path_glob> excludes)
      : includes_(std::move(includes)), excludes_(std::move(excludes)) {}

  result<void> walk(const std::filesystem::path& directory, const std::string& relative) {
    std::error_code ec;
    std::filesystem::directory_iterator it(directory, ec);
    if (ec) return unexpected(io::detail::system_error("list directory", ec.value(), directory.string()));
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      const std::filesystem::directory_entry& entry = *it;
      const std::string name = entry.path().filename().string();
      const std::string path = relative.empty() ? name : relative + "/" + name;
      std::error_code status_error;
      const std::filesystem::file_status link_status = entry.symlink_status(status_error);
      if (status_error) return unexpected(io::detail::system_error("stat", status_error.value(), entry.path().string()));
      if (std::filesystem::is_directory(link_status)) {
        if (name == ".git" || !wanted_directory(path)) continue;
        AGENTCTX_TRY(walk(entry.path(), path));
        continue;
      }
      bool regular = std::filesystem::is_regular_file(link_status);
      if (std::filesystem::is_symlink(link_status)) {
        // A broken link or a link to something else is not a source.
        regular = std::filesystem::is_regular_file(entry.status(status_error)) && !status_error;
      }
      if (regular && wanted_file(path)) found_.push_back(path);
    }
    if (ec) return unexpected(io::detail::system_error("list directory", ec.value(), directory.string()));
    return {};
  }

  std::vector<std::string> take_found() { return std::move(found_); }

 private:
  bool excluded(std::span<const std::string_view> parts) const {
    return std::any_of(excludes_.begin(), excludes_.end(), [&](const path_glob& g) { return g.matches(parts); });
  }

  bool wanted_directory(const std::string& path) {
    split_path(path, parts_);
    if (excluded(parts_)) return false;
    return std::any_of(includes_.begin(), includes_.end(),
                       [&](const path_glob& g) { return g.could_match_below(parts_); });
  }

  bool wanted_file(const std::string& path) {
    split_path(path, parts_);
    const bool included =
        std::any_of(includes_.begin(), includes_.end(), [&](const path_glob& g) { return g.matches(parts_); });
    return included && !excluded(parts_);
  }

  std::vector<path_glob> includes_;
  std::vector<path_glob> excludes_;
  std::vector<std::string_view> parts_;
  std::vector<std::string> found_;
};

inline result<std::vector<path_glob>> parse_globs(std::span<const std::string> patterns) {
  std::vector<path_glob> globs;
  globs.reserve(patterns.size());
  for (const std::string& pattern : patterns) {
    auto glob = path_glob::parse(pattern);
    if (!glob) return unexpected(std::move(glob).error());
    globs.push_back(std::move(*glob));
  }
  return globs;
}

}  // namespace detail

/// The regular files below `root` whose relative paths match an include glob
/// and no exclude glob, as '/'-separated paths relative to `root`, sorted by
/// bytes, without duplicates. No includes gives an empty list.
///
/// Errors: invalid_argument for a malformed pattern (see path_glob::parse);
/// not_found when `root` does not exist, invalid_argument when it is not a
/// directory; permission_denied / io_error (with sys_errno and the path) when
/// a directory cannot be listed or an entry cannot be examined.
inline result<std::vector<std::string>> collect_sources(const std::string& root, std::span<const std::string> includes,
                                                        std::span<const std::string> excludes) {
  auto include_globs = detail::parse_globs(includes);
  if (!include_globs) return unexpected(std::move(include_globs).error());
  auto exclude_globs = detail::parse_globs(excludes);
  if (!exclude_globs) return unexpected(std::move(exclude_globs).error());

  const std::filesystem::path top(root.empty() ? std::string(".") : root);
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(top, ec);
  if (ec) return unexpected(io::detail::system_error("stat", ec.value(), top.string()));
  if (!std::filesystem::is_directory(status)) return fail(errc::invalid_argument, "root is not a directory", top.string());
  if (include_globs->empty()) return std::vector<std::string>{};

  detail::source_walker walker(std::move(*include_globs), std::move(*exclude_globs));
  AGENTCTX_TRY(walker.walk(top, std::string()));
  std::vector<std::string> found = walker.take_found();
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace agentctx::agdb
