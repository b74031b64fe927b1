// Tests of agentctx/core/line_diff.hpp: known scripts, shortest length on
// random inputs (against an LCS table), and the give-up path.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "agentctx/core/line_diff.hpp"

namespace core_line_diff_test {

using agentctx::diff_lines;
using agentctx::line_edit;
using agentctx::split_lines;

namespace {

// The two texts an edit script describes, each line ended by '\n'.
std::pair<std::string, std::string> apply(const std::vector<line_edit>& edits) {
  std::string before, after;
  for (const line_edit& e : edits) {
    if (e.kind != line_edit::add) (before += e.line) += '\n';
    if (e.kind != line_edit::remove) (after += e.line) += '\n';
  }
  return {before, after};
}

std::size_t lcs_length(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::vector<std::vector<std::size_t>> t(a.size() + 1, std::vector<std::size_t>(b.size() + 1, 0));
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

}  // namespace

TEST_CASE("split_lines: a trailing newline ends the last line, \\r stays") {
  CHECK(split_lines("").empty());
  CHECK(split_lines("a") == std::vector<std::string_view>{"a"});
  CHECK(split_lines("a\n") == std::vector<std::string_view>{"a"});
  CHECK(split_lines("a\n\nb\r\n") == std::vector<std::string_view>{"a", "", "b\r"});
}

TEST_CASE("diff_lines: known scripts") {
  CHECK(diff_lines("a\nb\nc\n", "a\nc\nd\n") ==
        std::vector<line_edit>{{line_edit::keep, "a"}, {line_edit::remove, "b"}, {line_edit::keep, "c"},
                               {line_edit::add, "d"}});
  CHECK(diff_lines("", "") == std::vector<line_edit>{});
  CHECK(diff_lines("", "x\ny") == std::vector<line_edit>{{line_edit::add, "x"}, {line_edit::add, "y"}});
  CHECK(diff_lines("x\ny", "") == std::vector<line_edit>{{line_edit::remove, "x"}, {line_edit::remove, "y"}});
  CHECK(diff_lines("same\n", "same") == std::vector<line_edit>{{line_edit::keep, "same"}});
}

TEST_CASE("diff_lines: shortest scripts that reproduce both texts, on random inputs") {
  std::mt19937 rng(20261123);
  for (int round = 0; round < 3000; ++round) {
    CAPTURE(round);
    std::string a, b;
    const int na = static_cast<int>(rng() % 12), nb = static_cast<int>(rng() % 12);
    for (int i = 0; i < na; ++i) (a += static_cast<char>('a' + rng() % 4)) += '\n';
    for (int i = 0; i < nb; ++i) (b += static_cast<char>('a' + rng() % 4)) += '\n';
    const std::vector<line_edit> edits = diff_lines(a, b);
    CHECK(apply(edits) == std::pair{a, b});
    const auto changed = static_cast<std::size_t>(
        std::count_if(edits.begin(), edits.end(), [](const line_edit& e) { return e.kind != line_edit::keep; }));
    const std::size_t lcs = lcs_length(split_lines(a), split_lines(b));
    CHECK(changed == static_cast<std::size_t>(na + nb) - 2 * lcs);
  }
}

TEST_CASE("diff_lines: past max_edits the texts are reported as replaced, still a correct script") {
  const std::string a = "1\n2\n3\n4\n", b = "5\n6\n7\n8\n";
  const std::vector<line_edit> edits = diff_lines(a, b, 3);
  CHECK(apply(edits) == std::pair{a, b});
  CHECK(edits.size() == 8);
  CHECK(edits.front() == line_edit{line_edit::remove, "1"});
  CHECK(edits.back() == line_edit{line_edit::add, "8"});
}

}  // namespace core_line_diff_test
