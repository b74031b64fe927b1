// agentctx/mcp/line_reader.hpp: splits a byte stream into lines of bounded
// length (the framing of MCP's stdio transport: one JSON-RPC message per
// line, separated by '\n').
//
//   line_reader lines(1 << 20);
//   lines.feed(bytes, [&](const line_reader::line& l) {
//     if (l.oversized) answer_too_long(l.size); else handle(l.text);
//     return true;  // false stops the feed
//   });
//   lines.finish(same_callback);  // at end of input: a last line without '\n'
//
// A line longer than max_line_bytes is never held in memory: once it passes
// the limit, its bytes are counted and dropped up to the next '\n', and it
// is reported as oversized with its full size. So memory stays bounded by
// the limit whatever the input, and the line after it is read normally.
//
// Line texts exclude the '\n' (a '\r' before it is kept: the consumer
// decides about it). A line's text is valid only during the callback.
// Input is not required to be UTF-8 or JSON; that is the consumer's job.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace agentctx::mcp {

class line_reader {
 public:
  struct line {
    std::string_view text;  ///< empty when oversized
    std::size_t size = 0;   ///< bytes in the line, without its '\n'
    bool oversized = false;
  };

  /// `max_line_bytes` of at least 1.
  explicit line_reader(std::size_t max_line_bytes) : max_(std::max<std::size_t>(max_line_bytes, 1)) {}

  std::size_t max_line_bytes() const noexcept { return max_; }
  /// Bytes of the unfinished line held now: never more than max_line_bytes().
  std::size_t buffered_bytes() const noexcept { return pending_.size(); }

  /// Feeds the next bytes of the stream, calling `on_line(const line&)` (which
  /// returns true to go on) for every line they complete. Returns false when
  /// a callback stopped the feed; the rest of `bytes` is then dropped.
  template <class OnLine>
  bool feed(std::string_view bytes, OnLine&& on_line) {
    while (!bytes.empty()) {
      const std::size_t newline = bytes.find('\n');
      const std::string_view piece = bytes.substr(0, newline);
      if (newline == std::string_view::npos) {
        take_partial(piece);
        return true;
      }
      bytes.remove_prefix(newline + 1);
      if (!complete(piece, on_line)) return false;
    }
    return true;
  }

  /// Ends the stream: delivers a last line that had no '\n' (nothing when
  /// the stream ended with one). Returns what the callback returned (true
  /// when there was no line).
  template <class OnLine>
  bool finish(OnLine&& on_line) {
    if (!discarding_ && pending_.empty()) return true;
    return complete({}, on_line);
  }

 private:
  // Bytes of a line whose end has not arrived yet.
  void take_partial(std::string_view piece) {
    if (discarding_) {
      discarded_ += piece.size();
    } else if (pending_.size() + piece.size() > max_) {
      discarding_ = true;
      discarded_ = pending_.size() + piece.size();
      pending_.clear();
    } else {
      pending_.append(piece);
    }
  }

  // The end of a line: `piece` is its last bytes.
  template <class OnLine>
  bool complete(std::string_view piece, OnLine& on_line) {
    line out;
    if (discarding_) {
      out = {{}, discarded_ + piece.size(), true};
    } else if (pending_.size() + piece.size() > max_) {
      out = {{}, pending_.size() + piece.size(), true};
    } else if (pending_.empty()) {
      out = {piece, piece.size(), false};  // the common case: no copy
    } else {
      pending_.append(piece);
      out = {pending_, pending_.size(), false};
    }
    const bool go_on = on_line(static_cast<const line&>(out));
    pending_.clear();
    discarding_ = false;
    discarded_ = 0;
    return go_on;
  }

  std::size_t max_;
  std::string pending_;  // never longer than max_
  bool discarding_ = false;
  std::size_t discarded_ = 0;
};

}  // namespace agentctx::mcp
