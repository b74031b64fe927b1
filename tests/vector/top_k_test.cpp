#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "agentctx/vector/top_k.hpp"

namespace vector_top_k_test {

namespace {

using agentctx::vector::scored;
using agentctx::vector::top_k;

constexpr float not_a_number = std::numeric_limits<float>::quiet_NaN();
constexpr float infinity = std::numeric_limits<float>::infinity();

/// The expected selection: sort everything (NaN left out), keep k.
std::vector<scored<std::uint32_t>> full_sort_reference(const std::vector<float>& scores, std::size_t k) {
  std::vector<scored<std::uint32_t>> all;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!std::isnan(scores[i])) all.push_back({scores[i], static_cast<std::uint32_t>(i)});
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.score != b.score ? a.score > b.score : a.payload < b.payload;
  });
  if (all.size() > k) all.resize(k);
  return all;
}

std::vector<scored<std::uint32_t>> select(const std::vector<float>& scores, std::size_t k) {
  top_k<std::uint32_t> best(k);
  for (std::size_t i = 0; i < scores.size(); ++i) best.push(scores[i], static_cast<std::uint32_t>(i));
  return best.take_sorted();
}

std::uint64_t next_random(std::uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 33;
}

}  // namespace

TEST_CASE("top_k matches a full sort, including ties, NaN, k = 0 and k > n") {
  struct row {
    const char* name;
    std::vector<float> scores;
  };
  std::uint64_t state = 7;
  std::vector<float> many(1000), coarse(1000), with_nan(1000);
  for (float& s : many) s = static_cast<float>(next_random(state) % 100000) / 7.0f;
  for (float& s : coarse) s = static_cast<float>(next_random(state) % 5);  // many equal scores
  for (std::size_t i = 0; i < with_nan.size(); ++i) {
    with_nan[i] = i % 3 == 0 ? not_a_number : static_cast<float>(next_random(state) % 50) - 25.0f;
  }
  const std::vector<row> rows = {
      {"empty", {}},
      {"random", many},
      {"coarse scores, ties broken by payload", coarse},
      {"a third NaN", with_nan},
      {"only NaN", {not_a_number, not_a_number, not_a_number}},
      {"infinities and signed zeros", {0.0f, -infinity, infinity, -0.0f, 1.0f, -infinity, not_a_number, infinity}},
      {"descending", {5, 4, 3, 2, 1}},
      {"ascending", {1, 2, 3, 4, 5}},
  };
  for (const row& r : rows) {
    for (std::size_t k : {0, 1, 2, 3, 10, 100, 2000}) {
      CAPTURE(std::string(r.name));
      CAPTURE(k);
      const auto got = select(r.scores, k);
      const auto expected = full_sort_reference(r.scores, k);
      REQUIRE(got.size() == expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i].score == expected[i].score);
        CHECK(got[i].payload == expected[i].payload);
      }
    }
  }
}

TEST_CASE("top_k: the result does not depend on the order of pushes") {
  std::vector<scored<std::uint32_t>> items;
  for (std::uint32_t p = 0; p < 40; ++p) items.push_back({static_cast<float>(p % 4), p});
  std::uint64_t state = 11;
  std::vector<scored<std::uint32_t>> first;
  for (int round = 0; round < 20; ++round) {
    for (std::size_t i = items.size() - 1; i > 0; --i) std::swap(items[i], items[next_random(state) % (i + 1)]);
    top_k<std::uint32_t> best(7);
    for (const auto& item : items) best.push(item.score, item.payload);
    const auto got = best.take_sorted();
    if (round == 0) first = got;
    CHECK(got == first);
  }
  // Score 3 is held by payloads 3, 7, 11, ...; the seven smallest win.
  REQUIRE(first.size() == 7);
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(first[i].score == 3.0f);
    CHECK(first[i].payload == 3 + 4 * i);
  }
}

TEST_CASE("top_k threshold") {
  top_k<int> zero(0);
  CHECK(zero.threshold() == infinity);
  zero.push(infinity, 1);
  CHECK(zero.empty());

  top_k<int> best(2);
  CHECK(best.threshold() == -infinity);
  best.push(1.0f, 10);
  CHECK(best.threshold() == -infinity);
  best.push(3.0f, 30);
  CHECK(best.threshold() == 1.0f);
  best.push(2.0f, 20);
  CHECK(best.threshold() == 2.0f);
  best.push(2.0f, 25);  // equal score, larger payload: rejected
  best.push(2.0f, 15);  // equal score, smaller payload: enters
  CHECK(best.threshold() == 2.0f);
  const auto got = best.take_sorted();
  CHECK(got == std::vector<scored<int>>{{3.0f, 30}, {2.0f, 15}});
  CHECK(best.empty());
  CHECK(best.capacity() == 2);
  CHECK(best.threshold() == -infinity);
  best.push(-1.0f, 1);  // reusable after take_sorted
  CHECK(best.take_sorted() == std::vector<scored<int>>{{-1.0f, 1}});
}

TEST_CASE("top_k push_scores: the fast path selects like push and builds payloads only for candidates") {
  std::vector<float> scores(500);
  std::uint64_t state = 5;
  for (float& s : scores) s = static_cast<float>(next_random(state) % 1000);
  scores[17] = not_a_number;

  top_k<std::uint32_t> by_first_payload(10);
  by_first_payload.push_scores(std::span<const float>(scores).subspan(0, 250), 0u);
  by_first_payload.push_scores(std::span<const float>(scores).subspan(250), 250u);
  CHECK(by_first_payload.take_sorted() == full_sort_reference(scores, 10));

  top_k<std::uint32_t> by_callable(10);
  std::size_t payloads_built = 0;
  by_callable.push_scores(scores, [&](std::size_t i) {
    ++payloads_built;
    return static_cast<std::uint32_t>(i);
  });
  CHECK(by_callable.take_sorted() == full_sort_reference(scores, 10));
  CHECK(payloads_built >= 10);
  CHECK(payloads_built < 100);  // most of 500 random scores fall below the threshold
}

TEST_CASE("top_k with a non-integral payload") {
  top_k<std::string> best(2);
  best.push(1.0f, "b");
  best.push(1.0f, "a");
  best.push(1.0f, "c");
  best.push(0.5f, "0");
  const auto got = best.take_sorted();
  REQUIRE(got.size() == 2);
  CHECK(got[0].payload == "a");
  CHECK(got[1].payload == "b");

  // A payload_of that returns a reference to stored payloads.
  const std::vector<std::string> names = {"x", "y", "z"};
  const std::vector<float> scores = {2.0f, 3.0f, 1.0f};
  best.push_scores(scores, [&](std::size_t i) -> const std::string& { return names[i]; });
  CHECK(best.take_sorted() == std::vector<scored<std::string>>{{3.0f, "y"}, {2.0f, "x"}});
}

}  // namespace vector_top_k_test
