// Agent memory writers killed at any write or sync (the machine lives on,
// their unsynced writes, renames and new folders stay in the page cache), the
// next writer acknowledging more on top of what it finds, then a power loss:
// nothing the next writer acknowledged may be lost (the pattern of the
// "killed" tests of tests/relay/crash_paths_test.cpp, support/killed_writer.hpp).
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/memory/agent_memory.hpp"
#include "io/io_test_support.hpp"
#include "support/killed_writer.hpp"

namespace memory_killed_writer_test {

namespace io = agentctx::io;
namespace memory = agentctx::memory;

namespace {

const std::string log_path = ".github/agent-memory/aristotle/logs/2025-01-20.md";

std::optional<memory::agent_memory> open_memory(io::file_system& fs) {
  memory::memory_options options;
  options.clock = [] { return std::uint64_t{1'737'331'200'000}; };  // 2025-01-20T00:00:00Z
  auto opened = memory::agent_memory::open(fs, "aristotle", std::move(options));
  if (!opened) return std::nullopt;
  return std::move(*opened);
}

/// After the power loss: the session log exists, parses and holds `entry`
/// (when not empty).
void check_log_holds(io::memory_file_system& m, const std::string& entry, const std::string& image) {
  crash_support::image_expectations expect(image);
  auto there = m.exists(log_path);
  if (!expect(there.has_value() && *there, "the acknowledged session log " + log_path + " is gone")) return;
  const std::string text = io_test::read_text(m, log_path);
  if (!expect(memory::parse_sections(text).has_value(), "the session log does not parse")) return;
  if (!entry.empty()) expect(text.find(entry) != std::string::npos, "the acknowledged entry \"" + entry + "\" is gone");
}

}  // namespace

// Failed at 1d35034 (fixed since). Killed at the sync_dir after the log's rename: the retried
// start_session finds the log in the page cache and answers it as there
// (created = false) without syncing logs/, and the power loss takes the log
// away. Killed at the sync_dir after a folder is created (.github,
// agent-memory, <agent> or logs): ensure_folder() finds it and never syncs
// its parent, so the log written inside it and acknowledged is lost with it.
TEST_CASE("agent memory: start_session retried after its writer was killed is acknowledged only once durable") {
  io::memory_file_system memory_fs;
  const io::memory_file_system_state initial = memory_fs.snapshot();
  io::fault_injecting_file_system faulty(memory_fs);
  const auto start = [](io::file_system& fs) {
    auto mem = open_memory(fs);
    return mem.has_value() && mem->start_session("2025-01-20").has_value();
  };
  REQUIRE(start(faulty));
  const std::uint64_t images = killed_writer::kill_at_every_operation(
      memory_fs, initial, faulty, 4001, start,
      [&](io::memory_file_system& m, const std::string& where) -> std::optional<std::string> {
        auto mem = open_memory(m);
        REQUIRE(mem.has_value());
        auto again = mem->start_session("2025-01-20");
        if (!again) {
          FAIL_CHECK(where << ": start_session again: " << again.error().json());
          return std::nullopt;
        }
        return std::string();
      },
      check_log_holds);
  MESSAGE("power-loss images checked: " << images);
  CHECK(images >= 20);
}

// Failed at 1d35034 (fixed since), killed at the sync_dir after the agent's folder or logs/ is
// created: the next append_entry finds the folders, never syncs their
// parents, writes the log (syncing logs/ only) and acknowledges the entry;
// the power loss takes the folder, the log and the entry away.
TEST_CASE("agent memory: append_entry after a writer was killed: the acknowledged entry survives a power loss") {
  io::memory_file_system memory_fs;
  const io::memory_file_system_state initial = memory_fs.snapshot();
  io::fault_injecting_file_system faulty(memory_fs);
  const auto append = [](io::file_system& fs) {
    auto mem = open_memory(fs);
    return mem.has_value() && mem->append_entry("Decisions", "- first entry", "2025-01-20").has_value();
  };
  REQUIRE(append(faulty));
  const std::uint64_t images = killed_writer::kill_at_every_operation(
      memory_fs, initial, faulty, 4002, append,
      [&](io::memory_file_system& m, const std::string& where) -> std::optional<std::string> {
        auto mem = open_memory(m);
        REQUIRE(mem.has_value());
        auto again = mem->append_entry("Decisions", "- second entry", "2025-01-20");
        if (!again) {
          FAIL_CHECK(where << ": append_entry again: " << again.error().json());
          return std::nullopt;
        }
        return std::string("- second entry");
      },
      check_log_holds);
  MESSAGE("power-loss images checked: " << images);
  CHECK(images >= 20);
}

}  // namespace memory_killed_writer_test
