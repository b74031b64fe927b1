// atomic_file_writer / write_file_atomically: replacement, buffering,
// stale temporaries, and crashes at every operation of a replacement.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "agentctx/io/atomic_file.hpp"
#include "io/io_test_support.hpp"

namespace io_atomic_file_test {

using agentctx::errc;
using agentctx::result;
using namespace agentctx::io;
using io_test::bytes_of;
using io_test::read_text;
using io_test::text_of;
using io_test::whole;

namespace {

std::string temporary_prefix(const std::string& directory, const std::string& name) {
  return directory + "/." + name + ".tmp." + std::to_string(::getpid()) + ".";
}

}  // namespace

TEST_CASE_TEMPLATE("write_file_atomically creates and replaces files", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string target = f.base + "/target";
  REQUIRE(write_file_atomically(f.fs, target, bytes_of("first")).has_value());
  CHECK(read_text(f.fs, target) == "first");
  REQUIRE(write_file_atomically(f.fs, target, bytes_of("second, longer")).has_value());
  CHECK(read_text(f.fs, target) == "second, longer");
  REQUIRE(write_file_atomically(f.fs, target, {}).has_value());
  CHECK(read_text(f.fs, target).empty());
  CHECK(*f.fs.list_dir(f.base) == std::vector<std::string>{"target"});
  CHECK(write_file_atomically(f.fs, f.base + "/missing/target", bytes_of("x")).error().code == errc::not_found);
  CHECK(write_file_atomically(f.fs, f.base + "/", bytes_of("x")).error().code == errc::invalid_argument);
}

TEST_CASE_TEMPLATE("the temporary file lives next to the target until commit", F, IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string target = f.base + "/layer.db";
  auto writer = atomic_file_writer::begin(f.fs, target);
  REQUIRE(writer.has_value());
  CHECK(writer->target_path() == target);
  const std::string temporary = writer->temporary_path();
  CHECK(temporary.rfind(temporary_prefix(f.base, "layer.db"), 0) == 0);
  CHECK(*f.fs.exists(temporary));
  CHECK_FALSE(*f.fs.exists(target));
  REQUIRE(writer->append(bytes_of("payload")).has_value());
  CHECK(writer->size() == 7);
  REQUIRE(writer->commit().has_value());
  CHECK_FALSE(*f.fs.exists(temporary));
  CHECK(read_text(f.fs, target) == "payload");
  CHECK(writer->append(bytes_of("x")).error().code == errc::invalid_argument);
  CHECK(writer->commit().error().code == errc::invalid_argument);
}

TEST_CASE_TEMPLATE("an uncommitted writer removes its temporary and leaves the target alone", F,
                   IO_TEST_FILE_SYSTEMS) {
  F f;
  const std::string target = f.base + "/target";
  REQUIRE(write_file_atomically(f.fs, target, bytes_of("old")).has_value());
  {
    auto writer = atomic_file_writer::begin(f.fs, target);
    REQUIRE(writer.has_value());
    REQUIRE(writer->append(bytes_of("abandoned")).has_value());
    atomic_file_writer moved = std::move(*writer);  // the moved-from writer owns nothing
  }
  CHECK(*f.fs.list_dir(f.base) == std::vector<std::string>{"target"});
  auto writer = atomic_file_writer::begin(f.fs, target);
  REQUIRE(writer.has_value());
  CHECK(writer->cancel().has_value());
  CHECK(writer->cancel().has_value());  // already finished: nothing to do
  CHECK(*f.fs.list_dir(f.base) == std::vector<std::string>{"target"});
  CHECK(read_text(f.fs, target) == "old");
}

TEST_CASE("small appends are buffered, large ones go straight through") {
  struct buffering_case {
    const char* name;
    std::size_t buffer_size;
    std::vector<std::size_t> appends;
    std::uint64_t expected_writes;
  };
  const buffering_case cases[] = {
      {"small appends fill one buffer", 1 << 20, std::vector<std::size_t>(1000, 100), 1},
      {"one large append is one write", 1 << 20, {3 << 20}, 1},
      {"small, large, small", 1 << 20, {10, 2 << 20, 10}, 3},
      {"a full buffer is flushed before it overflows", 256, std::vector<std::size_t>(10, 100), 5},
      {"no buffer", 0, {1, 2, 3}, 3},
  };
  for (const buffering_case& c : cases) {
    CAPTURE(c.name);
    memory_file_system memory;
    fault_injecting_file_system faulty(memory);
    atomic_write_options options;
    options.buffer_size = c.buffer_size;
    auto writer = atomic_file_writer::begin(faulty, "f", options);
    REQUIRE(writer.has_value());
    std::string expected;
    for (std::size_t size : c.appends) {
      std::string piece(size, static_cast<char>('a' + expected.size() % 26));
      REQUIRE(writer->append(bytes_of(piece)).has_value());
      expected += piece;
    }
    REQUIRE(writer->commit().has_value());
    CHECK(faulty.operation_count(operation_kind::write) == c.expected_writes);
    CHECK(whole(memory, "f") == expected);
  }
}

TEST_CASE("write_at patches bytes already appended, flushed or buffered") {
  memory_file_system memory;
  atomic_write_options options;
  options.buffer_size = 4;
  auto writer = atomic_file_writer::begin(memory, "f", options);
  REQUIRE(writer.has_value());
  REQUIRE(writer->append(bytes_of("abcdefgh")).has_value());  // written through
  REQUIRE(writer->append(bytes_of("ij")).has_value());        // buffered
  REQUIRE(writer->write_at(6, bytes_of("XYZ")).has_value());  // straddles both
  REQUIRE(writer->write_at(0, bytes_of("A")).has_value());
  REQUIRE(writer->write_at(10, {}).has_value());
  auto beyond = writer->write_at(9, bytes_of("12"));
  REQUIRE_FALSE(beyond.has_value());
  CHECK(beyond.error().code == errc::out_of_bounds);
  CHECK(beyond.error().offset == 9);
  REQUIRE(writer->commit().has_value());
  CHECK(whole(memory, "f") == "AbcdefXYZj");
}

TEST_CASE("a writer that failed stays failed and never replaces the target") {
  memory_file_system memory;
  REQUIRE(memory.write_whole("target", "old").has_value());
  fault_injecting_file_system faulty(memory);
  faulty.fail_write(1);
  atomic_write_options options;
  options.buffer_size = 0;
  auto writer = atomic_file_writer::begin(faulty, "target", options);
  REQUIRE(writer.has_value());
  CHECK(writer->append(bytes_of("new")).error().code == errc::io_error);
  CHECK(writer->append(bytes_of("more")).error().code == errc::io_error);  // no write reached the fs
  CHECK(faulty.operation_count(operation_kind::write) == 1);
  CHECK(writer->commit().error().code == errc::io_error);
  CHECK(whole(memory, "target") == "old");
  CHECK(*memory.list_dir("/") == std::vector<std::string>{"target"});
}

TEST_CASE("stale temporary files of dead writers are removed, live ones kept") {
  memory_file_system memory;
  REQUIRE(memory.create_dir("d").has_value());
  const std::string own = std::to_string(::getpid());
  const std::vector<std::string> present = {
      ".t.tmp.111.0",         // a dead process: removed
      ".t.tmp.222.5",         // a live process: kept
      ".t.tmp." + own + ".999999",  // ours, not in flight: a leftover, removed
      ".t.tmp.abc.1",         // not a temporary name: kept
      ".t.tmp.0.1",           // pid 0 is never signalled: kept
      ".t.tmp.111",           // no number: kept
      ".other.tmp.111.0",     // another target's: kept
      "t.tmp.111.0",          // no leading dot: kept
      "t",
  };
  // Started first, so its own clean-up (asking the real kill()) sees none of
  // the names below; its temporary must survive the clean-up under test.
  auto in_flight = atomic_file_writer::begin(memory, "d/t");
  REQUIRE(in_flight.has_value());
  for (const std::string& name : present) REQUIRE(memory.write_whole("d/" + name, "x").has_value());
  const std::string in_flight_name = file_name(in_flight->temporary_path());

  atomic_write_options options;
  std::vector<std::int64_t> asked;
  options.process_is_alive = [&](std::int64_t pid) {
    asked.push_back(pid);
    return pid == 222;
  };
  auto removed = remove_stale_temporary_files(memory, "d/t", options);
  REQUIRE(removed.has_value());
  CHECK(*removed == 2);
  std::sort(asked.begin(), asked.end());
  CHECK(asked == std::vector<std::int64_t>{111, 222});
  std::vector<std::string> expected = {".t.tmp.222.5", ".t.tmp.abc.1", ".t.tmp.0.1", ".t.tmp.111",
                                       ".other.tmp.111.0", "t.tmp.111.0", "t", in_flight_name};
  std::sort(expected.begin(), expected.end());
  CHECK(*memory.list_dir("d") == expected);
  REQUIRE(in_flight->commit().has_value());
  CHECK(remove_stale_temporary_files(memory, "d/", options).error().code == errc::invalid_argument);
  CHECK(remove_stale_temporary_files(memory, "nowhere/t", options).error().code == errc::not_found);
  // A writer that cannot create its temporary names the target, not the temporary.
  const auto refused = atomic_file_writer::begin(memory, "nowhere/t", options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::not_found);
  CHECK(refused.error().path == "nowhere/t");
  // So does a commit whose write, sync or rename fails.
  for (const operation_kind kind : {operation_kind::write, operation_kind::sync, operation_kind::rename}) {
    fault_injecting_file_system faulty(memory);
    faulty.inject({kind, 1, std::nullopt});
    auto writer = atomic_file_writer::begin(faulty, "d/t", options);
    REQUIRE(writer.has_value());
    REQUIRE(writer->append(bytes_of("new")).has_value());
    const auto failed = writer->commit();
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().path == "d/t");
  }
}

TEST_CASE("remove_stale_temporary_files_in cleans the temporaries of every target a predicate accepts") {
  memory_file_system memory;
  REQUIRE(memory.create_dir("d").has_value());
  const std::vector<std::string> present = {
      ".log.torn-1.tmp.111.0",      // a dead writer of an accepted target: removed
      ".log.torn-2-1.tmp.111.3",    // another accepted target: removed
      ".log.torn-3.tmp.222.0",      // a live writer: kept
      ".log.tmp.111.0",             // a target not accepted: kept
      ".log.torn-4.tmp.111",        // no number: kept
      "log.torn-5",                 // a kept file, not a temporary: kept
  };
  for (const std::string& name : present) REQUIRE(memory.write_whole("d/" + name, "x").has_value());
  atomic_write_options options;
  options.process_is_alive = [](std::int64_t pid) { return pid == 222; };
  auto removed = remove_stale_temporary_files_in(
      memory, "d", [](std::string_view target) { return target.starts_with("log.torn-"); }, options);
  REQUIRE(removed.has_value());
  CHECK(*removed == 2);
  std::vector<std::string> expected = {".log.torn-3.tmp.222.0", ".log.tmp.111.0", ".log.torn-4.tmp.111", "log.torn-5"};
  std::sort(expected.begin(), expected.end());
  CHECK(*memory.list_dir("d") == expected);
  CHECK(remove_stale_temporary_files_in(memory, "nowhere", [](std::string_view) { return true; }, options)
            .error()
            .code == errc::not_found);
}

TEST_CASE("by default a temporary is stale when kill(pid, 0) says the process is gone") {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);  // reaped: the pid is free now

  memory_file_system memory;
  const std::string dead = ".t.tmp." + std::to_string(child) + ".0";
  const std::string alive = ".t.tmp." + std::to_string(::getppid()) + ".0";
  REQUIRE(memory.write_whole(dead, "x").has_value());
  REQUIRE(memory.write_whole(alive, "x").has_value());
  REQUIRE(write_file_atomically(memory, "t", bytes_of("new")).has_value());
  std::vector<std::string> expected = {alive, "t"};
  std::sort(expected.begin(), expected.end());
  CHECK(*memory.list_dir("/") == expected);
}

// The heart of the matter: whatever operation of a replacement the process
// dies at, and whatever the disk kept of unsynced data, the target holds the
// complete old or the complete new contents; the next write cleans up.
TEST_CASE("a replacement interrupted at any operation leaves the old or the new file") {
  const std::string old_text = "the old contents, durable before the replacement";
  std::string new_text;
  for (int i = 0; i < 12; ++i) new_text += "new piece " + std::to_string(i) + "; ";
  const std::string target = "d/target";

  auto replace = [&](file_system& fs) -> result<void> {
    atomic_write_options options;
    options.buffer_size = 32;  // several writes per replacement
    auto writer = atomic_file_writer::begin(fs, target, options);
    if (!writer) return agentctx::unexpected(writer.error());
    for (std::size_t start = 0; start < new_text.size(); start += 10) {
      AGENTCTX_TRY(writer->append(bytes_of(new_text.substr(start, 10))));
    }
    return writer->commit();
  };
  auto check_target_then_write_again = [&](memory_file_system& fs) {
    auto contents = fs.read_whole(target);
    REQUIRE(contents.has_value());
    std::string text = text_of(*contents);
    CHECK((text == old_text || text == new_text));
    REQUIRE(write_file_atomically(fs, target, bytes_of("third")).has_value());
    CHECK(*fs.list_dir("d") == std::vector<std::string>{"target"});  // leftovers are gone
    CHECK(whole(fs, target) == "third");
  };

  memory_file_system memory;
  REQUIRE(memory.create_dir("d").has_value());
  REQUIRE(memory.sync_dir("/").has_value());
  REQUIRE(memory.write_whole(target, old_text).has_value());
  const memory_file_system_state initial = memory.snapshot();

  REQUIRE(replace(memory).has_value());
  memory.simulate_crash();  // a completed replacement is durable
  CHECK(whole(memory, target) == new_text);

  std::size_t images = 0;
  const auto history = io_test::crash_at_every_operation(memory, initial, 5, replace, [&](io_test::crash_point) {
    const memory_file_system_state at_fault = memory.snapshot();
    // Every crash mode for the files that exist at this point.
    std::size_t most_unsynced = 0;
    const auto names = memory.list_dir("d");
    REQUIRE(names.has_value());
    for (const std::string& name : *names) {
      most_unsynced = std::max(most_unsynced, *memory.unsynced_operation_count("d/" + name));
    }
    std::vector<crash_mode> modes = {crash_mode::drop_unsynced(), crash_mode::keep_all_unsynced()};
    for (std::size_t kept = 1; kept <= most_unsynced; ++kept) {
      modes.push_back(crash_mode::keep_prefix(kept));
      modes.push_back(crash_mode::keep_prefix_torn(kept, 3));
    }
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      modes.push_back(crash_mode::random_prefix(seed, true));
      modes.push_back(crash_mode::random_pages(seed));
    }
    for (const crash_mode& mode : modes) {
      memory.restore(at_fault);
      memory.simulate_crash(mode);
      check_target_then_write_again(memory);
      ++images;
    }

    // The process survived the failed call (no power loss).
    memory.restore(at_fault);
    check_target_then_write_again(memory);
  });
  CHECK(std::count_if(history.begin(), history.end(),
                      [](const recorded_operation& op) { return op.kind == operation_kind::write; }) > 2);
  CHECK(images > history.size() * 2);
}

}  // namespace io_atomic_file_test
