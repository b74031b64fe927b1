// bench/bench_support.hpp: what every benchmark program needs besides the
// thing it measures: a scratch directory, a deterministic generator, clocks
// (wall and CPU), and the small formatting helpers of the reports.
#pragma once

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"

namespace agentctx_bench {

/// The error of a failed system call `call` on `path` (errno-mapped code).
inline agentctx::unexpected system_failure(std::string_view call, const std::string& path, int error_number) {
  return agentctx::io::detail::system_failure(call, error_number, path);
}

/// A directory made by mkdtemp under $TMPDIR (or /tmp), removed with its
/// contents when destroyed (also on errors; not when the program is killed).
class scratch_directory {
 public:
  /// `program` names the directory: "<program>.XXXXXX". Fails with the
  /// errno-mapped error of mkdtemp.
  static agentctx::result<scratch_directory> create(std::string_view program) {
    const char* base = std::getenv("TMPDIR");
    std::string path =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + std::string(program) + ".XXXXXX";
    const std::string pattern = path;  // mkdtemp fills in the Xs, also when it fails
    if (::mkdtemp(path.data()) == nullptr) return system_failure("mkdtemp", pattern, errno);
    return scratch_directory(std::move(path));
  }
  scratch_directory(scratch_directory&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  scratch_directory& operator=(scratch_directory&&) = delete;
  scratch_directory(const scratch_directory&) = delete;
  scratch_directory& operator=(const scratch_directory&) = delete;
  ~scratch_directory() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const noexcept { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  explicit scratch_directory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

/// splitmix64: fast and fully specified, so generated data is the same every
/// run, on every machine.
class random_source {
 public:
  explicit random_source(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound).
  std::size_t below(std::size_t bound) noexcept { return static_cast<std::size_t>(next() % bound); }
  /// True once in `n` draws on average.
  bool one_in(std::size_t n) noexcept { return below(n) == 0; }
  /// Uniform in [-1, 1).
  float signed_unit() noexcept { return static_cast<float>(next() >> 40) / 8388608.0f - 1.0f; }

 private:
  std::uint64_t state_;
};

// ---- clocks ------------------------------------------------------------------------

using bench_clock = std::chrono::steady_clock;

inline double seconds_since(bench_clock::time_point start) {
  return std::chrono::duration<double>(bench_clock::now() - start).count();
}

inline double cpu_seconds(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// CPU seconds the whole process has used, user and kernel (the kernel's
/// share matters for writes: copying into the page cache runs in the caller).
inline double process_cpu_seconds() { return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID); }

/// CPU seconds the calling thread has used.
inline double thread_cpu_seconds() { return cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }

/// Wall-clock and CPU time of one measured stretch. On a busy machine wall
/// time includes waiting for a CPU; the CPU time does not.
struct elapsed {
  double wall = 0.0;
  double cpu = 0.0;
};

/// Measures from construction to stop(), CPU time over the whole process.
class stopwatch {
 public:
  stopwatch() : wall_start_(bench_clock::now()), cpu_start_(process_cpu_seconds()) {}
  elapsed stop() const { return {seconds_since(wall_start_), process_cpu_seconds() - cpu_start_}; }

 private:
  bench_clock::time_point wall_start_;
  double cpu_start_;
};

// ---- reports -----------------------------------------------------------------------

inline double megabytes(std::uint64_t bytes) { return static_cast<double>(bytes) / 1e6; }

inline const char* verdict(bool met) { return met ? "PASS" : "MISS"; }

/// printf of one double into a string.
inline std::string format(const char* pattern, double value) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

/// True when built with optimisation and NDEBUG: other builds say that their
/// figures are not representative.
constexpr bool optimised_build() {
#if defined(__OPTIMIZE__) && defined(NDEBUG)
  return true;
#else
  return false;
#endif
}

}  // namespace agentctx_bench
