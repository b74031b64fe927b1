#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "agdb/source_tree.hpp"
#include "agentctx/agdb/source_collector.hpp"

namespace agdb_source_collector_test {

using agentctx::errc;
using agentctx::agdb::collect_sources;
using agentctx::agdb::glob_match;
using agentctx::agdb::path_glob;

using agdb_test::temporary_directory;
using agdb_test::write_source;

namespace {

std::vector<std::string> collect(const std::string& root, std::vector<std::string> includes,
                                 std::vector<std::string> excludes = {}) {
  auto found = collect_sources(root, includes, excludes);
  REQUIRE(found.has_value());
  return *found;
}

}  // namespace

TEST_CASE("glob matching") {
  struct row {
    const char* pattern;
    const char* path;
    bool matches;
  };
  const std::vector<row> rows = {
      {"AGENTS.md", "AGENTS.md", true},
      {"AGENTS.md", "docs/AGENTS.md", false},
      {"readme.md", "README.md", false},
      {"**/AGENTS.md", "AGENTS.md", true},
      {"**/AGENTS.md", "a/b/AGENTS.md", true},
      {"*.md", "a.md", true},
      {"*.md", "docs/a.md", false},
      {"*.md", ".hidden.md", true},
      {"docs/*.md", "docs/a.md", true},
      {"docs/*.md", "docs/x/a.md", false},
      {"docs/**", "docs/a/b/c.txt", true},
      {"docs/**", "other/a.md", false},
      {"docs/**/*.md", "docs/a.md", true},
      {"docs/**/*.md", "docs/x/y/a.md", true},
      {"docs/**/*.md", "docs/x/y/a.txt", false},
      {"**", "anything/at/all", true},
      {"a/**/b/**/c", "a/b/c", true},
      {"a/**/b/**/c", "a/x/b/y/z/c", true},
      {"a/**/b/**/c", "a/x/c", false},
      {"**/**/x", "x", true},
      {"a**b", "aXYb", true},
      {"a**b", "a/b", false},
      {"*", "a/b", false},
      {"a*b*c", "aXbYc", true},
      {"a*b*c", "aXbY", false},
      {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
      {"?.md", "a.md", true},
      {"?.md", "ab.md", false},
      {"?.md", "\xC3\xA9.md", true},
      {"caf?.md", "caf\xC3\xA9.md", true},
      {"*\xC3\xA9", "caf\xC3\xA9", true},
      {"[abc].md", "b.md", true},
      {"[abc].md", "d.md", false},
      {"[a-c].md", "c.md", true},
      {"[!a-c].md", "d.md", true},
      {"[!a-c].md", "a.md", false},
      {"[^a].md", "b.md", true},
      {"[]].md", "].md", true},
      {"[\xC3\xA9].md", "\xC3\xA9.md", true},
      {"[.md", "[.md", true},
      {"\\*.md", "*.md", true},
      {"\\*.md", "a.md", false},
      {"./AGENTS.md", "AGENTS.md", true},
      {"docs//a.md", "docs/a.md", true},
      {"docs/", "docs/a/b.md", true},
      {"docs/", "docsx/a.md", false},
      {"", "a", false},
      {"/abs.md", "abs.md", false},
      {"../x.md", "x.md", false},
  };
  for (const row& r : rows) {
    CAPTURE(r.pattern);
    CAPTURE(r.path);
    CHECK(glob_match(r.pattern, r.path) == r.matches);
  }
}

TEST_CASE("malformed glob patterns are rejected") {
  for (const char* pattern : {"", "/etc/passwd", "../x", "a/../b", "."}) {
    CAPTURE(pattern);
    auto glob = path_glob::parse(pattern);
    REQUIRE_FALSE(glob.has_value());
    CHECK(glob.error().code == errc::invalid_argument);
  }
}

TEST_CASE("could_match_below prunes directories no path below could match") {
  struct row {
    const char* pattern;
    std::vector<std::string_view> directory;
    bool could;
  };
  const std::vector<row> rows = {
      {"AGENTS.md", {"docs"}, false},
      {"docs/*.md", {"docs"}, true},
      {"docs/*.md", {"other"}, false},
      {"docs/*.md", {"docs", "x"}, false},
      {"*/x.md", {"anything"}, true},
      {"**/x.md", {"a", "b", "c"}, true},
      {"docs/**", {"docs", "a", "b"}, true},
  };
  for (const row& r : rows) {
    CAPTURE(r.pattern);
    auto glob = path_glob::parse(r.pattern);
    REQUIRE(glob.has_value());
    CHECK(glob->could_match_below(r.directory) == r.could);
  }
}

TEST_CASE("collect_sources walks the tree") {
  temporary_directory dir;
  write_source(dir.path(), "AGENTS.md", "# agents");
  write_source(dir.path(), "README.md", "readme");
  write_source(dir.path(), "Z.md", "z");
  write_source(dir.path(), "_.md", "underscore");
  write_source(dir.path(), ".hidden.md", "hidden");
  write_source(dir.path(), "docs/a.md", "a");
  write_source(dir.path(), "docs/b.txt", "b");
  write_source(dir.path(), "docs/sub/c.md", "c");
  write_source(dir.path(), ".git/config.md", "not a source");
  write_source(dir.path(), "node_modules/pkg/x.md", "vendored");
  const std::filesystem::path root(dir.path());
  std::filesystem::create_directory_symlink(root / "docs", root / "link_to_docs");
  std::filesystem::create_symlink(root / "docs" / "a.md", root / "link_file.md");
  std::filesystem::create_symlink(root / "missing.md", root / "broken.md");

  CHECK(collect(dir.path(), {"AGENTS.md"}) == std::vector<std::string>{"AGENTS.md"});
  CHECK(collect(dir.path(), {"**/*.md"}, {"node_modules"}) ==
        std::vector<std::string>{".hidden.md", "AGENTS.md", "README.md", "Z.md", "_.md", "docs/a.md",
                                 "docs/sub/c.md", "link_file.md"});
  CHECK(collect(dir.path(), {"docs/**"}, {"**/*.txt"}) == std::vector<std::string>{"docs/a.md", "docs/sub/c.md"});
  CHECK(collect(dir.path(), {"**"}, {"*.md", "node_modules/**", "docs/sub"}) ==
        std::vector<std::string>{"docs/a.md", "docs/b.txt"});
  // Several includes matching one file list it once.
  CHECK(collect(dir.path(), {"*.md", "AGENTS.md", "**/AGENTS.md"}, {"[._]*", "README.md", "Z.md", "link*"}) ==
        std::vector<std::string>{"AGENTS.md"});
  CHECK(collect(dir.path() + "/", {"docs/sub/c.md"}) == std::vector<std::string>{"docs/sub/c.md"});
  CHECK(collect(dir.path(), {}).empty());
  CHECK(collect(dir.path(), {"nothing-*.md"}).empty());
}

TEST_CASE("collect_sources errors") {
  temporary_directory dir;
  write_source(dir.path(), "file.md", "x");
  const std::vector<std::string> all = {"**"};

  auto missing = collect_sources(dir.path() + "/absent", all, {});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);

  auto not_directory = collect_sources(dir.path() + "/file.md", all, {});
  REQUIRE_FALSE(not_directory.has_value());
  CHECK(not_directory.error().code == errc::invalid_argument);

  const std::vector<std::string> absolute = {"/file.md"};
  auto bad_include = collect_sources(dir.path(), absolute, {});
  REQUIRE_FALSE(bad_include.has_value());
  CHECK(bad_include.error().code == errc::invalid_argument);

  auto bad_exclude = collect_sources(dir.path(), all, absolute);
  REQUIRE_FALSE(bad_exclude.has_value());
  CHECK(bad_exclude.error().code == errc::invalid_argument);
}

}  // namespace agdb_source_collector_test
