// agentctx/core/lines.hpp: walking the lines of text: line_cursor for
// NDJSON (blank lines skipped), split_lines for markdown (every line).
//
//   line_cursor lines(text);
//   std::string_view line;
//   while (lines.next(line)) use(lines.number(), line);   // numbers from 1
//
// Lines end at '\n' (a '\r' before it stays part of the line); lines holding
// only spaces, tabs and '\r' are skipped, but counted, so numbers match what
// an editor shows.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace agentctx {

class line_cursor {
 public:
  explicit line_cursor(std::string_view text) noexcept : text_(text) {}

  /// The next line that is not blank; false at the end.
  bool next(std::string_view& line) noexcept {
    while (start_ < text_.size()) {
      std::size_t end = text_.find('\n', start_);
      if (end == std::string_view::npos) end = text_.size();
      line = text_.substr(start_, end - start_);
      start_ = end + 1;
      ++number_;
      if (line.find_first_not_of(" \t\r") != std::string_view::npos) return true;
    }
    return false;
  }

  /// The number of the line next() returned last, from 1.
  std::size_t number() const noexcept { return number_; }

 private:
  std::string_view text_;
  std::size_t start_ = 0;
  std::size_t number_ = 0;
};

/// Every line of `text`, blank ones too, without its '\n' (a '\r' before it
/// stays). A final '\n' ends the last line: "a\nb\n" is {"a", "b"}, and
/// "a\n\n" is {"a", ""}.
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace agentctx
