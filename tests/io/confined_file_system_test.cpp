// confined_file_system: what it refuses. (The file_system contract itself
// runs against it in file_system_test.cpp, through io_test::confined_fixture.)
// Every case runs in a scratch folder holding the root "repo", a sibling
// "repo_evil" sharing its prefix and a canary folder "outside"; after each,
// the canary and the sibling must be exactly as they were.
#include <doctest/doctest.h>

#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/confined_file_system.hpp"
#include "io/io_test_support.hpp"
#include "support/disk_files.hpp"
#include "support/result_checks.hpp"

namespace io_confined_file_system_test {

using agentctx::errc;
using namespace agentctx::io;
using io_test::bytes_of;
using io_test::read_text;
using io_test::write_text;

namespace {

namespace fs = std::filesystem;

using test_support::code_of;
using test_support::tree_snapshot;
using test_support::write_file;

/// The canary sandbox with links inside repo/ of every kind.
struct sandbox : test_support::canary_sandbox {
  sandbox() {
    write_file(repo / "docs" / "note.md", "inside\n");
    write_file(outside / "secret.md", "outside\n");
    write_file(evil / "secret.md", "evil\n");
    fs::create_directory_symlink(outside, repo / "out_dir");          // a folder outside
    fs::create_symlink(outside / "secret.md", repo / "out_file");     // a file outside
    fs::create_directory_symlink(repo / "docs", repo / "docs_again");  // a folder inside
    fs::create_symlink(top / "nowhere", repo / "dangling");           // nothing
    fs::create_symlink(repo / "loop", repo / "loop");                 // itself
    fs::create_directory_symlink(fs::path("../repo_evil"), repo / "evil_dir");
  }

  std::unique_ptr<confined_file_system> open_repo() const {
    auto opened = confined_file_system::open(repo.string());
    REQUIRE_MESSAGE(opened.has_value(), test_support::error_text(opened));
    return std::move(*opened);
  }
};


}  // namespace

TEST_CASE("confined_file_system: paths that are not plain relative paths are refused before any system call") {
  sandbox box;
  auto repo = box.open_repo();
  const std::vector<std::string> bad = {
      "",          "/etc/passwd",       box.outside.string() + "/secret.md",
      "..",        "../outside/secret.md", "docs/../../outside/secret.md",
      "docs/..",   "./docs/note.md",    "docs/./note.md",
      "docs//note.md", "docs/",         "/",
      std::string("docs/note.md\0x", 14), "../repo_evil/secret.md",
  };
  for (const std::string& path : bad) {
    CAPTURE(path);
    CHECK(code_of(repo->open(path, read_only)) == errc::outside_root);
    CHECK(code_of(repo->open(path, create_truncate)) == errc::outside_root);
    CHECK(code_of(repo->map(path)) == errc::outside_root);
    CHECK(code_of(repo->exists(path)) == errc::outside_root);
    CHECK(code_of(repo->file_size(path)) == errc::outside_root);
    CHECK(code_of(repo->create_dir(path)) == errc::outside_root);
    CHECK(code_of(repo->remove(path)) == errc::outside_root);
    CHECK(code_of(repo->rename("docs/note.md", path)) == errc::outside_root);
    CHECK(code_of(repo->rename(path, "docs/moved.md")) == errc::outside_root);
    CHECK(code_of(repo->lock(path, lock_mode::exclusive, false)) == errc::outside_root);
    CHECK(code_of(repo->list_dir(path)) == errc::outside_root);
    CHECK(code_of(repo->sync_dir(path)) == errc::outside_root);
  }
  CHECK(read_text(*repo, "docs/note.md") == "inside\n");
}

TEST_CASE("confined_file_system: no symlink below the root is followed, for any operation") {
  sandbox box;
  const auto outside_before = tree_snapshot(box.outside);
  const auto evil_before = tree_snapshot(box.evil);
  auto repo = box.open_repo();
  // As the last component and as a folder on the way, links of every kind.
  const std::vector<std::string> links = {"out_dir", "out_file", "docs_again", "dangling", "loop", "evil_dir"};
  for (const std::string& link : links) {
    for (const std::string& path : {link, link + "/secret.md", link + "/new.md", link + "/note.md"}) {
      CAPTURE(path);
      const auto refused = [&](const agentctx::error& e) {
        CHECK(e.code == errc::outside_root);
        CHECK(e.sys_errno == ELOOP);
        CHECK(e.message.find("symbolic link") != std::string::npos);
      };
      const auto check_refused = [&](const auto& r) {
        REQUIRE_FALSE(r.has_value());
        refused(r.error());
      };
      const bool through = path != link;  // the link is a folder on the way
      check_refused(repo->open(path, read_only));
      check_refused(repo->open(path, create_truncate));
      check_refused(repo->open(path, create_new));
      check_refused(repo->map(path));
      check_refused(repo->exists(path));
      check_refused(repo->file_size(path));
      check_refused(repo->create_dir(path));
      check_refused(repo->lock(path, lock_mode::exclusive, false));
      check_refused(repo->list_dir(path));
      check_refused(repo->sync_dir(path));
      if (through) {
        check_refused(repo->remove(path));
        check_refused(repo->rename("docs/note.md", path));
        check_refused(repo->rename(path, "docs/moved.md"));
      }
      auto writer = atomic_file_writer::begin(*repo, path);
      if (writer) {
        // Only a link as the last component gets this far: the temporary
        // file is beside it, and commit() replaces the link itself.
        CHECK_FALSE(through);
      } else {
        CHECK(writer.error().code == errc::outside_root);
      }
    }
  }
  CHECK(tree_snapshot(box.outside) == outside_before);
  CHECK(tree_snapshot(box.evil) == evil_before);
}

TEST_CASE("confined_file_system: renaming over a link replaces the link, never its target") {
  sandbox box;
  const auto outside_before = tree_snapshot(box.outside);
  auto repo = box.open_repo();
  write_text(*repo, "docs/new.md", "replacement\n");
  REQUIRE(repo->rename("docs/new.md", "out_file").has_value());
  CHECK(fs::is_regular_file(fs::symlink_status(box.repo / "out_file")));
  CHECK(read_text(*repo, "out_file") == "replacement\n");
  // Removing a link removes the link.
  REQUIRE(repo->remove("dangling").has_value());
  CHECK_FALSE(fs::exists(fs::symlink_status(box.repo / "dangling")));
  CHECK(tree_snapshot(box.outside) == outside_before);
}

// Every listing reads the directory from its start, the root's too (whose
// descriptor is shared by every operation on it).
TEST_CASE("confined_file_system: the root, listed again, lists the same entries") {
  io_test::temporary_directory dir;
  auto confined = io_test::confined_fixture::open_root(dir.path());
  REQUIRE(confined->create_dir("a").has_value());
  REQUIRE(confined->open("b", agentctx::io::create_or_open).has_value());
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    auto names = confined->list_dir(".");
    REQUIRE(names.has_value());
    std::sort(names->begin(), names->end());
    CHECK(*names == std::vector<std::string>{"a", "b"});
    CHECK(confined->list_dir("a").value().empty());
  }
}

TEST_CASE("confined_file_system: the root must be absolute, canonical and a folder") {
  sandbox box;
  fs::create_directory_symlink(box.repo, box.top / "repo_link");
  write_file(box.top / "plain_file", "x");
  struct root_case {
    std::string root;
    errc code;
  };
  const std::vector<root_case> cases = {
      {"", errc::outside_root},
      {"repo", errc::outside_root},
      {"./repo", errc::outside_root},
      {(box.top / "repo_link").string(), errc::outside_root},
      {(box.top / "repo_link").string() + "/docs", errc::outside_root},
      {(box.top / "repo" / ".." / "repo").string(), errc::outside_root},
      {(box.top / "repo" / "." / "docs").string(), errc::outside_root},
      {box.top.string() + "//repo", errc::outside_root},
      {(box.top / "missing").string(), errc::not_found},
      {(box.top / "plain_file").string(), errc::io_error},
  };
  for (const root_case& c : cases) {
    CAPTURE(c.root);
    auto opened = confined_file_system::open(c.root);
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == c.code);
  }
  auto plain = confined_file_system::open((box.top / "plain_file").string());
  REQUIRE_FALSE(plain.has_value());
  CHECK(plain.error().sys_errno == ENOTDIR);
  // A trailing slash is the same root.
  auto slash = confined_file_system::open(box.repo.string() + "/");
  REQUIRE(slash.has_value());
  CHECK((*slash)->root() == box.repo.string());
  CHECK(read_text(**slash, "docs/note.md") == "inside\n");
}

TEST_CASE("confined_file_system: the root stays the same folder when its path is renamed or replaced") {
  sandbox box;
  auto repo = box.open_repo();
  fs::rename(box.repo, box.top / "moved");
  fs::create_directory_symlink(box.outside, box.repo);  // the old name now leads outside
  CHECK(read_text(*repo, "docs/note.md") == "inside\n");
  write_text(*repo, "docs/added.md", "added\n");
  CHECK(fs::exists(box.top / "moved" / "docs" / "added.md"));
  CHECK_FALSE(fs::exists(box.outside / "docs"));
  CHECK(tree_snapshot(box.outside).size() == 1);
}

TEST_CASE("confined_file_system: atomic replacement and new folders work below the root") {
  sandbox box;
  auto repo = box.open_repo();
  REQUIRE(repo->create_dir("logs").has_value());
  REQUIRE(repo->create_dir("logs/2025").has_value());
  auto writer = atomic_file_writer::begin(*repo, "logs/2025/01.md");
  REQUIRE(writer.has_value());
  REQUIRE(writer->append(bytes_of("# log\n")).has_value());
  REQUIRE(writer->commit().has_value());
  CHECK(read_text(*repo, "logs/2025/01.md") == "# log\n");
  auto names = repo->list_dir("logs/2025");
  REQUIRE(names.has_value());
  CHECK(*names == std::vector<std::string>{"01.md"});
  auto top = repo->list_dir(".");
  REQUIRE(top.has_value());
  CHECK(std::find(top->begin(), top->end(), "logs") != top->end());
  CHECK(repo->sync_dir(".").has_value());
  CHECK(*repo->exists("logs/2025/01.md"));
  CHECK_FALSE(*repo->exists("logs/2026/01.md"));
  CHECK_FALSE(*repo->exists("docs/note.md/x"));  // a file on the way: ENOTDIR, not there
  CHECK(code_of(repo->open(".", read_only)) == errc::invalid_argument);
}

}  // namespace io_confined_file_system_test
