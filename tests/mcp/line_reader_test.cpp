// The bounded line splitter of the stdio transport (agentctx/mcp/line_reader.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/mcp/line_reader.hpp"

namespace mcp_line_reader_test {

namespace mcp = agentctx::mcp;

namespace {

struct seen_line {
  std::string text;
  std::size_t size;
  bool oversized;
  friend bool operator==(const seen_line&, const seen_line&) = default;
};

// Feeds `input` in pieces of `piece` bytes, then ends the stream.
std::vector<seen_line> split(std::string_view input, std::size_t max, std::size_t piece) {
  mcp::line_reader reader(max);
  std::vector<seen_line> out;
  const auto on_line = [&](const mcp::line_reader::line& l) {
    CHECK(l.size == (l.oversized ? l.size : l.text.size()));
    out.push_back({std::string(l.text), l.size, l.oversized});
    return true;
  };
  for (std::size_t at = 0; at < input.size(); at += piece) CHECK(reader.feed(input.substr(at, piece), on_line));
  CHECK(reader.finish(on_line));
  return out;
}

}  // namespace

TEST_CASE("line_reader: lines end at '\\n' whatever the read boundaries") {
  const std::string input = "{\"a\":1}\n\nsecond\r\nthird";
  const std::vector<seen_line> expected = {
      {"{\"a\":1}", 7, false}, {"", 0, false}, {"second\r", 7, false}, {"third", 5, false}};
  for (std::size_t piece = 1; piece <= input.size(); ++piece) {
    CAPTURE(piece);
    CHECK(split(input, 64, piece) == expected);
  }
  CHECK(split("", 8, 1).empty());
  CHECK(split("one\n", 8, 4) == std::vector<seen_line>{{"one", 3, false}});
}

TEST_CASE("line_reader: a line over the limit is reported with its size and the next line is read") {
  const std::string input = "12345678\n123456789\nok\n" + std::string(1000, 'x') + "\nlast";
  const std::vector<seen_line> expected = {{"12345678", 8, false},
                                           {"", 9, true},
                                           {"ok", 2, false},
                                           {"", 1000, true},
                                           {"last", 4, false}};
  for (const std::size_t piece : {1u, 2u, 3u, 7u, 8u, 9u, 10u, 64u, 4096u}) {
    CAPTURE(piece);
    CHECK(split(input, 8, piece) == expected);
  }
  // An oversized last line without '\n' is reported at the end of the stream.
  CHECK(split("abc\n0123456789", 8, 3) == std::vector<seen_line>{{"abc", 3, false}, {"", 10, true}});
}

TEST_CASE("line_reader: a huge line is counted, never held") {
  // 64 MiB of one line in 64 KiB reads with a 1 KiB limit: the reader never
  // holds more than the limit, and still counts the size exactly.
  mcp::line_reader reader(1024);
  const std::string block(65536, 'y');
  std::vector<seen_line> out;
  const auto on_line = [&](const mcp::line_reader::line& l) {
    out.push_back({std::string(l.text), l.size, l.oversized});
    return true;
  };
  CHECK(reader.feed(std::string(1000, 'y'), on_line));
  CHECK(reader.buffered_bytes() == 1000);
  for (int i = 0; i < 1024; ++i) {
    CHECK(reader.feed(block, on_line));
    REQUIRE(reader.buffered_bytes() == 0);
  }
  CHECK(out.empty());
  CHECK(reader.feed("tail\n{}\n", on_line));
  CHECK(out == std::vector<seen_line>{{"", std::size_t{64} * 1024 * 1024 + 1000 + 4, true}, {"{}", 2, false}});
  CHECK(reader.buffered_bytes() == 0);
  CHECK(reader.max_line_bytes() == 1024);
}

TEST_CASE("line_reader: a callback returning false stops the feed") {
  mcp::line_reader reader(16);
  int calls = 0;
  const auto stop_at_second = [&](const mcp::line_reader::line&) { return ++calls < 2; };
  CHECK_FALSE(reader.feed("a\nb\nc\n", stop_at_second));
  CHECK(calls == 2);
  CHECK(mcp::line_reader(0).max_line_bytes() == 1);
}

}  // namespace mcp_line_reader_test
