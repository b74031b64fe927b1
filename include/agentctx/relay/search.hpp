// agentctx/relay/search.hpp: pull mode=relevant (seed 001 section 8.2), and
// the similarity snippets of orchestrate, by the hybrid ranking AGDB search
// uses: the embedder's vectors ranked by cosine similarity (vector kernels of
// agentctx/vector), the texts ranked by BM25 (agdb/lexical_scorer.hpp), the
// two fused by reciprocal rank (agdb/rank_fusion.hpp).
//
// A package's searchable text is its title, description, decisions_made,
// open_questions, handoff_note and content_md, one per line. Quarantined
// packages are never candidates. Vectors are computed per query through the
// embedder (wrap it in agdb::caching_embedder to keep them across calls and
// processes; the relay CLI does, in the store's folder).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/lexical_scorer.hpp"
#include "agentctx/agdb/rank_fusion.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/relay/store.hpp"
#include "agentctx/vector/similarity_kernels.hpp"
#include "agentctx/vector/top_k.hpp"

namespace agentctx::relay {

struct relevant_hit {
  const stored_package* package = nullptr;  ///< valid until the store's next write or refresh
  double score = 0.0;                       ///< fused reciprocal-rank score
  double vector_score = 0.0;                ///< cosine similarity with the query
  double lexical_score = 0.0;               ///< BM25 (0 when no query term occurs)
};

/// The text of a package that search ranks.
inline std::string searchable_text(const package& p) {
  std::string text = p.title;
  const auto line = [&text](std::string_view part) {
    if (part.empty()) return;
    text += '\n';
    text += part;
  };
  line(p.description);
  for (const std::string& d : p.decisions_made) line(d);
  for (const std::string& q : p.open_questions) line(q);
  line(p.handoff_note);
  line(p.content_md);
  return text;
}

/// The `limit` packages most relevant to `query` among `candidates`, best
/// first (equal scores: the earlier deposit first); fewer, or none, when fewer
/// are related to it at all: a package is a candidate when its vector's cosine
/// with the query's is above 0 or it holds a query term. Errors:
/// invalid_argument for an empty query or a limit of 0; the embedder's errors.
inline result<std::vector<relevant_hit>> rank_relevant(std::span<const stored_package* const> candidates,
                                                      std::string_view query, std::size_t limit,
                                                      agdb::embedder& embedder) {
  if (query.empty()) return fail(errc::invalid_argument, "a relevant pull needs a query");
  if (limit == 0) return fail(errc::invalid_argument, "limit must be at least 1");
  std::vector<const stored_package*> live;
  for (const stored_package* p : candidates) {
    if (!p->quarantined) live.push_back(p);
  }
  std::vector<relevant_hit> hits;
  if (live.empty()) return hits;

  std::vector<std::string> texts;
  texts.reserve(live.size() + 1);
  for (const stored_package* p : live) texts.push_back(searchable_text(p->package));
  texts.emplace_back(query);
  std::vector<std::string_view> views(texts.begin(), texts.end());
  const std::uint32_t dim = embedder.profile().dim;
  std::vector<float> vectors(views.size() * dim);
  AGENTCTX_TRY(embedder.embed(views, vectors));

  // Vector ranking: cosine of each package row with the query row.
  const std::span<const float> query_vector(vectors.data() + live.size() * dim, dim);
  float query_norm = 0.0f;
  for (float v : query_vector) query_norm += v * v;
  query_norm = std::sqrt(query_norm);
  std::vector<float> dots(live.size());
  std::vector<float> norms(live.size());
  vector::dot_f32_rows(query_vector, reinterpret_cast<const std::byte*>(vectors.data()), live.size(), dots.data(),
                       norms.data());
  std::vector<double> cosine(live.size());
  const std::size_t pool = agdb::hybrid_pool(limit);
  vector::top_k<std::uint32_t> vector_best(pool);
  for (std::size_t i = 0; i < live.size(); ++i) {
    const float denominator = std::sqrt(norms[i]) * query_norm;
    cosine[i] = denominator > 0.0f ? dots[i] / denominator : 0.0;
    // A package no closer to the query than an unrelated one (cosine <= 0)
    // is not "semantically related" (section 8.2): it does not enter the
    // vector ranking, and only its query terms can bring it in.
    if (cosine[i] > 0.0) vector_best.push(static_cast<float>(cosine[i]), static_cast<std::uint32_t>(i));
  }

  // Lexical ranking over the same texts.
  agdb::bm25_query lexical(query);
  std::vector<double> bm25(live.size(), 0.0);
  vector::top_k<std::uint32_t> lexical_best(pool);
  if (!lexical.empty()) {
    const std::size_t terms = lexical.terms().size();
    std::vector<std::uint32_t> frequencies(live.size() * terms);
    std::vector<std::uint32_t> lengths(live.size());
    for (std::size_t i = 0; i < live.size(); ++i) {
      lengths[i] = lexical.add_document(views[i], std::span(frequencies).subspan(i * terms, terms));
    }
    for (std::size_t i = 0; i < live.size(); ++i) {
      const auto counts = std::span<const std::uint32_t>(frequencies).subspan(i * terms, terms);
      bool any = false;
      for (std::uint32_t f : counts) any = any || f != 0;
      if (!any) continue;
      bm25[i] = lexical.score(counts, lengths[i]);
      lexical_best.push(static_cast<float>(bm25[i]), static_cast<std::uint32_t>(i));
    }
  }

  std::vector<std::uint32_t> vector_ranking;
  for (const auto& item : vector_best.take_sorted()) vector_ranking.push_back(item.payload);
  std::vector<std::uint32_t> lexical_ranking;
  for (const auto& item : lexical_best.take_sorted()) lexical_ranking.push_back(item.payload);
  for (const auto& [i, score] : agdb::fuse_rankings<std::uint32_t>(vector_ranking, lexical_ranking, limit)) {
    hits.push_back({live[i], score, cosine[i], bm25[i]});
  }
  return hits;
}

/// pull mode=relevant over one project (every project when project_id is
/// empty). Errors: not_found for an unknown project; those of rank_relevant.
inline result<std::vector<relevant_hit>> pull_relevant(const store& s, const std::string& project_id,
                                                      std::string_view query, std::size_t limit,
                                                      agdb::embedder& embedder) {
  std::vector<const stored_package*> candidates;
  if (project_id.empty()) {
    for (const project* p : s.projects()) {
      auto all = s.packages_of(p->project_id);
      if (all) candidates.insert(candidates.end(), all->begin(), all->end());
    }
  } else {
    auto all = s.packages_of(project_id);
    if (!all) return unexpected(std::move(all).error());
    candidates = std::move(*all);
  }
  return rank_relevant(candidates, query, limit, embedder);
}

}  // namespace agentctx::relay
