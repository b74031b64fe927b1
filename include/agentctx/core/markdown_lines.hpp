// agentctx/core/markdown_lines.hpp: how markdown reads a single line, for
// the modules that treat markdown files as lines (agent memory, the context
// loader's truncation within sections).
#pragma once

#include <cstddef>
#include <string_view>

namespace agentctx {

/// True for a line markdown reads as an ATX heading: up to three spaces,
/// one to six '#', then a space, a tab or the end of the line.
inline bool is_atx_heading(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  std::size_t hashes = 0;
  while (i + hashes < line.size() && line[i + hashes] == '#') ++hashes;
  if (hashes == 0 || hashes > 6) return false;
  const std::size_t after = i + hashes;
  return after == line.size() || line[after] == ' ' || line[after] == '\t';
}

/// The fence of a line that opens or closes a fenced code block: three or
/// more '`' or '~' after up to three spaces; empty otherwise.
inline std::string_view code_fence(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i == line.size() || (line[i] != '`' && line[i] != '~')) return {};
  std::size_t n = 0;
  while (i + n < line.size() && line[i + n] == line[i]) ++n;
  return n >= 3 ? line.substr(i, n) : std::string_view{};
}

/// True when `fence` closes a block that `open` opened: the same character,
/// at least as long.
inline bool closes_fence(std::string_view open, std::string_view fence) {
  return !fence.empty() && fence.front() == open.front() && fence.size() >= open.size();
}

}  // namespace agentctx
