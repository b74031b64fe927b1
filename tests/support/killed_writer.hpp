// A writer process killed at every mutating operation (the machine lives on:
// what it wrote and did not sync stays in the page cache, where the next
// process reads it), the next writer recovering and acknowledging more, and
// only then a power loss: what that writer acknowledged must survive.
//
// Used by the "killed" tests of every store (tests/relay/crash_paths_test.cpp,
// tests/turns, tests/agdb and tests/memory killed_writer_test.cpp):
//
//   io::fault_injecting_file_system faulty(memory);
//   REQUIRE(workload(faulty));                       // once, to learn its operations
//   auto images = killed_writer::kill_at_every_operation(memory, initial, faulty, seed, workload,
//       recover,   // (memory_file_system&, where) -> optional<Acknowledged>: the next writer's work
//       check);    // (memory_file_system&, const Acknowledged&, image) after each power loss
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/crash_images.hpp"

namespace killed_writer {

namespace io = agentctx::io;

/// Kills the process running `workload` at every mutating operation of
/// `faulty` (writes torn at a random byte half the time), without a power
/// loss: then `recover(memory, where)` runs on what the dead process left and
/// returns what it acknowledged (or nullopt: nothing to check), and every
/// power-loss image of that (crash_images.hpp) is checked with
/// `check(memory, acknowledged, image)`. Returns the images checked.
template <class Workload, class Recover, class Check>
std::uint64_t kill_at_every_operation(io::memory_file_system& memory, const io::memory_file_system_state& initial,
                                      io::fault_injecting_file_system& faulty, std::uint64_t seed, Workload&& workload,
                                      Recover&& recover, Check&& check) {
  const std::uint64_t operations = faulty.operation_count();
  const auto history = faulty.operation_history();
  std::mt19937_64 random(seed);
  std::uint64_t images = 0;
  for (std::uint64_t n = 1; n <= operations; ++n) {
    memory.restore(initial);
    faulty.reset();
    faulty.set_crash_after_fault(true);
    const auto& op = history[n - 1];
    static constexpr const char* kinds[] = {"write", "sync", "sync_dir", "rename", "remove", "truncate", "create"};
    std::string where = "process killed at operation " + std::to_string(n) + " (" +
                        kinds[static_cast<std::size_t>(op.kind)] + " " + op.path + ")";
    if (op.kind == io::operation_kind::write && random() % 2 == 0) {
      faulty.tear_operation(n, static_cast<std::size_t>(random() % 200));
      where += " torn";
    } else {
      faulty.fail_operation(n);
    }
    (void)workload(faulty);
    faulty.reset();
    auto acknowledged = recover(memory, where);
    if (!acknowledged) continue;
    const io::memory_file_system_state before_power_loss = memory.snapshot();
    for (const auto& [name, mode] : crash_support::crash_modes(random())) {
      memory.restore(before_power_loss);
      memory.simulate_crash(mode);
      check(memory, *acknowledged, where + ", then a power loss: " + name);
      ++images;
    }
  }
  return images;
}

}  // namespace killed_writer
