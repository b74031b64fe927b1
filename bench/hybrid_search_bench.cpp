// bench/hybrid_search_bench.cpp: hybrid (vector + BM25) search over an AGDB
// layer, next to the vector search alone and to the BM25 counting's own
// baselines, all measured in the same run.
//
// The program writes the synthetic layer of the layer benchmarks (by default
// 100,000 chunks of markdown-like contents of 150 to 650 bytes, 384-dimension
// f32 rows: bench/synthetic_layer.hpp) to a directory made by mkdtemp under
// $TMPDIR (or /tmp), removed at the end, opens it with layer_stack (mmap) and
// asks --queries queries (default 50) of one to four words drawn from the
// contents' vocabulary, common and rare words mixed. It prints, per query,
// the median (p50) and 90th percentile (p90) in milliseconds of:
//
//   vector   layer_searcher::search, mode vector, k = 10, one thread: the
//            embeddings scan and top-k (the query vector is given: no
//            embedder runs).
//   hybrid   the same query in mode hybrid: the vector ranking, BM25 over
//            every chunk in effect, and their reciprocal rank fusion. The two
//            are timed in turn, query by query, with one searcher kept (its
//            per-layer caches are built before timing).
//
// and, under "parts", the BM25 counting alone over every chunk's content (the
// views into the mapping; the bytes are in the page cache), per query, as MB/s
// of content bytes:
//
//   count_terms     bm25_query::count_terms, what hybrid search runs per
//                   chunk: 64-byte blocks, token starts from the word-byte
//                   mask, a term compared only where its first two bytes are.
//   token by token  the same counts as the definition reads them, as
//                   add_document made them before count_terms
//                   (bm25_query::count_terms_by_definition:
//                   for_each_lexical_token, each token compared with each
//                   term; checked equal to count_terms, chunk by chunk).
//   floor           the word-byte mask and the token count of every block,
//                   nothing else: what any tokenizer of these bytes reads.
//
// Goals, printed with PASS or MISS: count_terms p50 at least 2x faster than
// token by token, and within 2.5x of the floor. The ratio of hybrid to vector
// search is printed as it is, without a goal: a search that keeps no index
// reads every chunk's text per query, which costs a few times the vector
// scan; a process that asks many queries over the same chunks keeps their
// counts in an agdb::lexical_index instead. A MISS does not change the exit
// status: it exits 0, 1 on an error, 2 on bad usage.
//
//   build-release/bench/hybrid_search_bench                  # 100,000 chunks x 384
//   build-release/bench/hybrid_search_bench --chunks 10000
//   build-release/bench/hybrid_search_bench --small          # CI smoke: 2,000 x 64, 5 queries
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/layer_search.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/agdb/lexical_scorer.hpp"
#include "agentctx/io/posix_file_system.hpp"

#include "bench_support.hpp"
#include "synthetic_layer.hpp"

namespace {

using agentctx_bench::bench_arguments;
using agentctx_bench::bench_clock;
using agentctx_bench::format;
using agentctx_bench::make_layer;
using agentctx_bench::median;
using agentctx_bench::megabytes;
using agentctx_bench::percentile;
using agentctx_bench::print_machine_note;
using agentctx_bench::random_source;
using agentctx_bench::scratch_directory;
using agentctx_bench::seconds_since;
using agentctx_bench::verdict;
using agentctx_bench::with_commas;

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;

constexpr double speedup_goal = 2.0;      // count_terms over token by token
constexpr double floor_goal_ratio = 2.5;  // count_terms over the floor

constexpr const char* usage =
    "usage: hybrid_search_bench [--small] [--chunks N] [--dim D] [--queries Q]\n"
    "  Writes a synthetic AGDB layer of N chunks x D-dim f32 rows (default 100000 x 384) under\n"
    "  $TMPDIR or /tmp and times hybrid search next to vector search and BM25 counting next to\n"
    "  its baselines, all in the same run.\n"
    "  --small      2000 x 64, 5 queries: a smoke test\n"
    "  --chunks N   number of chunks (at least 1)\n"
    "  --dim D      embedding dimension (at least 1)\n"
    "  --queries Q  queries asked (default 50)\n";

struct options {
  std::size_t chunks = 100'000;
  std::uint32_t dim = 384;
  std::size_t queries = 50;
  bool small = false;
};

std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::size_t> chunks, queries;
  std::optional<std::uint32_t> dim;
  bench_arguments args("hybrid_search_bench", usage);
  args.flag("--small", o.small).number("--chunks", chunks).number("--dim", dim).number("--queries", queries);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  if (o.small) {
    o.chunks = 2000;
    o.dim = 64;
    o.queries = 5;
  }
  if (chunks) o.chunks = *chunks;
  if (dim) o.dim = *dim;
  if (queries) o.queries = *queries;
  return o;
}

int report_failure(const agentctx::error& e) { return agentctx_bench::report_failure("hybrid_search_bench", e); }

// A query of one to four words of the contents' vocabulary, about one in
// five rare (non-ASCII and less common words), some capitalised.
std::string make_query(random_source& random) {
  std::string query;
  const std::size_t words = 1 + random.below(4);
  for (std::size_t w = 0; w < words; ++w) {
    if (!query.empty()) query += ' ';
    std::string word = random.below(5) == 0
                           ? std::string(agentctx_bench::rare_words[random.below(std::size(agentctx_bench::rare_words))])
                           : std::string(agentctx_bench::common_words[random.below(std::size(agentctx_bench::common_words))]);
    if (random.below(4) == 0 && word[0] >= 'a' && word[0] <= 'z') word[0] = static_cast<char>(word[0] - 'a' + 'A');
    query += word;
  }
  return query;
}

// The floor: the word-byte mask of every 64-byte block and the count of the
// token starts in it.
std::uint32_t count_tokens_only(std::string_view text) {
  std::uint32_t length = 0;
  std::uint64_t before = 0;
  char last[64];
  for (std::size_t base = 0; base < text.size(); base += 64) {
    const char* block = text.data() + base;
    if (text.size() - base < 64) {
      std::memset(last, ' ', sizeof last);
      std::memcpy(last, block, text.size() - base);
      block = last;
    }
    const std::uint64_t words = agdb::detail::word_byte_mask(block);
    length += static_cast<std::uint32_t>(std::popcount(words & ~((words << 1) | before)));
    before = words >> 63;
  }
  return length;
}

struct distribution {
  double p50 = 0;
  double p90 = 0;
};

distribution of(const std::vector<double>& seconds) { return {median(seconds), percentile(seconds, 0.9)}; }

void print_row(const char* name, const distribution& d, const std::string& note) {
  std::printf("  %-44s %9.2f %9.2f  %s\n", name, d.p50 * 1e3, d.p90 * 1e3, note.c_str());
}

int run(const options& o) {
  auto made = scratch_directory::create("hybrid_search_bench");
  if (!made) return report_failure(made.error());
  std::printf("hybrid_search_bench: %s chunks x %u dims f32, %s queries, k = 10, 1 thread%s\n",
              with_commas(o.chunks).c_str(), o.dim, with_commas(o.queries).c_str(),
              o.small ? " (--small: a smoke test)" : "");
  print_machine_note();
  std::fflush(stdout);

  const std::string path = made->file("base.agdb");
  {
    const agdb::layer_contents layer = make_layer(o.chunks, o.dim, "hybrid_search_bench");
    if (auto written = agdb::write_layer(io::default_file_system(), path, layer); !written) {
      return report_failure(written.error());
    }
  }
  auto stack = agdb::layer_stack::open(io::default_file_system(), {{agdb::layer_id::base, path}});
  if (!stack) return report_failure(stack.error());
  const agdb::layer_reader& reader = stack->layers()[0].reader;
  std::vector<std::string_view> contents;
  std::uint64_t content_bytes = 0;
  for (std::size_t i = 0; i < reader.chunk_count(); ++i) {
    auto content = reader.string(reader.record(i).content_str_id);
    if (!content) return report_failure(content.error());
    contents.push_back(*content);
    content_bytes += content->size();
  }
  std::printf("layer: %.1f MB, contents %.1f MB (%s bytes per chunk on average)\n\n", megabytes(reader.bytes().size()),
              megabytes(content_bytes), with_commas(content_bytes / std::max<std::size_t>(contents.size(), 1)).c_str());
  std::fflush(stdout);

  random_source random(0x4B7Bull + o.chunks);
  std::vector<std::string> queries;
  std::vector<std::vector<float>> vectors;
  for (std::size_t q = 0; q < o.queries; ++q) {
    queries.push_back(make_query(random));
    std::vector<float> v(o.dim);
    for (float& x : v) x = random.signed_unit();
    vectors.push_back(std::move(v));
  }

  // ---- vector and hybrid search, in turn per query
  agdb::layer_searcher searcher(*stack);
  const auto request_for = [&](std::size_t q, agdb::search_mode mode) {
    agdb::search_request r;
    r.query_vector = vectors[q];
    r.query_text = queries[q];
    r.k = 10;
    r.mode = mode;
    r.threads = 1;
    return r;
  };
  if (auto warm = searcher.search(request_for(0, agdb::search_mode::hybrid)); !warm) return report_failure(warm.error());
  std::vector<double> vector_seconds, hybrid_seconds;
  std::size_t lexical_hits = 0;
  for (std::size_t q = 0; q < o.queries; ++q) {
    auto start = bench_clock::now();
    auto by_vector = searcher.search(request_for(q, agdb::search_mode::vector));
    vector_seconds.push_back(seconds_since(start));
    if (!by_vector) return report_failure(by_vector.error());
    start = bench_clock::now();
    auto hybrid = searcher.search(request_for(q, agdb::search_mode::hybrid));
    hybrid_seconds.push_back(seconds_since(start));
    if (!hybrid) return report_failure(hybrid.error());
    for (const agdb::search_hit& hit : *hybrid) lexical_hits += hit.lexical_score.value_or(0.0) > 0.0 ? 1 : 0;
  }

  // ---- BM25 counting alone over every content, per query
  std::vector<double> count_seconds, token_seconds, floor_seconds;
  std::vector<std::uint32_t> fast, slow;
  std::uint64_t sink = 0;
  for (std::size_t q = 0; q < o.queries; ++q) {
    const agdb::bm25_query query(queries[q]);
    const std::size_t terms = query.terms().size();
    fast.assign(contents.size() * terms + 1, 0);
    slow.assign(contents.size() * terms + 1, 0);
    std::vector<std::uint32_t> fast_lengths(contents.size()), slow_lengths(contents.size());
    auto start = bench_clock::now();
    for (std::size_t i = 0; i < contents.size(); ++i) {
      fast_lengths[i] = query.count_terms(contents[i], std::span(fast).subspan(i * terms, terms));
    }
    count_seconds.push_back(seconds_since(start));
    start = bench_clock::now();
    for (std::size_t i = 0; i < contents.size(); ++i) {
      slow_lengths[i] = query.count_terms_by_definition(contents[i], std::span(slow).subspan(i * terms, terms));
    }
    token_seconds.push_back(seconds_since(start));
    start = bench_clock::now();
    for (const std::string_view text : contents) sink += count_tokens_only(text);
    floor_seconds.push_back(seconds_since(start));
    if (fast != slow || fast_lengths != slow_lengths) {
      std::fprintf(stderr, "hybrid_search_bench: error: count_terms and the token-by-token count differ for query \"%s\"\n",
                   queries[q].c_str());
      return 1;
    }
  }

  const distribution vector_d = of(vector_seconds), hybrid_d = of(hybrid_seconds);
  std::printf("per query, ms                                                      p50       p90\n");
  print_row("vector search (the baseline)", vector_d, "");
  print_row("hybrid search", hybrid_d,
            format("%.2fx vector", hybrid_d.p50 / vector_d.p50) + "; " + with_commas(lexical_hits) +
                " of the hits matched a term");
  std::puts("  parts: BM25 counting over every chunk's content");
  const auto mb_per_s = [&](const distribution& d) { return format("%.0f MB/s", megabytes(content_bytes) / d.p50); };
  const distribution count_d = of(count_seconds), token_d = of(token_seconds), floor_d = of(floor_seconds);
  print_row("  count_terms (what hybrid search runs)", count_d, mb_per_s(count_d));
  print_row("  token by token (before count_terms)", token_d,
            mb_per_s(token_d) + format("; count_terms is %.1fx faster", token_d.p50 / count_d.p50));
  print_row("  floor: word-byte mask + token count only", floor_d,
            mb_per_s(floor_d) + format("; count_terms / floor %.2fx", count_d.p50 / floor_d.p50));
  if (sink == 0 && content_bytes != 0) std::puts("  (no tokens)");

  std::puts("\ngoals:");
  std::printf("  count_terms %.1fx faster than token by token (goal >= %.0fx)  %s\n", token_d.p50 / count_d.p50,
              speedup_goal, verdict(token_d.p50 >= speedup_goal * count_d.p50));
  std::printf("  count_terms at %.2fx the floor (goal <= %.1fx)  %s\n", count_d.p50 / floor_d.p50, floor_goal_ratio,
              verdict(count_d.p50 <= floor_goal_ratio * floor_d.p50));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return agentctx_bench::bench_main<options>(argc, argv, parse_options, run); }
