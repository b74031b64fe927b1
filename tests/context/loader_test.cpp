// The context loader (seed 003): read_context's tiers, the notes and taste
// rules, recent_log and vocabulary_gaps read from the end of their logs, the
// budget, read_full_notes, and the reverse line reader's edge cases.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agentctx/context/excerpt.hpp"
#include "agentctx/context/jsonl_tail.hpp"
#include "agentctx/context/loader.hpp"
#include "agentctx/context/result_json.hpp"
#include "agentctx/core/token_estimate.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace context_loader_test {

namespace context = agentctx::context;
namespace io = agentctx::io;
using agentctx::errc;
using test_support::require_value;

namespace {

constexpr std::uint64_t now_ms = 1'777'300'000'000;  // 2026-04-27T14:26:40Z


std::string numbered_lines(std::size_t n, std::string_view prefix = "line ") {
  std::string out;
  for (std::size_t i = 1; i <= n; ++i) out += std::string(prefix) + std::to_string(i) + "\n";
  return out;
}

context::loader_options fixed_clock(context::loader_options options = {}) {
  options.clock = [] { return now_ms; };
  return options;
}

void put(io::file_system& fs, const std::string& path, std::string_view text) {
  const std::string folder = io::parent_directory(path);
  if (folder != ".") REQUIRE(fs.create_dir(folder).has_value());
  io_test::write_text(fs, path, text);
}

std::string log_line(std::uint64_t at_ms, std::string_view session, std::string_view summary) {
  return "{\"timestamp\":\"" + agentctx::format_rfc3339_utc_ms(at_ms) + "\",\"session_id\":\"" + std::string(session) +
         "\",\"summary\":\"" + std::string(summary) + "\",\"tool\":\"trace\"}\n";
}

std::vector<std::string> summaries(const context::context_bundle& b) {
  std::vector<std::string> out;
  for (const auto& e : b.recent_log.entries) out.push_back(e.summary.value_or("?"));
  return out;
}

}  // namespace

TEST_CASE("a new item with no files: every tier is there, empty, in reading order") {
  io::memory_file_system fs;
  context::loader loader(fs, fixed_clock());
  const auto b = require_value(loader.read_context("iguana-01"));
  CHECK(b.item_id == "iguana-01");
  CHECK(b.loaded_at == "2026-04-27T14:26:40.000Z");
  CHECK(b.taste.path == "taste.md");
  CHECK(b.brief.path == "iguana-01/brief.md");
  CHECK(b.notes.path == "iguana-01/notes.md");
  CHECK(b.recent_log.path == "iguana-01/log.jsonl");
  CHECK(b.vocabulary_gaps.path == "iguana-01/vocabulary_gaps.jsonl");
  CHECK_FALSE(b.taste.exists);
  CHECK(b.notes.content.empty());
  CHECK(b.recent_log.entries.empty());
  CHECK(b.omitted.empty());
  const std::string json = context::to_json(b);
  CHECK(json.starts_with(R"({"success":true,"data":{"item_id":"iguana-01","loaded_at":"2026-04-27T14:26:40.000Z",)"
                         R"("reading_order":["taste","brief","notes","recent_log","vocabulary_gaps"],)"));
}

TEST_CASE("tiers carry path, hash and counts; item ids are safe names") {
  io::memory_file_system fs;
  put(fs, "taste.md", "# Taste\n\nSubtle structure.\n");
  put(fs, "iguana-01/brief.md", "Keep the scales crisp.\n");
  context::loader loader(fs, fixed_clock());
  const auto b = require_value(loader.read_context("iguana-01"));
  CHECK(b.taste.exists);
  CHECK(b.taste.content == "# Taste\n\nSubtle structure.\n");
  CHECK(b.taste.hash == agentctx::sha256_text("# Taste\n\nSubtle structure.\n"));
  CHECK(b.taste.bytes == 27);
  CHECK(b.taste.full_length_lines == 3);
  CHECK_FALSE(b.taste.last_modified_ms.has_value());  // the in-memory file system keeps no times
  CHECK(b.brief.content == "Keep the scales crisp.\n");
  for (const char* bad : {"", "..", "../taste", "a/b", "/abs", "-x", "con"}) {
    auto r = loader.read_context(bad);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_argument);
    CHECK_FALSE(loader.read_full_notes(bad).has_value());
  }
  // The layout is configuration.
  context::loader_options options = fixed_clock();
  options.layout.taste = "prefs/global.md";
  options.layout.notes = "items/{item}/{item}-notes.md";
  put(fs, "prefs/global.md", "global\n");
  fs.create_dir("items").value();
  put(fs, "items/x1/x1-notes.md", "n\n");
  const auto custom = require_value(context::loader(fs, options).read_context("x1"));
  CHECK(custom.taste.content == "global\n");
  CHECK(custom.notes.path == "items/x1/x1-notes.md");
  CHECK(custom.notes.content == "n\n");
}

TEST_CASE("long notes keep the first 10 and last 30 lines with a marker; read_full_notes pages the whole") {
  io::memory_file_system fs;
  put(fs, "iguana-01/notes.md", numbered_lines(120));
  context::loader loader(fs, fixed_clock());
  const auto b = require_value(loader.read_context("iguana-01"));
  CHECK(b.notes.summarized());
  CHECK(b.notes.full_length_lines == 120);
  CHECK(b.notes.elided_lines == 80);
  CHECK(b.notes.content ==
        numbered_lines(10) +
            "[... 80 lines elided; full notes: read_full_notes(\"iguana-01\") or the file iguana-01/notes.md ...]\n" +
            [] {
              std::string tail;
              for (int i = 91; i <= 120; ++i) tail += "line " + std::to_string(i) + "\n";
              return tail;
            }());
  // The threshold: 50 lines stay whole, 51 do not; it is configurable.
  put(fs, "a/notes.md", numbered_lines(50));
  put(fs, "b/notes.md", numbered_lines(51));
  CHECK_FALSE(require_value(loader.read_context("a")).notes.summarized());
  CHECK(require_value(loader.read_context("b")).notes.elided_lines == 11);
  context::loader_options options = fixed_clock();
  options.notes = {100, 5, 5};
  CHECK(require_value(context::loader(fs, options).read_context("iguana-01")).notes.elided_lines == 110);
  // A head and tail whose sum does not fit in a size_t keep the notes whole.
  for (const auto& [head, tail] : std::vector<std::pair<std::size_t, std::size_t>>{{SIZE_MAX, 5}, {5, SIZE_MAX}, {SIZE_MAX, SIZE_MAX}}) {
    options.notes = {10, head, tail};
    CHECK_FALSE(require_value(context::loader(fs, options).read_context("iguana-01")).notes.summarized());
  }

  const auto page = require_value(loader.read_full_notes("iguana-01", 11, 50));
  CHECK(page.total_lines == 120);
  REQUIRE(page.lines.size() == 50);
  CHECK(page.lines.front() == "line 11");
  CHECK(page.lines.back() == "line 60");
  REQUIRE(page.next_line.has_value());
  CHECK(*page.next_line == 61);
  const auto last = require_value(loader.read_full_notes("iguana-01", 61));
  CHECK(last.lines.size() == 60);
  CHECK_FALSE(last.next_line.has_value());
  CHECK(require_value(loader.read_full_notes("iguana-01", 500)).lines.empty());
  CHECK(loader.read_full_notes("iguana-01", 0).error().code == errc::invalid_argument);
}

TEST_CASE("long taste is truncated within its sections, every heading kept") {
  std::string taste = "# Taste\nintro\n";
  for (const char* name : {"Color", "Tone", "Texture"}) {
    taste += std::string("## ") + name + "\n" + numbered_lines(60, std::string(name) + " ");
  }
  taste += "## Short\n- one\n- two\n";
  const auto shown = context::truncate_sections(taste, {80, 3}, "the file taste.md");
  CHECK(shown.full_length_lines == 188);
  for (const char* heading : {"# Taste\n", "## Color\n", "## Tone\n", "## Texture\n", "## Short\n- one\n- two\n"}) {
    CHECK_MESSAGE(shown.text.find(heading) != std::string::npos, heading);
  }
  CHECK(shown.text.find("Color 1\n") != std::string::npos);
  CHECK(shown.text.find("Color 60\n") == std::string::npos);
  CHECK(shown.text.find("lines of this section elided; full text: the file taste.md ...]") != std::string::npos);
  const std::size_t lines = agentctx::split_lines(shown.text).size();
  CHECK(lines <= 80);
  CHECK(lines >= 70);
  CHECK(shown.elided_lines == 188 - lines + 3);  // three markers stand in for the elided lines
  // A fence the cut leaves open is closed before the marker; a "#" line inside a fence is no heading.
  std::string fenced = "## Setup\n```sh\n# a shell comment, not a heading\n" + numbered_lines(40, "cmd ") + "```\n";
  fenced += "## Other\n" + numbered_lines(40, "other ");
  const auto cut = context::truncate_sections(fenced, {20, 3}, "taste.md");
  CHECK(cut.text.find("```sh\n# a shell comment, not a heading\n") != std::string::npos);
  CHECK(cut.text.find("\n```\n[... ") != std::string::npos);
  CHECK(cut.text.find("## Other\n") != std::string::npos);
  CHECK(context::section_heading_lines(agentctx::split_lines(fenced)).size() == 2);
  // Short text is untouched.
  CHECK(context::truncate_sections("# T\n- a\n", {80, 3}, "x").text == "# T\n- a\n");
}

TEST_CASE("recent_log: the last 5 sessions or the last 24 hours, whichever is more, read from the end") {
  io::memory_file_system fs;
  std::string log;
  const std::uint64_t hour = 3'600'000;
  // Eight old sessions, two entries each, days ago.
  for (int s = 1; s <= 8; ++s) {
    for (int e = 1; e <= 2; ++e) {
      log += log_line(now_ms - (100 - s) * hour, "s" + std::to_string(s), "s" + std::to_string(s) + "e" + std::to_string(e));
    }
  }
  put(fs, "it/log.jsonl", log);
  context::loader loader(fs, fixed_clock());
  auto b = require_value(loader.read_context("it"));
  CHECK(summaries(b) == std::vector<std::string>{"s4e1", "s4e2", "s5e1", "s5e2", "s6e1", "s6e2", "s7e1", "s7e2",
                                                 "s8e1", "s8e2"});
  CHECK(b.recent_log.sessions == 5);
  CHECK_FALSE(b.recent_log.partial_last_line);

  // Many sessions within the last 24 hours: all of them.
  for (int s = 9; s <= 16; ++s) log += log_line(now_ms - (17 - s) * hour, "s" + std::to_string(s), "recent" + std::to_string(s));
  put(fs, "it/log.jsonl", log);
  b = require_value(loader.read_context("it"));
  CHECK(b.recent_log.entries.size() == 8);
  CHECK(summaries(b).front() == "recent9");

  // A torn last line is skipped and reported; a line that is not JSON is counted.
  put(fs, "it/log.jsonl", log + "not json\n" + log_line(now_ms, "s17", "last") + "{\"timestamp\":\"2026-04-27T1");
  b = require_value(loader.read_context("it"));
  CHECK(b.recent_log.partial_last_line);
  CHECK(b.recent_log.skipped_lines == 1);
  CHECK(summaries(b).back() == "last");

  // The hard cap.
  context::loader_options capped = fixed_clock();
  capped.max_log_entries = 3;
  b = require_value(context::loader(fs, capped).read_context("it"));
  CHECK(b.recent_log.capped);
  CHECK(summaries(b) == std::vector<std::string>{"recent15", "recent16", "last"});
}

TEST_CASE("vocabulary_gaps: the last 5 unresolved") {
  io::memory_file_system fs;
  std::string gaps;
  for (int i = 1; i <= 9; ++i) {
    gaps += "{\"term\":\"g" + std::to_string(i) + "\"" + (i % 3 == 0 ? ",\"resolved\":true" : "") + "}\n";
  }
  put(fs, "it/vocabulary_gaps.jsonl", gaps);
  const auto b = require_value(context::loader(fs, fixed_clock()).read_context("it"));
  CHECK(b.vocabulary_gaps.entries ==
        std::vector<std::string>{R"({"term":"g2"})", R"({"term":"g4"})", R"({"term":"g5"})", R"({"term":"g7"})",
                                 R"({"term":"g8"})"});
}

TEST_CASE("the budget is spent in reading order; what is cut is reported") {
  io::memory_file_system fs;
  put(fs, "taste.md", numbered_lines(20, "taste "));
  put(fs, "it/notes.md", numbered_lines(40, "note "));
  std::string log;
  for (int i = 0; i < 10; ++i) log += log_line(now_ms - 1000 * static_cast<std::uint64_t>(i), "s", "entry" + std::to_string(9 - i));
  put(fs, "it/log.jsonl", log);
  context::loader_options options = fixed_clock();
  options.max_bytes = 300;
  const auto b = require_value(context::loader(fs, options).read_context("it"));
  CHECK(b.taste.budget_cut_lines == 0);  // 20 lines of "taste N": 175 bytes
  CHECK(b.notes.budget_cut_lines > 0);
  CHECK(b.notes.content.find("more lines not shown (budget); the file it/notes.md ...]") != std::string::npos);
  CHECK(b.recent_log.entries.empty());
  CHECK(b.recent_log.budget_dropped == 10);
  CHECK(b.used.bytes <= 300);
  REQUIRE(b.omitted.size() == 2);
  CHECK(b.omitted[0].tier == "notes");
  CHECK(b.omitted[1].tier == "recent_log");
  CHECK(b.omitted[1].what == "10 entries (the oldest)");

  options.max_bytes = 0;
  options.max_tokens = 1000;
  const auto roomy = require_value(context::loader(fs, options).read_context("it"));
  CHECK(roomy.omitted.empty());
  CHECK(roomy.used.tokens > 0);
  CHECK(roomy.used.tokens <= 1000);
}

TEST_CASE("the token estimator is deterministic and counts what it documents") {
  using agentctx::estimate_tokens;
  CHECK(estimate_tokens("") == 0);
  CHECK(estimate_tokens("the cat") == 2);
  CHECK(estimate_tokens("tokenizer") == 2);       // 9 letters: ceil(9 / 6)
  CHECK(estimate_tokens("a, b.") == 4);           // two words, two punctuation marks
  CHECK(estimate_tokens("\xE6\x97\xA5\xE6\x9C\xAC") == 2);  // two ideographs
  CHECK(estimate_tokens("\xFF\xFE") == 2);        // invalid bytes
}

TEST_CASE("reverse_line_reader: newest line first, partial last line, chunk boundaries, long lines") {
  io::memory_file_system fs;
  const auto lines_of = [&](std::string_view text, std::size_t max_line = 1 << 20) {
    put(fs, "f.jsonl", text);
    auto reader = require_value(context::reverse_line_reader::open(fs, "f.jsonl", max_line));
    std::vector<std::string> out;
    std::string line;
    while (require_value(reader.previous(line))) out.push_back(line);
    return std::pair(out, reader.partial_last_line());
  };
  using lines = std::vector<std::string>;
  CHECK(lines_of("").first.empty());
  CHECK(lines_of("a\n").first == lines{"a"});
  CHECK(lines_of("a\nb\n").first == lines{"b", "a"});
  CHECK(lines_of("a\nb") == std::pair(lines{"b", "a"}, true));
  CHECK(lines_of("\n\n").first == lines{"", ""});
  const std::string big(70'000, 'x');
  CHECK(lines_of("first\n" + big + "\nlast\n").first == lines{"last", big, "first"});
  const std::string huge(200'000, 'y');
  put(fs, "f.jsonl", "a\n" + huge + "\n");
  auto reader = require_value(context::reverse_line_reader::open(fs, "f.jsonl", 100'000));
  std::string line;
  auto failed = reader.previous(line);
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == errc::corrupt);
}

}  // namespace context_loader_test
