// agentctx/agdb/rank_fusion.hpp: reciprocal rank fusion, the step of hybrid
// search that merges a vector ranking and a lexical (BM25) ranking.
//
// Each candidate scores sum over the rankings that hold it of
// 1 / (60 + rank), ranks counted from 1 (Cormack, Clarke and Buettcher,
// SIGIR 2009). Items of equal score share a rank, that of the first of them
// (1, 2, 2, 4): candidates tied in both rankings fuse to equal scores, and the
// order of a tie is left to the fused ranking's own rule, not to where each
// ranking happened to put them. Each ranking holds its best hybrid_pool(k)
// candidates. Used by AGDB's layer_searcher and by Relay's pull
// mode=relevant, so both rank the same way.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <span>
#include <vector>

#include "agentctx/vector/top_k.hpp"

namespace agentctx::agdb {

inline constexpr double reciprocal_rank_constant = 60.0;

/// How many candidates each ranking keeps for a fused top k.
constexpr std::size_t hybrid_pool(std::size_t k) noexcept { return std::max<std::size_t>(4 * k, 100); }

template <class Id>
struct fused_candidate {
  Id id;
  double score = 0.0;
};

/// Fuses two best-first rankings of scored candidates (as
/// vector::top_k::take_sorted returns them; equal scores share a rank);
/// returns at most `k` candidates, best first, equal fused scores in
/// ascending id order (deterministic).
template <class Id>
std::vector<fused_candidate<Id>> fuse_rankings(std::span<const vector::scored<Id>> first,
                                               std::span<const vector::scored<Id>> second, std::size_t k) {
  std::map<Id, double> fused;
  for (const std::span<const vector::scored<Id>> ranking : {first, second}) {
    std::size_t rank = 0;
    for (std::size_t i = 0; i < ranking.size(); ++i) {
      if (i == 0 || ranking[i].score != ranking[i - 1].score) rank = i + 1;
      fused[ranking[i].payload] += 1.0 / (reciprocal_rank_constant + static_cast<double>(rank));
    }
  }
  std::vector<fused_candidate<Id>> out;
  out.reserve(fused.size());
  for (const auto& [id, score] : fused) out.push_back({id, score});
  std::sort(out.begin(), out.end(), [](const fused_candidate<Id>& a, const fused_candidate<Id>& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace agentctx::agdb
