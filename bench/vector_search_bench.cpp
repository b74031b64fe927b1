// bench/vector_search_bench.cpp: brute-force vector search with the similarity
// kernels and the bounded top-k, each figure next to a baseline measured in
// the same run.
//
// The program generates (the same bytes every run) 100,000 clustered,
// L2-normalised 384-dimensional vectors (1,000 cluster centres; each vector is
// its centre plus noise of about the centre's length, then normalised) and 200
// queries drawn the same way. The f32 matrix is stored at a deliberately
// unaligned byte offset (--offset, default 3), as rows of an AGDB file may
// be; the i8 matrix is quantised like agentctx::agdb::quantize_i8 with
// choose_i8_scale (one scale for the whole matrix) and stored the same way.
// Every query is a full search: scores of all rows plus the top 10 (k = 10)
// with agentctx::vector::top_k. It prints, per query, the median (p50) and 90th
// percentile (p90) in milliseconds of:
//
//   memory floor   a sequential read of the same f32 (or i8) bytes, with the
//                  fastest instruction set for those addresses: what any
//                  exact brute-force scan of the matrix pays.
//   f32 dot        dot_f32_rows + top_k on the best instruction set, then on
//                  each one the CPU has (portable, avx2, avx512).
//   f32 cosine     dot_f32_rows with squared norms (score = dot / |row|).
//   i8 dot         quantize_query_i8 + dot_i8_rows + top_k, per instruction
//                  set, with recall@10 against the exact f32 top 10.
//   2 threads      f32 and i8 with the rows split in two halves (one top_k per
//                  thread, merged), when the machine has 2 or more CPUs.
//   FAISS          IndexFlatIP::search of one query at a time on the same
//                  vectors, when the bench was built with FAISS (optional).
//   layer search   the same vectors written as AGDB layer files (f32, and
//                  i8 with the computed scale) under $TMPDIR, opened with
//                  layer_stack (mmap) and queried with layer_searcher::search
//                  (cosine, k = 10, precedence and kind filter applied, the
//                  results materialised): what the library API and
//                  `agentsdb search --query-vec` run, on 1 and 2 threads.
//
// Goals, each printed with PASS or MISS:
//   - f32 dot p50 <= 1.5 x the f32 memory floor p50;
//   - i8 dot p50 at least 2.5 x faster than f32 dot p50, with recall@10 >= 0.95;
//   - f32 dot p50 at least 3 x faster than FAISS single-query p50.
// A "parts" section adds the f32 and i8 figures with the matrices 64-byte
// aligned (the 512-bit kernels then run).
// Figures vary by machine and load (the program prints the load average), so a
// MISS does not change the exit status: it exits 0, 1 when the layer search
// fails (an error, not a slow figure), or 2 on bad usage.
//
// Run it from an optimised build:
//   cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-release --target vector_search_bench
//   build-release/bench/vector_search_bench                 # 100,000 x 384, 200 queries
//   build-release/bench/vector_search_bench --rows 20000 --dim 1536
//   build-release/bench/vector_search_bench --small         # CI smoke: 2,000 x 64, 2 queries
//   AGENTCTX_ISA=avx2 build-release/bench/vector_search_bench   # cap the "best" ISA
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agentctx/agdb/layer_search.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/vector/similarity_kernels.hpp"
#include "agentctx/vector/top_k.hpp"

#include "bench_support.hpp"

#if AGENTCTX_VECTOR_X86
#include <immintrin.h>
#endif
#if AGENTCTX_BENCH_HAVE_FAISS
#include <faiss/IndexFlat.h>
#endif

namespace {

using agentctx_bench::bench_clock;
using agentctx_bench::format;
using agentctx_bench::optimised_build;
using agentctx_bench::scratch_directory;
using agentctx_bench::seconds_since;
using agentctx_bench::thread_cpu_seconds;
using agentctx_bench::verdict;

namespace vector = agentctx::vector;
using vector::instruction_set;
using hit_list = std::vector<vector::scored<std::uint32_t>>;

constexpr double f32_floor_goal_ratio = 1.5;
constexpr double i8_speedup_goal = 2.5;
constexpr double i8_recall_goal = 0.95;
constexpr double faiss_speedup_goal = 3.0;
constexpr std::size_t k = 10;
constexpr std::size_t cluster_count = 1000;

constexpr const char* usage =
    "usage: vector_search_bench [--small] [--rows N] [--dim D] [--queries Q] [--offset B]\n"
    "  Brute-force top-10 search of Q queries over N clustered, L2-normalised\n"
    "  D-dim vectors (default 100000 x 384, 200 queries), f32 and i8, per\n"
    "  instruction set, next to the memory floor and FAISS measured in the same run.\n"
    "  --small      2000 x 64, 2 queries: a smoke test\n"
    "  --offset B   byte offset of the matrices from a 64-byte boundary (default 3)\n";

struct options {
  std::size_t rows = 100'000;
  std::size_t dim = 384;
  std::size_t queries = 200;
  std::size_t offset = 3;
  bool small = false;
};

/// Parses argv; nullopt after printing usage (with `exit_code` set).
std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
  options o;
  std::optional<std::size_t> rows, dim, queries, offset;
  agentctx_bench::bench_arguments args("vector_search_bench", usage);
  args.flag("--small", o.small)
      .number("--rows", rows, 1, 1u << 30)
      .number("--dim", dim, 1, 1u << 30)
      .number("--queries", queries, 1, 1u << 30)
      .number("--offset", offset, 0, 63);
  if (const auto code = args.read(argc, argv)) {
    exit_code = *code;
    return std::nullopt;
  }
  if (o.small) {
    o.rows = 2000;
    o.dim = 64;
    o.queries = 2;
  }
  o.rows = rows.value_or(o.rows);
  o.dim = dim.value_or(o.dim);
  o.queries = queries.value_or(o.queries);
  o.offset = offset.value_or(o.offset);
  return o;
}

// ---- data ------------------------------------------------------------------------

/// The generator of the data: mt19937_64's raw output is fixed by the
/// standard, so the data is the same every run, on every platform.
using random_engine = std::mt19937_64;

/// Uniform in [-1, 1).
float signed_unit(random_engine& random) { return static_cast<float>(random() >> 40) / 8388608.0f - 1.0f; }

void normalise(std::span<float> v) {
  double norm = 0.0;
  for (float x : v) norm += double{x} * x;
  const float inverse = norm > 0.0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 1.0f;
  for (float& x : v) x *= inverse;
}

/// `count` vectors, each a random cluster centre plus noise about as long as
/// the centre, L2-normalised.
std::vector<float> clustered_vectors(std::size_t count, std::size_t dim, const std::vector<float>& centres,
                                     random_engine& random) {
  // Uniform noise in [-a, a) has a squared length of dim * a^2 / 3: a = sqrt(3 / dim) makes it 1.
  const float amplitude = static_cast<float>(std::sqrt(3.0 / static_cast<double>(dim)));
  std::vector<float> out(count * dim);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t cluster = static_cast<std::size_t>(random() % cluster_count);
    const std::span<float> v(out.data() + i * dim, dim);
    for (std::size_t j = 0; j < dim; ++j) v[j] = centres[cluster * dim + j] + amplitude * signed_unit(random);
    normalise(v);
  }
  return out;
}

/// Bytes aligned to 64, with the payload starting `offset` bytes later.
class placed_bytes {
 public:
  placed_bytes(std::size_t size, std::size_t offset) : storage_(size + offset + 128), size_(size) {
    move_to(offset);
  }
  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  std::size_t offset() const noexcept { return offset_; }
  placed_bytes(placed_bytes&&) noexcept = default;  // the vector keeps its buffer
  placed_bytes& operator=(placed_bytes&&) noexcept = default;
  placed_bytes(const placed_bytes&) = delete;
  placed_bytes& operator=(const placed_bytes&) = delete;
  /// Moves the payload to `offset` bytes past a 64-byte boundary.
  void move_to(std::size_t offset) {
    const auto base = reinterpret_cast<std::uintptr_t>(storage_.data());
    std::byte* aligned = storage_.data() + ((64 - base % 64) % 64);
    std::byte* target = aligned + offset;
    if (data_ != nullptr && data_ != target) std::memmove(target, data_, size_);
    data_ = target;
    offset_ = offset;
  }

 private:
  std::vector<std::byte> storage_;
  std::size_t size_;
  std::byte* data_ = nullptr;
  std::size_t offset_ = 0;
};

struct dataset {
  std::size_t rows = 0, dim = 0;
  std::vector<float> values;   ///< rows x dim, native floats (for FAISS)
  std::vector<float> queries;  ///< query count x dim
  placed_bytes f32_matrix{0, 0};
  placed_bytes i8_matrix{0, 0};
  float i8_scale = 1.0f;
};

dataset make_dataset(const options& o) {
  random_engine random(0x5EC70Full + o.rows * 31 + o.dim);
  std::vector<float> centres(cluster_count * o.dim);
  for (std::size_t c = 0; c < cluster_count; ++c) {
    const std::span<float> v(centres.data() + c * o.dim, o.dim);
    for (float& x : v) x = signed_unit(random) + signed_unit(random);
    normalise(v);
  }
  dataset d;
  d.rows = o.rows;
  d.dim = o.dim;
  d.values = clustered_vectors(o.rows, o.dim, centres, random);
  d.queries = clustered_vectors(o.queries, o.dim, centres, random);
  d.f32_matrix = placed_bytes(d.values.size() * 4, o.offset);
  for (std::size_t i = 0; i < d.values.size(); ++i) agentctx::store_f32(d.f32_matrix.data() + i * 4, d.values[i]);
  d.i8_scale = agentctx::agdb::choose_i8_scale(d.values);
  const std::vector<std::int8_t> quantised = agentctx::agdb::quantize_i8(d.values, d.i8_scale);
  d.i8_matrix = placed_bytes(quantised.size(), o.offset);
  std::memcpy(d.i8_matrix.data(), quantised.data(), quantised.size());
  return d;
}

// ---- searches ----------------------------------------------------------------------

// Rows scored per kernel call: the scores stay in L1/L2 for the top-k pass.
constexpr std::size_t rows_per_batch = 2048;

/// Scratch buffers of one searching thread.
struct scratch {
  std::vector<float> scores = std::vector<float>(rows_per_batch);
  std::vector<float> norms = std::vector<float>(rows_per_batch);
  std::vector<std::int32_t> int_scores = std::vector<std::int32_t>(rows_per_batch);
  std::vector<std::int8_t> quantised_query;
};

enum class search_kind { f32_dot, f32_cosine, i8_dot };

const char* name_of(search_kind kind) {
  switch (kind) {
    case search_kind::f32_dot: return "f32 dot";
    case search_kind::f32_cosine: return "f32 cosine (dot + norms)";
    case search_kind::i8_dot: return "i8 dot";
  }
  return "";
}

/// Scores rows [first, last) against `query` and offers them to `best`.
void search_rows(const dataset& d, search_kind kind, std::span<const float> query, std::size_t first,
                 std::size_t last, instruction_set isa, scratch& s, vector::top_k<std::uint32_t>& best) {
  std::span<const std::int8_t> quantised_query;
  if (kind == search_kind::i8_dot) {
    s.quantised_query.resize(d.dim);
    vector::quantize_query_i8(query, s.quantised_query);
    quantised_query = s.quantised_query;
  }
  for (std::size_t start = first; start < last; start += rows_per_batch) {
    const std::size_t n = std::min(rows_per_batch, last - start);
    switch (kind) {
      case search_kind::f32_dot:
        vector::dot_f32_rows(query, d.f32_matrix.data() + start * d.dim * 4, n, s.scores.data(), nullptr, isa);
        break;
      case search_kind::f32_cosine:
        vector::dot_f32_rows(query, d.f32_matrix.data() + start * d.dim * 4, n, s.scores.data(), s.norms.data(),
                             isa);
        for (std::size_t i = 0; i < n; ++i) s.scores[i] /= std::sqrt(s.norms[i]);
        break;
      case search_kind::i8_dot:
        // The query and matrix scales are positive constants: ranking by the
        // integer dot is ranking by the dequantised one.
        vector::dot_i8_rows(quantised_query, d.i8_matrix.data() + start * d.dim, n, s.int_scores.data(), nullptr,
                            isa);
        for (std::size_t i = 0; i < n; ++i) s.scores[i] = static_cast<float>(s.int_scores[i]);
        break;
    }
    best.push_scores(std::span<const float>(s.scores.data(), n), static_cast<std::uint32_t>(start));
  }
}

std::span<const float> query_of(const dataset& d, std::size_t q) { return {d.queries.data() + q * d.dim, d.dim}; }

// ---- timing ----------------------------------------------------------------------

/// Per-query times of one figure.
struct latency {
  double p50_ms = 0.0;
  double p90_ms = 0.0;
  double cpu_p50_ms = 0.0;  ///< CPU time of the measuring thread
};

double percentile_ms(std::vector<double>& seconds, double fraction) {
  if (seconds.empty()) return 0.0;
  std::sort(seconds.begin(), seconds.end());
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(seconds.size())));
  return seconds[std::min(std::max<std::size_t>(rank, 1), seconds.size()) - 1] * 1e3;
}

struct search_figures {
  latency time;
  std::vector<hit_list> results;  ///< per query
};

/// Runs search(q) for every query twice: once untimed (warming caches and
/// pages), then timed.
template <class Search>
search_figures time_queries(std::size_t query_count, Search&& search) {
  search_figures figures;
  std::vector<double> wall, cpu;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t q = 0; q < query_count; ++q) {
      const auto start = bench_clock::now();
      const double cpu_start = thread_cpu_seconds();
      hit_list hits = search(q);
      if (pass == 0) continue;
      cpu.push_back(thread_cpu_seconds() - cpu_start);
      wall.push_back(seconds_since(start));
      figures.results.push_back(std::move(hits));
    }
  }
  figures.time = {percentile_ms(wall, 0.5), percentile_ms(wall, 0.9), percentile_ms(cpu, 0.5)};
  return figures;
}

search_figures measure_search(const dataset& d, search_kind kind, instruction_set isa, std::size_t query_count) {
  scratch s;
  return time_queries(query_count, [&](std::size_t q) {
    vector::top_k<std::uint32_t> best(k);
    search_rows(d, kind, query_of(d, q), 0, d.rows, isa, s, best);
    return best.take_sorted();
  });
}

/// The same search with the rows split between this thread and one worker.
search_figures measure_two_threads(const dataset& d, search_kind kind, instruction_set isa,
                                   std::size_t query_count) {
  const std::size_t middle = d.rows / 2;
  std::size_t current_query = 0;
  bool stop = false;
  vector::top_k<std::uint32_t> worker_best(k);
  std::barrier sync(2);
  std::thread worker([&] {
    scratch s;
    for (;;) {
      sync.arrive_and_wait();  // a query (or stop) is posted
      if (stop) return;
      search_rows(d, kind, query_of(d, current_query), middle, d.rows, isa, s, worker_best);
      sync.arrive_and_wait();  // its half is done
    }
  });
  scratch s;
  search_figures figures = time_queries(query_count, [&](std::size_t q) {
    current_query = q;
    sync.arrive_and_wait();
    vector::top_k<std::uint32_t> best(k);
    search_rows(d, kind, query_of(d, q), 0, middle, isa, s, best);
    sync.arrive_and_wait();
    for (const auto& hit : worker_best.take_sorted()) best.push(hit.score, hit.payload);
    return best.take_sorted();
  });
  stop = true;
  sync.arrive_and_wait();
  worker.join();
  return figures;
}

/// Sums every 8-byte word (and the tail bytes): a sequential read of `bytes`;
/// the sum keeps the loads from being optimised away. Several partial sums
/// keep the adds off the critical path.
std::uint64_t sum_words_portable(std::span<const std::byte> bytes) noexcept {
  constexpr std::size_t lanes = 8;
  std::uint64_t sums[lanes] = {};
  std::size_t i = 0;
  for (; lanes * 8 <= bytes.size() - i; i += lanes * 8) {
    for (std::size_t l = 0; l < lanes; ++l) sums[l] += agentctx::load_u64(bytes.data() + i + l * 8);
  }
  std::uint64_t total = 0;
  for (std::uint64_t s : sums) total += s;
  for (; i < bytes.size(); ++i) total += static_cast<std::uint8_t>(bytes[i]);
  return total;
}

#if AGENTCTX_VECTOR_X86
// The same read with 32- and 64-byte loads, four independent adds per step.
__attribute__((target("avx2"))) std::uint64_t sum_words_avx2(std::span<const std::byte> bytes) noexcept {
  __m256i sums[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                     _mm256_setzero_si256()};
  std::size_t i = 0;
  for (; 128 <= bytes.size() - i; i += 128) {
    for (std::size_t l = 0; l < 4; ++l) {
      __m256i v;
      std::memcpy(&v, bytes.data() + i + l * 32, sizeof v);
      sums[l] = _mm256_add_epi64(sums[l], v);
    }
  }
  const __m256i total = _mm256_add_epi64(_mm256_add_epi64(sums[0], sums[1]), _mm256_add_epi64(sums[2], sums[3]));
  std::uint64_t lanes[4];
  std::memcpy(lanes, &total, sizeof lanes);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + sum_words_portable(bytes.subspan(i));
}

__attribute__((target("avx512f"))) std::uint64_t sum_words_avx512(std::span<const std::byte> bytes) noexcept {
  __m512i sums[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                     _mm512_setzero_si512()};
  std::size_t i = 0;
  for (; 256 <= bytes.size() - i; i += 256) {
    for (std::size_t l = 0; l < 4; ++l) sums[l] = _mm512_add_epi64(sums[l], _mm512_loadu_si512(bytes.data() + i + l * 64));
  }
  const __m512i total = _mm512_add_epi64(_mm512_add_epi64(sums[0], sums[1]), _mm512_add_epi64(sums[2], sums[3]));
  std::uint64_t lanes[8];
  std::memcpy(lanes, &total, sizeof lanes);
  std::uint64_t sum = 0;
  for (std::uint64_t lane : lanes) sum += lane;
  return sum + sum_words_portable(bytes.subspan(i));
}
#endif

std::uint64_t sum_words(std::span<const std::byte> bytes, instruction_set isa) noexcept {
#if AGENTCTX_VECTOR_X86
  if (isa == instruction_set::avx512) return sum_words_avx512(bytes);
  if (isa == instruction_set::avx2) return sum_words_avx2(bytes);
#endif
  (void)isa;
  return sum_words_portable(bytes);
}

volatile std::uint64_t read_sink = 0;

/// The memory floor: one sequential read of `bytes` per query, with the
/// fastest way this CPU has (the instruction set with the lowest p50: wide
/// loads from an unaligned address can lose to narrower ones).
latency measure_floor(std::span<const std::byte> bytes, std::size_t query_count) {
  std::optional<latency> fastest;
  for (const instruction_set isa : {instruction_set::portable, instruction_set::avx2, instruction_set::avx512}) {
    if (!vector::is_supported(isa)) continue;
    const latency t = time_queries(query_count, [&](std::size_t) {
                        read_sink = read_sink + sum_words(bytes, isa);
                        return hit_list{};
                      }).time;
    if (!fastest || t.p50_ms < fastest->p50_ms) fastest = t;
  }
  return *fastest;
}

/// Mean fraction of `exact`'s hits (per query) that `found` also returned.
double recall(const std::vector<hit_list>& found, const std::vector<hit_list>& exact) {
  double total = 0.0;
  for (std::size_t q = 0; q < exact.size(); ++q) {
    std::size_t matched = 0;
    for (const auto& hit : exact[q]) {
      for (const auto& candidate : found[q]) matched += candidate.payload == hit.payload ? 1 : 0;
    }
    total += exact[q].empty() ? 1.0 : static_cast<double>(matched) / static_cast<double>(exact[q].size());
  }
  return exact.empty() ? 1.0 : total / static_cast<double>(exact.size());
}

#if AGENTCTX_BENCH_HAVE_FAISS
search_figures measure_faiss(const dataset& d, std::size_t query_count) {
  faiss::IndexFlatIP index(static_cast<faiss::Index::idx_t>(d.dim));
  index.add(static_cast<faiss::Index::idx_t>(d.rows), d.values.data());
  std::vector<float> distances(k);
  std::vector<faiss::Index::idx_t> labels(k);
  return time_queries(query_count, [&](std::size_t q) {
    index.search(1, query_of(d, q).data(), static_cast<faiss::Index::idx_t>(k), distances.data(), labels.data());
    hit_list hits;
    for (std::size_t i = 0; i < k; ++i) {
      if (labels[i] >= 0) hits.push_back({distances[i], static_cast<std::uint32_t>(labels[i])});
    }
    return hits;
  });
}
#endif

// ---- the library's layer search, end to end -------------------------------------------

/// Writes the data set as a base layer (one chunk per row) at `path`.
agentctx::result<void> write_bench_layer(const dataset& d, agentctx::agdb::element_type type,
                                         const std::string& path) {
  namespace agdb = agentctx::agdb;
  agdb::layer_contents layer;
  layer.chunks.resize(d.rows);
  for (std::size_t r = 0; r < d.rows; ++r) {
    agdb::chunk& c = layer.chunks[r];
    c.id = static_cast<std::uint32_t>(r + 1);
    c.kind = "canonical";
    c.content = "row " + std::to_string(r);
    c.author = "human";
  }
  layer.embeddings.dim = static_cast<std::uint32_t>(d.dim);
  layer.embeddings.type = type;
  if (type == agdb::element_type::i8) {
    layer.embeddings.quant_scale = d.i8_scale;
    layer.embeddings.i8_values = agdb::quantize_i8(d.values, d.i8_scale);
  } else {
    layer.embeddings.f32_values = d.values;
  }
  return agdb::write_layer(agentctx::io::default_file_system(), path, layer);
}

/// layer_searcher::search over the layer at `path`; hits carry row indices.
std::optional<search_figures> measure_layer_search(const std::string& path, const dataset& d, unsigned threads) {
  namespace agdb = agentctx::agdb;
  auto stack = agdb::layer_stack::open(agentctx::io::default_file_system(), {{agdb::layer_id::base, path, true}});
  if (!stack) {
    std::fprintf(stderr, "vector_search_bench: %s\n", stack.error().describe().c_str());
    return std::nullopt;
  }
  agdb::layer_searcher searcher(*stack);
  bool failed = false;
  search_figures figures = time_queries(d.queries.size() / d.dim, [&](std::size_t q) {
    agdb::search_request request;
    request.query_vector = query_of(d, q);
    request.k = k;
    request.threads = threads;
    auto hits = searcher.search(request);
    hit_list out;
    if (!hits) {
      failed = true;
      return out;
    }
    for (const agdb::search_hit& hit : *hits) {
      out.push_back({static_cast<float>(hit.score), static_cast<std::uint32_t>(hit.chunk_index)});
    }
    return out;
  });
  if (failed) {
    std::fputs("vector_search_bench: a layer search failed\n", stderr);
    return std::nullopt;
  }
  return figures;
}

// ---- report ------------------------------------------------------------------------


void print_row(const std::string& figure, latency t, const std::string& note) {
  std::printf("  %-44s %8.3f %8.3f %8.3f   %s\n", figure.c_str(), t.p50_ms, t.p90_ms, t.cpu_p50_ms, note.c_str());
}


std::string isa_name(instruction_set isa) { return std::string(vector::to_string(isa)); }

/// The name of what the kernels really run when asked for `isa` on the rows:
/// "avx512", "avx512 (runs avx2: rows not 64-byte aligned)", or
/// "avx512 (256-bit VNNI: rows not 64-byte aligned)".
std::string kernel_name(instruction_set isa, vector::kernel_choice used) {
  if (used.isa != isa) return isa_name(isa) + " (runs " + isa_name(used.isa) + ": rows not 64-byte aligned)";
  if (used.isa == instruction_set::avx512 && used.vector_bits != 512) {
    return isa_name(isa) + " (256-bit VNNI: rows not 64-byte aligned)";
  }
  return isa_name(isa);
}


void print_machine_note() {
  if (!optimised_build()) {
    std::puts("note: this build is not optimised (no -O with NDEBUG): figures are not representative");
  }
  double load[1] = {0.0};
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (::getloadavg(load, 1) == 1) {
    std::printf("machine: %ld CPUs, load average %.2f%s; instruction sets: detected %s, best %s%s\n", cpus, load[0],
                load[0] > 0.5 ? " (not idle: figures include waiting for a CPU)" : "",
                isa_name(vector::detected_instruction_set()).c_str(), isa_name(vector::best_instruction_set()).c_str(),
                std::getenv("AGENTCTX_ISA") != nullptr ? " (AGENTCTX_ISA is set)" : "");
  }
}

std::vector<instruction_set> runnable_instruction_sets() {
  std::vector<instruction_set> out;
  for (instruction_set isa : {instruction_set::portable, instruction_set::avx2, instruction_set::avx512}) {
    if (vector::is_supported(isa)) out.push_back(isa);
  }
  return out;
}

int run(const options& o) {
  std::printf("vector_search_bench: %zu rows x %zu dims, %zu queries, top %zu, matrices at 64-byte boundary + %zu%s\n",
              o.rows, o.dim, o.queries, k, o.offset, o.small ? " (--small: a smoke test)" : "");
  print_machine_note();
  std::fflush(stdout);
  const auto generate_start = bench_clock::now();
  dataset d = make_dataset(o);
  std::printf("data: f32 %.1f MB, i8 %.1f MB (matrix scale %.3g), generated in %.2f s\n\n",
              static_cast<double>(d.f32_matrix.size()) / 1e6, static_cast<double>(d.i8_matrix.size()) / 1e6,
              static_cast<double>(d.i8_scale), seconds_since(generate_start));
  std::printf("  %-44s %8s %8s %8s   %s\n", "per query (ms)", "p50", "p90", "CPU p50", "note");
  std::fflush(stdout);

  const instruction_set best = vector::best_instruction_set();
  const latency f32_floor = measure_floor(d.f32_matrix.bytes(), o.queries);
  print_row("memory floor, f32 bytes (sequential read)", f32_floor,
            format("%.1f GB/s", static_cast<double>(d.f32_matrix.size()) / f32_floor.p50_ms / 1e6));
  const latency i8_floor = measure_floor(d.i8_matrix.bytes(), o.queries);
  print_row("memory floor, i8 bytes (sequential read)", i8_floor,
            format("%.1f GB/s", static_cast<double>(d.i8_matrix.size()) / i8_floor.p50_ms / 1e6));

  const search_figures f32_best = measure_search(d, search_kind::f32_dot, best, o.queries);
  print_row("f32 dot + top-10, " + kernel_name(best, vector::f32_kernel_for_rows(best, d.f32_matrix.data())) + " (best)", f32_best.time,
            format("%.2fx floor", f32_best.time.p50_ms / f32_floor.p50_ms));
  const std::vector<hit_list>& exact = f32_best.results;
  for (instruction_set isa : runnable_instruction_sets()) {
    if (isa == best) continue;
    const search_figures f = measure_search(d, search_kind::f32_dot, isa, o.queries);
    print_row("f32 dot + top-10, " + kernel_name(isa, vector::f32_kernel_for_rows(isa, d.f32_matrix.data())), f.time,
              format("%.2fx floor", f.time.p50_ms / f32_floor.p50_ms) +
                  format(", recall@10 vs best %.3f", recall(f.results, exact)));
  }
  const search_figures cosine = measure_search(d, search_kind::f32_cosine, best, o.queries);
  print_row("f32 cosine (dot + norms) + top-10, " + kernel_name(best, vector::f32_kernel_for_rows(best, d.f32_matrix.data())), cosine.time,
            format("%.2fx floor", cosine.time.p50_ms / f32_floor.p50_ms) +
                format(", recall@10 vs dot %.3f (rows are unit length)", recall(cosine.results, exact)));

  search_figures i8_best;
  for (instruction_set isa : runnable_instruction_sets()) {
    search_figures f = measure_search(d, search_kind::i8_dot, isa, o.queries);
    print_row("i8 dot + top-10, " + kernel_name(isa, vector::i8_kernel_for_rows(isa, d.i8_matrix.data())) + (isa == best ? " (best)" : ""), f.time,
              format("%.2fx i8 floor", f.time.p50_ms / i8_floor.p50_ms) +
                  format(", recall@10 vs exact f32 %.3f", recall(f.results, exact)));
    if (isa == best) i8_best = std::move(f);
  }
  const double i8_recall = recall(i8_best.results, exact);

  if (::sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
    for (search_kind kind : {search_kind::f32_dot, search_kind::i8_dot}) {
      const search_figures f = measure_two_threads(d, kind, best, o.queries);
      print_row(std::string(name_of(kind)) + " + top-10, " + isa_name(best) + ", 2 threads", f.time,
                format("recall@10 vs exact f32 %.3f", recall(f.results, exact)));
    }
  } else {
    std::puts("  2 threads: skipped (1 CPU)");
  }

  std::optional<latency> faiss_time;
#if AGENTCTX_BENCH_HAVE_FAISS
  {
    const search_figures f = measure_faiss(d, o.queries);
    faiss_time = f.time;
    print_row("FAISS IndexFlatIP, 1 query per search", f.time,
              format("recall@10 vs ours %.3f", recall(f.results, exact)));
  }
#else
  std::puts("  FAISS: not available (the bench was built without it)");
#endif

  std::puts("\nthe library's layer search (AGDB files, mmap, layer_searcher::search, cosine):");
  std::optional<latency> layer_f32_time;
  bool layer_search_failed = false;
  {
    auto dir = scratch_directory::create("vector_search_bench");
    namespace agdb = agentctx::agdb;
    for (const agdb::element_type type : {agdb::element_type::f32, agdb::element_type::i8}) {
      const bool is_f32 = type == agdb::element_type::f32;
      if (!dir || !write_bench_layer(d, type, dir->file(is_f32 ? "f32.db" : "i8.db"))) {
        std::puts("  could not write the layer files under $TMPDIR");
        layer_search_failed = true;
        break;
      }
      for (const unsigned threads : {1u, 2u}) {
        if (threads > 1 && ::sysconf(_SC_NPROCESSORS_ONLN) < 2) continue;
        const std::optional<search_figures> f = measure_layer_search(dir->file(is_f32 ? "f32.db" : "i8.db"), d, threads);
        if (!f) {
          layer_search_failed = true;
          break;
        }
        if (is_f32 && threads == 1) layer_f32_time = f->time;
        const latency& floor = is_f32 ? f32_floor : i8_floor;
        print_row(std::string(is_f32 ? "f32" : "i8") + " layer search, " + std::to_string(threads) + " thread" +
                      (threads > 1 ? "s" : ""),
                  f->time,
                  format(is_f32 ? "%.2fx f32 floor" : "%.2fx i8 floor", f->time.p50_ms / floor.p50_ms) +
                      format(", recall@10 vs exact f32 %.3f", recall(f->results, exact)));
      }
    }
  }

  std::puts("\ngoals:");
  const double floor_ratio = f32_best.time.p50_ms / f32_floor.p50_ms;
  std::printf("  f32 dot p50 %.3f ms <= %.1fx memory floor %.3f ms: %.2fx  %s\n", f32_best.time.p50_ms,
              f32_floor_goal_ratio, f32_floor.p50_ms, floor_ratio, verdict(floor_ratio <= f32_floor_goal_ratio));
  const double i8_speedup = f32_best.time.p50_ms / i8_best.time.p50_ms;
  std::printf("  i8 dot %.2fx faster than f32 (goal >= %.1fx), recall@10 %.3f (goal >= %.2f)  %s\n", i8_speedup,
              i8_speedup_goal, i8_recall, i8_recall_goal,
              verdict(i8_speedup >= i8_speedup_goal && i8_recall >= i8_recall_goal));
  if (faiss_time) {
    const double faiss_speedup = faiss_time->p50_ms / f32_best.time.p50_ms;
    std::printf("  f32 dot %.1fx faster than FAISS single query (goal >= %.0fx)  %s\n", faiss_speedup,
                faiss_speedup_goal, verdict(faiss_speedup >= faiss_speedup_goal));
  } else {
    std::puts("  faster than FAISS: not measured (FAISS not available)");
  }

  if (layer_f32_time) {
    const double ratio = layer_f32_time->p50_ms / f32_floor.p50_ms;
    std::printf("  f32 layer search (what the API runs) p50 %.3f ms: %.2fx memory floor (goal <= %.1fx)  %s\n",
                layer_f32_time->p50_ms, ratio, f32_floor_goal_ratio, verdict(ratio <= f32_floor_goal_ratio));
  }

  std::puts("\nparts:");
  if (d.f32_matrix.offset() != 0) {
    const double offset = static_cast<double>(d.f32_matrix.offset());
    d.f32_matrix.move_to(0);
    d.i8_matrix.move_to(0);
    const auto aligned_rows = [&](const char* type, const placed_bytes& matrix, search_kind kind,
                                  const latency& unaligned) {
      const latency floor = measure_floor(matrix.bytes(), o.queries);
      const search_figures aligned = measure_search(d, kind, best, o.queries);
      print_row(std::string("memory floor, ") + type + ", 64-byte aligned", floor, "");
      print_row(std::string(type) + " dot + top-10, " + isa_name(best) + ", 64-byte aligned", aligned.time,
                format("%.2fx aligned floor", aligned.time.p50_ms / floor.p50_ms) +
                    format("; the +%.0f offset costs ", offset) +
                    format("%.2fx", unaligned.p50_ms / aligned.time.p50_ms));
    };
    aligned_rows("f32", d.f32_matrix, search_kind::f32_dot, f32_best.time);
    aligned_rows("i8", d.i8_matrix, search_kind::i8_dot, i8_best.time);
  }
  std::printf("  timings include the top-10 selection; every query runs once untimed first; "
              "percentiles of %zu queries\n",
              o.queries);
  return layer_search_failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  const std::optional<options> o = parse_options(argc, argv, exit_code);
  if (!o) return exit_code;
  return run(*o);
}
