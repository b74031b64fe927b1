// The file_system contract, checked against the POSIX file system (in a
// scratch folder), the in-memory one, and an unarmed fault-injecting wrapper.
#include <doctest/doctest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace io_file_system_test {

using agentctx::errc;
using agentctx::result;
using namespace agentctx::io;
using io_test::bytes_of;
using io_test::read_text;
using io_test::text_of;
using io_test::write_text;
using test_support::code_of;

namespace {

std::string read_at_text(file& handle, std::uint64_t offset, std::size_t count) {
  std::vector<std::byte> buffer(count);
  auto n = handle.read_at(offset, buffer);
  REQUIRE(n.has_value());
  return text_of(std::span<const std::byte>(buffer.data(), *n));
}

}  // namespace

TEST_CASE_TEMPLATE("open honours open_options", F, IO_TEST_FILE_SYSTEMS) {
  struct open_case {
    const char* name;
    bool existing;  // the file holds "old" beforehand
    open_options options;
    errc expected;
    std::optional<std::string> contents_after;  // empty: the file must not exist
  };
  const open_case cases[] = {
      {"read_only on a missing file", false, read_only, errc::not_found, std::nullopt},
      {"read_write on a missing file", false, read_write, errc::not_found, std::nullopt},
      {"create_or_open creates", false, create_or_open, errc::ok, ""},
      {"create_new creates", false, create_new, errc::ok, ""},
      {"create_truncate creates", false, create_truncate, errc::ok, ""},
      {"read_only keeps contents", true, read_only, errc::ok, "old"},
      {"read_write keeps contents", true, read_write, errc::ok, "old"},
      {"create_or_open keeps contents", true, create_or_open, errc::ok, "old"},
      {"create_new refuses an existing file", true, create_new, errc::already_exists, "old"},
      {"create_truncate empties", true, create_truncate, errc::ok, ""},
      {"create without write", false, open_options{false, true, false, false}, errc::invalid_argument, std::nullopt},
      {"truncate without write", true, open_options{false, false, false, true}, errc::invalid_argument, "old"},
      {"exclusive without create", true, open_options{true, false, true, false}, errc::invalid_argument, "old"},
  };
  for (const open_case& c : cases) {
    CAPTURE(c.name);
    F f;
    const std::string path = f.base + "/file";
    if (c.existing) write_text(f.fs, path, "old");
    auto handle = f.fs.open(path, c.options);
    CHECK(code_of(handle) == c.expected);
    if (handle) CHECK((*handle)->path() == path);
    CHECK(*f.fs.exists(path) == c.contents_after.has_value());
    if (c.contents_after) CHECK(read_text(f.fs, path) == *c.contents_after);
  }
}

TEST_CASE_TEMPLATE("errors carry the code, errno, path and message", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string missing = f.base + "/missing";
  auto opened = f.fs.open(missing, read_only);
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == errc::not_found);
  CHECK(opened.error().sys_errno == ENOENT);
  CHECK(opened.error().path == missing);
  CHECK(opened.error().message == "open failed: No such file or directory");

  write_text(f.fs, f.base + "/present", "x");
  const std::vector<std::pair<const char*, std::function<agentctx::error()>>> calls = {
      {"map", [&] { return f.fs.map(missing).error(); }},
      {"file_size", [&] { return f.fs.file_size(missing).error(); }},
      {"remove", [&] { return f.fs.remove(missing).error(); }},
      {"rename", [&] { return f.fs.rename(missing, f.base + "/x").error(); }},
      {"rename into a missing directory", [&] { return f.fs.rename(f.base + "/present", f.base + "/no/x").error(); }},
      {"list_dir", [&] { return f.fs.list_dir(missing).error(); }},
      {"sync_dir", [&] { return f.fs.sync_dir(missing).error(); }},
      {"create_dir without parent", [&] { return f.fs.create_dir(missing + "/sub").error(); }},
      {"lock without parent", [&] { return f.fs.lock(missing + "/lock", lock_mode::shared, false).error(); }},
  };
  for (const auto& named_call : calls) {
    CAPTURE(named_call.first);
    agentctx::error e = named_call.second();
    CHECK(e.code == errc::not_found);
    CHECK(e.sys_errno == ENOENT);
    CHECK_FALSE(e.path.empty());
    CHECK(e.message.find("failed: No such file or directory") != std::string::npos);
  }
}

TEST_CASE_TEMPLATE("files read and write at offsets, append, truncate and sync", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  auto opened = f.fs.open(f.base + "/data", create_new);
  REQUIRE(opened.has_value());
  file& handle = **opened;
  REQUIRE(handle.append(bytes_of("hello")).has_value());
  REQUIRE(handle.append(bytes_of(" world")).has_value());
  CHECK(*handle.size() == 11);
  CHECK(read_at_text(handle, 0, 64) == "hello world");
  CHECK(read_at_text(handle, 6, 3) == "wor");
  CHECK(read_at_text(handle, 11, 4).empty());
  CHECK(read_at_text(handle, 1000, 4).empty());

  REQUIRE(handle.write_at(0, bytes_of("J")).has_value());
  REQUIRE(handle.write_at(13, bytes_of("!")).has_value());  // leaves a zero-filled gap
  CHECK(*handle.size() == 14);
  CHECK(read_at_text(handle, 0, 64) == std::string("Jello world\0\0!", 14));
  REQUIRE(handle.append(bytes_of("?")).has_value());  // appends after the write_at end
  CHECK(*f.fs.file_size(f.base + "/data") == 15);

  REQUIRE(handle.truncate(5).has_value());
  CHECK(read_at_text(handle, 0, 64) == "Jello");
  REQUIRE(handle.truncate(7).has_value());
  CHECK(read_at_text(handle, 0, 64) == std::string("Jello\0\0", 7));
  CHECK(handle.sync().has_value());
  CHECK(read_text(f.fs, f.base + "/data") == std::string("Jello\0\0", 7));
  REQUIRE(handle.append({}).has_value());  // an empty append changes nothing
  CHECK(*handle.size() == 7);

  REQUIRE(handle.close().has_value());
  CHECK(code_of(handle.read_at(0, {})) == errc::io_error);
  CHECK(code_of(handle.append(bytes_of("x"))) == errc::io_error);
  CHECK(code_of(handle.size()) == errc::io_error);
  CHECK(code_of(handle.close()) == errc::io_error);
}

TEST_CASE_TEMPLATE("a read-only handle refuses to change the file", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string path = f.base + "/data";
  write_text(f.fs, path, "abc");
  auto handle = f.fs.open(path, read_only);
  REQUIRE(handle.has_value());
  CHECK(read_at_text(**handle, 0, 8) == "abc");
  CHECK(code_of((*handle)->append(bytes_of("x"))) == errc::io_error);
  CHECK(code_of((*handle)->write_at(0, bytes_of("x"))) == errc::io_error);
  CHECK(code_of((*handle)->truncate(0)) == errc::io_error);
  CHECK(read_text(f.fs, path) == "abc");
}

TEST_CASE_TEMPLATE("rename replaces the target; handles follow the inode", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string from = f.base + "/from";
  const std::string to = f.base + "/to";
  write_text(f.fs, from, "new");
  write_text(f.fs, to, "old");
  auto old_handle = f.fs.open(to, read_only);
  auto moving_handle = f.fs.open(from, read_write);
  REQUIRE(old_handle.has_value());
  REQUIRE(moving_handle.has_value());

  REQUIRE(f.fs.rename(from, to).has_value());
  CHECK_FALSE(*f.fs.exists(from));
  CHECK(read_text(f.fs, to) == "new");
  CHECK(read_at_text(**old_handle, 0, 8) == "old");  // the replaced inode lives on
  REQUIRE((*moving_handle)->append(bytes_of("er")).has_value());
  CHECK(read_text(f.fs, to) == "newer");

  CHECK(f.fs.rename(to, to).has_value());  // renaming onto itself changes nothing
  CHECK(read_text(f.fs, to) == "newer");
  CHECK(code_of(f.fs.rename(from, to)) == errc::not_found);
  REQUIRE(f.fs.create_dir(f.base + "/dir").has_value());
  CHECK(code_of(f.fs.rename(to, f.base + "/dir")) == errc::io_error);  // a file cannot replace a directory
  CHECK(f.fs.rename(to, f.base + "/dir/moved").has_value());
  CHECK(read_text(f.fs, f.base + "/dir/moved") == "newer");
}

TEST_CASE_TEMPLATE("remove unlinks a file; open handles keep reading", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string path = f.base + "/data";
  write_text(f.fs, path, "still here");
  auto handle = f.fs.open(path, read_only);
  REQUIRE(handle.has_value());
  REQUIRE(f.fs.remove(path).has_value());
  CHECK_FALSE(*f.fs.exists(path));
  CHECK(read_at_text(**handle, 0, 64) == "still here");
  CHECK(code_of(f.fs.remove(path)) == errc::not_found);
  REQUIRE(f.fs.create_dir(f.base + "/dir").has_value());
  CHECK(code_of(f.fs.remove(f.base + "/dir")) == errc::io_error);
  CHECK(*f.fs.exists(f.base + "/dir"));
}

TEST_CASE_TEMPLATE("remove_dir removes an empty directory, nothing else", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string dir = f.base + "/dir";
  REQUIRE(f.fs.create_dir(dir).has_value());
  write_text(f.fs, dir + "/file", "x");
  const auto refused = f.fs.remove_dir(dir);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::io_error);
  CHECK(refused.error().sys_errno == ENOTEMPTY);
  CHECK(*f.fs.exists(dir + "/file"));
  const auto on_file = f.fs.remove_dir(dir + "/file");
  REQUIRE_FALSE(on_file.has_value());
  CHECK(on_file.error().sys_errno == ENOTDIR);
  CHECK(*f.fs.exists(dir + "/file"));
  REQUIRE(f.fs.remove(dir + "/file").has_value());
  REQUIRE(f.fs.remove_dir(dir).has_value());
  CHECK_FALSE(*f.fs.exists(dir));
  CHECK(f.fs.sync_dir(f.base).has_value());
  CHECK(code_of(f.fs.remove_dir(dir)) == errc::not_found);
}

TEST_CASE_TEMPLATE("directories: create, list, sync, stat", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string dir = f.base + "/dir";
  REQUIRE(f.fs.create_dir(dir).has_value());
  CHECK(f.fs.create_dir(dir).has_value());  // already there: fine
  CHECK(*f.fs.exists(dir));
  write_text(f.fs, dir + "/b", "2");
  write_text(f.fs, dir + "/a", "1");
  REQUIRE(f.fs.create_dir(dir + "/c").has_value());
  CHECK(*f.fs.list_dir(dir) == std::vector<std::string>{"a", "b", "c"});
  CHECK(f.fs.list_dir(dir + "/c")->empty());
  CHECK(f.fs.sync_dir(dir).has_value());
  CHECK(f.fs.sync_dir(f.base).has_value());

  CHECK(code_of(f.fs.create_dir(dir + "/a")) == errc::already_exists);  // a file is there
  CHECK(code_of(f.fs.list_dir(dir + "/a")) == errc::io_error);          // not a directory
  CHECK(code_of(f.fs.sync_dir(dir + "/a")) == errc::io_error);
  CHECK(code_of(f.fs.file_size(dir)) == errc::io_error);
  CHECK(*f.fs.file_size(dir + "/a") == 1);
  CHECK_FALSE(*f.fs.exists(dir + "/zzz"));
  CHECK_FALSE(*f.fs.exists(dir + "/a/under-a-file"));
}

TEST_CASE_TEMPLATE("map gives the whole file and outlives it", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string empty = f.base + "/empty";
  const std::string full = f.base + "/full";
  write_text(f.fs, empty, "");
  write_text(f.fs, full, "mapped bytes");

  auto none = f.fs.map(empty);
  REQUIRE(none.has_value());
  CHECK(none->empty());
  CHECK(none->size() == 0);

  auto mapped = f.fs.map(full);
  REQUIRE(mapped.has_value());
  CHECK(text_of(mapped->bytes()) == "mapped bytes");
  mapped_bytes moved = std::move(*mapped);
  REQUIRE(f.fs.remove(full).has_value());
  write_text(f.fs, full, "a different file now");
  CHECK(text_of(moved.bytes()) == "mapped bytes");

  auto replaced = f.fs.map(full);
  REQUIRE(replaced.has_value());
  write_text(f.fs, f.base + "/other", "other");
  REQUIRE(f.fs.rename(f.base + "/other", full).has_value());
  CHECK(text_of(replaced->bytes()) == "a different file now");

  CHECK(code_of(f.fs.map(f.base + "/missing")) == errc::not_found);
  CHECK(code_of(f.fs.map(f.base)) == errc::io_error);
}

TEST_CASE_TEMPLATE("locks conflict like flock", F, IO_TEST_FILE_SYSTEMS) {
  struct lock_case {
    lock_mode held;
    lock_mode wanted;
    bool conflicts;
  };
  const lock_case cases[] = {
      {lock_mode::shared, lock_mode::shared, false},
      {lock_mode::shared, lock_mode::exclusive, true},
      {lock_mode::exclusive, lock_mode::shared, true},
      {lock_mode::exclusive, lock_mode::exclusive, true},
  };
  for (const lock_case& c : cases) {
    CAPTURE(static_cast<int>(c.held));
    CAPTURE(static_cast<int>(c.wanted));
    F f;
    const std::string path = f.base + "/LOCK";
    auto first = f.fs.lock(path, c.held, false);
    REQUIRE(first.has_value());
    CHECK(*f.fs.exists(path));  // created on demand
    auto second = f.fs.lock(path, c.wanted, false);
    CHECK(second.has_value() == !c.conflicts);
    if (c.conflicts) {
      CHECK(second.error().code == errc::locked);
      CHECK(second.error().path == path);
      first->reset();  // releases
      CHECK(f.fs.lock(path, c.wanted, false).has_value());
    }
  }
}

TEST_CASE_TEMPLATE("a waiting lock is granted once the holder releases it", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string path = f.base + "/LOCK";
  auto held = f.fs.lock(path, lock_mode::exclusive, false);
  REQUIRE(held.has_value());
  std::atomic<bool> acquired{false};
  std::atomic<bool> failed{false};
  std::thread waiter([&] {
    auto lock = f.fs.lock(path, lock_mode::exclusive, true);
    if (!lock) failed = true;
    acquired = true;
  });
  CHECK_FALSE(acquired.load());  // cannot have been granted while held
  held->reset();
  waiter.join();
  CHECK(acquired.load());
  CHECK_FALSE(failed.load());
}

// Holds the exclusive lock on `path`, has another thread ask for it
// (waiting), runs `change` once that thread waits, lets go, and returns what
// the waiting lock() returned.
template <class F, class Change>
result<std::unique_ptr<file_lock>> lock_after_change(F& f, const std::string& path, Change&& change) {
  auto held = f.fs.lock(path, lock_mode::exclusive, false);
  REQUIRE(held.has_value());
  std::optional<result<std::unique_ptr<file_lock>>> waited;
  io_test::waiting_thread waiter([&] { waited.emplace(f.fs.lock(path, lock_mode::exclusive, true)); },
                                 [&] { held->reset(); });
  io_test::wait_until(f.lock_waited(path));
  change();
  held->reset();
  waiter.join();
  REQUIRE(waited.has_value());
  return std::move(*waited);
}

// A holder may remove the lock file before letting go: the waiter then locks
// the file at the path (made afresh), not the removed one, so a third comer
// is refused instead of getting a lock of its own beside it. (A waiter may
// also come after the removal, and then simply makes the file; the test
// waits until it waits, so it is the removed file it locks first.)
TEST_CASE_TEMPLATE("a waiting lock is taken on the file at the path, not one removed meanwhile", F,
                   IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string path = f.base + "/LOCK";
  auto waited = lock_after_change(f, path, [&] { REQUIRE(f.fs.remove(path).has_value()); });
  REQUIRE(waited.has_value());
  CHECK(*f.fs.exists(path));
  CHECK(code_of(f.fs.lock(path, lock_mode::exclusive, false)) == errc::locked);
  waited->reset();
  CHECK(f.fs.lock(path, lock_mode::exclusive, false).has_value());
}

// The folder renamed away and another made in its place: the lock file at
// the path is the new folder's (the confined file system looks the path up
// from its root again rather than in the folder it opened first).
TEST_CASE_TEMPLATE("a waiting lock whose folder was replaced meanwhile is taken in the new folder", F,
                   IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string dir = f.base + "/store";
  const std::string path = dir + "/LOCK";
  REQUIRE(f.fs.create_dir(dir).has_value());
  auto waited = lock_after_change(f, path, [&] {
    REQUIRE(f.fs.rename(dir, f.base + "/old").has_value());
    REQUIRE(f.fs.create_dir(dir).has_value());
  });
  REQUIRE(waited.has_value());
  CHECK(*f.fs.exists(path));
  CHECK(code_of(f.fs.lock(path, lock_mode::exclusive, false)) == errc::locked);
  CHECK(f.fs.lock(f.base + "/old/LOCK", lock_mode::exclusive, false).has_value());
}

TEST_CASE_TEMPLATE("a waiting lock whose folder was removed meanwhile fails with not_found", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string dir = f.base + "/store";
  const std::string path = dir + "/LOCK";
  REQUIRE(f.fs.create_dir(dir).has_value());
  auto waited = lock_after_change(f, path, [&] {
    REQUIRE(f.fs.remove(path).has_value());
    REQUIRE(f.fs.remove_dir(dir).has_value());
  });
  CHECK(code_of(waited) == errc::not_found);
  CHECK_FALSE(*f.fs.exists(dir));
}

}  // namespace io_file_system_test
