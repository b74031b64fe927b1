// agentctx/context/excerpt.hpp: how the context loader (seed 003) shortens
// long files, always saying so in the text itself and in the counts it
// returns:
//
//   elide_middle        notes: past `threshold_lines`, keep the first
//                       `head_lines` and the last `tail_lines` with one
//                       marker line between them naming how many lines were
//                       elided and how to read them (the seed's rule: 50,
//                       10 and 30 by default);
//   truncate_sections   taste: past `max_lines`, keep every heading and cut
//                       the bodies of the longest sections (fair shares of
//                       the lines left), each cut body ending in a marker;
//   cut_to_budget       any text: the whole lines from the start that fit a
//                       byte and token budget, and a marker.
//
// Lines are '\n'-separated; a final newline does not start another line.
// Marker lines start with "[... " and end with " ...]".
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/lines.hpp"
#include "agentctx/core/markdown_lines.hpp"
#include "agentctx/core/token_estimate.hpp"

namespace agentctx::context {

/// A text as shown, and what was left out of it.
struct excerpt {
  std::string text;
  std::size_t full_length_lines = 0;  ///< lines of the whole text
  std::size_t elided_lines = 0;       ///< lines not shown
  bool summarized() const noexcept { return elided_lines > 0; }
};

struct notes_policy {
  std::size_t threshold_lines = 50;  ///< longer texts are elided
  std::size_t head_lines = 10;
  std::size_t tail_lines = 30;
};

namespace detail {

inline std::string joined_lines(const std::vector<std::string_view>& lines, std::size_t begin, std::size_t end) {
  std::string out;
  for (std::size_t i = begin; i < end; ++i) {
    out.append(lines[i]);
    out += '\n';
  }
  return out;
}

}  // namespace detail

/// The notes rule. `how_to_read` completes the marker: "[... N lines
/// elided; full notes: <how_to_read> ...]".
inline excerpt elide_middle(std::string_view text, const notes_policy& policy, std::string_view how_to_read) {
  const std::vector<std::string_view> lines = split_lines(text);
  excerpt out;
  out.full_length_lines = lines.size();
  // Compared one part at a time: head + tail may not fit in a size_t.
  if (lines.size() <= policy.threshold_lines || policy.head_lines >= lines.size() ||
      policy.tail_lines >= lines.size() - policy.head_lines ||
      lines.size() - policy.head_lines - policy.tail_lines <= 1) {
    out.text = std::string(text);
    return out;
  }
  out.elided_lines = lines.size() - policy.head_lines - policy.tail_lines;
  out.text = detail::joined_lines(lines, 0, policy.head_lines);
  out.text += "[... " + std::to_string(out.elided_lines) + " lines elided; full notes: " + std::string(how_to_read) +
              " ...]\n";
  out.text += detail::joined_lines(lines, lines.size() - policy.tail_lines, lines.size());
  return out;
}

struct taste_policy {
  std::size_t max_lines = 80;          ///< longer texts are truncated within sections
  std::size_t min_section_lines = 3;   ///< a cut body keeps at least this many lines (marker included)
};

/// The line indexes of the section headings of a markdown text: ATX
/// headings ("# " to "###### ") outside fenced code blocks.
inline std::vector<std::size_t> section_heading_lines(const std::vector<std::string_view>& lines) {
  std::vector<std::size_t> out;
  std::string_view open;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view fence = code_fence(lines[i]);
    if (!open.empty()) {
      if (closes_fence(open, fence)) open = {};
    } else if (!fence.empty()) {
      open = fence;
    } else if (is_atx_heading(lines[i])) {
      out.push_back(i);
    }
  }
  return out;
}

/// The taste rule: section headings (section_heading_lines) all stay, in
/// order; the lines before the first heading count as one more body. Bodies that
/// fit a fair share of the lines left stay whole; the others keep their
/// first lines and end with "[... N lines of this section elided; full
/// text: <how_to_read> ...]"; a code fence the kept lines leave open is
/// closed before the marker.
inline excerpt truncate_sections(std::string_view text, const taste_policy& policy, std::string_view how_to_read) {
  const std::vector<std::string_view> lines = split_lines(text);
  excerpt out;
  out.full_length_lines = lines.size();
  if (lines.size() <= policy.max_lines) {
    out.text = std::string(text);
    return out;
  }
  struct block {
    std::size_t heading = std::string_view::npos;  // line index of its heading, npos for the preamble
    std::size_t begin = 0, end = 0;                // its body lines
    std::size_t allowance = 0;
  };
  std::vector<block> blocks{{std::string_view::npos, 0, 0, 0}};
  const std::vector<std::size_t> heading_lines = section_heading_lines(lines);
  const std::size_t headings = heading_lines.size();
  std::size_t next_heading = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (next_heading < headings && heading_lines[next_heading] == i) {
      ++next_heading;
      blocks.back().end = i;
      blocks.push_back({i, i + 1, i + 1, 0});
    } else {
      blocks.back().end = i + 1;
    }
  }
  // Fair shares: bodies at most the share stay whole, and what they leave
  // over is shared among the others, until every body is whole or capped.
  std::size_t available = policy.max_lines > headings ? policy.max_lines - headings : 0;
  std::vector<block*> open;
  for (block& b : blocks) open.push_back(&b);
  std::sort(open.begin(), open.end(), [](const block* a, const block* b) { return a->end - a->begin < b->end - b->begin; });
  std::size_t index = 0;
  while (index < open.size()) {
    const std::size_t share = available / (open.size() - index);
    block& b = *open[index];
    const std::size_t size = b.end - b.begin;
    if (size > share) break;
    b.allowance = size;
    available -= size;
    ++index;
  }
  for (; index < open.size(); ++index) {
    const std::size_t share = std::max(policy.min_section_lines, available / (open.size() - index));
    open[index]->allowance = share;
    available -= std::min(available, share);
  }
  for (const block& b : blocks) {
    if (b.heading != std::string_view::npos) {
      out.text.append(lines[b.heading]);
      out.text += '\n';
    }
    const std::size_t size = b.end - b.begin;
    if (size <= b.allowance) {
      out.text += detail::joined_lines(lines, b.begin, b.end);
      continue;
    }
    const std::size_t kept = b.allowance > 0 ? b.allowance - 1 : 0;
    out.text += detail::joined_lines(lines, b.begin, b.begin + kept);
    std::string_view open;
    for (std::size_t i = b.begin; i < b.begin + kept; ++i) {
      const std::string_view fence = code_fence(lines[i]);
      if (open.empty()) {
        open = fence;
      } else if (closes_fence(open, fence)) {
        open = {};
      }
    }
    if (!open.empty()) {  // close it, so that the marker and the next heading read as markdown
      out.text.append(open);
      out.text += '\n';
    }
    const std::size_t elided = size - kept;
    out.elided_lines += elided;
    out.text += "[... " + std::to_string(elided) + " lines of this section elided; full text: " +
                std::string(how_to_read) + " ...]\n";
  }
  return out;
}

/// The cost of a text under a budget.
struct text_cost {
  std::size_t bytes = 0;
  std::size_t tokens = 0;
};

inline text_cost cost_of(std::string_view text) noexcept { return {text.size(), estimate_tokens(text)}; }

/// The whole lines from the start of `text` that fit `bytes` and `tokens`
/// together with the marker "[... N more lines not shown (budget); <how_to_read> ...]";
/// the text itself when it fits. `full_length_lines` and `elided_lines`
/// count `text`'s lines.
inline excerpt cut_to_budget(std::string_view text, text_cost budget, std::string_view how_to_read) {
  const std::vector<std::string_view> lines = split_lines(text);
  excerpt out;
  out.full_length_lines = lines.size();
  const text_cost whole = cost_of(text);
  if (whole.bytes <= budget.bytes && whole.tokens <= budget.tokens) {
    out.text = std::string(text);
    return out;
  }
  const auto marker = [&](std::size_t more) {
    return "[... " + std::to_string(more) + " more lines not shown (budget); " + std::string(how_to_read) + " ...]\n";
  };
  std::size_t kept = 0;
  text_cost used = cost_of(marker(lines.size()));
  for (; kept < lines.size(); ++kept) {
    const text_cost line = cost_of(lines[kept]);
    if (used.bytes + line.bytes + 1 > budget.bytes || used.tokens + line.tokens > budget.tokens) break;
    used.bytes += line.bytes + 1;
    used.tokens += line.tokens;
  }
  out.elided_lines = lines.size() - kept;
  if (used.bytes > budget.bytes || used.tokens > budget.tokens) return out;  // not even the marker fits
  out.text = detail::joined_lines(lines, 0, kept) + marker(out.elided_lines);
  return out;
}

}  // namespace agentctx::context
