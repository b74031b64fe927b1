// agentctx/agdb/layer_search.hpp: brute-force search over a layer stack.
//
// A `layer_searcher` answers seed 000 section 10.1 queries over the layers of
// a layer_stack: it scores every row of every selected layer against a query
// vector with the SIMD kernels of agentctx/vector (f32 and i8 rows; i8 rows
// are compared with an i8-quantised query and rescaled), keeps the chunks in
// effect (override, tombstones: layer_stack.hpp) that pass the kind filter,
// and selects the best k with a bounded top-k. Nothing is sorted in full and
// nothing is copied out of the mapped files until the k results are known.
//
// Scores: cosine similarity (default) or dot product of the dequantised
// vectors. A row of zeros has cosine 0. Ties are broken by layer precedence
// (higher first), then by chunk order in the file, so results are
// deterministic.
//
// Hybrid mode fuses the vector ranking with a BM25 ranking of the contents
// (lexical_scorer.hpp) by reciprocal rank fusion: each candidate scores
// sum 1 / (60 + rank) over the two rankings (ranks from 1, equal scores
// sharing one; each ranking holds its best max(4k, 100) chunks). Both rankings are computed over the same
// chunks in effect, so fusion can never bring back a copy a higher layer
// overrides.
//
// Thread-safety: search() may be called from several threads at once; the
// searcher caches row norms per layer and the visibility per layer set.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/lexical_scorer.hpp"
#include "agentctx/agdb/rank_fusion.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/vector/similarity_kernels.hpp"
#include "agentctx/vector/top_k.hpp"

namespace agentctx::agdb {

enum class similarity_metric { cosine, dot };
enum class search_mode { vector, hybrid };

/// "cosine"/"dot", "vector"/"hybrid".
constexpr std::string_view metric_name(similarity_metric metric) noexcept {
  return metric == similarity_metric::cosine ? "cosine" : "dot";
}
constexpr std::string_view mode_name(search_mode mode) noexcept {
  return mode == search_mode::vector ? "vector" : "hybrid";
}

/// Which kinds a search returns. By default every kind except the reserved
/// ones: "options", "tombstone" and every "meta.*" kind, which are records
/// about the store rather than context. A filter names kinds exactly; the
/// entry "meta.*" matches every kind that starts with "meta.". Naming a
/// reserved kind returns it.
class kind_filter {
 public:
  kind_filter() = default;
  explicit kind_filter(std::vector<std::string> kinds) : kinds_(std::move(kinds)) {}

  static bool is_reserved(std::string_view kind) noexcept {
    return kind == "options" || kind == layer_stack::tombstone_kind || kind.starts_with("meta.");
  }
  bool accepts(std::string_view kind) const noexcept {
    if (kinds_.empty()) return !is_reserved(kind);
    for (const std::string& wanted : kinds_) {
      if (wanted == kind) return true;
      if (wanted == "meta.*" && kind.starts_with("meta.")) return true;
    }
    return false;
  }
  const std::vector<std::string>& kinds() const noexcept { return kinds_; }

 private:
  std::vector<std::string> kinds_;
};

struct search_request {
  static constexpr std::size_t max_k = 10000;

  /// The query embedding: stack.dim() finite values. Required in both modes.
  std::span<const float> query_vector;
  /// The query text; hybrid mode ranks contents against it.
  std::string_view query_text;
  std::size_t k = 10;
  kind_filter kinds;
  layer_set layers = layer_set::all();
  search_mode mode = search_mode::vector;
  similarity_metric metric = similarity_metric::cosine;
  /// Threads to score one layer with (1 = the calling thread only). Layers
  /// of fewer than 2^20 values are always scored on the calling thread.
  unsigned threads = 1;
};

struct search_hit {
  layer_id layer = layer_id::base;
  std::size_t chunk_index = 0;  ///< index in that layer's chunk table
  chunk_view chunk;             ///< views into the layer file: valid while the stack lives
  std::vector<source_ref> sources;
  /// The ranking score: the vector score in vector mode, the fused RRF score
  /// in hybrid mode.
  double score = 0.0;
  double vector_score = 0.0;                 ///< cosine or dot with the query
  std::optional<double> lexical_score;       ///< BM25; hybrid mode only
  std::vector<overridden_copy> conflicts;    ///< lower copies with other content
};

class layer_searcher {
 public:
  /// Borrows `stack`, which must outlive the searcher.
  explicit layer_searcher(const layer_stack& stack) : stack_(&stack), norms_(stack.layers().size()) {}

  /// Runs one query. Errors: invalid_argument when k is 0 or above max_k, the
  /// query vector's length is not stack.dim() or it holds a non-finite value,
  /// or hybrid mode has no query text; not_found when no selected layer is
  /// present; the readers' data errors (with path and offset) for damaged
  /// strings or relationships met on the way.
  result<std::vector<search_hit>> search(const search_request& request) const;

 private:
  using payload = std::uint64_t;  // layer index << 32 | chunk index
  static payload pack(std::size_t layer_index, std::size_t chunk_index) noexcept {
    return (std::uint64_t{layer_index} << 32) | chunk_index;
  }

  result<std::shared_ptr<const std::vector<layer_visibility>>> visibility_for(layer_set selected) const;
  void score_layer(std::size_t layer_index, std::span<const float> query, float query_norm,
                   similarity_metric metric, unsigned threads, std::vector<float>& scores) const;

  const layer_stack* stack_;
  mutable std::mutex mutex_;
  mutable std::map<std::uint8_t, std::shared_ptr<const std::vector<layer_visibility>>> visibility_;
  // 1/|row| per row (0 for a zero row), computed by the first cosine query.
  mutable std::vector<std::shared_ptr<const std::vector<float>>> norms_;
};

// ---- implementation ---------------------------------------------------------

namespace detail {

inline constexpr std::size_t parallel_threshold_values = std::size_t{1} << 20;

// Runs body(begin, end) over [0, count) split in `parts` contiguous ranges,
// the first on the calling thread.
template <class Body>
void split_rows(std::size_t count, unsigned parts, Body&& body) {
  if (parts <= 1 || count < 2) {
    body(std::size_t{0}, count);
    return;
  }
  std::vector<std::thread> workers;
  const std::size_t step = (count + parts - 1) / parts;
  for (std::size_t begin = step; begin < count; begin += step) {
    workers.emplace_back([&body, begin, end = std::min(count, begin + step)] { body(begin, end); });
  }
  body(0, std::min(count, step));
  for (auto& worker : workers) worker.join();
}

}  // namespace detail

inline result<std::shared_ptr<const std::vector<layer_visibility>>> layer_searcher::visibility_for(
    layer_set selected) const {
  {
    std::lock_guard lock(mutex_);
    if (auto found = visibility_.find(selected.bits()); found != visibility_.end()) return found->second;
  }
  auto computed = stack_->visibility(selected);
  if (!computed) return unexpected(std::move(computed).error());
  auto shared = std::make_shared<const std::vector<layer_visibility>>(std::move(*computed));
  std::lock_guard lock(mutex_);
  return visibility_.try_emplace(selected.bits(), std::move(shared)).first->second;
}

// Fills scores[row] with the similarity of every row of the layer.
inline void layer_searcher::score_layer(std::size_t layer_index, std::span<const float> query, float query_norm,
                                        similarity_metric metric, unsigned threads,
                                        std::vector<float>& scores) const {
  const layer_reader& reader = stack_->layers()[layer_index].reader;
  const embedding_matrix_header& matrix = reader.embedding_header();
  const std::size_t rows = static_cast<std::size_t>(matrix.row_count);
  const std::uint32_t dim = matrix.dim;
  const std::byte* data = reader.bytes().data() + matrix.data_offset;
  scores.resize(rows);
  if (rows == 0) return;

  std::shared_ptr<const std::vector<float>> inverse_norms;
  if (metric == similarity_metric::cosine) {
    std::lock_guard lock(mutex_);
    inverse_norms = norms_[layer_index];
  }
  const bool need_norms = metric == similarity_metric::cosine && !inverse_norms;
  std::vector<float> fresh_norms(need_norms ? rows : 0);
  const unsigned parts =
      (threads > 1 && rows * std::size_t{dim} >= detail::parallel_threshold_values) ? threads : 1u;

  if (matrix.element_type == static_cast<std::uint32_t>(element_type::i8)) {
    std::vector<std::int8_t> quantized(dim);
    const float query_scale = vector::quantize_query_i8(query, quantized);
    std::vector<std::int32_t> dots(rows);
    std::vector<std::int32_t> squared(need_norms ? rows : 0);
    detail::split_rows(rows, parts, [&](std::size_t begin, std::size_t end) {
      vector::dot_i8_rows(quantized, data + begin * dim, end - begin, dots.data() + begin,
                          need_norms ? squared.data() + begin : nullptr);
    });
    const float scale = query_scale * matrix.quant_scale;
    for (std::size_t r = 0; r < rows; ++r) scores[r] = static_cast<float>(dots[r]) * scale;
    if (need_norms) {
      for (std::size_t r = 0; r < rows; ++r) {
        const float norm = std::sqrt(static_cast<float>(squared[r])) * matrix.quant_scale;
        fresh_norms[r] = norm > 0.0f ? 1.0f / norm : 0.0f;
      }
    }
  } else {
    const std::size_t stride = std::size_t{dim} * 4;
    detail::split_rows(rows, parts, [&](std::size_t begin, std::size_t end) {
      vector::dot_f32_rows(query, data + begin * stride, end - begin, scores.data() + begin,
                           need_norms ? fresh_norms.data() + begin : nullptr);
    });
    if (need_norms) {
      for (float& norm : fresh_norms) norm = norm > 0.0f ? 1.0f / std::sqrt(norm) : 0.0f;
    }
  }

  if (metric == similarity_metric::dot) return;
  if (need_norms) {
    auto shared = std::make_shared<const std::vector<float>>(std::move(fresh_norms));
    std::lock_guard lock(mutex_);
    if (!norms_[layer_index]) norms_[layer_index] = shared;
    inverse_norms = norms_[layer_index];
  }
  const float inverse_query = query_norm > 0.0f ? 1.0f / query_norm : 0.0f;
  const std::vector<float>& inverse = *inverse_norms;
  for (std::size_t r = 0; r < rows; ++r) scores[r] *= inverse[r] * inverse_query;
}

inline result<std::vector<search_hit>> layer_searcher::search(const search_request& request) const {
  const layer_stack& stack = *stack_;
  if (request.k == 0 || request.k > search_request::max_k) {
    return fail(errc::invalid_argument,
                "k must be between 1 and " + std::to_string(search_request::max_k) + ", not " +
                    std::to_string(request.k));
  }
  const layer_set selected = stack.present(request.layers);
  if (selected.empty()) return fail(errc::not_found, "none of the selected layers is present");
  if (request.query_vector.size() != stack.dim()) {
    return fail(errc::invalid_argument, "the query vector has " + std::to_string(request.query_vector.size()) +
                                            " values but the layers have " + std::to_string(stack.dim()) +
                                            " dimensions");
  }
  float query_norm_squared = 0.0f;
  for (const float v : request.query_vector) {
    if (!std::isfinite(v)) return fail(errc::invalid_argument, "the query vector holds a non-finite value");
    query_norm_squared += v * v;
  }
  const bool hybrid = request.mode == search_mode::hybrid;
  if (hybrid && request.query_text.empty()) {
    return fail(errc::invalid_argument, "hybrid search needs the query text");
  }

  auto visibility = visibility_for(selected);
  if (!visibility) return unexpected(std::move(visibility).error());
  const std::vector<layer_visibility>& visible = **visibility;

  // Kinds allowed per layer, as a flag per kind index.
  const std::size_t layer_count = stack.layers().size();
  std::vector<std::vector<char>> kind_allowed(layer_count);
  for (std::size_t l = 0; l < layer_count; ++l) {
    for (const std::string_view kind : stack.kinds(l)) kind_allowed[l].push_back(request.kinds.accepts(kind));
  }
  const auto eligible = [&](std::size_t l, std::size_t i) {
    return visible[l].visible(i) && kind_allowed[l][stack.kind_index(l, i)];
  };

  // Vector ranking.
  const std::size_t pool = hybrid ? hybrid_pool(request.k) : request.k;
  vector::top_k<payload> vector_best(pool);
  std::vector<std::vector<float>> layer_scores(layer_count);
  const float query_norm = std::sqrt(query_norm_squared);
  for (std::size_t l = 0; l < layer_count; ++l) {
    if (!selected.contains(stack.layers()[l].id) || visible[l].visible_count() == 0) continue;
    score_layer(l, request.query_vector, query_norm, request.metric, std::max(1u, request.threads), layer_scores[l]);
    const std::vector<float>& scores = layer_scores[l];
    const std::vector<std::uint64_t>& words = visible[l].words();
    for (std::size_t w = 0; w < words.size(); ++w) {
      for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
        const std::size_t i = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        if (!kind_allowed[l][stack.kind_index(l, i)]) continue;
        vector_best.push(scores[stack.row_index(l, i)], pack(l, i));
      }
    }
  }

  struct ranked {
    payload id;
    double score;
    std::optional<double> lexical;
  };
  std::vector<ranked> final_order;
  if (!hybrid) {
    for (const auto& item : vector_best.take_sorted()) final_order.push_back({item.payload, item.score, {}});
  } else {
    // Lexical ranking over the same eligible chunks.
    bm25_query lexical(request.query_text);
    struct lexical_document {
      payload id;
      std::uint32_t length;
      std::size_t frequencies_at;
    };
    std::vector<lexical_document> matches;
    std::vector<std::uint32_t> frequencies;
    std::vector<std::uint32_t> scratch(lexical.terms().size());
    for (std::size_t l = 0; l < layer_count && !lexical.empty(); ++l) {
      if (!selected.contains(stack.layers()[l].id)) continue;
      const layer_reader& reader = stack.layers()[l].reader;
      for (std::size_t i = 0; i < reader.chunk_count(); ++i) {
        if (!eligible(l, i)) continue;
        auto content = reader.string(reader.record(i).content_str_id);
        if (!content) {
          error e = std::move(content).error();
          e.offset = reader.record_offset(i) + 8;
          return unexpected(std::move(e));
        }
        const std::uint32_t length = lexical.add_document(*content, scratch);
        bool any = false;
        for (const std::uint32_t f : scratch) any = any || f != 0;
        if (!any) continue;
        matches.push_back({pack(l, i), length, frequencies.size()});
        frequencies.insert(frequencies.end(), scratch.begin(), scratch.end());
      }
    }
    vector::top_k<payload> lexical_best(pool);
    // One score per match, in the matches' order, which is increasing id
    // order (layers, then chunks, ascending): the fused hits find theirs by
    // binary search.
    std::vector<double> lexical_scores;
    lexical_scores.reserve(matches.size());
    const bm25_query::scorer scorer = lexical.scoring();
    for (const lexical_document& doc : matches) {
      const double score =
          scorer.score(std::span(frequencies).subspan(doc.frequencies_at, lexical.terms().size()), doc.length);
      lexical_scores.push_back(score);
      lexical_best.push(static_cast<float>(score), doc.id);
    }
    const auto lexical_score_of = [&](payload id) {
      const auto at = std::lower_bound(matches.begin(), matches.end(), id,
                                       [](const lexical_document& doc, payload wanted) { return doc.id < wanted; });
      return at != matches.end() && at->id == id ? lexical_scores[static_cast<std::size_t>(at - matches.begin())] : 0.0;
    };
    const std::vector<vector::scored<payload>> vector_ranking = vector_best.take_sorted();
    const std::vector<vector::scored<payload>> lexical_ranking = lexical_best.take_sorted();
    std::vector<ranked> all;
    for (const auto& [id, score] : fuse_rankings<payload>(vector_ranking, lexical_ranking, request.k)) {
      all.push_back({id, score, lexical_score_of(id)});
    }
    final_order = std::move(all);
  }

  std::vector<search_hit> hits;
  hits.reserve(final_order.size());
  for (const ranked& item : final_order) {
    const std::size_t l = static_cast<std::size_t>(item.id >> 32);
    const std::size_t i = static_cast<std::size_t>(item.id & 0xFFFFFFFFu);
    const layer_reader& reader = stack.layers()[l].reader;
    search_hit hit;
    hit.layer = stack.layers()[l].id;
    hit.chunk_index = i;
    auto chunk = reader.chunk(i);
    if (!chunk) return unexpected(std::move(chunk).error());
    hit.chunk = *chunk;
    auto sources = reader.sources(*chunk);
    if (!sources) return unexpected(std::move(sources).error());
    hit.sources = std::move(*sources);
    hit.vector_score = layer_scores[l][stack.row_index(l, i)];
    hit.score = hybrid ? item.score : hit.vector_score;
    hit.lexical_score = item.lexical;
    auto conflicts = stack.conflicts(l, i, selected);
    if (!conflicts) return unexpected(std::move(conflicts).error());
    hit.conflicts = std::move(*conflicts);
    hits.push_back(std::move(hit));
  }
  return hits;
}

}  // namespace agentctx::agdb
