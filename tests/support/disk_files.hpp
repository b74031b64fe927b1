// Files and folder trees on the real disk, for the path-safety tests: write
// and read a file, snapshot a tree (to prove an operation changed nothing in
// it), and the canary sandbox those tests share.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "io/io_test_support.hpp"

namespace test_support {

/// Creates (or replaces) `path` with `bytes`, creating missing parent folders.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE_MESSAGE(f != nullptr, "cannot write " << path);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  REQUIRE_MESSAGE((std::fclose(f) == 0 && written), "cannot write " << path);
}

namespace detail {

/// The bytes of `path`; nullopt when it cannot be opened.
inline std::optional<std::string> file_bytes(const std::filesystem::path& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::string text;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  std::fclose(f);
  return text;
}

}  // namespace detail

/// The bytes of `path`, which must be readable.
inline std::string read_file(const std::filesystem::path& path) {
  auto bytes = detail::file_bytes(path);
  REQUIRE_MESSAGE(bytes.has_value(), "cannot read " << path);
  return std::move(*bytes);
}

/// Every file below `dir` with its contents, every folder as "(folder)" and
/// every symlink as "-> target", keyed by the path relative to `dir`.
inline std::map<std::string, std::string> tree_snapshot(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path relative = it->path().lexically_relative(dir);  // fs::relative would follow links
    if (it->is_symlink()) {
      out[relative.string()] = "-> " + fs::read_symlink(it->path()).string();
      it.disable_recursion_pending();  // never into a link (a loop would throw)
    } else if (it->is_directory()) {
      out[relative.string()] = "(folder)";
    } else {
      out[relative.string()] = detail::file_bytes(it->path()).value_or("(unreadable)");
    }
  }
  return out;
}

/// A scratch folder holding the root under test "repo", a sibling
/// "repo_evil" that shares its prefix, and a canary folder "outside"; the
/// tests fill them and compare whole() before and after.
struct canary_sandbox {
  io_test::temporary_directory scratch;
  std::filesystem::path top = std::filesystem::canonical(scratch.path());
  std::filesystem::path repo = top / "repo";
  std::filesystem::path outside = top / "outside";
  std::filesystem::path evil = top / "repo_evil";

  canary_sandbox() {
    std::filesystem::create_directories(repo);
    std::filesystem::create_directories(outside);
    std::filesystem::create_directories(evil);
  }

  /// The whole scratch folder: repository, sibling and canary.
  std::map<std::string, std::string> whole() const { return tree_snapshot(top); }
};

}  // namespace test_support
