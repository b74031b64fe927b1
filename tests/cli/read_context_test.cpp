// End-to-end tests of read-context through the real binary: show (text and
// JSON, with the notes rule, the budget and real modification times), notes
// paging, propose / proposals / confirm / decline / log, and every refused
// input as one line with its documented exit code (1 not found, 2 usage,
// 3 invalid argument, 4 a symlink below the root, 5 conflict, 6 already
// decided).
#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_read_context_test {

#ifndef READ_CONTEXT_BIN
TEST_CASE("read-context: end-to-end tests") {
  MESSAGE("skipping: READ_CONTEXT_BIN is not defined (the CLI targets are not part of this build)");
}
#else

using cli_test::check_clean_success;
using cli_test::contains;
using cli_test::run_result;
using cli_test::text_of;

namespace {

namespace fs = std::filesystem;

struct project {
  io_test::temporary_directory scratch;
  fs::path root = fs::canonical(scratch.path()) / "photos";
  project() {
    fs::create_directories(root / "iguana");
    cli_test::write_file(root / "taste.md", "# Taste\n\n## Color\n- subtle, never garish\n");
    cli_test::write_file(root / "iguana" / "brief.md", "Keep the scales crisp.\n");
    std::string notes;
    for (int i = 1; i <= 70; ++i) notes += "note " + std::to_string(i) + "\n";
    cli_test::write_file(root / "iguana" / "notes.md", notes);
    cli_test::write_file(root / "iguana" / "log.jsonl",
                         "{\"timestamp\":\"2026-01-01T10:00:00Z\",\"session_id\":\"s1\",\"summary\":\"applied tone\"}\n"
                         "{\"timestamp\":\"2026-01-02T10:00:00Z\",\"session_id\":\"s2\",\"summary\":\"tagged v1_export\"}\n"
                         "{\"timestamp\":\"2026-01-02T10:");
    cli_test::write_file(root / "iguana" / "vocabulary_gaps.jsonl", "{\"term\":\"glow\"}\n{\"term\":\"old\",\"resolved\":true}\n");
  }
  run_result run(const std::vector<std::string>& args) const {
    return cli_test::run(READ_CONTEXT_BIN, args, root.string(), "/dev/null");
  }
};

void check_failure(const run_result& r, int exit_code, std::string_view fragment) {
  cli_test::check_error(r, exit_code, fragment, "read-context");
}

}  // namespace

TEST_CASE("read-context show: the bundle in reading order, in text and JSON") {
  project p;
  auto text = p.run({"show", "iguana"});
  check_clean_success(text);
  const std::size_t taste = text.out.find("== taste (taste.md, modified ");
  const std::size_t brief = text.out.find("== brief (iguana/brief.md");
  const std::size_t notes = text.out.find("== notes (iguana/notes.md");
  const std::size_t log = text.out.find("== recent_log (iguana/log.jsonl, 2 entries from 2 sessions; a torn last line skipped)");
  const std::size_t gaps = text.out.find("== vocabulary_gaps (iguana/vocabulary_gaps.jsonl, 1 unresolved)");
  REQUIRE(taste != std::string::npos);
  CHECK(taste < brief);
  CHECK(brief < notes);
  CHECK(notes < log);
  CHECK(log < gaps);
  CHECK(log != std::string::npos);
  CHECK(contains(text.out, "[... 30 lines elided; full notes: read_full_notes(\"iguana\") or the file iguana/notes.md ...]"));

  simdjson::dom::parser parser;
  auto json = p.run({"show", "iguana", "--json"});
  check_clean_success(json);
  auto doc = cli_test::parse_output(parser, json);
  CHECK(doc["success"].get_bool().value());
  simdjson::dom::element data = doc["data"].value();
  CHECK(text_of(data, "item_id") == "iguana");
  CHECK(data["notes"]["summarized"].get_bool().value());
  CHECK(data["notes"]["full_length_lines"].get_uint64().value() == 70);
  CHECK(text_of(data["taste"].value(), "last_modified").ends_with("Z"));
  CHECK(text_of(data["brief"].value(), "hash").starts_with("sha256:"));
  CHECK(data["recent_log"].get_array().size() == 2);
  CHECK(data["recent_log_info"]["partial_last_line"].get_bool().value());
  CHECK(data["vocabulary_gaps"].get_array().size() == 1);
  CHECK(text_of(data["budget"].value(), "estimator") == "agentctx-tokens-v1");

  // A budget: notes cut, the omission reported.
  auto budget = p.run({"show", "iguana", "--json", "--max-bytes", "200"});
  CHECK(budget.exit_code == 0);
  data = cli_test::parse_output(parser, budget)["data"].value();
  CHECK(data["notes"]["budget_cut_lines"].get_uint64().value() > 0);
  CHECK(data["budget"]["omitted"].get_array().size() >= 1);
  // Other thresholds and layouts are options.
  auto whole = p.run({"show", "iguana", "--notes-threshold", "100"});
  CHECK(contains(whole.out, "note 30\n"));
  // Whole numbers in decimal only (CLI11 would read -1 as the largest one, 010 as 8).
  for (const std::string bad : {"-1", "010", "0x3"}) {
    auto refused = p.run({"show", "iguana", "--notes-head", bad});
    CHECK(refused.exit_code == 2);
    CHECK(contains(refused.err, "--notes-head: must be"));
  }
  auto layout = p.run({"show", "iguana", "--notes", "{item}/brief.md"});
  CHECK(contains(layout.out, "== notes (iguana/brief.md"));
}

TEST_CASE("read-context notes pages the whole notes") {
  project p;
  auto page = p.run({"notes", "iguana", "--from", "11", "--lines", "3"});
  CHECK(page.exit_code == 0);
  CHECK(page.out == "note 11\nnote 12\nnote 13\n");
  CHECK(contains(page.err, "continue with --from 14"));
  auto all = p.run({"notes", "iguana"});
  check_clean_success(all);
  CHECK(cli_test::line_count(all.out) == 70);
}

TEST_CASE("read-context propose, confirm, decline and the decision log") {
  project p;
  simdjson::dom::parser parser;
  auto made = p.run({"propose", "--target", "notes", "--item", "iguana", "--content", "- WB still too cool", "--reason",
                     "session 3", "--json"});
  check_clean_success(made);
  const std::string first = text_of(cli_test::parse_output(parser, made)["data"]["proposal"].value(), "id");
  auto second_made = p.run({"propose", "--target", "taste", "--mode", "replace", "--content", "# Taste\n- bold", "--json"});
  const std::string second = text_of(cli_test::parse_output(parser, second_made)["data"]["proposal"].value(), "id");
  auto listed = p.run({"proposals"});
  CHECK(cli_test::line_count(listed.out) == 2);

  check_clean_success(p.run({"confirm", first, "--by", "jordan"}));
  CHECK(cli_test::read_file(p.root / "iguana" / "notes.md").ends_with("note 70\n\n- WB still too cool\n"));
  check_failure(p.run({"confirm", first, "--by", "jordan"}), 6, "already confirmed");
  // The taste changed since the second proposal: conflict, nothing written.
  cli_test::write_file(p.root / "taste.md", "# Taste\nedited\n");
  check_failure(p.run({"confirm", second, "--by", "jordan"}), 5, "changed since proposal");
  CHECK(cli_test::read_file(p.root / "taste.md") == "# Taste\nedited\n");
  check_clean_success(p.run({"decline", second, "--by", "jordan", "--note", "stale"}));
  CHECK(p.run({"proposals"}).out.empty());
  auto log = p.run({"log", "--json"});
  CHECK(log.exit_code == 0);
  auto decisions = cli_test::parse_output(parser, log)["data"]["decisions"].get_array();
  REQUIRE(decisions.size() == 4);
  CHECK(text_of(decisions.at(0).value(), "decision") == "declined");
  CHECK(text_of(decisions.at(0).value(), "actor") == "jordan");
  CHECK(text_of(decisions.at(0).value(), "note") == "stale");
  auto human = p.run({"log", "--limit", "2"});
  check_clean_success(human);
  CHECK(cli_test::line_count(human.out) == 2);
  CHECK(contains(human.out, "declined  " + second));
  CHECK(contains(human.out, "by jordan  (stale)"));
  // A damaged line is skipped and said so, in text and in JSON.
  {
    std::ofstream(p.root / ".read-context" / "decisions.jsonl", std::ios::app) << "garbage\n";
  }
  auto damaged = p.run({"log", "--json"});
  CHECK(damaged.exit_code == 0);
  auto data = cli_test::parse_output(parser, damaged)["data"];
  CHECK(data["decisions"].get_array().size() == 4);
  CHECK(data["skipped_lines"].get_uint64().value() == 1);
  CHECK(contains(p.run({"log"}).out, "1 line(s) of .read-context/decisions.jsonl are not decisions"));
}

TEST_CASE("read-context: text read from a proposal or the decision log reaches the terminal escaped") {
  project p;
  simdjson::dom::parser parser;
  const std::string esc = "\x1b[2J\x07";
  auto made = p.run({"propose", "--target", "notes", "--item", "iguana", "--content", "- x", "--reason",
                     "why" + esc + "\nforged line", "--json"});
  check_clean_success(made);
  const std::string id = text_of(cli_test::parse_output(parser, made)["data"]["proposal"].value(), "id");
  auto listed = p.run({"proposals"});
  check_clean_success(listed);
  CHECK(cli_test::line_count(listed.out) == 1);  // the line break in the reason is shown as \n
  CHECK(contains(listed.out, "(why\\x1b[2J\\x07\\nforged line)"));
  // Names with control characters are refused when a decision is made; a
  // log written otherwise is shown escaped.
  check_failure(p.run({"decline", id, "--by", "jordan" + esc}), 3, "contains a control character");
  check_clean_success(p.run({"decline", id, "--by", "jordan", "--note", "no"}));
  const std::filesystem::path decisions = p.root / ".read-context" / "decisions.jsonl";
  std::string lines = cli_test::read_file(decisions);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{R"("jordan")", R"("jordan\u001b[2J\u0007")"},
                                 {R"("no")", R"("no\u001b[2J\u0007")"}}) {
    REQUIRE(lines.find(from) != std::string::npos);
    lines.replace(lines.find(from), from.size(), to);
  }
  cli_test::write_file(decisions, lines);
  auto log = p.run({"log"});
  check_clean_success(log);
  CHECK(log.out.find('\x1b') == std::string::npos);
  CHECK(contains(log.out, "by jordan\\x1b[2J\\x07  (no\\x1b[2J\\x07)"));
  // The JSON output keeps the text itself.
  auto log_json = cli_test::parse_output(parser, p.run({"log", "--json"}))["data"]["decisions"].get_array();
  CHECK(text_of(log_json.at(0).value(), "note") == "no" + esc);
}

TEST_CASE("read-context refusals: one line, documented exit codes") {
  project p;
  check_failure(p.run({"show", "../x"}), 3, "item id");
  check_failure(p.run({"notes", "a/b"}), 3, "item id");
  check_failure(p.run({"confirm", "prop_0000000000000000", "--by", "jordan"}), 1, "no proposal");
  check_failure(p.run({"confirm", "x", "--by", "a b"}), 3, "actor");
  check_failure(p.run({"show", "iguana", "--root", (p.root / "missing").string()}), 1, "cannot open the root");
  auto usage = p.run({"propose", "--target", "brief", "--content", "x"});
  CHECK(usage.exit_code == 2);
  // serve speaks the protocol on stdout: it has no --json, and says its own exit codes.
  CHECK(p.run({"serve", "--json"}).exit_code == 2);
  const auto serve_help = p.run({"serve", "--help"});
  CHECK(serve_help.exit_code == 0);
  CHECK(contains(serve_help.out, "0 end of input"));
  CHECK_FALSE(contains(serve_help.out, "--json"));
  // A symlink below the root is never followed.
  fs::create_directories(p.root.parent_path() / "outside");
  cli_test::write_file(p.root.parent_path() / "outside" / "notes.md", "secret\n");
  fs::create_directories(p.root / "evil");
  fs::create_symlink(p.root.parent_path() / "outside" / "notes.md", p.root / "evil" / "notes.md");
  check_failure(p.run({"show", "evil"}), 4, "symbolic link");
  check_failure(p.run({"propose", "--target", "notes", "--item", "evil", "--content", "x"}), 4, "symbolic link");
  // --file: a missing file is not_found; a folder an I/O error, never empty content.
  check_failure(p.run({"propose", "--target", "notes", "--item", "x", "--file", "missing.md"}), 1, "missing.md: open failed");
  check_failure(p.run({"propose", "--target", "notes", "--item", "x", "--file", "."}), 2, ".: read failed: Is a directory");
  CHECK(cli_test::read_file(p.root.parent_path() / "outside" / "notes.md") == "secret\n");
}

#endif

}  // namespace cli_read_context_test
