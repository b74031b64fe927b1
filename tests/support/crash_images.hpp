// Crash tests on the in-memory file system: crash a workload at every
// mutating operation and check every image a power loss there could leave.
//
//   io::fault_injecting_file_system faulty(memory);
//   auto full = run_workload(faulty);             // once, to learn its operations
//   auto images = crash_support::crash_at_every_operation(memory, initial, faulty, seed, 160,
//       run_workload, [&](io::memory_file_system& m, const auto& log, const std::string& image) { ... });
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"

namespace crash_support {

namespace io = agentctx::io;

/// True in a build with AddressSanitizer (GCC defines __SANITIZE_ADDRESS__,
/// clang answers __has_feature), where the same work runs several times
/// slower.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif
#else
inline constexpr bool sanitized_build = false;
#endif

/// The checks of one crash image: the first failed expectation is reported
/// as one doctest failure naming the image, the rest only return false.
/// Plain comparisons, not a doctest check each: tens of millions of passing
/// REQUIREs would dominate the run time.
class image_expectations {
 public:
  explicit image_expectations(std::string image) : image_(std::move(image)) {}

  /// Returns `condition`; reports `what` when it is the image's first failure.
  bool operator()(bool condition, const std::string& what) {
    if (!condition && ok_) {
      ok_ = false;
      FAIL_CHECK("crash image " << image_ << ": " << what);
    }
    return condition;
  }

 private:
  std::string image_;
  bool ok_ = true;
};

/// The crash images taken of each crash point: unsynced data dropped, all
/// kept, a random prefix kept with its last write torn, half kept, random
/// pages kept.
inline std::vector<std::pair<std::string, io::crash_mode>> crash_modes(std::uint64_t seed) {
  return {
      {"drop unsynced", io::crash_mode::drop_unsynced()},
      {"keep all unsynced", io::crash_mode::keep_all_unsynced()},
      {"random prefix, torn", io::crash_mode::random_prefix(seed, true)},
      {"random prefix, torn (2)", io::crash_mode::random_prefix(seed ^ 0x5555, true)},
      {"keep half unsynced", io::crash_mode::keep_prefix(2)},
      {"random pages", io::crash_mode::random_pages(seed)},
      {"random pages (2)", io::crash_mode::random_pages(seed ^ 0xAAAA)},
  };
}

/// `faulty` (over `memory`) has just run the whole workload once. For every
/// operation it recorded, and once after the last, this restores `initial`,
/// runs `workload(faulty)` again with a crash at that operation (a write is
/// torn at a random byte below `max_torn_bytes` half the time), and calls
/// `check(memory, what workload returned, image name)` on every crash image.
/// Returns the number of images checked.
///
/// `sample` above 1 crashes at about one operation in `sample`, chosen at
/// random from `seed` (not every sample-th, which could meet the same kind
/// of operation each time in a workload that repeats), and always after the
/// last: for the sanitizer builds of the longest workloads, whose every
/// crash point the other build checks.
template <class Workload, class Check>
std::uint64_t crash_at_every_operation(io::memory_file_system& memory, const io::memory_file_system_state& initial,
                                       io::fault_injecting_file_system& faulty, std::uint64_t seed,
                                       std::size_t max_torn_bytes, Workload&& workload, Check&& check,
                                       std::uint64_t sample = 1) {
  const std::uint64_t operations = faulty.operation_count();
  const auto history = faulty.operation_history();
  std::mt19937_64 random(seed);
  std::mt19937_64 sampler(seed ^ 0x53A3'B1E5ull);
  std::uint64_t images = 0;
  for (std::uint64_t n = 1; n <= operations + 1; ++n) {
    if (sample > 1 && n <= operations && sampler() % sample != 0) continue;
    memory.restore(initial);
    faulty.reset();
    faulty.set_crash_after_fault(true);
    std::string where = "after the whole workload";
    if (n <= operations) {
      const auto& op = history[n - 1];
      where = "operation " + std::to_string(n) + " (" + op.path + ")";
      if (op.kind == io::operation_kind::write && random() % 2 == 0) {
        faulty.tear_operation(n, static_cast<std::size_t>(random() % max_torn_bytes));
        where += " torn";
      } else {
        faulty.fail_operation(n);
      }
    }
    const auto log = workload(faulty);
    const io::memory_file_system_state crashed = memory.snapshot();
    for (const auto& [name, mode] : crash_modes(random())) {
      memory.restore(crashed);
      memory.simulate_crash(mode);
      faulty.reset();
      check(memory, log, where + ", " + name);
      ++images;
    }
  }
  return images;
}

}  // namespace crash_support
