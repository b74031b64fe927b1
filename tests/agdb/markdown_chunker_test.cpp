#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/markdown_chunker.hpp"
#include "agentctx/core/utf8.hpp"

namespace agdb_markdown_chunker_test {

using agentctx::agdb::chunk_markdown;
using agentctx::agdb::chunking_options;
using agentctx::agdb::text_chunk;

namespace {

struct chunking_case {
  const char* name;
  std::string input;
  std::size_t max_bytes;
  std::vector<text_chunk> expected;
};

std::string fence_of(std::string_view body) { return "```\n" + std::string(body) + "\n```"; }

// The lines of `text` as chunk_markdown sees them: split at LF, a CR before
// the LF dropped.
std::vector<std::string_view> normalized_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    const bool has_newline = end != std::string_view::npos;
    if (!has_newline) end = text.size();
    std::size_t length = end - at;
    if (has_newline && length > 0 && text[end - 1] == '\r') --length;
    lines.push_back(text.substr(at, length));
    at = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split_lf(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t at = 0;
  while (true) {
    const std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(at));
      return lines;
    }
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
}

}  // namespace

TEST_CASE("chunk_markdown: sections, fences and line endings") {
  const std::vector<chunking_case> cases = {
      {"empty document", "", 2048, {}},
      {"whitespace only", "  \n\t\n\r\n   ", 2048, {}},
      {"no heading", "hello\nworld\n", 2048, {{"hello\nworld", 1}}},
      {"every ATX level; seven hashes is text",
       "# A\na\n## B\nb\n### C\nc\n#### D\nd\n##### E\ne\n###### F\nf\n####### G\ng\n",
       2048,
       {{"# A\na", 1}, {"## B\nb", 3}, {"### C\nc", 5}, {"#### D\nd", 7}, {"##### E\ne", 9},
        {"###### F\nf\n####### G\ng", 11}}},
      {"a hash without a space is no heading", "intro\n#tag\n#\nafter", 2048, {{"intro\n#tag", 1}, {"#\nafter", 3}}},
      {"up to three spaces of indentation", "intro\n   # three\nx\n    # four\ny", 2048,
       {{"intro", 1}, {"   # three\nx\n    # four\ny", 2}}},
      {"heading-like line inside a fence", "# A\n```\n# not heading\n```\n# B\n", 2048,
       {{"# A\n```\n# not heading\n```", 1}, {"# B", 5}}},
      {"tilde fence", "~~~ python\n# no\n~~~\n# yes", 2048, {{"~~~ python\n# no\n~~~", 1}, {"# yes", 4}}},
      {"longer fence holds a shorter one", "````\n```\n# inside\n```\n````\n# out", 2048,
       {{"````\n```\n# inside\n```\n````", 1}, {"# out", 6}}},
      {"a fence closes only with its own character", "```\n~~~\n# inside\n~~~\n```\n# out", 2048,
       {{"```\n~~~\n# inside\n~~~\n```", 1}, {"# out", 6}}},
      {"a shorter closing fence does not close", "````\n```\n# inside\n````\n# out", 2048,
       {{"````\n```\n# inside\n````", 1}, {"# out", 5}}},
      {"a closing fence has nothing after it", "```\n``` x\n# inside\n```\n# out", 2048,
       {{"```\n``` x\n# inside\n```", 1}, {"# out", 5}}},
      {"a backtick in the info string makes no fence", "``` a`b\n# heading\n", 2048,
       {{"``` a`b", 1}, {"# heading", 2}}},
      {"an indented fence is code, not a fence", "    ```\n# real\n", 2048, {{"    ```", 1}, {"# real", 2}}},
      {"an unclosed fence runs to the end", "# A\n```\n# B\n# C\n", 2048, {{"# A\n```\n# B\n# C", 1}}},
      {"CRLF becomes LF, line numbers count CRLF lines", "# A\r\nline\r\n\r\n# B\r\nb\r\n", 2048,
       {{"# A\nline", 1}, {"# B\nb", 4}}},
      {"a lone CR is content", "a\rb", 2048, {{"a\rb", 1}}},
      {"the BOM is dropped", "\xEF\xBB\xBF# A\nx", 2048, {{"# A\nx", 1}}},
      {"only a BOM", "\xEF\xBB\xBF", 2048, {}},
      {"setext headings", "Title\n=====\ntext\n\nSub\n---\nmore", 2048,
       {{"Title\n=====\ntext", 1}, {"Sub\n---\nmore", 5}}},
      {"a setext heading starts at its paragraph", "intro\n\nline one\nline two\n---\nbody", 2048,
       {{"intro", 1}, {"line one\nline two\n---\nbody", 3}}},
      {"--- after a blank line is a thematic break", "para\n\n---\nmore", 2048, {{"para\n\n---\nmore", 1}}},
      {"--- after a list item is a thematic break", "- item\n---\nx", 2048, {{"- item\n---\nx", 1}}},
      {"front matter holds no heading", "---\ntitle: x\n---\n# A\nbody", 2048,
       {{"---\ntitle: x\n---", 1}, {"# A\nbody", 4}}},
      {"blank lines around a chunk are trimmed", "\n\n# A\n\ntext\n\n\n# B", 2048, {{"# A\n\ntext", 3}, {"# B", 8}}},
      {"paragraphs are packed greedily", "# H\n\npara one\n\npara two\n\npara three", 20,
       {{"# H\n\npara one", 1}, {"para two\n\npara three", 5}}},
      {"a large paragraph splits at lines", "aaaa\nbbbb\ncccc", 10, {{"aaaa\nbbbb", 1}, {"cccc", 3}}},
      {"a fence that fits stays whole", "para\n" + fence_of("1234567\n1234567") + "\ntail", 24,
       {{"para", 1}, {fence_of("1234567\n1234567"), 2}, {"tail", 6}}},
      {"a fence larger than the limit splits at lines", fence_of("line1\nline2\nline3"), 10,
       {{"```\nline1", 1}, {"line2", 3}, {"line3\n```", 4}}},
      {"a long line splits at code points", "\xC3\xA9\xC3\xA9\xC3\xA9", 5,
       {{"\xC3\xA9\xC3\xA9", 1}, {"\xC3\xA9", 1}}},
      {"four-byte code points", "x\n\xF0\x9F\x98\x80\xF0\x9F\x98\x80", 4,
       {{"x", 1}, {"\xF0\x9F\x98\x80", 2}, {"\xF0\x9F\x98\x80", 2}}},
      {"blank pieces of a long line are dropped", "aaaa    bbbb", 4, {{"aaaa", 1}, {"bbbb", 1}}},
      {"a limit below the minimum counts as the minimum", "abcd", 1, {{"abcd", 1}}},
  };
  for (const chunking_case& c : cases) {
    CAPTURE(c.name);
    const std::vector<text_chunk> got = chunk_markdown(c.input, chunking_options{c.max_bytes});
    REQUIRE(got.size() == c.expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].content == c.expected[i].content);
      CHECK(got[i].first_line == c.expected[i].first_line);
    }
  }
}

TEST_CASE("chunk_markdown: the default limit is 2 KiB") {
  CHECK(chunking_options{}.max_chunk_bytes == 2048);
  const std::string paragraph(1500, 'a');
  const std::string text = "# H\n" + paragraph + "\n\n" + paragraph + "\n";
  const auto chunks = chunk_markdown(text);
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0].content == "# H\n" + paragraph);
  CHECK(chunks[1].content == paragraph);
  CHECK(chunks[1].first_line == 4);
}

TEST_CASE("chunk_markdown: CRLF and LF checkouts give the same chunks") {
  const std::string lf = "# Title\n\nSome text\n\n```\ncode\n```\n\n## Next\nmore text\n";
  std::string crlf;
  for (const char c : lf) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  for (const std::size_t max : {std::size_t{8}, std::size_t{16}, std::size_t{2048}}) {
    CAPTURE(max);
    CHECK(chunk_markdown(lf, chunking_options{max}) == chunk_markdown(crlf, chunking_options{max}));
    CHECK(chunk_markdown("\xEF\xBB\xBF" + crlf, chunking_options{max}) == chunk_markdown(lf, chunking_options{max}));
  }
}

// A 5 MB document of headings, paragraphs, small and huge fences, long
// multi-byte lines, mixed line endings: every chunk is within the limit,
// valid UTF-8, starts at the line it claims, and small fences stay whole.
TEST_CASE("chunk_markdown: a 5 MB generated document") {
  constexpr std::size_t max_bytes = 2048;
  std::mt19937 random(20240611);
  std::string text;
  struct fence_lines {
    std::size_t open;  // 1-based
    std::size_t close;
    std::size_t bytes;
  };
  std::vector<fence_lines> fences;
  std::vector<std::size_t> headings;
  std::size_t line = 0;
  auto add_line = [&](const std::string& s) {
    text += s;
    text += random() % 5 == 0 ? "\r\n" : "\n";
    ++line;
  };
  const std::string words[] = {"alpha", "b\xC3\xA9ta", "\xE2\x82\xAC", "gamma", "\xF0\x9F\x98\x80", "delta", "#"};
  auto sentence = [&](std::size_t count) {
    std::string s;
    for (std::size_t i = 0; i < count; ++i) {
      if (i != 0) s += ' ';
      s += words[random() % 7];
    }
    return s;
  };
  while (text.size() < 5 * 1000 * 1000) {
    switch (random() % 10) {
      case 0:
        add_line(std::string(1 + random() % 6, '#') + " Heading " + std::to_string(line));
        headings.push_back(line);
        break;
      case 1: {
        const bool huge = random() % 4 == 0;
        const std::size_t body = huge ? 100 + random() % 100 : 1 + random() % 20;
        fence_lines f{line + 1, line + body + 2, 0};
        add_line("```");
        for (std::size_t i = 0; i < body; ++i) add_line(i % 3 == 0 ? "# not a heading" : sentence(6));
        add_line("```");
        fences.push_back(f);
        break;
      }
      case 2: add_line(sentence(600 + random() % 600)); break;
      case 3: add_line(""); break;
      default: add_line(sentence(1 + random() % 30)); break;
    }
  }
  const std::vector<std::string_view> lines = normalized_lines(text);
  for (fence_lines& f : fences) {
    for (std::size_t i = f.open; i <= f.close; ++i) f.bytes += lines[i - 1].size() + 1;
    f.bytes -= 1;
  }

  const std::vector<text_chunk> chunks = chunk_markdown(text, chunking_options{max_bytes});
  REQUIRE(!chunks.empty());
  std::vector<bool> starts(lines.size() + 2, false);
  std::size_t previous_line = 0;
  for (const text_chunk& c : chunks) {
    REQUIRE(c.content.size() <= max_bytes);
    REQUIRE(!c.content.empty());
    REQUIRE(agentctx::is_valid_utf8(c.content));
    REQUIRE(c.first_line >= 1);
    REQUIRE(c.first_line <= lines.size());
    REQUIRE(c.first_line >= previous_line);
    previous_line = c.first_line;
    starts[c.first_line] = true;
    const std::vector<std::string_view> got = split_lf(c.content);
    if (got.size() == 1 && got[0] != lines[c.first_line - 1]) {
      // A piece of a line cut at code points.
      REQUIRE(lines[c.first_line - 1].size() > max_bytes);
      REQUIRE(lines[c.first_line - 1].find(got[0]) != std::string_view::npos);
      continue;
    }
    for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == lines[c.first_line - 1 + i]);
  }
  for (const std::size_t h : headings) {
    CAPTURE(h);
    CHECK(starts[h]);
  }
  std::size_t small_fences = 0;
  for (const fence_lines& f : fences) {
    if (f.bytes > max_bytes) continue;
    ++small_fences;
    for (std::size_t i = f.open + 1; i <= f.close; ++i) {
      CAPTURE(i);
      REQUIRE_FALSE(starts[i]);
    }
  }
  CHECK(small_fences > 100);
  CHECK(fences.size() > small_fences);
}

}  // namespace agdb_markdown_chunker_test
