// agdb/rank_fusion.hpp: reciprocal rank fusion, ties shared.
#include "agentctx/agdb/rank_fusion.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "agentctx/vector/top_k.hpp"

namespace agdb_rank_fusion_test {

namespace agdb = agentctx::agdb;
using scored = agentctx::vector::scored<std::uint32_t>;

double rrf(double rank) { return 1.0 / (agdb::reciprocal_rank_constant + rank); }

TEST_CASE("each candidate scores 1 / (60 + rank) per ranking that holds it, best first") {
  const std::vector<scored> vector_ranking = {{0.9f, 7}, {0.5f, 3}, {0.1f, 1}};
  const std::vector<scored> lexical_ranking = {{4.0f, 3}, {2.0f, 9}};
  const auto fused = agdb::fuse_rankings<std::uint32_t>(vector_ranking, lexical_ranking, 10);
  REQUIRE(fused.size() == 4);
  CHECK(fused[0].id == 3);
  CHECK(fused[0].score == rrf(2) + rrf(1));
  CHECK(fused[1].id == 7);
  CHECK(fused[1].score == rrf(1));
  CHECK(fused[2].id == 9);
  CHECK(fused[2].score == rrf(2));
  CHECK(fused[3].id == 1);
  CHECK(fused[3].score == rrf(3));
  CHECK(agdb::fuse_rankings<std::uint32_t>(vector_ranking, lexical_ranking, 2).size() == 2);
}

TEST_CASE("candidates of equal score share a rank: tied in both rankings, they fuse to equal scores") {
  // 5, 2 and 8 are tied in both rankings (as identical texts are); 4 follows
  // the tie, ranked after the three of it (competition ranking: 1, 1, 1, 4).
  const std::vector<scored> vector_ranking = {{0.7f, 2}, {0.7f, 5}, {0.7f, 8}, {0.2f, 4}};
  const std::vector<scored> lexical_ranking = {{1.5f, 2}, {1.5f, 5}, {1.5f, 8}};
  const auto fused = agdb::fuse_rankings<std::uint32_t>(vector_ranking, lexical_ranking, 10);
  REQUIRE(fused.size() == 4);
  // Equal fused scores: ascending id, whatever order the rankings listed them in.
  CHECK(fused[0].id == 2);
  CHECK(fused[1].id == 5);
  CHECK(fused[2].id == 8);
  for (int i = 0; i < 3; ++i) CHECK(fused[static_cast<std::size_t>(i)].score == 2 * rrf(1));
  CHECK(fused[3].id == 4);
  CHECK(fused[3].score == rrf(4));

  // A tie in one ranking only is broken by the other.
  const std::vector<scored> broken = {{3.0f, 8}, {1.0f, 2}, {1.0f, 5}};
  const auto by_lexical = agdb::fuse_rankings<std::uint32_t>(vector_ranking, broken, 10);
  CHECK(by_lexical[0].id == 8);
  CHECK(by_lexical[0].score == rrf(1) + rrf(1));
  CHECK(by_lexical[1].id == 2);
  CHECK(by_lexical[1].score == rrf(1) + rrf(2));
  CHECK(by_lexical[2].id == 5);
  CHECK(by_lexical[2].score == by_lexical[1].score);
}

}  // namespace agdb_rank_fusion_test
