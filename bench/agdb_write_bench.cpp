// bench/agdb_write_bench.cpp: how long an agent write takes (agdb::append_chunk,
// what `agentsdb write` runs), next to the floor of any atomic rewrite of the
// same file, measured in the same run.
//
// For each case, a local layer (AGENTS.local.db) of 1,000, 10,000 and 100,000
// chunks with 384-value f32 rows, then the same with i8 rows (contents from
// synthetic_layer.hpp: 150 to 650 bytes of markdown-like text, sources,
// metadata recording the hash embedder's profile; the same bytes every run),
// is written to a fresh directory made by mkdtemp under $TMPDIR (or /tmp) and
// removed when the program ends (also on errors; not when it is killed).
// Then, alternating, with every file in the page cache:
//
//   write   agdb::append_chunk of one agent note of 150 to 650 bytes (hash
//           embedder, the layer's dim, one file:line source), through the
//           POSIX file system: lock, open the layers, validate, find a free
//           id, embed, then write_layer_appending (layer_writer.hpp): the
//           existing records copied from the mapping, the chunk appended, a
//           temporary file written, fdatasync, rename, fsync the directory.
//           The layer grows by one chunk per write.
//   floor   copying the layer file as it is at that moment: open + mmap of
//           the file, write() of every byte to a new file in the same
//           directory, fdatasync, close, rename over a second file, fsync of
//           the directory. Every atomic rewrite of the layer pays at least
//           this; appending in place would not, but a layer is never
//           modified in place (readers map it).
//   rewrite the baseline: the same write done by decoding the layer into a
//           layer_contents (read_layer_contents), adding the chunk and
//           encoding it all again with write_layer, as append_chunk did
//           before it copied from the mapping.
//
// Each is timed --writes times (default 15); the report shows the median and
// the p90 (nearest rank) of the wall times, and the ratio of the medians.
// Goal: the write's median within 1.5x of the floor's. The "parts" section
// explains the figures: CPU times next to wall times, and the phases timed
// one by one on the same file (validate, write_layer_appending with its
// syncs, and the rewrite's read_layer_contents and write_layer), median of 3.
//
// A MISS does not change the exit status: the program exits 1 only on an
// error (a failed write, or a layer that does not hold every chunk written
// or does not validate afterwards) and 2 on bad usage.
//
// Run it from an optimised build (an unoptimised build says so in its output):
//   cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-release --target agdb_write_bench
//   build-release/bench/agdb_write_bench              # 1k, 10k, 100k chunks x 384, f32 and i8
//   build-release/bench/agdb_write_bench --writes 40 --dim 128
//   build-release/bench/agdb_write_bench --small      # CI smoke: 200 and 1,000 chunks x 64, 3 writes
#include <cstddef>
#include <functional>
#include <iterator>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/posix_file_system.hpp"

#include "bench_support.hpp"
#include "synthetic_layer.hpp"

namespace {

using agentctx_bench::elapsed;
using agentctx_bench::format;
using agentctx_bench::make_content;
using agentctx_bench::make_layer;
using agentctx_bench::median;
using agentctx_bench::median_elapsed;
using agentctx_bench::megabytes;
using agentctx_bench::bench_arguments;
using agentctx_bench::percentile;
using agentctx_bench::print_machine_note;
using agentctx_bench::random_source;
using agentctx_bench::raw_write_times;
using agentctx_bench::scratch_directory;
using agentctx_bench::stopwatch;
using agentctx_bench::time_raw_write;
using agentctx_bench::verdict;
using agentctx_bench::with_commas;

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;
using agentctx::result;
using agentctx::unexpected;

constexpr double goal_ratio = 1.5;
constexpr int part_runs = 3;

constexpr const char* usage =
    "usage: agdb_write_bench [--small] [--writes N] [--dim D]\n"
    "  Times agent writes (agdb::append_chunk of one chunk) into local layers of\n"
    "  1,000, 10,000 and 100,000 chunks x D-dim rows (default 384), f32 and i8, next to\n"
    "  the floor measured in the same run: copying the layer file + fdatasync + rename +\n"
    "  directory fsync. Works in a temporary directory under $TMPDIR or /tmp.\n"
    "  --small     layers of 200 and 1,000 chunks x 64, 3 writes each: a smoke test\n"
    "  --writes N  timed writes (and floor copies) per layer (default 15)\n"
    "  --dim D     embedding dimension (default 384)\n";

struct write_case {
  std::size_t chunks = 0;
  agdb::element_type type = agdb::element_type::f32;
};

struct options {
  std::vector<write_case> cases;
  std::uint32_t dim = 384;
  std::size_t writes = 15;
  bool small = false;
};

std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::size_t> writes;
  std::optional<std::uint32_t> dim;
  bench_arguments args("agdb_write_bench", usage);
  args.flag("--small", o.small).number("--writes", writes).number("--dim", dim, 1, agdb::layer_stack::max_dim);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  const std::vector<std::size_t> sizes =
      o.small ? std::vector<std::size_t>{200, 1'000} : std::vector<std::size_t>{1'000, 10'000, 100'000};
  for (const agdb::element_type type : {agdb::element_type::f32, agdb::element_type::i8}) {
    for (const std::size_t chunks : sizes) o.cases.push_back({chunks, type});
  }
  if (o.small) {
    o.dim = 64;
    o.writes = 3;
  }
  if (writes) o.writes = *writes;
  if (dim) o.dim = *dim;
  return o;
}

const char* type_name(agdb::element_type type) { return type == agdb::element_type::i8 ? "i8" : "f32"; }

std::string case_name(const write_case& c, std::uint32_t dim) {
  return with_commas(c.chunks) + " chunks x " + std::to_string(dim) + " " + type_name(c.type);
}

/// The synthetic layer of `c`, its metadata recording the profile of the
/// hash embedder the writes use.
agdb::layer_contents make_case_layer(const write_case& c, std::uint32_t dim) {
  agdb::layer_contents layer = make_layer(c.chunks, dim, "agdb_write_bench");
  layer.metadata_json = agdb::layer_metadata_json(agdb::hash_embedding_profile(dim), "agdb_write_bench", "0.1.0");
  if (c.type == agdb::element_type::i8) {
    agdb::embedding_matrix& m = layer.embeddings;
    m.type = agdb::element_type::i8;
    m.quant_scale = agdb::choose_i8_scale(m.f32_values);
    m.i8_values = agdb::quantize_i8(m.f32_values, m.quant_scale);
    m.f32_values.clear();
  }
  return layer;
}

agdb::chunk_write agent_note(random_source& random) {
  agdb::chunk_write w;
  w.scope = agdb::layer_id::local;
  w.content = make_content(random);
  w.kind = "derived-summary";
  w.confidence = 0.7f;
  w.sources = {agdb::source_ref::to_string("docs/ARCHITECTURE.md:" + std::to_string(1 + random.below(400)))};
  return w;
}

// ---- measurements ------------------------------------------------------------------

/// The floor: the layer file copied (mapped, written, synced) and renamed
/// over `target`, the directory synced. The mapping is part of the time: a
/// write reads the layer too.
result<raw_write_times> time_copy_floor(const scratch_directory& dir, const std::string& source,
                                        const std::string& target) {
  const stopwatch map_watch;
  auto mapped = io::default_file_system().map(source);
  if (!mapped) return unexpected(mapped.error());
  const elapsed mapping = map_watch.stop();
  auto times = time_raw_write(dir.path(), target + ".tmp", target, mapped->bytes());
  if (!times) return unexpected(times.error());
  times->write_and_sync.wall += mapping.wall;
  times->write_and_sync.cpu += mapping.cpu;
  return times;
}

/// The phases of a write, each timed on its own (medians of part_runs).
struct write_parts {
  elapsed validate;
  elapsed write_appending;  ///< write_layer_appending of one chunk: copy, append, fdatasync, rename, directory fsync
  elapsed read_contents;    ///< the rewrite's decode
  elapsed write_layer;      ///< the rewrite's encode, write, fdatasync, rename, directory fsync
};

struct case_figures {
  write_case c;
  std::uint64_t file_bytes = 0;  ///< the layer before the first write
  std::vector<elapsed> writes;
  std::vector<elapsed> rewrites;  ///< the baseline: decode and encode the whole layer
  std::vector<elapsed> floors;
  write_parts parts;
};

/// One agent write done the old way: under the layer's lock, open and
/// validate the layer, check that `added`'s id is free, decode the whole
/// layer, add the chunk and its row, encode and write it all again.
result<void> rewrite_whole(const std::string& path, const agdb::chunk& added, std::span<const float> row) {
  io::file_system& fs = io::default_file_system();
  auto lock = fs.lock(path + ".lock", io::lock_mode::exclusive, true);
  if (!lock) return unexpected(lock.error());
  auto reader = agdb::layer_reader::open(fs, path);
  if (!reader) return unexpected(reader.error());
  if (const auto problems = agdb::validate(*reader, 1); !problems.empty()) {
    return unexpected(agdb::to_error(problems.front(), path));
  }
  if (reader->find_chunk(added.id)) return agentctx::fail(agentctx::errc::duplicate_id, "the id is taken", path);
  auto contents = agdb::read_layer_contents(*reader);
  if (!contents) return unexpected(contents.error());
  contents->chunks.push_back(added);
  agdb::append_row(contents->embeddings, row);
  return agdb::write_layer(fs, path, *contents);
}

/// A chunk of `dim` values for the parts' write_layer_appending.
agdb::embedding_matrix one_row(const agdb::layer_reader& reader, std::span<const float> row) {
  const agdb::embedding_matrix_header& h = reader.embedding_header();
  agdb::embedding_matrix rows;
  rows.type = static_cast<agdb::element_type>(h.element_type);
  rows.dim = h.dim;
  rows.quant_scale = h.quant_scale;
  agdb::append_row(rows, row);
  return rows;
}

result<write_parts> measure_parts(const scratch_directory& dir, const std::string& path, std::uint32_t dim) {
  std::vector<elapsed> validate_samples, appending_samples, read_samples, write_samples;
  const std::string copy = dir.file("parts.db");
  agdb::chunk added;
  added.id = 0xEFFFFFFFu;
  added.kind = "derived-summary";
  added.content = "A note for the parts.";
  added.author = "mcp";
  const std::vector<float> row(dim, 0.01f);
  for (int run = 0; run < part_runs; ++run) {
    auto reader = agdb::layer_reader::open(io::default_file_system(), path);
    if (!reader) return unexpected(reader.error());
    const stopwatch validate_watch;
    const std::vector<agdb::violation> problems = agdb::validate(*reader, 1);
    validate_samples.push_back(validate_watch.stop());
    if (!problems.empty()) return unexpected(agdb::to_error(problems.front(), path));

    const agdb::embedding_matrix rows = one_row(*reader, row);
    const stopwatch appending_watch;
    auto appended = agdb::write_layer_appending(io::default_file_system(), copy, *reader, std::span(&added, 1), rows);
    appending_samples.push_back(appending_watch.stop());
    if (!appended) return unexpected(appended.error());

    const stopwatch read_watch;
    auto contents = agdb::read_layer_contents(*reader);
    read_samples.push_back(read_watch.stop());
    if (!contents) return unexpected(contents.error());

    const stopwatch write_watch;
    auto written = agdb::write_layer(io::default_file_system(), copy, *contents);
    write_samples.push_back(write_watch.stop());
    if (!written) return unexpected(written.error());
  }
  return write_parts{median_elapsed(validate_samples), median_elapsed(appending_samples),
                     median_elapsed(read_samples), median_elapsed(write_samples)};
}

result<case_figures> measure_case(const scratch_directory& dir, const write_case& c, const options& o) {
  case_figures figures;
  figures.c = c;
  const std::string case_dir = dir.file(std::string(type_name(c.type)) + "-" + std::to_string(c.chunks));
  AGENTCTX_TRY(io::default_file_system().create_dir(case_dir));
  const std::vector<agdb::layer_location> layers = agdb::standard_layer_locations(case_dir);
  const std::string path = case_dir + "/AGENTS.local.db";
  {
    const agdb::layer_contents layer = make_case_layer(c, o.dim);
    AGENTCTX_TRY(agdb::write_layer(io::default_file_system(), path, layer));
  }
  auto size = io::default_file_system().file_size(path);
  if (!size) return unexpected(size.error());
  figures.file_bytes = *size;

  agdb::hash_embedder embedder(o.dim);
  random_source random(0xA6E47ull + c.chunks);
  const std::string floor_target = case_dir + "/floor.db";
  // One untimed round of each, so that both start from the same state
  // (the layer rewritten once, the floor's target present).
  auto time_write = [&](bool timed) -> result<void> {
    const agdb::chunk_write note = agent_note(random);
    const stopwatch watch;
    auto written = agdb::append_chunk(io::default_file_system(), layers, note, embedder);
    const elapsed taken = watch.stop();
    if (!written) return unexpected(written.error());
    if (timed) figures.writes.push_back(taken);
    return {};
  };
  std::uint32_t next_id = 0xF0000000u;  // above the synthetic ids; append_chunk's are checked by it
  auto time_rewrite = [&](bool timed) -> result<void> {
    const agdb::chunk_write note = agent_note(random);
    agdb::chunk added;
    added.id = next_id++;
    added.kind = note.kind;
    added.content = note.content;
    added.author = "mcp";
    added.confidence = note.confidence;
    added.created_at_unix_ms = agentctx::now_unix_ms();
    added.sources = note.sources;
    std::vector<float> row(o.dim);
    const std::string_view text = added.content;
    AGENTCTX_TRY(embedder.embed(std::span(&text, 1), row));
    const stopwatch watch;
    AGENTCTX_TRY(rewrite_whole(path, added, row));
    if (timed) figures.rewrites.push_back(watch.stop());
    return {};
  };
  auto time_floor = [&](bool timed) -> result<void> {
    auto floor = time_copy_floor(dir, path, floor_target);
    if (!floor) return unexpected(floor.error());
    if (timed) figures.floors.push_back(floor->total());
    return {};
  };
  const std::function<result<void>(bool)> contenders[] = {time_floor, time_write, time_rewrite};
  for (const auto& contender : contenders) AGENTCTX_TRY(contender(false));
  for (std::size_t i = 0; i < o.writes; ++i) {
    // Rotate the order so that none always runs right after another.
    for (std::size_t k = 0; k < std::size(contenders); ++k) {
      AGENTCTX_TRY(contenders[(i + k) % std::size(contenders)](true));
    }
  }

  // Every write arrived and the layer is valid.
  auto reader = agdb::layer_reader::open(io::default_file_system(), path);
  if (!reader) return unexpected(reader.error());
  if (const auto problems = agdb::validate(*reader, 1); !problems.empty()) {
    return unexpected(agdb::to_error(problems.front(), path));
  }
  const std::size_t expected = c.chunks + 2 * (o.writes + 1);
  if (reader->chunk_count() != expected) {
    return agentctx::fail(agentctx::errc::corrupt,
                          "the layer holds " + std::to_string(reader->chunk_count()) + " chunks, expected " +
                              std::to_string(expected),
                          path);
  }

  auto parts = measure_parts(dir, path, o.dim);
  if (!parts) return unexpected(parts.error());
  figures.parts = *parts;
  return figures;
}

// ---- report ------------------------------------------------------------------------

std::vector<double> walls(const std::vector<elapsed>& samples) {
  std::vector<double> out;
  for (const elapsed& e : samples) out.push_back(e.wall);
  return out;
}

std::string milliseconds(double seconds) { return format(seconds < 0.01 ? "%.2f" : "%.1f", seconds * 1e3); }

std::string median_and_p90(const std::vector<elapsed>& samples) {
  const std::vector<double> wall = walls(samples);
  return milliseconds(median(wall)) + " / " + milliseconds(percentile(wall, 0.9)) + " ms";
}

void print_rule() { std::puts(std::string(116, '-').c_str()); }

void print_report(const options& o, const std::vector<case_figures>& cases) {
  std::printf("\n%-26s %-10s %-21s %-21s %-21s %-8s %s\n", "layer", "file", "write (median / p90)",
              "floor (median / p90)", "rewrite (median / p90)", "ratio", "goal");
  print_rule();
  for (const case_figures& f : cases) {
    const double floor = median(walls(f.floors));
    const double ratio = median(walls(f.writes)) / floor;
    std::printf("%-26s %-10s %-21s %-21s %-21s %-8s <= %.1fx %s (rewrite: %.2fx)\n", case_name(f.c, o.dim).c_str(),
                format("%.1f MB", megabytes(f.file_bytes)).c_str(), median_and_p90(f.writes).c_str(),
                median_and_p90(f.floors).c_str(), median_and_p90(f.rewrites).c_str(), format("%.2fx", ratio).c_str(),
                goal_ratio, verdict(ratio <= goal_ratio), median(walls(f.rewrites)) / floor);
  }
  print_rule();
  std::puts("ratio: write median / floor median; rewrite: the baseline (decode + encode the layer) median / floor median");
  std::puts("parts (medians; CPU is user + kernel time of the whole process):");
  for (const case_figures& f : cases) {
    const write_parts& p = f.parts;
    std::printf("  %s: CPU write %s, rewrite %s, floor %s ms; phases: validate %s, write_layer_appending %s "
                "(CPU %s); rewrite's read_layer_contents %s, write_layer %s ms\n",
                case_name(f.c, o.dim).c_str(), milliseconds(median_elapsed(f.writes).cpu).c_str(),
                milliseconds(median_elapsed(f.rewrites).cpu).c_str(), milliseconds(median_elapsed(f.floors).cpu).c_str(),
                milliseconds(p.validate.wall).c_str(), milliseconds(p.write_appending.wall).c_str(),
                milliseconds(p.write_appending.cpu).c_str(), milliseconds(p.read_contents.wall).c_str(),
                milliseconds(p.write_layer.wall).c_str());
  }
  std::printf("%zu timed runs of each per layer, in rotating order; phases: median of %d\n", o.writes, part_runs);
}

int report_failure(const agentctx::error& e) { return agentctx_bench::report_failure("agdb_write_bench", e); }

int run(const options& o) {
  auto made = scratch_directory::create("agdb_write_bench");
  if (!made) return report_failure(made.error());
  const scratch_directory& dir = *made;
  std::printf("agdb_write_bench: agent writes into local layers in %s%s\n", dir.path().c_str(),
              o.small ? " (--small: a smoke test)" : "");
  print_machine_note(" (CPU times are under parts)");
  std::fflush(stdout);

  std::vector<case_figures> cases;
  for (const write_case& c : o.cases) {
    auto measured = measure_case(dir, c, o);
    if (!measured) return report_failure(measured.error());
    cases.push_back(std::move(*measured));
    std::printf("  measured %s\n", case_name(c, o.dim).c_str());
    std::fflush(stdout);
  }
  print_report(o, cases);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return agentctx_bench::bench_main(argc, argv, parse_options, run); }
