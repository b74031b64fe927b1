// bench/context_bench.cpp: read_context on an item with a long log.
//
// The loader reads recent_log from the end of log.jsonl and stops at the
// window (seed 003: the last 5 sessions or 24 hours), so its cost should not
// grow with the log. The baseline, measured in the same run on the same
// file, is what a loader that reads the whole log does (the public
// implementation of the seed): map the file and parse every line with
// simdjson, keeping the last entries. Both run on a warm page cache.
//
//   context_bench [--lines N] [--rounds N] [--small]
#include <cstdio>
#include <string>
#include <vector>

#include <simdjson.h>

#include "agentctx/context/loader.hpp"
#include "agentctx/io/confined_file_system.hpp"
#include "bench_support.hpp"

namespace {

using namespace agentctx_bench;
namespace context = agentctx::context;

constexpr const char* usage =
    "usage: context_bench [--lines N] [--rounds N] [--small]\n"
    "  --lines N   log lines (default 1000000, about 120 MB; --small: 2000)\n"
    "  --rounds N  timed runs of each, the median is reported (default 9; --small: 1)\n";

struct options {
  bool small = false;
  std::size_t lines = 1'000'000;
  std::size_t rounds = 9;
};

std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::size_t> lines, rounds;
  bench_arguments args("context_bench", usage);
  args.flag("--small", o.small).number("--lines", lines).number("--rounds", rounds);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  if (o.small) {
    o.lines = 2'000;
    o.rounds = 1;
  }
  if (lines) o.lines = *lines;
  if (rounds) o.rounds = *rounds;
  return o;
}

/// A log of `lines` entries, ten per session, one a minute, ending now.
std::string make_log(std::size_t lines, std::uint64_t now_ms) {
  std::string out;
  out.reserve(lines * 120);
  for (std::size_t i = 0; i < lines; ++i) {
    const std::uint64_t at = now_ms - (lines - i) * 60'000;
    out += "{\"timestamp\":\"" + agentctx::format_rfc3339_utc_ms(at) + "\",\"session_id\":\"s" +
           std::to_string(i / 10) + "\",\"summary\":\"applied primitive " + std::to_string(i % 97) +
           "\",\"trace\":[1,2,3]}\n";
  }
  return out;
}

int run(const options& o) {
  auto scratch = scratch_directory::create("context_bench");
  if (!scratch) {
    std::fprintf(stderr, "context_bench: %s\n", scratch.error().describe().c_str());
    return 1;
  }
  char canonical[PATH_MAX];
  if (::realpath(scratch->path().c_str(), canonical) == nullptr) return 1;
  const std::uint64_t now = agentctx::now_unix_ms();
  std::filesystem::create_directories(std::string(canonical) + "/item");
  const std::string log = make_log(o.lines, now);
  {
    FILE* f = std::fopen((std::string(canonical) + "/item/log.jsonl").c_str(), "wb");
    if (f == nullptr || std::fwrite(log.data(), 1, log.size(), f) != log.size() || std::fclose(f) != 0) return 1;
  }
  auto root = agentctx::io::confined_file_system::open(canonical);
  if (!root) {
    std::fprintf(stderr, "context_bench: %s\n", root.error().describe().c_str());
    return 1;
  }
  context::loader_options loader_options;
  loader_options.clock = [now] { return now; };
  context::loader loader(**root, loader_options);

  print_machine_note();
  std::printf("log: %zu lines, %.1f MB; window: last 5 sessions or 24 hours, at most 50 entries\n", o.lines,
              static_cast<double>(log.size()) / 1e6);

  std::vector<double> ours, baseline;
  std::size_t entries = 0, baseline_entries = 0;
  for (std::size_t round = 0; round < o.rounds + 1; ++round) {  // round 0 warms up
    stopwatch ours_clock;
    auto bundle = loader.read_context("item");
    const double ours_s = ours_clock.stop().wall;
    if (!bundle) {
      std::fprintf(stderr, "context_bench: %s\n", bundle.error().describe().c_str());
      return 1;
    }
    entries = bundle->recent_log.entries.size();

    // Baseline: read the whole log, parse every line, keep the last 50.
    stopwatch base_clock;
    auto mapped = (*root)->map("item/log.jsonl");
    if (!mapped) return 1;
    const std::string_view text(reinterpret_cast<const char*>(mapped->data()), mapped->size());
    simdjson::dom::parser parser;
    std::vector<std::string> last;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      simdjson::dom::object object;
      if (parser.parse(text.data() + start, end - start).get_object().get(object) == simdjson::SUCCESS) {
        std::string_view summary;
        if (object["summary"].get_string().get(summary) == simdjson::SUCCESS) {
          if (last.size() == 50) last.erase(last.begin());
          last.emplace_back(summary);
        }
      }
      start = end + 1;
    }
    const double base_s = base_clock.stop().wall;
    baseline_entries = last.size();
    if (round > 0) {
      ours.push_back(ours_s);
      baseline.push_back(base_s);
    }
  }
  const double ours_ms = median(ours) * 1e3;
  const double base_ms = median(baseline) * 1e3;
  std::printf("read_context (recent_log read from the end): %8.3f ms median of %zu, %zu entries\n", ours_ms,
              ours.size(), entries);
  std::printf("baseline (whole log parsed with simdjson):   %8.3f ms median, %zu entries kept\n", base_ms,
              baseline_entries);
  std::printf("speed-up: %.0fx\n", ours_ms > 0 ? base_ms / ours_ms : 0.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return agentctx_bench::bench_main<options>(argc, argv, parse_options, run); }
