// agentctx/core/line_diff.hpp: a line diff of two texts (Myers' O(ND)
// algorithm), for showing how one version of a chunk differs from another.
//
//   diff_lines("a\nb\nc\n", "a\nc\nd\n") ==
//     {{keep, "a"}, {remove, "b"}, {keep, "c"}, {add, "d"}}
//
// Lines are split by split_lines (core/lines.hpp: a trailing newline does
// not make an empty last line; "\r" stays part of its line). The edit
// script is a shortest one. The views point into the two input texts. Cost:
// O((N + M) * D) time and O(D * max_edits) memory, where D is the number of
// differing lines; past `max_edits` edits the diff gives up and reports the
// whole texts as replaced (one removal per old line, one addition per new
// line), which is still a correct script.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "agentctx/core/lines.hpp"

namespace agentctx {

struct line_edit {
  enum kind_t : char { keep = ' ', remove = '-', add = '+' };
  kind_t kind = keep;
  std::string_view line;
  friend bool operator==(const line_edit&, const line_edit&) = default;
};

inline std::vector<line_edit> diff_lines(std::string_view before, std::string_view after,
                                         std::size_t max_edits = 512) {
  const std::vector<std::string_view> a = split_lines(before);
  const std::vector<std::string_view> b = split_lines(after);
  const auto n = static_cast<std::ptrdiff_t>(a.size());
  const auto m = static_cast<std::ptrdiff_t>(b.size());
  const std::ptrdiff_t limit = std::min<std::ptrdiff_t>(n + m, static_cast<std::ptrdiff_t>(max_edits));
  const std::ptrdiff_t offset = limit + 1;

  // v[k + offset]: the furthest x on diagonal k; one snapshot per edit count.
  std::vector<std::ptrdiff_t> v(static_cast<std::size_t>(2 * offset + 1), 0);
  std::vector<std::vector<std::ptrdiff_t>> trace;
  std::ptrdiff_t found = -1;
  for (std::ptrdiff_t d = 0; d <= limit && found < 0; ++d) {
    for (std::ptrdiff_t k = -d; k <= d; k += 2) {
      const auto at = [&](std::ptrdiff_t diagonal) -> std::ptrdiff_t& {
        return v[static_cast<std::size_t>(diagonal + offset)];
      };
      std::ptrdiff_t x = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? at(k + 1) : at(k - 1) + 1;
      std::ptrdiff_t y = x - k;
      while (x < n && y < m && a[static_cast<std::size_t>(x)] == b[static_cast<std::size_t>(y)]) {
        ++x;
        ++y;
      }
      at(k) = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.push_back(v);
  }

  std::vector<line_edit> edits;
  if (found < 0) {  // too different: everything replaced
    for (const std::string_view line : a) edits.push_back({line_edit::remove, line});
    for (const std::string_view line : b) edits.push_back({line_edit::add, line});
    return edits;
  }
  // Walk back from (n, m) through the snapshots.
  std::ptrdiff_t x = n, y = m;
  for (std::ptrdiff_t d = found; d > 0; --d) {
    const std::vector<std::ptrdiff_t>& previous = trace[static_cast<std::size_t>(d - 1)];
    const auto prev = [&](std::ptrdiff_t diagonal) { return previous[static_cast<std::size_t>(diagonal + offset)]; };
    const std::ptrdiff_t k = x - y;
    const bool down = k == -d || (k != d && prev(k - 1) < prev(k + 1));
    const std::ptrdiff_t prev_k = down ? k + 1 : k - 1;
    const std::ptrdiff_t prev_x = prev(prev_k);
    const std::ptrdiff_t prev_y = prev_x - prev_k;
    while (x > prev_x + (down ? 0 : 1) && y > prev_y + (down ? 1 : 0)) {
      edits.push_back({line_edit::keep, a[static_cast<std::size_t>(--x)]});
      --y;
    }
    if (down) {
      edits.push_back({line_edit::add, b[static_cast<std::size_t>(--y)]});
    } else {
      edits.push_back({line_edit::remove, a[static_cast<std::size_t>(--x)]});
    }
  }
  while (x > 0 && y > 0) {
    edits.push_back({line_edit::keep, a[static_cast<std::size_t>(--x)]});
    --y;
  }
  return {edits.rbegin(), edits.rend()};
}

}  // namespace agentctx
