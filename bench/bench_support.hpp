// bench/bench_support.hpp: what every benchmark program needs besides the
// thing it measures: a scratch directory, a deterministic generator, clocks
// (wall and CPU), medians and percentiles, the raw floor of a durable file
// replacement, and the small formatting helpers of the reports.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

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

// ---- command line ------------------------------------------------------------------

/// The command line of a benchmark, declared once and read in one loop:
///
///   std::optional<std::uint64_t> rows;
///   bench_arguments args("vector_search_bench", usage);
///   args.flag("--small", o.small).number("--rows", rows).number("--offset", offset, 0, 63);
///   if (auto code = args.read(argc, argv)) return *code;   // 0 after --help, 2 after a bad argument
///
/// --help and -h print the usage on standard output; an unknown option, a
/// missing value or a number that is not a whole number in its range prints
/// one line naming the argument, and the usage, on standard error.
class bench_arguments {
 public:
  bench_arguments(std::string_view program, const char* usage) : program_(program), usage_(usage) {}

  /// An option without a value that sets `target` to true.
  bench_arguments& flag(std::string_view name, bool& target) {
    options_.push_back({name, kind::flag, 0, 0, [&target](std::string_view, std::uint64_t) { target = true; }});
    return *this;
  }

  /// An option whose value is a whole number from `minimum` to `maximum`.
  template <class T>
  bench_arguments& number(std::string_view name, std::optional<T>& target, std::uint64_t minimum = 1,
                          std::uint64_t maximum = std::numeric_limits<T>::max()) {
    options_.push_back({name, kind::number, minimum, std::min<std::uint64_t>(maximum, std::numeric_limits<T>::max()),
                        [&target](std::string_view, std::uint64_t value) { target = static_cast<T>(value); }});
    return *this;
  }

  /// An option whose value is any text.
  bench_arguments& text(std::string_view name, std::optional<std::string>& target) {
    options_.push_back({name, kind::text, 0, 0, [&target](std::string_view value, std::uint64_t) { target = std::string(value); }});
    return *this;
  }

  /// Reads the arguments: nullopt to go on, or the exit code to return.
  std::optional<int> read(int argc, char** argv) const {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        std::fputs(usage_, stdout);
        return 0;
      }
    }
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      const option* found = nullptr;
      for (const option& o : options_) {
        if (o.name == arg) found = &o;
      }
      if (found == nullptr) return bad("unknown argument '" + std::string(arg) + "'");
      if (found->what == kind::flag) {
        found->set({}, 0);
        continue;
      }
      if (i + 1 == argc) return bad(std::string(arg) + " needs a value");
      const std::string_view value = argv[++i];
      if (found->what == kind::text) {
        found->set(value, 0);
        continue;
      }
      std::uint64_t number = 0;
      const auto [end, code] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (code != std::errc() || end != value.data() + value.size() || number < found->minimum ||
          number > found->maximum) {
        return bad(std::string(arg) + " needs a whole number from " + std::to_string(found->minimum) + " to " +
                   std::to_string(found->maximum) + " (got '" + std::string(value) + "')");
      }
      found->set({}, number);
    }
    return std::nullopt;
  }

 private:
  enum class kind { flag, number, text };
  struct option {
    std::string_view name;
    kind what;
    std::uint64_t minimum;
    std::uint64_t maximum;
    std::function<void(std::string_view, std::uint64_t)> set;
  };

  int bad(const std::string& message) const {
    std::fprintf(stderr, "%.*s: %s\n%s", static_cast<int>(program_.size()), program_.data(), message.c_str(), usage_);
    return 2;
  }

  std::string_view program_;
  const char* usage_;
  std::vector<option> options_;
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

/// The median of `samples` (the mean of the middle two for an even count); 0 when empty.
inline double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  if (n == 0) return 0.0;
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
}

/// Median wall and median CPU time, each taken separately. (Not an overload
/// of median: argument-dependent lookup would make it clash with a program's
/// own median of elapsed times.)
inline elapsed median_elapsed(const std::vector<elapsed>& samples) {
  std::vector<double> wall, cpu;
  for (const elapsed& e : samples) {
    wall.push_back(e.wall);
    cpu.push_back(e.cpu);
  }
  return {median(std::move(wall)), median(std::move(cpu))};
}

/// The nearest-rank percentile: the smallest sample with at least
/// `fraction` of the samples at or below it (0.9 gives p90); 0 when empty.
inline double percentile(std::vector<double> samples, double fraction) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(samples.size())));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

// ---- the floor of a durable file replacement ---------------------------------------

struct raw_write_times {
  elapsed write_and_sync;   ///< open(O_CREAT|O_EXCL) + write() loop + fdatasync + close
  elapsed rename_and_sync;  ///< rename + fsync of the directory
  elapsed total() const noexcept {
    return {write_and_sync.wall + rename_and_sync.wall, write_and_sync.cpu + rename_and_sync.cpu};
  }
};

/// The raw floor of a durable atomic file replacement: the bytes written by
/// write() to a fresh file `temporary` in `directory`, synced, renamed to
/// `target` and the directory synced. No encoding, no checks, no buffering
/// beyond the kernel's.
inline agentctx::result<raw_write_times> time_raw_write(const std::string& directory, const std::string& temporary,
                                                        const std::string& target, std::span<const std::byte> bytes) {
  raw_write_times times;
  const stopwatch write_watch;
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return system_failure("open", temporary, errno);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      ::close(fd);
      return system_failure("write", temporary, e);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    return system_failure("fdatasync", temporary, e);
  }
  if (::close(fd) != 0) return system_failure("close", temporary, errno);
  times.write_and_sync = write_watch.stop();

  const stopwatch rename_watch;
  if (::rename(temporary.c_str(), target.c_str()) != 0) return system_failure("rename", temporary, errno);
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return system_failure("open", directory, errno);
  const int synced = ::fsync(dir_fd);
  const int sync_errno = errno;
  ::close(dir_fd);
  if (synced != 0) return system_failure("fsync", directory, sync_errno);
  times.rename_and_sync = rename_watch.stop();
  return times;
}

/// A file opened for appending with plain write() + fdatasync(): the floor.
class raw_log {
 public:
  static agentctx::result<raw_log> create(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return system_failure("open", path, errno);
    return raw_log(fd, path);
  }
  raw_log(raw_log&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}
  raw_log& operator=(raw_log&&) = delete;
  raw_log(const raw_log&) = delete;
  raw_log& operator=(const raw_log&) = delete;
  ~raw_log() {
    if (fd_ >= 0) ::close(fd_);
  }

  agentctx::result<void> append(std::span<const std::byte> bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return system_failure("write", path_, n < 0 ? errno : EIO);
      done += static_cast<std::size_t>(n);
    }
    return {};
  }
  agentctx::result<void> sync() {
    if (::fdatasync(fd_) != 0) return system_failure("fdatasync", path_, errno);
    return {};
  }

 private:
  raw_log(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

// ---- reports -----------------------------------------------------------------------

/// The type of the file system holding `path`, for the reports of write
/// benchmarks (tmpfs makes fdatasync free).
inline std::string file_system_type(const std::string& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return "unknown";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x01021994: return "tmpfs (fdatasync is free: figures are NOT disk figures)";
    case 0x794C7630: return "overlayfs";
    default: return "f_type " + std::to_string(static_cast<unsigned long>(s.f_type));
  }
}

inline double megabytes(std::uint64_t bytes) { return static_cast<double>(bytes) / 1e6; }

inline const char* verdict(bool met) { return met ? "PASS" : "MISS"; }

/// printf of one double into a string.
inline std::string format(const char* pattern, double value) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

/// 1234567 as "1,234,567".
inline std::string with_commas(std::uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
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

/// Prints "<program>: error: <what failed>" on stderr; returns 1, the exit
/// status of a benchmark that failed.
inline int report_failure(std::string_view program, const agentctx::error& e) {
  std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(program.size()), program.data(), e.describe().c_str());
  return 1;
}

/// The main() of a benchmark: `parse` gives the options, or nullopt after
/// printing the usage (setting the exit code); `run` runs them. SIGPIPE is
/// ignored so that, piped into `head`, the program still reaches its end and
/// removes its temporary directory.
template <class Options>
int bench_main(int argc, char** argv, std::optional<Options> (*parse)(int, char**, int&), int (*run)(const Options&)) {
  std::signal(SIGPIPE, SIG_IGN);
  int exit_code = 0;
  const std::optional<Options> options = parse(argc, argv, exit_code);
  if (!options) return exit_code;
  return run(*options);
}

/// `text` as one word of /bin/sh: in single quotes, a quote in it as '\''.
inline std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

/// Runs `command` with /bin/sh; its standard output and exit status (-1 when
/// it could not be started or did not exit normally).
inline std::pair<std::string, int> run_command(const std::string& command) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {{}, -1};
  std::string out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {out, status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

/// Says when the build is not optimised, and how busy the machine is;
/// `busy_note` follows the warning that wall-clock figures include waiting
/// for a CPU.
inline void print_machine_note(std::string_view busy_note = {}) {
  if (!optimised_build()) {
    std::puts("note: this build is not optimised (no -O with NDEBUG): figures are not representative");
  }
  double load[1] = {0.0};
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (::getloadavg(load, 1) == 1) {
    const bool busy = load[0] > static_cast<double>(cpus);
    std::string note;
    if (busy) {
      note = ": busy, so wall-clock figures include waiting for a CPU";
      note += busy_note;
    }
    std::printf("machine: %ld CPUs, load average %.1f%s\n", cpus, load[0], note.c_str());
  }
}

}  // namespace agentctx_bench
