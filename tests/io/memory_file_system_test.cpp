// memory_file_system: durability model and crash images.
#include <doctest/doctest.h>

#include <cerrno>
#include <set>
#include <string>
#include <vector>

#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace io_memory_file_system_test {

using agentctx::errc;
using namespace agentctx::io;
using io_test::bytes_of;
using io_test::text_of;
using io_test::whole;

namespace {

std::unique_ptr<file> open_or_fail(file_system& fs, const std::string& path, open_options options) {
  auto handle = fs.open(path, options);
  REQUIRE_MESSAGE(handle.has_value(), test_support::error_text(handle));
  return std::move(*handle);
}

// "f" durably holds "base"; then four unsynced operations:
// append "aaaa", append "bbbb", truncate to 6, write "cc" at 8.
memory_file_system_state four_unsynced_operations(memory_file_system& fs) {
  REQUIRE(fs.write_whole("f", "base").has_value());
  auto handle = open_or_fail(fs, "f", read_write);
  REQUIRE(handle->append(bytes_of("aaaa")).has_value());
  REQUIRE(handle->append(bytes_of("bbbb")).has_value());
  REQUIRE(handle->truncate(6).has_value());
  REQUIRE(handle->write_at(8, bytes_of("cc")).has_value());
  return fs.snapshot();
}

}  // namespace

TEST_CASE("a crash drops data written since the last sync") {
  memory_file_system fs;
  REQUIRE(fs.write_whole("f", "v1").has_value());
  auto handle = open_or_fail(fs, "f", read_write);
  REQUIRE(handle->write_at(0, bytes_of("v2-longer")).has_value());
  CHECK(whole(fs, "f") == "v2-longer");
  auto before_sync = fs.snapshot();

  fs.simulate_crash();
  CHECK(whole(fs, "f") == "v1");

  fs.restore(before_sync);
  auto again = open_or_fail(fs, "f", read_write);
  REQUIRE(again->sync().has_value());
  fs.simulate_crash(crash_mode::drop_unsynced());
  CHECK(whole(fs, "f") == "v2-longer");
}

TEST_CASE("a new file survives a crash only with a file sync and a directory sync") {
  struct durability_case {
    bool sync_file;
    bool sync_directory;
    bool exists_after;
    const char* contents_after;
  };
  const durability_case cases[] = {
      {false, false, false, ""},
      {true, false, false, ""},
      {false, true, true, ""},
      {true, true, true, "data"},
  };
  for (const durability_case& c : cases) {
    CAPTURE(c.sync_file);
    CAPTURE(c.sync_directory);
    memory_file_system fs;
    REQUIRE(fs.create_dir("d").has_value());
    REQUIRE(fs.sync_dir("/").has_value());
    auto handle = open_or_fail(fs, "d/new", create_new);
    REQUIRE(handle->append(bytes_of("data")).has_value());
    if (c.sync_file) REQUIRE(handle->sync().has_value());
    if (c.sync_directory) REQUIRE(fs.sync_dir("d").has_value());
    fs.simulate_crash();
    CHECK(*fs.exists("d/new") == c.exists_after);
    if (c.exists_after) CHECK(whole(fs, "d/new") == c.contents_after);
  }
}

TEST_CASE("renames and removals become durable only at sync_dir") {
  memory_file_system fs;
  REQUIRE(fs.write_whole("target", "old").has_value());
  auto temporary = open_or_fail(fs, "temp", create_new);
  REQUIRE(temporary->append(bytes_of("new")).has_value());
  REQUIRE(temporary->sync().has_value());
  REQUIRE(fs.rename("temp", "target").has_value());
  auto renamed = fs.snapshot();

  fs.simulate_crash();
  CHECK(whole(fs, "target") == "old");
  CHECK(*fs.list_dir("/") == std::vector<std::string>{"target"});  // temp was never durable

  fs.restore(renamed);
  REQUIRE(fs.sync_dir("/").has_value());
  fs.simulate_crash();
  CHECK(whole(fs, "target") == "new");
  CHECK(*fs.list_dir("/") == std::vector<std::string>{"target"});

  REQUIRE(fs.remove("target").has_value());
  CHECK_FALSE(*fs.exists("target"));
  auto removed = fs.snapshot();
  fs.simulate_crash();
  CHECK(whole(fs, "target") == "new");  // the removal was not durable
  fs.restore(removed);
  REQUIRE(fs.sync_dir("/").has_value());
  fs.simulate_crash();
  CHECK_FALSE(*fs.exists("target"));
}

TEST_CASE("a durable temp file renamed without sync_dir keeps both names apart") {
  memory_file_system fs;
  REQUIRE(fs.write_whole("target", "old").has_value());
  REQUIRE(fs.write_whole("temp", "new").has_value());  // durable under its own name
  REQUIRE(fs.rename("temp", "target").has_value());
  fs.simulate_crash();
  CHECK(whole(fs, "target") == "old");
  CHECK(whole(fs, "temp") == "new");
}

TEST_CASE("a directory and its files survive only when the directory's own entry is durable") {
  memory_file_system fs;
  REQUIRE(fs.create_dir("d").has_value());
  REQUIRE(fs.write_whole("d/f", "inside").has_value());  // syncs d, but not the root
  auto state = fs.snapshot();
  fs.simulate_crash();
  CHECK_FALSE(*fs.exists("d"));

  fs.restore(state);
  REQUIRE(fs.sync_dir("").has_value());
  fs.simulate_crash();
  CHECK(whole(fs, "d/f") == "inside");

  // A directory renamed and made durable carries its whole subtree.
  REQUIRE(fs.rename("d", "e").has_value());
  REQUIRE(fs.sync_dir("/").has_value());
  fs.simulate_crash();
  CHECK_FALSE(*fs.exists("d"));
  CHECK(whole(fs, "e/f") == "inside");
}

TEST_CASE("unsynced operations are listed in order") {
  memory_file_system fs;
  four_unsynced_operations(fs);
  CHECK(*fs.unsynced_operation_count("f") == 4);
  auto operations = fs.unsynced_operations("f");
  REQUIRE(operations.has_value());
  REQUIRE(operations->size() == 4);
  using kind = unsynced_operation::kind;
  const unsynced_operation expected[] = {
      {kind::write, 4, 4}, {kind::write, 8, 4}, {kind::truncate, 6, 0}, {kind::write, 8, 2}};
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK((*operations)[i].type == expected[i].type);
    CHECK((*operations)[i].offset == expected[i].offset);
    CHECK((*operations)[i].size == expected[i].size);
  }
  CHECK(whole(fs, "f") == std::string("baseaa\0\0cc", 10));
  CHECK(fs.unsynced_operation_count("missing").error().code == errc::not_found);
  REQUIRE(fs.create_dir("d").has_value());
  CHECK(fs.unsynced_operation_count("d").error().code == errc::io_error);
}

TEST_CASE("keep_prefix keeps the first N unsynced operations, optionally tearing the last write") {
  struct prefix_case {
    crash_mode mode;
    std::string expected;
  };
  const prefix_case cases[] = {
      {crash_mode::drop_unsynced(), "base"},
      {crash_mode::keep_prefix(0), "base"},
      {crash_mode::keep_prefix(1), "baseaaaa"},
      {crash_mode::keep_prefix(2), "baseaaaabbbb"},
      {crash_mode::keep_prefix(3), "baseaa"},
      {crash_mode::keep_prefix(4), std::string("baseaa\0\0cc", 10)},
      {crash_mode::keep_prefix(99), std::string("baseaa\0\0cc", 10)},
      {crash_mode::keep_all_unsynced(), std::string("baseaa\0\0cc", 10)},
      {crash_mode::keep_prefix_torn(1, 0), "base"},
      {crash_mode::keep_prefix_torn(2, 3), "baseaaaabbb"},
      {crash_mode::keep_prefix_torn(2, 100), "baseaaaabbbb"},  // tear clamped to the write
      {crash_mode::keep_prefix_torn(3, 1), "baseaa"},          // a truncate cannot tear
      {crash_mode::keep_prefix_torn(4, 1), std::string("baseaa\0\0c", 9)},
  };
  memory_file_system fs;
  auto state = four_unsynced_operations(fs);
  for (const prefix_case& c : cases) {
    CAPTURE(c.expected);
    fs.restore(state);
    fs.simulate_crash(c.mode);
    CHECK(whole(fs, "f") == c.expected);
    CHECK(*fs.unsynced_operation_count("f") == 0);
  }
}

TEST_CASE("keep_prefix can choose N per file") {
  memory_file_system fs;
  REQUIRE(fs.write_whole("a", "").has_value());
  REQUIRE(fs.write_whole("b", "").has_value());
  for (const char* name : {"a", "b"}) {
    auto handle = open_or_fail(fs, name, read_write);
    REQUIRE(handle->append(bytes_of("1")).has_value());
    REQUIRE(handle->append(bytes_of("2")).has_value());
  }
  crash_mode mode = crash_mode::keep_prefix(2);
  mode.kept_operations_for_path["/a"] = 1;
  fs.simulate_crash(mode);
  CHECK(whole(fs, "a") == "1");
  CHECK(whole(fs, "b") == "12");
}

TEST_CASE("random crash modes are reproducible and stay within the possible images") {
  memory_file_system fs;
  auto state = four_unsynced_operations(fs);
  const std::set<std::string> prefixes = {"base", "baseaaaa", "baseaaaabbbb", "baseaa",
                                          std::string("baseaa\0\0cc", 10)};
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    CAPTURE(seed);
    fs.restore(state);
    fs.simulate_crash(crash_mode::random_prefix(seed));
    std::string image = whole(fs, "f");
    CHECK(prefixes.count(image) == 1);
    seen.insert(image);
    fs.restore(state);
    fs.simulate_crash(crash_mode::random_prefix(seed));
    CHECK(whole(fs, "f") == image);  // same seed, same image

    fs.restore(state);
    fs.simulate_crash(crash_mode::random_prefix(seed, true));
    std::string torn = whole(fs, "f");
    bool is_torn_prefix = false;  // some prefix image with its last write cut short
    for (const std::string& p : {std::string("base"), std::string("baseaaaa"), std::string("baseaaaabbbb"),
                                 std::string("baseaa"), std::string("baseaa\0\0cc", 10)}) {
      if (torn.size() <= p.size() && p.compare(0, torn.size(), torn) == 0) is_torn_prefix = true;
    }
    CHECK(is_torn_prefix);
  }
  CHECK(seen.size() > 1);
}

TEST_CASE("random_pages mixes synced and current pages") {
  constexpr std::size_t page = crash_mode::page_size;
  memory_file_system fs;
  REQUIRE(fs.write_whole("f", std::string(3 * page, 'a')).has_value());
  auto handle = open_or_fail(fs, "f", read_write);
  REQUIRE(handle->write_at(0, bytes_of(std::string(4 * page, 'b'))).has_value());
  auto state = fs.snapshot();
  std::set<std::string> patterns;
  for (std::uint64_t seed = 0; seed < 32; ++seed) {
    CAPTURE(seed);
    fs.restore(state);
    fs.simulate_crash(crash_mode::random_pages(seed));
    std::string image = whole(fs, "f");
    REQUIRE((image.size() == 3 * page || image.size() == 4 * page));
    std::string pattern;
    for (std::size_t start = 0; start < image.size(); start += page) {
      std::string piece = image.substr(start, page);
      bool old_page = start < 3 * page && piece == std::string(page, 'a');
      bool new_page = piece == std::string(page, 'b');
      bool never_written = start >= 3 * page && piece == std::string(page, '\0');
      CHECK((old_page || new_page || never_written));
      pattern += new_page ? 'b' : 'a';
    }
    patterns.insert(pattern);
  }
  CHECK(patterns.size() > 2);
}

TEST_CASE("a crash invalidates open handles and releases locks") {
  memory_file_system fs;
  REQUIRE(fs.write_whole("f", "x").has_value());
  auto handle = open_or_fail(fs, "f", read_write);
  auto lock = fs.lock("LOCK", lock_mode::exclusive, false);
  REQUIRE(lock.has_value());
  fs.simulate_crash();

  auto read = handle->read_at(0, {});
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == errc::io_error);
  CHECK(read.error().sys_errno == EIO);
  CHECK(handle->append(bytes_of("y")).error().code == errc::io_error);
  CHECK(handle->sync().error().code == errc::io_error);

  // The lock file was never made durable; lock() creates it again and the
  // dead process's lock no longer counts.
  auto relock = fs.lock("LOCK", lock_mode::exclusive, false);
  REQUIRE(relock.has_value());
  lock->reset();  // releasing the stale lock must not release the new one
  CHECK(fs.lock("LOCK", lock_mode::shared, false).error().code == errc::locked);
}

TEST_CASE("snapshots and mappings are isolated from later writes") {
  memory_file_system fs;
  REQUIRE(fs.write_whole("f", "one").has_value());
  auto saved = fs.snapshot();
  auto mapped = fs.map("f");
  REQUIRE(mapped.has_value());
  auto handle = open_or_fail(fs, "f", read_write);
  REQUIRE(handle->write_at(0, bytes_of("two")).has_value());
  REQUIRE(handle->sync().has_value());
  CHECK(text_of(mapped->bytes()) == "one");
  CHECK(whole(fs, "f") == "two");

  fs.restore(saved);
  CHECK(whole(fs, "f") == "one");
  CHECK(handle->read_at(0, {}).error().code == errc::io_error);  // restore invalidates handles too
  REQUIRE(fs.write_whole("f", "three").has_value());
  fs.restore(saved);  // a state can be restored again
  CHECK(whole(fs, "f") == "one");

  fs.restore(memory_file_system_state{});  // the empty state
  CHECK(fs.list_dir("/")->empty());
}

TEST_CASE("paths are normalised") {
  memory_file_system fs;
  REQUIRE(fs.create_dir("/a").has_value());
  REQUIRE(fs.write_whole("a/b", "same").has_value());
  for (const char* spelling : {"a/b", "/a/b", "./a//b", "a/c/../b", "/../a/./b"}) {
    CAPTURE(spelling);
    CHECK(whole(fs, spelling) == "same");
  }
  CHECK(*fs.list_dir(".") == std::vector<std::string>{"a"});
  CHECK(*fs.list_dir("") == std::vector<std::string>{"a"});
}

TEST_CASE("files cannot grow beyond max_file_size") {
  memory_file_system fs(memory_file_system_options{16});
  auto handle = open_or_fail(fs, "f", create_new);
  CHECK(handle->write_at(10, bytes_of("123456")).has_value());
  auto too_far = handle->write_at(10, bytes_of("1234567"));
  REQUIRE_FALSE(too_far.has_value());
  CHECK(too_far.error().code == errc::io_error);
  CHECK(too_far.error().sys_errno == EFBIG);
  CHECK(handle->truncate(17).error().sys_errno == EFBIG);
  CHECK(handle->write_at(~std::uint64_t{0}, bytes_of("1")).error().sys_errno == EFBIG);
}

TEST_CASE("write_whole and read_whole") {
  memory_file_system fs;
  REQUIRE(fs.write_whole("f", bytes_of("bytes")).has_value());
  CHECK(whole(fs, "f") == "bytes");
  REQUIRE(fs.write_whole("f", "text").has_value());
  CHECK(whole(fs, "f") == "text");
  fs.simulate_crash();
  CHECK(whole(fs, "f") == "text");  // write_whole is durable
  CHECK(fs.read_whole("missing").error().code == errc::not_found);
  CHECK(fs.write_whole("no/such/dir", "x").error().code == errc::not_found);
}

}  // namespace io_memory_file_system_test
