// bench/relay_store_bench.cpp: the Relay project store (relay/store.hpp,
// relay/search.hpp) on the real disk, every figure next to a baseline
// measured in the same run.
//
// The store lives in a fresh directory made by mkdtemp under $TMPDIR (or
// /tmp), removed when the program ends (also on errors; not when it is
// killed); the first line names its file system type, since fdatasync on
// tmpfs costs nothing. It holds --packages Context Packages in one project:
// the same bytes every run, about 2 KB of JSON each (the smallest and largest
// are printed), every text field of seed 001 section 6 (title, description,
// decisions_made, open_questions, handoff_note, content_md as markdown, tags)
// written from a small vocabulary, with one of 48 topics whose two words
// recur in the package, so that a search has something to find.
//
//   1 deposit  store::deposit_json of each package, one at a time, through
//              io::posix_file_system: durable when it returns (one record
//              appended, then fdatasync). Deposits/s, p50 / p99 / max latency
//              and CPU. Interleaved with it, in alternating order, the floor:
//              the same bytes (each record framed as the store frames it)
//              appended with write() + fdatasync() to a plain file in the
//              store's directory. Then the log's size and bytes per package.
//   2 open     store::open read-only (the whole log replayed: CRC-32, JSON
//              parse, validation, every package rehashed), warm page cache,
//              median of --rounds, next to the floor of reading the log (as
//              a reader does: pread into memory) and checking every record's
//              CRC-32, simdjson's DOM parse of
//              every payload (what any JSON replay costs), and the library's
//              own parser, json::canonicalizer::parse, into trees (the one the
//              store uses); and the same open on the machine's cores
//              (store_options::open_threads, as the relay CLIs open). Both
//              again in a new process each (this program run with
//              --open-store), as a CLI command opens: its allocator has not
//              grown yet; and on the CLIs' threads with glibc's malloc
//              asking for transparent huge pages (GLIBC_TUNABLES, unset in
//              the other two).
//   3 pull     pull_relevant (limit 5, the protocol's default) with the
//              embedder of the relay CLI (cli/relay/search_embedder.hpp: the
//              hash embedder, dim 128, made by agdb::make_embedder with its
//              cache in STORE/embeddings): the first query (a cold cache:
//              every package embedded and its vector cached), new queries
//              with a warm cache (the packages' vectors read from it, the
//              query's embedded and appended to it), a query asked before;
//              the same without a cache; new queries through one
//              relay::relevance_index (as relay serve pulls), and queries
//              that relate to nothing (no package holds a word of them:
//              no hits) through it and without it; and what one `relay pull --mode
//              relevant` process does: open the store read-only (on the
//              machine's cores), open the
//              cache, one new query. Next to its parts, each alone over the
//              same packages: building the searchable texts, the hash
//              embedder embedding them, their cache keys (SHA-256), BM25
//              counting and scoring them.
//   4 verify   store::verify() (re-reads the log and rehashes every package),
//              median of --rounds, next to content_hash (canonical form +
//              SHA-256) of every package tree, and SHA-256 alone over every
//              package's canonical bytes.
//   5 import   import_ndjson of the store's export into a fresh store (every
//              hash rechecked, one durable record per package, as deposits
//              are), and of the same packages as bare wire objects, one per
//              line (another implementation's backup: hashed on import),
//              next to section 1's deposits of the same packages.
//
// There are no targets: the program prints figures and their ratios to the
// baselines. It exits 1 on an error (including a store that does not hold
// what was deposited, or cached and uncached searches that disagree) and 2
// on bad usage.
//
// Run it from an optimised build (an unoptimised build says so in its output):
//   cmake --build build/release --target relay_store_bench
//   build/release/bench/relay_store_bench              # 10,000 packages
//   build/release/bench/relay_store_bench --small      # CI smoke: 50 packages
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "agentctx/agdb/caching_embedder.hpp"
#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/lexical_scorer.hpp"
#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/export.hpp"
#include "agentctx/relay/hash.hpp"
#include "agentctx/relay/log_format.hpp"
#include "agentctx/relay/search.hpp"
#include "agentctx/relay/store.hpp"

#include "bench_support.hpp"

namespace {

using namespace agentctx_bench;

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;
namespace json = agentctx::json;
namespace relay = agentctx::relay;
using agentctx::errc;
using agentctx::result;
using agentctx::unexpected;

constexpr const char* program = "relay_store_bench";
constexpr const char* project_id = "proj_bench";
constexpr std::size_t pull_limit = 5;            // section 8.2's default, the CLI's too
constexpr std::uint64_t epoch_ms = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

constexpr const char* usage =
    "usage: relay_store_bench [--small] [--packages N] [--rounds N]\n"
    "  Times the Relay store on the real disk (a temporary directory under $TMPDIR or /tmp):\n"
    "  deposits, open, pull relevant, verify and import, each next to a baseline measured in the same\n"
    "  run (write() + fdatasync of the same bytes, CRC-32 and simdjson over the log, the hash\n"
    "  embedder and BM25 alone, SHA-256 alone).\n"
    "  --small       a smoke test: 50 packages, 1 round, 3 queries\n"
    "  --packages N  packages of about 2 KB deposited (default 10,000)\n"
    "  --rounds N    timed runs of open, verify and a CLI pull; the median is reported (default 5)\n"
    "  (--open-store DIR [--open-threads N]: what the bench runs in a new process, which opens DIR\n"
    "  read-only and prints its wall and CPU milliseconds, the records read and the packages quarantined)\n";

struct options {
  bool small = false;
  std::size_t packages = 10'000;
  std::size_t rounds = 5;
  std::size_t queries = 20;  ///< new queries with a warm cache, and without a cache
  /// Set in the new process section 2 starts: open this store, print the
  /// figures, exit.
  std::optional<std::string> open_store;
  unsigned open_threads = 1;
};

std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::size_t> packages, rounds;
  std::optional<unsigned> open_threads;
  bench_arguments args(program, usage);
  args.flag("--small", o.small).number("--packages", packages).number("--rounds", rounds);
  args.text("--open-store", o.open_store).number("--open-threads", open_threads);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  if (o.small) {
    o.packages = 50;
    o.rounds = 1;
    o.queries = 3;
  }
  if (packages) o.packages = *packages;
  if (rounds) o.rounds = *rounds;
  if (open_threads) {
    if (!o.open_store) {
      std::fprintf(stderr, "%s: --open-threads needs --open-store\n", program);
      exit_code = 2;
      return std::nullopt;
    }
    o.open_threads = *open_threads;
  }
  return o;
}

// ---- packages ----------------------------------------------------------------------------

constexpr const char* common_words[] = {
    "the",    "a",       "to",      "of",     "and",     "is",      "in",      "that",    "it",     "for",
    "this",   "we",      "on",      "with",   "as",      "can",     "not",     "be",      "by",     "from",
    "when",   "after",   "before",  "each",   "every",   "now",     "then",    "only",    "still",  "again",
    "so",     "but",     "because", "which",  "should",  "must",    "will",    "may",     "keep",   "make",
    "move",   "read",    "write",   "check",  "test",    "build",   "run",     "open",    "close",  "store",
    "log",    "record",  "file",    "entry",  "value",   "field",   "error",   "path",    "state",  "change",
    "update", "version", "format",  "layer",  "query",   "result",  "limit",   "budget",  "window", "session",
    "agent",  "human",   "review",  "note",   "plan",    "step",    "task",    "team",    "user",   "client",
    "server", "request", "response", "config", "option", "flag",    "default", "output",  "input",  "source",
    "target", "branch",  "commit",  "release", "issue",  "fix",     "bug",     "crash",   "lock",   "thread",
    "process", "memory", "disk",    "page",   "buffer",  "byte",    "block",   "batch",   "queue",  "stream",
    "event",  "timer",   "clock",   "hash",   "key",     "table",   "row",     "column",  "list",   "map",
    "set",    "tree",    "node",    "edge",   "graph",   "cost",    "time",    "size",    "count",  "order"};

/// Topic t is the words 2t and 2t + 1: they recur in its packages and make the queries.
constexpr const char* topic_words[] = {
    "archive",     "rollout",        "embedding",  "drift",        "quorum",      "lease",
    "snapshot",    "compaction",     "tombstone",  "retention",    "backoff",     "jitter",
    "shard",       "rebalance",      "replica",    "failover",     "checksum",    "corruption",
    "migration",   "schema",         "tokenizer",  "unicode",      "latency",     "percentile",
    "throughput",  "saturation",     "canary",     "deploy",       "feature",     "toggle",
    "cursor",      "pagination",     "deadline",   "cancellation", "sandbox",     "permission",
    "credential",  "rotation",       "webhook",    "signature",    "telemetry",   "sampling",
    "dashboard",   "alerting",       "billing",    "invoice",      "onboarding",  "tutorial",
    "accessibility", "contrast",     "localization", "plural",     "ranking",     "fusion",
    "vector",      "quantization",   "prompt",     "template",     "handoff",     "continuity",
    "orchestrator", "fanout",        "dependency", "upgrade",      "license",     "audit",
    "fuzzing",     "harness",        "benchmark",  "regression",   "profiling",   "flamegraph",
    "allocator",   "fragmentation",  "serializer", "roundtrip",    "compression", "dictionary",
    "encryption",  "envelope",       "scheduler",  "starvation",   "watchdog",    "heartbeat",
    "ledger",      "reconciliation", "conflict",   "merge",        "gateway",     "throttle",
    "cache",       "eviction",       "bloom",      "filter",       "parser",      "recovery"};
static_assert(std::size(topic_words) == 2 * 48);
constexpr std::size_t topic_count = std::size(topic_words) / 2;

constexpr const char* title_verbs[] = {"Ship", "Fix", "Plan", "Review", "Measure", "Refactor", "Document", "Migrate"};
constexpr const char* package_types[] = {"standard", "milestone", "decision", "handoff", "analysis", "question"};

/// Deterministic Context Packages as JSON text (what `relay-deposit` reads),
/// and the queries of section 3.
class package_source {
 public:
  /// Package `i` of the run: its JSON text, a little past a size drawn from
  /// 1,600 to 2,499 bytes (content_md ends at the first whole paragraph past it).
  static std::string make(std::size_t i) {
    random_source r(0x5EED'0000ull + i * 0x9E37'79B9ull);
    const std::size_t topic = r.below(topic_count);
    const std::size_t target = 1'600 + r.below(900);
    std::string t = "{\"package_id\":\"" + package_id(i, r) + "\",\"project_id\":\"" + project_id +
                    "\",\"relay_version\":\"0.1\",\"title\":\"";
    t += title_verbs[r.below(std::size(title_verbs))];
    t += std::string(" ") + topic_words[2 * topic] + " " + topic_words[2 * topic + 1];
    for (std::size_t k = 0, n = 2 + r.below(4); k < n; ++k) t += std::string(" ") + word(r, topic);
    t += "\",\"status\":\"complete\",\"package_type\":\"";
    t += package_types[r.below(std::size(package_types))];
    t += "\",\"review_type\":\"none\",\"created_at\":\"" + agentctx::format_rfc3339_utc_ms(epoch_ms + i * 60'000) +
         "\",\"created_by\":{\"id\":\"agent-" + std::to_string(r.below(8)) +
         "\",\"type\":\"agent\",\"session_id\":null},\"tags\":[\"" + topic_words[2 * topic] + "\",\"" +
         topic_words[2 * topic + 1] + "\",\"" + common_words[r.below(std::size(common_words))] +
         "\"],\"significance\":" + std::to_string(1 + r.below(10)) + ",\"description\":\"" +
         sentence(r, topic, 14 + r.below(12), '.') + "\",\"decisions_made\":[";
    for (std::size_t k = 0, n = 2 + r.below(3); k < n; ++k) {
      t += (k == 0 ? "\"" : ",\"") + sentence(r, topic, 8 + r.below(8), '.') + "\"";
    }
    t += "],\"open_questions\":[";
    for (std::size_t k = 0, n = 1 + r.below(3); k < n; ++k) {
      t += (k == 0 ? "\"" : ",\"") + sentence(r, topic, 6 + r.below(8), '?') + "\"";
    }
    t += "],\"handoff_note\":\"" + sentence(r, topic, 12 + r.below(10), '.') +
         "\",\"estimated_next_actor\":\"agent\",\"content_md\":\"## " + std::string(topic_words[2 * topic]) + " " +
         topic_words[2 * topic + 1] + "\\n\\n";
    // Markdown: paragraphs, bullet lists and code spans, up to the target size.
    while (t.size() + 2 < target) {
      const std::size_t kind = r.below(6);
      if (kind < 4) {
        for (std::size_t k = 0, n = 2 + r.below(3); k < n; ++k) t += sentence(r, topic, 6 + r.below(12), '.') + " ";
        t.back() = '\\';
        t += "n\\n";
      } else if (kind == 4) {
        for (std::size_t k = 0, n = 2 + r.below(3); k < n; ++k) t += "- " + sentence(r, topic, 4 + r.below(6), ';') + "\\n";
        t += "\\n";
      } else {
        t += "Run `" + std::string(word(r, topic)) + "_" + word(r, topic) + "` on the " + word(r, topic) + ".\\n\\n";
      }
    }
    t += "\"}";
    return t;
  }

  /// Query `k`: the two words of a topic and a common word; distinct for every k.
  static std::string query(std::size_t k) {
    const std::size_t topic = (k * 7) % topic_count;
    return std::string(topic_words[2 * topic]) + " " + topic_words[2 * topic + 1] + " " +
           common_words[(40 + k / topic_count) % std::size(common_words)];
  }

 private:
  /// "pkg_", 8 hex digits of `i` (so ids never repeat), 24 random ones.
  static std::string package_id(std::size_t i, random_source& r) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string id = "pkg_";
    for (int shift = 28; shift >= 0; shift -= 4) id += digits[(i >> shift) & 0xF];
    for (int k = 0; k < 24; ++k) id += digits[r.below(16)];
    return id;
  }

  /// A word of topic `topic`'s packages: mostly common words (the first ones
  /// far more often), often the topic's own, now and then another topic's.
  static const char* word(random_source& r, std::size_t topic) {
    if (r.one_in(7)) return topic_words[2 * topic + r.below(2)];
    if (r.one_in(25)) return topic_words[r.below(std::size(topic_words))];
    const double u = static_cast<double>(r.next() >> 11) * 0x1.0p-53;
    const std::size_t n = std::size(common_words);
    return common_words[std::min(static_cast<std::size_t>(static_cast<double>(n) * u * u), n - 1)];
  }

  static std::string sentence(random_source& r, std::size_t topic, std::size_t words, char end) {
    std::string s;
    for (std::size_t k = 0; k < words; ++k) {
      if (k != 0) s += r.one_in(9) ? ", " : " ";
      s += word(r, topic);
    }
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    s += end;
    return s;
  }
};

// ---- figures and reports ----------------------------------------------------------------

/// Per-operation samples: wall and thread CPU seconds.
struct latencies {
  std::vector<double> wall, cpu;
  double total() const {
    double sum = 0.0;
    for (double w : wall) sum += w;
    return sum;
  }
  double per_second() const { return total() > 0 ? static_cast<double>(wall.size()) / total() : 0.0; }
};

struct figures {
  // 1
  latencies deposit, floor;
  std::uint64_t input_bytes = 0;      ///< package JSON texts deposited
  std::size_t smallest = 0, largest = 0;  ///< of those texts
  std::uint64_t canonical_bytes = 0;  ///< their relay canonical forms
  std::uint64_t floor_bytes = 0;      ///< the records, framed (= the log's growth)
  std::uint64_t log_bytes = 0;
  std::size_t records = 0;
  // 2
  std::vector<elapsed> open, open_threads, crc, simdjson_parse, tree_parse, validate;
  std::vector<elapsed> new_process_open, new_process_open_threads;  // each in a process of its own
  std::vector<elapsed> new_process_huge_pages;  // the latter with glibc's malloc on transparent huge pages
  // 3
  elapsed cold, cold_no_cache;
  std::vector<elapsed> warm, repeated, no_cache, cli;
  elapsed index_cold;
  std::vector<elapsed> index_warm, index_unrelated, unrelated;
  std::vector<elapsed> texts, embed, keys, bm25, cache_open, cache_miss;
  std::size_t first_hits = 0;
  std::size_t cache_hits = 0, cache_misses = 0, cache_rows = 0;
  std::uint64_t cache_file_bytes = 0;
  std::uint64_t searchable_bytes = 0;
  // 4
  std::vector<elapsed> verify, content_hash, sha;
  // 5
  elapsed import_export, import_wire;
  std::uint64_t export_bytes = 0, wire_bytes = 0;
};

std::string us(double seconds) {
  const double v = seconds * 1e6;
  return format(v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v);
}
std::string ms(double seconds) {
  const double v = seconds * 1e3;
  return format(v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v);
}
std::string ratio(double a, double b) { return b > 0 ? format("%.2fx", a / b) : std::string("-"); }

void print_header(const std::string& title) { std::printf("\n== %s\n", title.c_str()); }

/// One row of a table of stretches: median wall ms, median CPU ms, a note.
void print_stretch(const std::string& name, const elapsed& e, const std::string& note = {}) {
  std::printf("  %-60s %9s %9s  %s\n", name.c_str(), ms(e.wall).c_str(), ms(e.cpu).c_str(), note.c_str());
}
void print_stretch_columns() { std::printf("  %-60s %9s %9s\n", "", "ms", "CPU ms"); }

// ---- section 1: deposit ---------------------------------------------------------------------

/// What section 1 made: the packages and, per package, the record the store
/// appends for it (framed) and its content hash.
struct deposited {
  std::vector<std::string> texts;
  std::vector<std::string> frames;
  std::vector<std::string> hashes;
};

/// The frames the store will append for `texts` (the first also creates the
/// project) and their content hashes, computed as the store computes them.
result<deposited> prepare_packages(const options& o, std::uint64_t clock_ms, figures& f) {
  deposited d;
  json::canonicalizer canonicalizer;
  for (std::size_t i = 0; i < o.packages; ++i) {
    d.texts.push_back(package_source::make(i));
    auto wire = canonicalizer.parse(d.texts.back());
    if (!wire) return unexpected(std::move(wire).error());
    if (auto checked = relay::read_package(*wire); !checked) return unexpected(std::move(checked).error());
    auto canonical = canonicalizer.serialize(*wire, json::canonical_form::relay);
    if (!canonical) return unexpected(std::move(canonical).error());
    f.canonical_bytes += canonical->size();
    d.hashes.push_back(relay::content_hash_of_canonical(*canonical));
    json::value record =
        json::value::object_type{{"type", "package"}, {"hash", d.hashes.back()}, {"package", std::move(*wire)}};
    if (i == 0) {
      record.set("project", json::value::object_type{{"project_id", project_id},
                                                     {"created_at", agentctx::format_rfc3339_utc_ms(clock_ms)}});
    }
    auto text = canonicalizer.serialize(record, json::canonical_form::jcs);
    if (!text) return unexpected(std::move(text).error());
    std::string frame;
    relay::append_record(frame, *text);
    d.frames.push_back(std::move(frame));
    const std::size_t size = d.texts.back().size();
    f.input_bytes += size;
    f.smallest = i == 0 ? size : std::min(f.smallest, size);
    f.largest = std::max(f.largest, size);
    f.floor_bytes += d.frames.back().size();
  }
  return d;
}

/// Times `call` (returning result<void>) into `out`: wall and thread CPU.
template <class Call>
result<void> time_into(latencies& out, Call&& call) {
  const double cpu_start = thread_cpu_seconds();
  const auto start = bench_clock::now();
  AGENTCTX_TRY(call());
  out.wall.push_back(seconds_since(start));
  out.cpu.push_back(thread_cpu_seconds() - cpu_start);
  return {};
}

result<void> run_deposits(const std::string& store_dir, const options& o, figures& f) {
  constexpr std::uint64_t clock_ms = epoch_ms + 365ull * 86'400'000;  // the store's clock: fixed, so runs match
  auto prepared = prepare_packages(o, clock_ms, f);
  if (!prepared) return unexpected(std::move(prepared).error());
  const deposited& d = *prepared;

  relay::store_options store_options;
  store_options.clock = [] { return clock_ms; };
  auto opened = relay::store::open(io::default_file_system(), store_dir, store_options);
  if (!opened) return unexpected(std::move(opened).error());
  relay::store& store = *opened;
  auto floor = raw_log::create(io::join_path(store_dir, "floor.log"));
  if (!floor) return unexpected(std::move(floor).error());

  for (std::size_t i = 0; i < o.packages; ++i) {
    const auto deposit = [&]() -> result<void> {
      return time_into(f.deposit, [&]() -> result<void> {
        auto outcome = store.deposit_json(d.texts[i]);
        if (!outcome) return unexpected(std::move(outcome).error());
        if (!outcome->created || outcome->package->hash != d.hashes[i]) {
          return agentctx::fail(errc::corrupt, "deposit " + std::to_string(i) + " was not stored as deposited",
                                store_dir);
        }
        return {};
      });
    };
    const auto raw = [&]() -> result<void> {
      return time_into(f.floor, [&]() -> result<void> {
        const std::string& frame = d.frames[i];
        AGENTCTX_TRY(floor->append(std::as_bytes(std::span(frame.data(), frame.size()))));
        return floor->sync();
      });
    };
    if (i % 2 == 0) {
      AGENTCTX_TRY(deposit());
      AGENTCTX_TRY(raw());
    } else {
      AGENTCTX_TRY(raw());
      AGENTCTX_TRY(deposit());
    }
  }

  // The store holds what was deposited, and the floor wrote what it wrote.
  auto all = store.packages_of(project_id);
  if (!all) return unexpected(std::move(all).error());
  if (all->size() != o.packages || store.record_count() != o.packages) {
    return agentctx::fail(errc::corrupt, "the store holds " + std::to_string(all->size()) + " packages in " +
                                             std::to_string(store.record_count()) + " records, expected " +
                                             std::to_string(o.packages), store_dir);
  }
  f.log_bytes = store.log_size();
  f.records = store.record_count();
  if (f.log_bytes != relay::log_header_size + f.floor_bytes) {
    return agentctx::fail(errc::corrupt, "the log grew by " + std::to_string(f.log_bytes - relay::log_header_size) +
                                             " bytes but the floor wrote " + std::to_string(f.floor_bytes) +
                                             ": the floor no longer writes the store's records", store_dir);
  }
  return {};
}

void report_deposits(const options& o, const figures& f) {
  print_header("1. deposit: " + with_commas(o.packages) + " deposits of ~2 KB packages, one at a time, durable when each returns");
  std::printf("  %-48s %10s %9s %9s %9s %11s\n", "", "per s", "p50 us", "p99 us", "max us", "CPU p50 us");
  const auto row = [](const char* name, const latencies& l) {
    std::printf("  %-48s %10.0f %9s %9s %9s %11s\n", name, l.per_second(), us(percentile(l.wall, 0.5)).c_str(),
                us(percentile(l.wall, 0.99)).c_str(), us(percentile(l.wall, 1.0)).c_str(),
                us(median(l.cpu)).c_str());
  };
  row("store::deposit_json (one record + fdatasync)", f.deposit);
  row("floor: write() + fdatasync() of the same bytes", f.floor);
  std::printf("  deposit / floor: p50 %s, p99 %s, CPU p50 %s, throughput %s of the floor's\n",
              ratio(percentile(f.deposit.wall, 0.5), percentile(f.floor.wall, 0.5)).c_str(),
              ratio(percentile(f.deposit.wall, 0.99), percentile(f.floor.wall, 0.99)).c_str(),
              ratio(median(f.deposit.cpu), median(f.floor.cpu)).c_str(),
              format("%.0f%%", f.floor.per_second() > 0 ? 100.0 * f.deposit.per_second() / f.floor.per_second() : 0.0)
                  .c_str());
  const double n = static_cast<double>(o.packages);
  std::printf("  relay.log: %s bytes, %s records, %.0f bytes per package (package JSON in: %.0f bytes, %zu to %zu; its "
              "canonical form: %.0f bytes)\n",
              with_commas(f.log_bytes).c_str(), with_commas(f.records).c_str(),
              static_cast<double>(f.log_bytes - relay::log_header_size) / n, static_cast<double>(f.input_bytes) / n,
              f.smallest, f.largest, static_cast<double>(f.canonical_bytes) / n);
  std::puts("  per s = deposits / the sum of their latencies; the two alternate, one each in turn");
}

// ---- section 2: open ------------------------------------------------------------------------

// The threads the relay CLIs open a store with (cli/relay/store_access.hpp):
// the machine's cores.
unsigned cli_open_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

result<relay::store> open_reader(const std::string& store_dir, unsigned threads = 1) {
  relay::store_options reader;
  reader.read_only = true;
  reader.open_threads = threads;
  return relay::store::open(io::default_file_system(), store_dir, reader);
}

// The new process's part (--open-store): opens the store and prints
// "<wall ms> <CPU ms> <records> <quarantined packages>".
int open_in_this_process(const options& o) {
  const stopwatch watch;
  auto store = open_reader(*o.open_store, o.open_threads);
  const elapsed took = watch.stop();
  if (!store) return agentctx_bench::report_failure(program, store.error());
  std::printf("%.3f %.3f %zu %zu\n", took.wall * 1e3, took.cpu * 1e3, store->record_count(),
              store->quarantined().size());
  return 0;
}

// glibc's tunable (2.35 and later) that has malloc ask for transparent
// huge pages (madvise), set in the environment of a new process.
constexpr const char* huge_pages_tunable = "GLIBC_TUNABLES=glibc.malloc.hugetlb=1";

// Opens the store in a new process of this program, as a CLI command does:
// a process whose allocator has not grown yet, unlike this one's after the
// rounds above. It runs /proc/PID/exe, which is this program even when its
// file was replaced meanwhile. `environment`,
// when not empty, is set in the new process's environment ("NAME=value");
// else GLIBC_TUNABLES is unset there.
result<elapsed> open_in_new_process(const std::string& store_dir, unsigned threads, std::size_t records,
                                    std::string_view environment = {}) {
  const std::string command = (environment.empty() ? std::string("env -u GLIBC_TUNABLES ")
                                                   : "env " + shell_quote(environment) + " ") +
                              shell_quote("/proc/" + std::to_string(::getpid()) + "/exe") + " --open-store " +
                              shell_quote(store_dir) + " --open-threads " + std::to_string(threads);
  const auto [out, status] = run_command(command);
  double wall_ms = 0.0, cpu_ms = 0.0;
  std::size_t read = 0, quarantined = 0;
  if (status != 0 || std::sscanf(out.c_str(), "%lf %lf %zu %zu", &wall_ms, &cpu_ms, &read, &quarantined) != 4) {
    return agentctx::fail(errc::io_error, "the new process failed: " + command);
  }
  if (read != records || quarantined != 0) {
    return agentctx::fail(errc::corrupt, "the new process replayed " + std::to_string(read) + " records (expected " +
                                             std::to_string(records) + "), " + std::to_string(quarantined) +
                                             " packages quarantined",
                          store_dir);
  }
  return elapsed{wall_ms / 1e3, cpu_ms / 1e3};
}

result<void> run_open(const std::string& store_dir, const options& o, figures& f) {
  const std::string log_path = io::join_path(store_dir, relay::log_file_name);
  auto held = io::default_file_system().map(log_path);  // the payloads of the parse baselines
  if (!held) return unexpected(std::move(held).error());
  std::vector<std::string_view> payloads;
  for (std::uint64_t at = relay::log_header_size; at + relay::record_header_size <= held->size();) {
    const std::uint32_t length = agentctx::load_u32(held->data() + at);
    payloads.emplace_back(reinterpret_cast<const char*>(held->data() + at + relay::record_header_size), length);
    at += relay::record_header_size + length;
  }
  simdjson::dom::parser parser;
  json::canonicalizer canonicalizer;
  std::vector<json::value> trees;  // the records' packages, for read_package alone
  for (const std::string_view payload : payloads) {
    auto record = canonicalizer.parse(payload);
    if (!record) return unexpected(std::move(record).error());
    const json::value* package = record->find("package");
    if (package == nullptr) return agentctx::fail(errc::corrupt, "a record holds no package", log_path);
    trees.push_back(*package);
  }
  for (std::size_t round = 0; round <= o.rounds; ++round) {  // round 0 warms up
    const bool timed = round > 0;
    {
      const stopwatch watch;
      auto store = open_reader(store_dir);
      const elapsed took = watch.stop();
      if (!store) return unexpected(std::move(store).error());
      if (store->record_count() != f.records || !store->quarantined().empty()) {
        return agentctx::fail(errc::corrupt, "the reader replayed " + std::to_string(store->record_count()) +
                                                 " records, expected " + std::to_string(f.records), store_dir);
      }
      if (timed) f.open.push_back(took);
    }
    {
      const stopwatch watch;
      auto store = open_reader(store_dir, cli_open_threads());
      const elapsed took = watch.stop();
      if (!store) return unexpected(std::move(store).error());
      if (store->record_count() != f.records || !store->quarantined().empty()) {
        return agentctx::fail(errc::corrupt, "the reader on several threads replayed " +
                                                 std::to_string(store->record_count()) + " records, expected " +
                                                 std::to_string(f.records), store_dir);
      }
      if (timed) f.open_threads.push_back(took);
    }
    if (timed) {
      auto one = open_in_new_process(store_dir, 1, f.records);
      if (!one) return unexpected(std::move(one).error());
      f.new_process_open.push_back(*one);
      auto several = open_in_new_process(store_dir, cli_open_threads(), f.records);
      if (!several) return unexpected(std::move(several).error());
      f.new_process_open_threads.push_back(*several);
      auto huge = open_in_new_process(store_dir, cli_open_threads(), f.records, huge_pages_tunable);
      if (!huge) return unexpected(std::move(huge).error());
      f.new_process_huge_pages.push_back(*huge);
    }
    {
      // As a reader reads the log: into memory with pread (store.hpp,
      // log_bytes_from), then every record's checksum.
      const stopwatch watch;
      auto file = io::default_file_system().open(log_path, io::read_only);
      if (!file) return unexpected(std::move(file).error());
      auto size = (*file)->size();
      if (!size) return unexpected(std::move(size).error());
      std::vector<std::byte> log(static_cast<std::size_t>(*size));
      auto got = (*file)->read_at(0, log);
      if (!got) return unexpected(std::move(got).error());
      log.resize(*got);
      std::size_t good = 0;
      for (std::uint64_t at = relay::log_header_size; at + relay::record_header_size <= log.size();) {
        const std::uint32_t length = agentctx::load_u32(log.data() + at);
        const std::uint32_t checksum = agentctx::load_u32(log.data() + at + 4);
        if (length > log.size() - at - relay::record_header_size) break;
        const std::string_view payload(reinterpret_cast<const char*>(log.data() + at + relay::record_header_size),
                                       length);
        if (agentctx::crc32(payload) == checksum) ++good;
        at += relay::record_header_size + length;
      }
      const elapsed took = watch.stop();
      if (good != f.records) return agentctx::fail(errc::corrupt, "the CRC floor found a bad record", log_path);
      if (timed) f.crc.push_back(took);
    }
    {
      const stopwatch watch;
      std::size_t packages = 0;
      for (const std::string_view payload : payloads) {
        simdjson::dom::object record;
        std::string_view type;
        if (parser.parse(payload.data(), payload.size()).get_object().get(record) == simdjson::SUCCESS &&
            record["type"].get_string().get(type) == simdjson::SUCCESS && type == "package") {
          ++packages;
        }
      }
      const elapsed took = watch.stop();
      if (packages != f.records) return agentctx::fail(errc::corrupt, "simdjson did not read every record", log_path);
      if (timed) f.simdjson_parse.push_back(took);
    }
    {
      const stopwatch watch;
      std::size_t parsed = 0;
      for (const std::string_view payload : payloads) {
        auto tree = canonicalizer.parse(payload);
        if (!tree) return unexpected(std::move(tree).error());
        parsed += tree->is_object() ? 1 : 0;
      }
      const elapsed took = watch.stop();
      if (parsed != f.records) return agentctx::fail(errc::corrupt, "a record is not an object", log_path);
      if (timed) f.tree_parse.push_back(took);
    }
    {
      std::vector<json::value> given(trees);  // replay gives read_package the record's tree: copied untimed
      const stopwatch watch;
      std::size_t valid = 0;
      for (json::value& tree : given) valid += relay::read_package(std::move(tree)) ? 1 : 0;
      const elapsed took = watch.stop();
      if (valid != f.records) return agentctx::fail(errc::corrupt, "a package fails validation", log_path);
      if (timed) f.validate.push_back(took);
    }
  }
  return {};
}

void report_open(const options& o, const figures& f) {
  print_header("2. open read-only (replays the whole log), warm page cache, median of " + std::to_string(o.rounds));
  const double mb = agentctx_bench::megabytes(f.log_bytes);
  std::printf("  %s packages, %.1f MB of log\n", with_commas(o.packages).c_str(), mb);
  print_stretch_columns();
  const elapsed open = median_elapsed(f.open);
  const elapsed crc = median_elapsed(f.crc);
  const elapsed dom = median_elapsed(f.simdjson_parse);
  const elapsed tree = median_elapsed(f.tree_parse);
  const auto per_package = [&](const elapsed& e) {
    return us(e.wall / static_cast<double>(o.packages)) + " us/package, " + format("%.0f MB/s", mb / e.wall);
  };
  print_stretch("store::open(read_only)", open, per_package(open));
  const elapsed open_threads = median_elapsed(f.open_threads);
  print_stretch("store::open(read_only), open_threads " + std::to_string(cli_open_threads()) + " (the CLIs)",
                open_threads, per_package(open_threads) + "; " + ratio(open_threads.wall, open.wall) + " of one thread");
  const elapsed new_open = median_elapsed(f.new_process_open);
  print_stretch("the same in a new process: 1 thread", new_open, per_package(new_open));
  const elapsed new_open_threads = median_elapsed(f.new_process_open_threads);
  print_stretch("the same in a new process: open_threads " + std::to_string(cli_open_threads()) + " (a CLI command)",
                new_open_threads,
                per_package(new_open_threads) + "; " + ratio(new_open_threads.wall, new_open.wall) + " of one thread");
  const elapsed huge = median_elapsed(f.new_process_huge_pages);
  print_stretch("  and with " + std::string(huge_pages_tunable), huge,
                per_package(huge) + "; " + ratio(huge.wall, new_open_threads.wall) + " of the line above");
  print_stretch("floor: read the log (pread) + CRC-32 of every record", crc, per_package(crc));
  print_stretch("simdjson DOM parse of every payload", dom, per_package(dom));
  print_stretch("json::canonicalizer::parse of every payload (into trees)", tree,
                per_package(tree) + "; the store's parser");
  const elapsed validate = median_elapsed(f.validate);
  print_stretch("relay::read_package of every package tree (moved in)", validate,
                per_package(validate) + "; a replay calls it once per package");
  std::printf("  open / (CRC + simdjson) %s; open / CRC %s; of open: parse into trees %.0f%%, read_package %.0f%% "
              "(the rehash: section 4)\n",
              ratio(open.wall, crc.wall + dom.wall).c_str(), ratio(open.wall, crc.wall).c_str(),
              open.wall > 0 ? 100.0 * tree.wall / open.wall : 0.0,
              open.wall > 0 ? 100.0 * validate.wall / open.wall : 0.0);
}

// ---- section 3: pull relevant -------------------------------------------------------------

/// The relay CLI's embedder (cli/relay/search_embedder.hpp): the hash
/// embedder at its default dim, cached in `cache_directory` unless empty.
result<std::unique_ptr<agdb::embedder>> cli_embedder(const std::string& cache_directory) {
  agdb::embedder_config config = agdb::hash_config(agdb::hash_embedder::default_dim);
  if (!cache_directory.empty()) config.cache_directory = cache_directory;
  return agdb::make_embedder(config, io::default_file_system());
}

/// One pull_relevant, timed; its hits' sequences appended to `ids` when
/// given. `related`: whether the query relates to some package (else it
/// must find none).
result<elapsed> timed_pull(const relay::store& store, const std::string& query, agdb::embedder& embedder,
                           std::vector<std::uint64_t>* ids = nullptr, relay::relevance_index* index = nullptr,
                           bool related = true) {
  const stopwatch watch;
  auto hits = relay::pull_relevant(store, project_id, query, pull_limit, embedder, index);
  const elapsed took = watch.stop();
  if (!hits) return unexpected(std::move(hits).error());
  if (hits->empty() == related) {
    return agentctx::fail(errc::corrupt, "pull_relevant found " + std::string(related ? "nothing" : "packages") +
                                             " for \"" + query + "\"");
  }
  if (ids) {
    for (const relay::relevant_hit& h : *hits) ids->push_back(h.package->sequence);
  }
  return took;
}

result<void> run_pull(const std::string& store_dir, const options& o, figures& f) {
  auto opened = open_reader(store_dir);
  if (!opened) return unexpected(std::move(opened).error());
  const relay::store& store = *opened;
  const std::string cache_dir = io::join_path(store_dir, "embeddings");
  auto cached = cli_embedder(cache_dir);
  if (!cached) return unexpected(std::move(cached).error());
  auto plain = cli_embedder({});
  if (!plain) return unexpected(std::move(plain).error());

  // Query 0 is the cold one; 1..queries the warm ones; then the CLI's.
  std::vector<std::uint64_t> cached_ids, plain_ids;
  {
    std::vector<std::uint64_t> ids;
    auto took = timed_pull(store, package_source::query(0), **cached, &ids);
    if (!took) return unexpected(std::move(took).error());
    f.cold = *took;
    f.first_hits = ids.size();
  }
  for (std::size_t k = 1; k <= o.queries; ++k) {
    auto took = timed_pull(store, package_source::query(k), **cached, &cached_ids);
    if (!took) return unexpected(std::move(took).error());
    f.warm.push_back(*took);
  }
  for (std::size_t k = 1; k <= o.queries; ++k) {
    auto took = timed_pull(store, package_source::query(k), **cached);
    if (!took) return unexpected(std::move(took).error());
    f.repeated.push_back(*took);
  }
  {
    auto took = timed_pull(store, package_source::query(0), **plain);
    if (!took) return unexpected(std::move(took).error());
    f.cold_no_cache = *took;
  }
  for (std::size_t k = 1; k <= o.queries; ++k) {
    auto took = timed_pull(store, package_source::query(k), **plain, &plain_ids);
    if (!took) return unexpected(std::move(took).error());
    f.no_cache.push_back(*took);
  }
  if (cached_ids != plain_ids) {
    return agentctx::fail(errc::corrupt, "pull_relevant ranks differently with and without the cache", cache_dir);
  }
  // What relay serve does: one relevance_index across its pulls, each a query
  // not asked before (after the CLI's below), so each is a cache miss as the
  // warm cached new query is. Each is checked against the same pull without
  // the index, made after it.
  {
    relay::relevance_index index;
    const std::size_t first = o.queries + 1 + o.rounds;
    for (std::size_t k = first; k <= first + o.queries; ++k) {
      std::vector<std::uint64_t> indexed, plain_ranked;
      auto took = timed_pull(store, package_source::query(k), **cached, &indexed, &index);
      if (!took) return unexpected(std::move(took).error());
      (k == first ? f.index_cold : f.index_warm.emplace_back()) = *took;
      auto again = timed_pull(store, package_source::query(k), **cached, &plain_ranked);
      if (!again) return unexpected(std::move(again).error());
      if (indexed != plain_ranked) {
        return agentctx::fail(errc::corrupt,
                              "pull_relevant ranks differently with and without a relevance index: \"" +
                                  package_source::query(k) + "\"", cache_dir);
      }
    }
    // Queries of words no package holds (the vocabulary has none of them):
    // through the index, and without it (the query's vector then cached).
    for (std::size_t k = 0; k < o.queries; ++k) {
      const std::string unrelated = "zyzzyva" + std::to_string(k) + " quokkas" + std::to_string(k);
      auto took = timed_pull(store, unrelated, **cached, nullptr, &index, false);
      if (!took) return unexpected(std::move(took).error());
      f.index_unrelated.push_back(*took);
      auto plain_took = timed_pull(store, unrelated, **cached, nullptr, nullptr, false);
      if (!plain_took) return unexpected(std::move(plain_took).error());
      f.unrelated.push_back(*plain_took);
    }
  }
  if (const auto* c = dynamic_cast<const agdb::caching_embedder*>(cached->get())) {
    f.cache_hits = c->statistics().hits;
    f.cache_misses = c->statistics().misses;
    f.cache_rows = c->cache().size();
    auto size = io::default_file_system().file_size(c->cache().path());
    if (size) f.cache_file_bytes = *size;
  }
  cached->reset();

  // What one `relay pull --mode relevant` process does, with a new query.
  for (std::size_t round = 0; round < o.rounds; ++round) {
    const stopwatch watch;
    auto reader = open_reader(store_dir, cli_open_threads());
    if (!reader) return unexpected(std::move(reader).error());
    auto embedder = cli_embedder(cache_dir);
    if (!embedder) return unexpected(std::move(embedder).error());
    auto hits = relay::pull_relevant(*reader, project_id, package_source::query(o.queries + 1 + round), pull_limit,
                                     **embedder);
    if (!hits) return unexpected(std::move(hits).error());
    f.cli.push_back(watch.stop());
  }

  // The parts, each alone over the same packages.
  auto all = store.packages_of(project_id);
  if (!all) return unexpected(std::move(all).error());
  agdb::hash_embedder embedder(agdb::hash_embedder::default_dim);
  auto cache = agdb::embedding_cache::open(io::default_file_system(), cache_dir, embedder.profile());
  if (!cache) return unexpected(std::move(cache).error());
  std::vector<std::string> texts;
  std::vector<float> vectors(all->size() * embedder.profile().dim);
  auto through_cache = cli_embedder(cache_dir);
  if (!through_cache) return unexpected(std::move(through_cache).error());
  std::vector<float> one_vector(embedder.profile().dim);
  std::uint64_t checksum = 0;
  for (std::size_t round = 0; round < std::max<std::size_t>(o.rounds, 3); ++round) {
    {
      const stopwatch watch;
      texts.clear();
      for (const relay::stored_package* p : *all) texts.push_back(relay::searchable_text(p->package));
      f.texts.push_back(watch.stop());
    }
    const std::vector<std::string_view> views(texts.begin(), texts.end());
    {
      const stopwatch watch;
      AGENTCTX_TRY(embedder.embed(views, vectors));
      f.embed.push_back(watch.stop());
      checksum += vectors[round % vectors.size()] != 0.0f ? 1 : 0;
    }
    {
      const stopwatch watch;
      for (const std::string_view text : views) checksum += cache->key_of(text)[0];
      f.keys.push_back(watch.stop());
    }
    {
      const stopwatch watch;
      auto reopened = agdb::embedding_cache::open(io::default_file_system(), cache_dir, embedder.profile());
      if (!reopened) return unexpected(std::move(reopened).error());
      f.cache_open.push_back(watch.stop());
      checksum += reopened->size();
    }
    {
      const std::string text = "a text never embedded before, number " + std::to_string(round);
      const std::string_view one[] = {text};
      const stopwatch watch;
      AGENTCTX_TRY((*through_cache)->embed(one, one_vector));
      f.cache_miss.push_back(watch.stop());
    }
    {
      const stopwatch watch;
      agdb::bm25_query lexical(package_source::query(round + 1));
      const std::size_t terms = lexical.terms().size();
      std::vector<std::uint32_t> frequencies(views.size() * terms);
      std::vector<std::uint32_t> lengths(views.size());
      for (std::size_t i = 0; i < views.size(); ++i) {
        lengths[i] = lexical.add_document(views[i], std::span(frequencies).subspan(i * terms, terms));
      }
      double total = 0.0;
      for (std::size_t i = 0; i < views.size(); ++i) {
        total += lexical.score(std::span<const std::uint32_t>(frequencies).subspan(i * terms, terms), lengths[i]);
      }
      f.bm25.push_back(watch.stop());
      checksum += total > 0.0 ? 1 : 0;
    }
  }
  for (const std::string& t : texts) f.searchable_bytes += t.size();
  if (checksum == 0) return agentctx::fail(errc::corrupt, "the parts computed nothing");
  return {};
}

void report_pull(const options& o, const figures& f) {
  print_header("3. pull_relevant over " + with_commas(o.packages) + " packages, limit " + std::to_string(pull_limit) +
               ", the CLI's embedder (hash, dim " + std::to_string(agdb::hash_embedder::default_dim) + ")");
  std::printf("  searchable texts: %.1f MB; first query \"%s\": %zu hits\n",
              agentctx_bench::megabytes(f.searchable_bytes), package_source::query(0).c_str(), f.first_hits);
  print_stretch_columns();
  const auto range = [](const std::vector<elapsed>& v) {
    double lo = 0.0, hi = 0.0;
    if (!v.empty()) {
      lo = hi = v.front().wall;
      for (const elapsed& e : v) {
        lo = std::min(lo, e.wall);
        hi = std::max(hi, e.wall);
      }
    }
    return "min " + ms(lo) + ", max " + ms(hi) + " ms";
  };
  const std::string q = std::to_string(f.warm.size());
  print_stretch("cached: first query (cold cache: embeds and caches all)", f.cold);
  print_stretch("cached: a new query, warm cache (median of " + q + ")", median_elapsed(f.warm), range(f.warm));
  print_stretch("cached: a query asked before (median of " + q + ")", median_elapsed(f.repeated), range(f.repeated));
  print_stretch("no cache: first query", f.cold_no_cache);
  print_stretch("no cache: a new query (median of " + q + ")", median_elapsed(f.no_cache), range(f.no_cache));
  print_stretch("index (relay serve): first query, builds the index", f.index_cold,
                "package vectors from the warm cache");
  print_stretch("index: a new query (median of " + std::to_string(f.index_warm.size()) + ")",
                median_elapsed(f.index_warm), range(f.index_warm));
  const std::string u = std::to_string(f.unrelated.size());
  print_stretch("index: a query related to nothing (median of " + u + ")", median_elapsed(f.index_unrelated),
                range(f.index_unrelated));
  print_stretch("cached, no index: a query related to nothing (median of " + u + ")", median_elapsed(f.unrelated),
                range(f.unrelated));
  print_stretch("CLI process: open reader + open cache + new query (median " + std::to_string(f.cli.size()) + ")",
                median_elapsed(f.cli), range(f.cli));
  std::puts("  its parts, each alone over the same packages (median):");
  const elapsed texts = median_elapsed(f.texts);
  const elapsed embed = median_elapsed(f.embed);
  const elapsed keys = median_elapsed(f.keys);
  const elapsed bm25 = median_elapsed(f.bm25);
  print_stretch("  relay::searchable_text of every package", texts);
  print_stretch("  hash embedder alone: embed every searchable text", embed);
  print_stretch("  cache keys alone: embedding_cache::key_of every text", keys, "SHA-256 of profile + text");
  print_stretch("  BM25 alone: count the query's terms in every text, score", bm25);
  const elapsed cache_open = median_elapsed(f.cache_open);
  const elapsed cache_miss = median_elapsed(f.cache_miss);
  print_stretch("  open the embedding cache (read every row, check its CRC)", cache_open,
                with_commas(f.cache_rows) + " rows");
  print_stretch("  one new text through the cache (a miss: appended + synced)", cache_miss);
  std::printf("  warm cached new query / (texts + keys + BM25 + one miss) %s; no-cache query / (texts + embed + BM25) %s\n",
              ratio(median_elapsed(f.warm).wall, texts.wall + keys.wall + bm25.wall + cache_miss.wall).c_str(),
              ratio(median_elapsed(f.no_cache).wall, texts.wall + embed.wall + bm25.wall).c_str());
  std::printf("  CLI process / (open on the CLIs' threads, section 2 + open the cache + warm cached query) %s\n",
              ratio(median_elapsed(f.cli).wall,
                    median_elapsed(f.open_threads).wall + cache_open.wall + median_elapsed(f.warm).wall).c_str());
  std::printf("  warm cached / no-cache query %s; embedding cache: %s hits, %s misses, %s rows, %.1f MB on disk\n",
              ratio(median_elapsed(f.warm).wall, median_elapsed(f.no_cache).wall).c_str(),
              with_commas(f.cache_hits).c_str(), with_commas(f.cache_misses).c_str(),
              with_commas(f.cache_rows).c_str(), agentctx_bench::megabytes(f.cache_file_bytes));
  std::printf("  index new query / warm cached new query %s (the same hits: checked); the index embeds only the query\n",
              ratio(median_elapsed(f.index_warm).wall, median_elapsed(f.warm).wall).c_str());
  std::puts("  without an index (the CLI: one pull per process) every pull embeds (or looks up) and tokenizes every");
  std::puts("  package again; a new query is a cache miss, appended to the cache file and synced before the pull returns");
}

// ---- section 4: verify ----------------------------------------------------------------------

result<void> run_verify(const std::string& store_dir, const options& o, figures& f) {
  auto opened = open_reader(store_dir);
  if (!opened) return unexpected(std::move(opened).error());
  relay::store& store = *opened;
  auto all = store.packages_of(project_id);
  if (!all) return unexpected(std::move(all).error());
  json::canonicalizer canonicalizer;
  std::vector<std::string> canonical;
  for (const relay::stored_package* p : *all) {
    auto bytes = canonicalizer.serialize(p->package.wire, json::canonical_form::relay);
    if (!bytes) return unexpected(std::move(bytes).error());
    canonical.emplace_back(*bytes);
  }
  std::uint64_t checksum = 0;
  for (std::size_t round = 0; round <= o.rounds; ++round) {  // round 0 warms up
    const bool timed = round > 0;
    {
      const stopwatch watch;
      auto report = store.verify();
      const elapsed took = watch.stop();
      if (!report) return unexpected(std::move(report).error());
      if (report->packages != o.packages || !report->ok()) {
        return agentctx::fail(errc::corrupt, "verify checked " + std::to_string(report->packages) + " packages, " +
                                                 std::to_string(report->quarantined.size()) + " quarantined", store_dir);
      }
      if (timed) f.verify.push_back(took);
    }
    {
      const stopwatch watch;
      for (std::size_t i = 0; i < all->size(); ++i) {
        auto hash = relay::content_hash((*all)[i]->package.wire, canonicalizer);
        if (!hash) return unexpected(std::move(hash).error());
        if (*hash != (*all)[i]->hash) return agentctx::fail(errc::corrupt, "a package rehashes differently", store_dir);
      }
      if (timed) f.content_hash.push_back(watch.stop());
    }
    {
      const stopwatch watch;
      for (const std::string& bytes : canonical) checksum += agentctx::sha256(bytes)[0];
      if (timed) f.sha.push_back(watch.stop());
    }
  }
  if (checksum == 0 && !canonical.empty()) return agentctx::fail(errc::corrupt, "SHA-256 computed nothing");
  return {};
}

void report_verify(const options& o, const figures& f) {
  print_header("4. verify (re-reads the log and rehashes every package), median of " + std::to_string(o.rounds));
  print_stretch_columns();
  const elapsed verify = median_elapsed(f.verify);
  const elapsed hash = median_elapsed(f.content_hash);
  const elapsed sha = median_elapsed(f.sha);
  const double canonical_mb = agentctx_bench::megabytes(f.canonical_bytes);
  print_stretch("store::verify()", verify,
                us(verify.wall / static_cast<double>(o.packages)) + " us/package");
  print_stretch("content_hash (relay canonical form + SHA-256) of every tree", hash,
                us(hash.wall / static_cast<double>(o.packages)) + " us/package");
  print_stretch("SHA-256 alone over every package's canonical bytes", sha,
                format("%.1f MB, ", canonical_mb) + format("%.0f MB/s", canonical_mb / sha.wall));
  const double open = median_elapsed(f.open).wall;
  std::printf("  verify / SHA-256 %s; verify / content_hash %s; verify / open %s (verify is a fresh read-only open);\n"
              "  the rehash (content_hash) is %.0f%% of open, SHA-256 alone %.0f%%\n",
              ratio(verify.wall, sha.wall).c_str(), ratio(verify.wall, hash.wall).c_str(), ratio(verify.wall, open).c_str(),
              open > 0 ? 100.0 * hash.wall / open : 0.0, open > 0 ? 100.0 * sha.wall / open : 0.0);
}

// ---- section 5: import ----------------------------------------------------------------------

result<void> run_import(const std::string& store_dir, const scratch_directory& dir, const options& o, figures& f) {
  auto opened = open_reader(store_dir);
  if (!opened) return unexpected(std::move(opened).error());
  const relay::store& source = *opened;
  std::string exported;
  if (auto r = relay::export_ndjson(source, project_id, exported); !r) return unexpected(std::move(r).error());
  std::string wire;
  json::canonicalizer canonicalizer;
  const auto add_line = [&](const json::value& v) { return relay::append_ndjson_line(canonicalizer, v, wire); };
  AGENTCTX_TRY(add_line(source.find_project(project_id)->wire));
  auto all = source.packages_of(project_id);
  if (!all) return unexpected(std::move(all).error());
  for (const relay::stored_package* p : *all) AGENTCTX_TRY(add_line(p->package.wire));
  f.export_bytes = exported.size();
  f.wire_bytes = wire.size();

  const auto import_into = [&](const std::string& name, const std::string& text, elapsed& out) -> result<void> {
    const std::string target_dir = dir.file(name);
    relay::store_options store_options;
    store_options.clock = [] { return epoch_ms; };
    auto target = relay::store::open(io::default_file_system(), target_dir, store_options);
    if (!target) return unexpected(std::move(target).error());
    const stopwatch watch;
    auto report = relay::import_ndjson(*target, text);
    out = watch.stop();
    if (!report) return unexpected(std::move(report).error());
    if (report->packages != o.packages) {
      return agentctx::fail(errc::corrupt, "import wrote " + std::to_string(report->packages) + " packages", target_dir);
    }
    for (const relay::stored_package* p : *all) {
      auto copy = target->find_package(p->package.package_id, project_id);
      if (!copy || (*copy)->hash != p->hash) {
        return agentctx::fail(errc::corrupt, "an imported package has another hash", target_dir);
      }
    }
    return {};
  };
  AGENTCTX_TRY(import_into("import-export", exported, f.import_export));
  AGENTCTX_TRY(import_into("import-wire", wire, f.import_wire));
  return {};
}

void report_import(const options& o, const figures& f) {
  print_header("5. import of " + with_commas(o.packages) + " packages into a fresh store, one durable record each");
  print_stretch_columns();
  const double n = static_cast<double>(o.packages);
  const double deposits = f.deposit.total();
  double deposits_cpu = 0.0;
  for (double c : f.deposit.cpu) deposits_cpu += c;
  print_stretch("import_ndjson of the export", f.import_export,
                format("%.1f MB, ", agentctx_bench::megabytes(f.export_bytes)) + us(f.import_export.wall / n) +
                    " us/package");
  print_stretch("import_ndjson of bare wire objects (hashed on import)", f.import_wire,
                format("%.1f MB, ", agentctx_bench::megabytes(f.wire_bytes)) + us(f.import_wire.wall / n) +
                    " us/package");
  print_stretch("baseline: section 1's deposits of the same packages (sum)", elapsed{deposits, deposits_cpu},
                us(deposits / n) + " us/package");
  std::printf("  import of the export / deposits %s; of bare wire objects / deposits %s; wire / export %s\n",
              ratio(f.import_export.wall, deposits).c_str(), ratio(f.import_wire.wall, deposits).c_str(),
              ratio(f.import_wire.wall, f.import_export.wall).c_str());
}

// ---- main -----------------------------------------------------------------------------------

int report_failure(const agentctx::error& e) { return agentctx_bench::report_failure(program, e); }

int run(const options& o) {
  if (o.open_store) return open_in_this_process(o);
  auto made = scratch_directory::create(program);
  if (!made) return report_failure(made.error());
  const scratch_directory& dir = *made;
  const std::string store_dir = dir.file("store");
  std::printf("%s: the Relay store in %s (file system: %s)%s\n", program, dir.path().c_str(),
              file_system_type(dir.path()).c_str(), o.small ? " (--small: a smoke test)" : "");
  print_machine_note();
  std::fflush(stdout);

  figures f;
  const auto step = [](const char* what) {
    std::printf("  measuring %s...\n", what);
    std::fflush(stdout);
  };
  step("1. deposit");
  if (auto r = run_deposits(store_dir, o, f); !r) return report_failure(r.error());
  report_deposits(o, f);
  step("2. open");
  if (auto r = run_open(store_dir, o, f); !r) return report_failure(r.error());
  report_open(o, f);
  step("3. pull relevant");
  if (auto r = run_pull(store_dir, o, f); !r) return report_failure(r.error());
  report_pull(o, f);
  step("4. verify");
  if (auto r = run_verify(store_dir, o, f); !r) return report_failure(r.error());
  report_verify(o, f);
  step("5. import");
  if (auto r = run_import(store_dir, dir, o, f); !r) return report_failure(r.error());
  report_import(o, f);
  print_machine_note();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return agentctx_bench::bench_main<options>(argc, argv, parse_options, run); }
