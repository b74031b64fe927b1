// The markdown of agent memory: the default schema, documents of sections,
// and the content check that keeps appended text from creating, ending or
// hiding a section (the issue's bad-content table).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agentctx/memory/markdown_sections.hpp"
#include "support/result_checks.hpp"

namespace memory_markdown_sections_test {

using namespace agentctx::memory;

TEST_CASE("the default schema v1 parses into its six sections and prints back byte for byte") {
  auto parsed = parse_schema(default_schema_v1);
  REQUIRE_MESSAGE(parsed.has_value(), test_support::error_text(parsed));
  CHECK(parsed->version == 1);
  std::vector<std::string> names;
  for (const section& s : parsed->document.sections) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"Header", "Context", "Discussion Summary", "Decisions", "Open Questions",
                                          "Next Actions"});
  CHECK(parsed->entry_sections() ==
        std::vector<std::string>{"Context", "Discussion Summary", "Decisions", "Open Questions", "Next Actions"});
  const section* header = parsed->document.find("Header");
  REQUIRE(header != nullptr);
  CHECK(header->body.front() == "- Agent Name");
  CHECK(parsed->document.text() == default_schema_v1);
}

TEST_CASE("section headings match exactly; malformed documents and schemas are refused") {
  auto doc = parse_sections("# Title\n\n## Context\nline\n## Context Extra\nmore\n### Deeper\n##Context\n");
  REQUIRE(doc.has_value());
  REQUIRE(doc->sections.size() == 2);
  CHECK(doc->sections[0].name == "Context");
  CHECK(doc->sections[1].name == "Context Extra");
  CHECK(doc->sections[1].body == std::vector<std::string>{"more", "### Deeper", "##Context"});
  CHECK(doc->find("Context ") == nullptr);

  // Carriage returns at line ends (a file edited on Windows) are dropped, so
  // printing is a fixed point (found by memory_markdown_fuzz).
  auto crlf = parse_sections("# T\r\n## A\r\nx\r\r\ny\r\n");
  REQUIRE(crlf.has_value());
  CHECK(crlf->title == "# T");
  CHECK(crlf->sections.at(0).body == std::vector<std::string>{"x", "y"});
  auto reprinted = parse_sections(crlf->text());
  REQUIRE(reprinted.has_value());
  CHECK(reprinted->text() == crlf->text());

  const std::vector<std::string> bad_documents = {"", "\n\n", "no title\n## A\n", "# T\nstray text\n## A\n",
                                                  "# T\n## A\n## A\n"};
  for (const std::string& text : bad_documents) {
    CAPTURE(text);
    auto parsed = parse_sections(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == agentctx::errc::corrupt);
  }
  const std::vector<std::string> bad_schemas = {"# Agent Memory Schema\n## Header\n## Context\n",
                                                "# Agent Memory Schema vX\n## Header\n## Context\n",
                                                "# Agent Memory Schema v1\n## Context\n",
                                                "# Agent Memory Schema v1\n## Header\n- Agent Name\n",
                                                "# Memory v1\n## Header\n## Context\n"};
  for (const std::string& text : bad_schemas) {
    CAPTURE(text);
    CHECK_FALSE(parse_schema(text).has_value());
  }
  auto v2 = parse_schema("# Agent Memory Schema v2\n## Header\n## Notes\n");
  REQUIRE(v2.has_value());
  CHECK(v2->version == 2);
  CHECK(v2->entry_sections() == std::vector<std::string>{"Notes"});
}

TEST_CASE("entry content: what can be appended, and what is refused with the reason") {
  const std::size_t limit = 64 * 1024;
  const std::vector<std::string> good = {
      "- Decided to ship v2",
      "Line one\nline two\n\n- a list\n  - nested",
      "#hashtag is not a heading",
      "    # four spaces: code, not a heading",
      "```\ncode --- with dashes\n===\n```",
      "<!-- a closed comment --> text",
      "text\n\n---x is not an underline",
      "tabs\tare fine",
      "caf\xc3\xa9 \xf0\x9f\x98\x80",
      std::string(limit, 'x'),
  };
  for (const std::string& content : good) {
    CAPTURE(content.substr(0, 60));
    const content_problem p = check_entry_content(content, limit);
    CHECK_MESSAGE(p.what == content_problem::kind::none, p.message);
  }
  struct bad_case {
    std::string content;
    content_problem::kind what;
    std::string fragment;
  };
  using kind = content_problem::kind;
  const std::vector<bad_case> bad = {
      {"", kind::invalid, "empty"},
      {"  \n\n\t", kind::invalid, "empty"},
      {"before\n## Decisions\nafter", kind::invalid, "heading"},
      {"## Decisions", kind::invalid, "heading"},
      {"# Title", kind::invalid, "heading"},
      {"   ### Deep", kind::invalid, "heading"},
      {"######", kind::invalid, "heading"},
      {"```\n## Decisions\n```", kind::invalid, "heading"},
      {"<!--\n## Decisions\n-->", kind::invalid, "heading"},
      {"Title\n===", kind::invalid, "line above it"},
      {"Title\n---", kind::invalid, "line above it"},
      {"Title\n - - -", kind::invalid, "line above it"},
      {"```\nunclosed code", kind::invalid, "code fence"},
      {"~~~~\nclosed by a shorter fence\n~~~", kind::invalid, "code fence"},
      {"<!-- hides what follows", kind::invalid, "HTML comment"},
      {"windows\r\nline ends", kind::invalid, "carriage return"},
      {"\xEF\xBB\xBF" "bom", kind::invalid, "byte order mark"},
      {std::string("nul\0byte", 8), kind::invalid, "control character"},
      {"bell\x07", kind::invalid, "control character"},
      {"bad \xff utf8", kind::invalid, "UTF-8"},
      {"overlong \xc0\xaf", kind::invalid, "UTF-8"},
      {"lone surrogate \xed\xa0\x80", kind::invalid, "UTF-8"},
      {std::string(limit + 1, 'x'), kind::too_large, "never cut"},
      {std::string(10 * 1024 * 1024, 'x'), kind::too_large, "more than the limit"},
  };
  for (const bad_case& c : bad) {
    CAPTURE(c.content.substr(0, 60));
    const content_problem p = check_entry_content(c.content, limit);
    CHECK(p.what == c.what);
    CHECK(p.message.find(c.fragment) != std::string::npos);
  }
}

}  // namespace memory_markdown_sections_test
