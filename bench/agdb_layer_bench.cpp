// bench/agdb_layer_bench.cpp: how fast an AGDB layer opens, validates and is
// written, each figure next to a baseline measured in the same run.
//
// The program builds a synthetic layer (by default 100,000 chunks with
// 384-dimensional f32 embeddings, about 208 MB of which 154 MB are embedding
// values: markdown-like contents of 150 to 650 bytes with some non-ASCII
// text, six kinds, both authors, zero to three sources per chunk, a layer
// metadata blob; the same bytes every run) in a fresh directory made by
// mkdtemp under $TMPDIR (or /tmp), removed when the program ends (also on
// errors and when its output pipe closes; not when it is killed). It prints:
//
//   open      layer_reader::open of the layer file, median of many opens, in
//             microseconds, at 1%, 10% and 100% of the chunk count. Baseline:
//             the mapping floor, what any mmap-based open pays: open() +
//             fstat() + mmap() + reading the first byte + close() of the same
//             file. Neither figure includes the munmap. Goal: under 50 us at
//             every size (open checks the structure only, so it must not grow
//             with the chunk count).
//   validate  validate() of the whole layer on a warm mapping, median of 5
//             runs, as file bytes / time in MB/s (1 MB = 10^6 bytes).
//             Baseline: reading the same mapping sequentially (a vectorisable
//             sum of every byte). Goal: at least 1000 MB/s.
//   write     write_layer() of the full layer to a new path, with its
//             fdatasync, rename and directory fsync, median of 3. Baseline:
//             the raw floor, write() of the same number of bytes from memory
//             to a fresh file in the same directory + fdatasync + close, then
//             rename + fsync of the directory (both parts shown). Goal: within
//             1.5x of the floor.
//
// A "parts" section follows with figures that explain the ones above:
//   - per open: page faults, the mapping floor touching every page open()
//     reads (header, section table, each section header), and the structure
//     check alone (layer_reader::from_bytes on already mapped bytes);
//   - the bytes validate() reads (it skips the embedding values, so its MB/s
//     over the whole file can exceed the sequential read speed);
//   - CPU time next to wall time for validate, the read and the writes (on a
//     busy machine wall time includes waiting for a CPU; the program prints
//     the load average), and the CPU time of planning a write (interning,
//     UTF-8 checks, record layout: detail::plan_layer), which the raw floor
//     does not pay;
//   - every write run, to show the spread.
//
// Each goal is printed with PASS or MISS. Figures vary by machine, so a MISS
// does not change the exit status: the program exits 1 only on an error (a
// failed write, a layer that does not open or validate) and 2 on bad usage.
//
// Run it from an optimised build (an unoptimised build says so in its output):
//   cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-release --target agdb_layer_bench
//   build-release/bench/agdb_layer_bench                    # 100,000 x 384
//   build-release/bench/agdb_layer_bench --chunks 20000 --dim 768
//   build-release/bench/agdb_layer_bench --small            # CI smoke: 2,000 x 64
// --small runs every code path on a tiny layer: 20 opens per size, every
// other measurement once; it takes well under a second (a few under ASan).
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/posix_file_system.hpp"

#include "bench_support.hpp"
#include "synthetic_layer.hpp"

namespace {

using agentctx_bench::bench_clock;
using agentctx_bench::elapsed;
using agentctx_bench::format;
using agentctx_bench::make_layer;
using agentctx_bench::median;
using agentctx_bench::median_elapsed;
using agentctx_bench::megabytes;
using agentctx_bench::bench_arguments;
using agentctx_bench::print_machine_note;
using agentctx_bench::raw_write_times;
using agentctx_bench::scratch_directory;
using agentctx_bench::seconds_since;
using agentctx_bench::stopwatch;
using agentctx_bench::system_failure;
using agentctx_bench::time_raw_write;
using agentctx_bench::verdict;
using agentctx_bench::with_commas;

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;
using agentctx::errc;
using agentctx::result;
using agentctx::unexpected;

constexpr double open_goal_us = 50.0;
constexpr double validate_goal_mb_per_s = 1000.0;
constexpr double write_goal_ratio = 1.5;

constexpr const char* usage =
    "usage: agdb_layer_bench [--small] [--chunks N] [--dim D]\n"
    "  Builds an AGDB layer of N chunks x D-dim f32 embeddings (default 100000 x 384)\n"
    "  in a temporary directory under $TMPDIR or /tmp and prints how fast it opens,\n"
    "  validates and is written, next to baselines measured in the same run.\n"
    "  --small     tiny layer (2000 x 64), every measurement once: a smoke test\n"
    "  --chunks N  number of chunks (at least 1)\n"
    "  --dim D     embedding dimension (at least 1)\n";

struct options {
  std::size_t chunks = 100'000;
  std::uint32_t dim = 384;
  bool small = false;
  int open_samples = 2000;  // per size
  int validate_runs = 5;
  int write_runs = 3;
};

/// The error of a failed system call, like the library's: "open failed: No such file".
// ---- command line -------------------------------------------------------------

/// Parses argv; nullopt after printing usage (with `exit_code` set).
std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::size_t> chunks;
  std::optional<std::uint32_t> dim;
  bench_arguments args("agdb_layer_bench", usage);
  args.flag("--small", o.small).number("--chunks", chunks).number("--dim", dim);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  if (o.small) {
    o.chunks = 2000;
    o.dim = 64;
    o.open_samples = 20;  // still instant; one sample would mostly time cold caches
    o.validate_runs = 1;
    o.write_runs = 1;
  }
  if (chunks) o.chunks = *chunks;
  if (dim) o.dim = *dim;
  return o;
}

// ---- timing ----------------------------------------------------------------------

long minor_page_faults() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}


// ---- baselines ---------------------------------------------------------------------

// Keeps the byte reads of the mapping floor from being optimised away.
volatile unsigned touched_bytes_sink = 0;

/// The mapping floor: what opening a file by mmap costs before a single field
/// is checked: open() + fstat() + mmap() + close(), then one byte read at each
/// of `touch_offsets` (each first touch of a page is a page fault). Returns
/// the seconds taken; the mapping is released afterwards, outside the timed
/// part, as the reader's is.
result<double> time_mapping_floor(const std::string& path, std::span<const std::uint64_t> touch_offsets) {
  const auto start = bench_clock::now();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return system_failure("open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return system_failure("fstat", path, e);
  }
  const auto length = static_cast<std::size_t>(st.st_size);
  void* address = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (address == MAP_FAILED) return system_failure("mmap", path, map_errno);
  const auto* bytes = static_cast<const volatile unsigned char*>(address);
  unsigned touched = 0;
  for (std::uint64_t offset : touch_offsets) {
    if (offset < length) touched += bytes[offset];
  }
  const double taken = seconds_since(start);
  ::munmap(address, length);
  touched_bytes_sink = touched;
  return taken;
}

/// The offsets open() reads: the file header, the section table and the
/// header of every known section.
std::vector<std::uint64_t> offsets_open_reads(const agdb::layer_reader& reader) {
  std::vector<std::uint64_t> offsets{0, reader.header().sections_offset};
  for (std::uint32_t kind = 1; kind <= static_cast<std::uint32_t>(agdb::section_kind::layer_metadata); ++kind) {
    if (auto index = reader.find_section(static_cast<agdb::section_kind>(kind))) {
      offsets.push_back(reader.sections()[*index].offset);
    }
  }
  return offsets;
}

std::size_t distinct_pages(std::span<const std::uint64_t> offsets) {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<std::uint64_t> pages;
  for (std::uint64_t offset : offsets) pages.push_back(offset / page);
  std::sort(pages.begin(), pages.end());
  return static_cast<std::size_t>(std::unique(pages.begin(), pages.end()) - pages.begin());
}

/// Sums every byte: the sequential read speed of memory the loop can reach.
/// Written plainly so that the compiler vectorises it.
std::uint64_t sum_bytes(std::span<const std::byte> bytes) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) sum += p[i];
  return sum;
}

// ---- measurements ------------------------------------------------------------------

struct open_figures {
  std::size_t chunks = 0;
  std::uint64_t file_bytes = 0;
  double open_us = 0.0;           ///< layer_reader::open, median
  double floor_us = 0.0;          ///< mapping floor touching the first byte, median
  double touch_floor_us = 0.0;    ///< mapping floor touching every page open reads, median
  std::size_t pages_read = 0;     ///< distinct pages open reads
  double check_only_us = 0.0;     ///< layer_reader::from_bytes on mapped bytes, median
  double faults_per_open = 0.0;   ///< minor page faults per layer_reader::open
};

result<open_figures> measure_open(const scratch_directory& dir, std::size_t chunks, std::uint32_t dim,
                                   int samples) {
  const std::string path = dir.file("open-" + std::to_string(chunks) + ".agdb");
  {
    const agdb::layer_contents layer = make_layer(chunks, dim, "agdb_layer_bench");
    if (auto written = agdb::write_layer(io::default_file_system(), path, layer); !written) {
      return unexpected(written.error());
    }
  }
  std::vector<std::uint64_t> touch_offsets;
  {
    auto reader = agdb::layer_reader::open(io::default_file_system(), path);
    if (!reader) return unexpected(reader.error());
    touch_offsets = offsets_open_reads(*reader);
  }
  const std::uint64_t first_byte[] = {0};
  open_figures figures;
  figures.chunks = chunks;
  figures.pages_read = distinct_pages(touch_offsets);
  std::vector<double> open_samples, floor_samples, touch_samples, check_samples;
  long faults = 0;
  // Interleaved, so that a slow patch of the machine hits all alike.
  for (int i = 0; i < samples; ++i) {
    const long faults_before = minor_page_faults();
    const auto start = bench_clock::now();
    auto reader = agdb::layer_reader::open(io::default_file_system(), path);
    open_samples.push_back(seconds_since(start));
    faults += minor_page_faults() - faults_before;
    if (!reader) return unexpected(reader.error());
    figures.file_bytes = reader->bytes().size();

    const auto check_start = bench_clock::now();
    auto checked = agdb::layer_reader::from_bytes(reader->bytes(), path);
    check_samples.push_back(seconds_since(check_start));
    if (!checked) return unexpected(checked.error());

    auto floor = time_mapping_floor(path, first_byte);
    if (!floor) return unexpected(floor.error());
    floor_samples.push_back(*floor);
    auto touch_floor = time_mapping_floor(path, touch_offsets);
    if (!touch_floor) return unexpected(touch_floor.error());
    touch_samples.push_back(*touch_floor);
  }
  figures.open_us = median(open_samples) * 1e6;
  figures.floor_us = median(floor_samples) * 1e6;
  figures.touch_floor_us = median(touch_samples) * 1e6;
  figures.check_only_us = median(check_samples) * 1e6;
  figures.faults_per_open = static_cast<double>(faults) / samples;
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return figures;
}

struct validate_figures {
  std::uint64_t file_bytes = 0;
  std::uint64_t bytes_read = 0;  ///< what validate() looks at: all but the embedding values
  elapsed validate_time;
  elapsed read_time;
};

result<validate_figures> measure_validate(const agdb::layer_reader& reader, int runs) {
  validate_figures figures;
  figures.file_bytes = reader.bytes().size();
  figures.bytes_read = figures.file_bytes - reader.embedding_header().data_length;
  // Warm the whole mapping (and validate's code) before timing anything.
  volatile std::uint64_t checksum = sum_bytes(reader.bytes());
  if (auto violations = agdb::validate(reader, 10); !violations.empty()) {
    return unexpected(agdb::to_error(violations[0], reader.path()));
  }
  std::vector<elapsed> validate_samples, read_samples;
  for (int i = 0; i < runs; ++i) {
    const stopwatch validate_watch;
    const std::size_t violation_count = agdb::validate(reader, 10).size();
    validate_samples.push_back(validate_watch.stop());
    if (violation_count != 0) {
      return agentctx::fail(errc::corrupt, "validate found violations on a later run", reader.path());
    }

    const stopwatch read_watch;
    checksum = checksum + sum_bytes(reader.bytes());
    read_samples.push_back(read_watch.stop());
  }
  figures.validate_time = median_elapsed(validate_samples);
  figures.read_time = median_elapsed(read_samples);
  return figures;
}

struct write_figures {
  elapsed write_layer_time;
  raw_write_times floor;  ///< medians of each part
  elapsed plan_time;
  std::vector<double> write_layer_walls, floor_walls;  ///< every run, in order
};

result<write_figures> measure_write(const scratch_directory& dir, const agdb::layer_contents& layer,
                                     std::span<const std::byte> layer_bytes, int runs) {
  write_figures figures;
  std::vector<elapsed> layer_samples, plan_samples, raw_write_samples, raw_rename_samples;
  std::error_code ignored;
  const std::string target = dir.file("written.agdb");
  const std::string raw_target = dir.file("raw.agdb");
  const std::string raw_temporary = raw_target + ".tmp";

  // Each file is removed right after its run, so every run finds the page
  // cache in the same state; this untimed run sets that state up.
  AGENTCTX_TRY(time_raw_write(dir.path(), raw_temporary, raw_target, layer_bytes));
  std::filesystem::remove(raw_target, ignored);

  auto time_layer = [&]() -> result<void> {
    const stopwatch watch;
    auto written = agdb::write_layer(io::default_file_system(), target, layer);
    layer_samples.push_back(watch.stop());
    if (!written) return unexpected(written.error());
    if (std::filesystem::file_size(target, ignored) != layer_bytes.size()) {
      return agentctx::fail(errc::corrupt, "write_layer wrote a file of another size than the first time", target);
    }
    std::filesystem::remove(target, ignored);
    return {};
  };
  auto time_raw = [&]() -> result<void> {
    auto raw = time_raw_write(dir.path(), raw_temporary, raw_target, layer_bytes);
    if (!raw) return unexpected(raw.error());
    raw_write_samples.push_back(raw->write_and_sync);
    raw_rename_samples.push_back(raw->rename_and_sync);
    std::filesystem::remove(raw_target, ignored);
    return {};
  };
  for (int i = 0; i < runs; ++i) {
    // Alternate the order so that neither always runs right after the other.
    AGENTCTX_TRY(i % 2 == 0 ? time_raw() : time_layer());
    AGENTCTX_TRY(i % 2 == 0 ? time_layer() : time_raw());

    const stopwatch plan_watch;
    auto plan = agdb::detail::plan_layer(layer);
    plan_samples.push_back(plan_watch.stop());
    if (!plan) return unexpected(plan.error());
  }
  figures.write_layer_time = median_elapsed(layer_samples);
  figures.floor.write_and_sync = median_elapsed(raw_write_samples);
  figures.floor.rename_and_sync = median_elapsed(raw_rename_samples);
  figures.plan_time = median_elapsed(plan_samples);
  for (std::size_t i = 0; i < layer_samples.size(); ++i) {
    figures.write_layer_walls.push_back(layer_samples[i].wall);
    figures.floor_walls.push_back(raw_write_samples[i].wall + raw_rename_samples[i].wall);
  }
  return figures;
}

// ---- report ------------------------------------------------------------------------


void print_rule() { std::puts(std::string(107, '-').c_str()); }

void print_row(const std::string& figure, const std::string& measured, const std::string& baseline,
               const std::string& goal, const char* outcome_text) {
  std::printf("%-34s %-14s %-36s %-15s %s\n", figure.c_str(), measured.c_str(), baseline.c_str(), goal.c_str(),
              outcome_text);
}


std::string milliseconds_list(const std::vector<double>& seconds) {
  std::string out;
  for (double s : seconds) out += (out.empty() ? "" : ", ") + format("%.1f", s * 1e3);
  return out + " ms";
}


void print_report(const options& o, const std::vector<open_figures>& opens, const validate_figures& v,
                  const write_figures& w) {
  std::printf("%-34s %-14s %-36s %-15s %s\n", "figure", "measured", "baseline (same run)", "goal", "");
  print_rule();
  for (const open_figures& f : opens) {
    print_row("open, " + with_commas(f.chunks) + " chunks (" + format("%.1f MB)", megabytes(f.file_bytes)),
              format("%.1f us", f.open_us), "mapping floor " + format("%.1f us", f.floor_us),
              format("< %.0f us", open_goal_us), verdict(f.open_us < open_goal_us));
  }
  const double validate_mb_per_s = megabytes(v.file_bytes) / v.validate_time.wall;
  const double read_mb_per_s = megabytes(v.file_bytes) / v.read_time.wall;
  print_row("validate, full layer", format("%.0f MB/s", validate_mb_per_s),
            "sequential read " + format("%.0f MB/s", read_mb_per_s), format(">= %.0f MB/s", validate_goal_mb_per_s),
            verdict(validate_mb_per_s >= validate_goal_mb_per_s));
  const double write_ratio = w.write_layer_time.wall / w.floor.total().wall;
  print_row("write_layer, full layer", format("%.1f ms", w.write_layer_time.wall * 1e3),
            "raw floor " + format("%.1f ms", w.floor.total().wall * 1e3) + format(" (ratio %.2fx)", write_ratio),
            format("<= %.1fx floor", write_goal_ratio), verdict(write_ratio <= write_goal_ratio));
  print_rule();

  std::puts("parts:");
  for (const open_figures& f : opens) {
    std::printf("  open, %s chunks: %.1f page faults per open; mapping floor touching the %zu pages open reads "
                "%.1f us; structure check alone (from_bytes, no mmap) %.2f us\n",
                with_commas(f.chunks).c_str(), f.faults_per_open, f.pages_read, f.touch_floor_us, f.check_only_us);
  }
  if (opens.size() > 1) {
    std::printf("  open at %s chunks / open at %s chunks: %.2fx; mapping floor touching the same pages: %.2fx\n",
                with_commas(opens.back().chunks).c_str(), with_commas(opens.front().chunks).c_str(),
                opens.back().open_us / opens.front().open_us,
                opens.back().touch_floor_us / opens.front().touch_floor_us);
  }
  std::printf("  validate: wall %.1f ms, CPU %.1f ms (%.0f MB/s of file per CPU second); it reads %.1f of the "
              "%.1f MB (all but the embedding values)\n",
              v.validate_time.wall * 1e3, v.validate_time.cpu * 1e3, megabytes(v.file_bytes) / v.validate_time.cpu,
              megabytes(v.bytes_read), megabytes(v.file_bytes));
  std::printf("  sequential read: wall %.1f ms, CPU %.1f ms (%.0f MB/s per CPU second)\n", v.read_time.wall * 1e3,
              v.read_time.cpu * 1e3, megabytes(v.file_bytes) / v.read_time.cpu);
  std::printf("  raw floor: write()+fdatasync+close wall %.1f ms (CPU %.1f ms), rename+directory fsync %.2f ms\n",
              w.floor.write_and_sync.wall * 1e3, w.floor.write_and_sync.cpu * 1e3,
              w.floor.rename_and_sync.wall * 1e3);
  std::printf("  write_layer: wall %.1f ms, CPU %.1f ms; of which planning (interning, UTF-8 checks, layout) "
              "wall %.1f ms, CPU %.1f ms\n",
              w.write_layer_time.wall * 1e3, w.write_layer_time.cpu * 1e3, w.plan_time.wall * 1e3,
              w.plan_time.cpu * 1e3);
  std::printf("  every run, in order: write_layer %s; raw floor %s\n", milliseconds_list(w.write_layer_walls).c_str(),
              milliseconds_list(w.floor_walls).c_str());
  std::printf("medians of: open %d, validate and read %d, write %d runs\n", o.open_samples, o.validate_runs,
              o.write_runs);
}

int report_failure(const agentctx::error& e) { return agentctx_bench::report_failure("agdb_layer_bench", e); }

int run(const options& o) {
  auto made = scratch_directory::create("agdb_layer_bench");
  if (!made) return report_failure(made.error());
  const scratch_directory& dir = *made;

  std::printf("agdb_layer_bench: %s chunks x %u dims f32 in %s%s\n", with_commas(o.chunks).c_str(), o.dim,
              dir.path().c_str(), o.small ? " (--small: a smoke test, single runs)" : "");
  print_machine_note(" (CPU times are under parts)");
  std::fflush(stdout);

  // The full layer: written once for validate, then rewritten for the write figures.
  const auto build_start = bench_clock::now();
  const agdb::layer_contents layer = make_layer(o.chunks, o.dim, "agdb_layer_bench");
  const double build_seconds = seconds_since(build_start);
  const std::string layer_path = dir.file("layer.agdb");
  if (auto written = agdb::write_layer(io::default_file_system(), layer_path, layer); !written) {
    return report_failure(written.error());
  }
  auto reader = agdb::layer_reader::open(io::default_file_system(), layer_path);
  if (!reader) return report_failure(reader.error());
  const std::uint64_t file_bytes = reader->bytes().size();
  const std::uint64_t embedding_bytes = reader->embedding_header().data_length;
  std::printf("layer: %.1f MB (embeddings %.1f MB, strings/chunks/relationships/metadata %.1f MB), "
              "%s strings, %s relationships; generated in %.2f s\n\n",
              megabytes(file_bytes), megabytes(embedding_bytes), megabytes(file_bytes - embedding_bytes),
              with_commas(reader->string_count()).c_str(), with_commas(reader->relationship_count()).c_str(),
              build_seconds);
  std::fflush(stdout);

  std::vector<std::size_t> open_sizes;
  for (std::size_t size : {o.chunks / 100, o.chunks / 10, o.chunks}) {
    if (size != 0 && std::find(open_sizes.begin(), open_sizes.end(), size) == open_sizes.end()) {
      open_sizes.push_back(size);
    }
  }
  std::vector<open_figures> opens;
  for (std::size_t size : open_sizes) {
    auto measured = measure_open(dir, size, o.dim, o.open_samples);
    if (!measured) return report_failure(measured.error());
    opens.push_back(*measured);
  }
  auto validated = measure_validate(*reader, o.validate_runs);
  if (!validated) return report_failure(validated.error());
  auto wrote = measure_write(dir, layer, reader->bytes(), o.write_runs);
  if (!wrote) return report_failure(wrote.error());
  print_report(o, opens, *validated, *wrote);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return agentctx_bench::bench_main(argc, argv, parse_options, run); }
