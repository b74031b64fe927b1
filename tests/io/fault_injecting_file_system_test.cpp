// fault_injecting_file_system: counting, failing, tearing and crashing.
#include <doctest/doctest.h>

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "io/io_test_support.hpp"

namespace io_fault_injecting_file_system_test {

using agentctx::errc;
using agentctx::result;
using namespace agentctx::io;
using io_test::bytes_of;
using io_test::text_of;
using io_test::whole;

namespace {

bool is_injected(const agentctx::error& e) {
  return e.sys_errno == EIO && e.message.find("(injected fault)") != std::string::npos;
}

// One of each counted operation; returns how many failed by an injected
// fault (later calls may fail as a consequence, e.g. not_found).
int run_workload(file_system& fs) {
  int failures = 0;
  auto note = [&](const result<void>& r) { failures += !r.has_value() && is_injected(r.error()) ? 1 : 0; };
  note(fs.create_dir("d"));                        // 1 create
  auto handle = fs.open("d/f", create_new);        // 2 create
  if (!handle) return failures + (is_injected(handle.error()) ? 1 : 0);
  note((*handle)->append(bytes_of("hello")));      // 3 write
  note((*handle)->write_at(5, bytes_of(" you")));  // 4 write
  note((*handle)->truncate(8));                    // 5 truncate
  note((*handle)->sync());                         // 6 sync
  note((*handle)->close());
  note(fs.rename("d/f", "d/g"));  // 7 rename
  note(fs.sync_dir("d"));         // 8 sync_dir
  note(fs.remove("d/g"));         // 9 remove
  return failures;
}

}  // namespace

TEST_CASE("mutating operations are counted globally and per kind") {
  memory_file_system memory;
  fault_injecting_file_system faulty(memory);
  CHECK(run_workload(faulty) == 0);
  (void)faulty.exists("d");  // reads are not counted
  (void)faulty.list_dir("d");
  CHECK(faulty.operation_count() == 9);
  const std::pair<operation_kind, std::uint64_t> per_kind[] = {
      {operation_kind::create, 2}, {operation_kind::write, 2},    {operation_kind::truncate, 1},
      {operation_kind::sync, 1},   {operation_kind::rename, 1},   {operation_kind::sync_dir, 1},
      {operation_kind::remove, 1},
  };
  for (const auto& expected : per_kind) {
    CAPTURE(static_cast<int>(expected.first));
    CHECK(faulty.operation_count(expected.first) == expected.second);
  }
  auto history = faulty.operation_history();
  REQUIRE(history.size() == 9);
  CHECK(history[2].kind == operation_kind::write);
  CHECK(history[2].path == "d/f");
  CHECK(history[6].kind == operation_kind::rename);
  CHECK(faulty.faults_injected() == 0);

  faulty.reset();
  CHECK(faulty.operation_count() == 0);
  CHECK(faulty.operation_history().empty());
  CHECK(&faulty.inner() == &memory);
}

TEST_CASE("fail_operation(n) fails exactly the nth operation, whatever its kind") {
  memory_file_system memory;
  auto empty = memory.snapshot();
  fault_injecting_file_system faulty(memory);
  REQUIRE(run_workload(faulty) == 0);
  const auto history = faulty.operation_history();
  for (std::uint64_t n = 1; n <= history.size(); ++n) {
    CAPTURE(n);
    memory.restore(empty);
    faulty.reset();
    faulty.fail_operation(n);
    int failures = run_workload(faulty);
    CHECK(failures == 1);
    CHECK(faulty.faults_injected() == 1);
    CHECK_FALSE(faulty.crashed());
  }
}

TEST_CASE("an injected write failure reports EIO and does not reach the inner file system") {
  memory_file_system memory;
  fault_injecting_file_system faulty(memory);
  faulty.fail_write(2);
  auto handle = faulty.open("f", create_new);
  REQUIRE(handle.has_value());
  REQUIRE((*handle)->append(bytes_of("one,")).has_value());
  auto failed = (*handle)->append(bytes_of("two,"));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == errc::io_error);
  CHECK(failed.error().sys_errno == EIO);
  CHECK(failed.error().path == "f");
  CHECK(failed.error().message == "write failed: Input/output error (injected fault)");
  REQUIRE((*handle)->append(bytes_of("three")).has_value());  // not in crash mode: later calls work
  CHECK(whole(memory, "f") == "one,three");
  CHECK(faulty.faults_injected() == 1);
}

TEST_CASE("a failed sync leaves the data unsynced") {
  memory_file_system memory;
  fault_injecting_file_system faulty(memory);
  faulty.fail_sync(1);
  REQUIRE(memory.write_whole("f", "durable").has_value());
  auto handle = faulty.open("f", read_write);
  REQUIRE(handle.has_value());
  REQUIRE((*handle)->append(bytes_of("+more")).has_value());
  CHECK((*handle)->sync().error().code == errc::io_error);
  CHECK(*memory.unsynced_operation_count("f") == 1);
  memory.simulate_crash();
  CHECK(whole(memory, "f") == "durable");
}

TEST_CASE("a torn write passes only its first bytes on") {
  struct tear_case {
    std::size_t kept;
    std::string expected;
  };
  const tear_case cases[] = {{0, "start:"}, {3, "start:abc"}, {6, "start:abcdef"}, {100, "start:abcdef"}};
  for (const tear_case& c : cases) {
    CAPTURE(c.kept);
    memory_file_system memory;
    fault_injecting_file_system faulty(memory);
    faulty.tear_write(2, c.kept);
    auto handle = faulty.open("f", create_new);
    REQUIRE(handle.has_value());
    REQUIRE((*handle)->append(bytes_of("start:")).has_value());
    CHECK((*handle)->append(bytes_of("abcdef")).error().code == errc::io_error);
    CHECK(whole(memory, "f") == c.expected);
  }

  memory_file_system memory;
  fault_injecting_file_system faulty(memory);
  faulty.tear_operation(2, 1);  // operation 2 is a sync: it simply fails
  auto handle = faulty.open("f", create_new);
  REQUIRE(handle.has_value());
  CHECK((*handle)->sync().error().code == errc::io_error);
  CHECK((*handle)->write_at(0, bytes_of("xyz")).has_value());
}

TEST_CASE("a failed rename leaves both names as they were") {
  memory_file_system memory;
  fault_injecting_file_system faulty(memory);
  faulty.fail_rename(1);
  REQUIRE(memory.write_whole("from", "a").has_value());
  REQUIRE(memory.write_whole("to", "b").has_value());
  CHECK(faulty.rename("from", "to").error().code == errc::io_error);
  CHECK(whole(memory, "from") == "a");
  CHECK(whole(memory, "to") == "b");
  CHECK(faulty.rename("from", "to").has_value());  // the second rename is not armed
  CHECK(whole(memory, "to") == "a");
}

TEST_CASE("in crash mode every call after the fault fails") {
  memory_file_system memory;
  fault_injecting_file_system faulty(memory);
  REQUIRE(memory.write_whole("f", "x").has_value());
  auto handle = faulty.open("f", read_write);
  REQUIRE(handle.has_value());
  faulty.set_crash_after_fault(true);
  faulty.fail_sync(1);
  REQUIRE((*handle)->append(bytes_of("y")).has_value());
  CHECK((*handle)->sync().error().message == "sync failed: Input/output error (injected fault)");
  CHECK(faulty.crashed());

  const std::vector<std::pair<const char*, std::function<agentctx::error()>>> calls = {
      {"append", [&] { return (*handle)->append(bytes_of("z")).error(); }},
      {"read_at", [&] { return (*handle)->read_at(0, {}).error(); }},
      {"size", [&] { return (*handle)->size().error(); }},
      {"open", [&] { return faulty.open("f", read_only).error(); }},
      {"map", [&] { return faulty.map("f").error(); }},
      {"exists", [&] { return faulty.exists("f").error(); }},
      {"file_size", [&] { return faulty.file_size("f").error(); }},
      {"list_dir", [&] { return faulty.list_dir("/").error(); }},
      {"remove", [&] { return faulty.remove("f").error(); }},
      {"sync_dir", [&] { return faulty.sync_dir("/").error(); }},
      {"create_dir", [&] { return faulty.create_dir("d").error(); }},
      {"lock", [&] { return faulty.lock("L", lock_mode::shared, false).error(); }},
  };
  for (const auto& named_call : calls) {
    CAPTURE(named_call.first);
    agentctx::error e = named_call.second();
    CHECK(e.code == errc::io_error);
    CHECK(e.sys_errno == EIO);
    CHECK(e.message.find("(file system crashed by an injected fault)") != std::string::npos);
  }
  CHECK(*memory.exists("f"));  // nothing reached the inner file system
  CHECK(whole(memory, "f") == "xy");
  CHECK((*handle)->close().has_value());  // close always reaches the inner handle

  faulty.reset();
  CHECK_FALSE(faulty.crashed());
  CHECK(faulty.exists("f").has_value());
}

}  // namespace io_fault_injecting_file_system_test
