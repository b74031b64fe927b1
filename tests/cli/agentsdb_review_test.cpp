// End-to-end tests of the review flow (seed 000 sections 15.4 and 15.5):
// `agentsdb propose`, `agentsdb proposals list|show|accept|reject` and
// `agentsdb promote`, with the refused requests as one-line errors.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_agentsdb_review_test {

#ifndef AGENTSDB_BIN
TEST_CASE("agentsdb review: end-to-end tests") {
  MESSAGE("skipping: AGENTSDB_BIN is not defined (the agentsdb target is not part of this build)");
}
#else

using cli_test::agentsdb;
using cli_test::array_of;
using cli_test::check_clean_success;
using cli_test::check_error;
using cli_test::contains;
using cli_test::number_of;
using cli_test::run_result;
using cli_test::text_of;

namespace {

// A repository with a compiled base and two agent writes in the delta layer.
struct review_repo {
  io_test::temporary_directory dir;
  std::uint64_t invariant = 0;
  std::uint64_t note = 0;

  review_repo() {
    cli_test::write_file(dir.path() + "/AGENTS.md", "# Guide\n\nReleases are cut on Fridays.\n");
    check_clean_success(agentsdb({"compile", "--root", ".", "--include", "AGENTS.md", "--out", "AGENTS.db"}, dir.path()));
    invariant = write("Invariant: requests to /foo MUST include header Bar.", "invariant", "src/server/router.ts:88");
    note = write("The build needs cmake 3.25.", "note", "CMakeLists.txt:1");
  }
  std::uint64_t write(const std::string& content, const std::string& kind, const std::string& source) {
    simdjson::dom::parser parser;
    const run_result r = agentsdb({"write", "--scope", "delta", "--content", content, "--kind", kind, "--confidence",
                                   "0.8", "--source", source, "--json"},
                                  dir.path());
    check_clean_success(r);
    return number_of(cli_test::parse_json(parser, r.out), "id");
  }
  run_result run(const std::vector<std::string>& arguments) const { return agentsdb(arguments, dir.path()); }
  std::uint64_t propose(std::uint64_t id) const {
    simdjson::dom::parser parser;
    const run_result r = run({"propose", "--id", std::to_string(id), "--title", "worth keeping", "--json"});
    check_clean_success(r);
    const auto outcome = cli_test::parse_json(parser, r.out);
    CHECK(number_of(outcome, "context_id") == id);
    return number_of(outcome, "proposal_id");
  }
  std::string delta() const { return cli_test::read_file(dir.path() + "/AGENTS.delta.db"); }
};

}  // namespace

TEST_CASE("agentsdb review: propose, list, show, accept and reject, with the state folded from the delta layer") {
  review_repo repo;
  const std::uint64_t first = repo.propose(repo.invariant);
  const std::uint64_t second = repo.propose(repo.note);

  // Proposing again names the pending proposal.
  const run_result again = repo.run({"propose", "--id", std::to_string(repo.invariant)});
  check_clean_success(again);
  CHECK(contains(again.out, "proposal " + std::to_string(first) + ": chunk " + std::to_string(repo.invariant)));
  CHECK(contains(again.out, "already pending"));

  const run_result listed = repo.run({"proposals", "list"});
  check_clean_success(listed);
  CHECK(listed.out.rfind("2 pending of 2 proposals\n", 0) == 0);
  CHECK(contains(listed.out, "proposal " + std::to_string(first) + ": chunk " + std::to_string(repo.invariant) +
                                 " AGENTS.delta.db -> AGENTS.user.db, pending, by mcp"));
  CHECK(contains(listed.out, "worth keeping"));

  const run_result shown = repo.run({"proposals", "show", "--id", std::to_string(first)});
  check_clean_success(shown);
  CHECK(contains(shown.out, "status         pending\n"));
  CHECK(contains(shown.out, "sources        src/server/router.ts:88\n"));
  CHECK(contains(shown.out, "----\nInvariant: requests to /foo MUST include header Bar.\n----\n"));

  simdjson::dom::parser accept_parser;
  const run_result accepted = repo.run(
      {"proposals", "accept", "--ids", std::to_string(first), "--by", "alice", "--reason", "verified", "--json"});
  check_clean_success(accepted);
  const auto accept_json = cli_test::parse_json(accept_parser, accepted.out);
  CHECK(text_of(accept_json, "to") == "AGENTS.user.db");
  CHECK(accept_json["created"].get_bool().value());
  const auto chunks = array_of(accept_json, "chunks");
  REQUIRE(chunks.size() == 1);
  CHECK(number_of(chunks.at(0).value(), "context_id") == repo.invariant);
  CHECK(text_of(chunks.at(0).value(), "outcome") == "promoted");
  CHECK(number_of(chunks.at(0).value(), "proposal_id") == first);

  const run_result rejected =
      repo.run({"proposals", "reject", "--ids", std::to_string(second), "--by", "bob", "--reason", "too vague"});
  check_clean_success(rejected);
  CHECK(rejected.out.rfind("proposal " + std::to_string(second) + ": rejected (decision ", 0) == 0);
  CHECK(cli_test::line_count(rejected.out) == 1);

  simdjson::dom::parser list_parser;
  const auto all = cli_test::parse_output(list_parser, repo.run({"proposals", "list", "--all", "--json"}));
  CHECK(number_of(all, "pending") == 0);
  CHECK(number_of(all, "total") == 2);
  const auto proposals = array_of(all, "proposals");
  REQUIRE(proposals.size() == 2);
  const auto a = proposals.at(0).value();
  CHECK(text_of(a, "status") == "accepted");
  CHECK(text_of(a, "decided_by") == "alice");
  CHECK(text_of(a, "decision_reason") == "verified");
  CHECK(text_of(a, "decision_outcome") == "promoted");
  CHECK(a["exists_in_target"].get_bool().value());
  const auto b = proposals.at(1).value();
  CHECK(text_of(b, "status") == "rejected");
  CHECK(text_of(b, "decided_by") == "bob");
  CHECK(text_of(b, "decision_reason") == "too vague");
  CHECK_FALSE(b["exists_in_target"].get_bool().value());
  CHECK(repo.run({"proposals", "list"}).out == "0 pending of 2 proposals\n");

  // The promoted copy: author human, provenance to the delta chunk, found by
  // search in the user layer (which overrides the delta copy).
  simdjson::dom::parser chunk_parser;
  const auto copy = cli_test::parse_output(
      chunk_parser, repo.run({"inspect", "--layer", "AGENTS.user.db", "--id", std::to_string(repo.invariant), "--json"}));
  CHECK(text_of(copy, "author") == "human");
  const auto sources = array_of(copy, "sources");
  REQUIRE(sources.size() == 2);
  CHECK(text_of(sources.at(1).value(), "type") == "chunk_id");
  CHECK(number_of(sources.at(1).value(), "value") == repo.invariant);
  simdjson::dom::parser search_parser;
  const auto found = cli_test::parse_output(
      search_parser,
      repo.run({"search", "--query", "Invariant: requests to /foo MUST include header Bar.", "-k", "1", "--json"}));
  CHECK(text_of(array_of(found, "results").at(0).value(), "layer") == "user");

  // Decided proposals stay decided.
  check_error(repo.run({"proposals", "accept", "--ids", std::to_string(second)}), 2, "already rejected by bob");
  check_error(repo.run({"proposals", "reject", "--ids", std::to_string(first), "--reason", "x"}), 2,
              "already accepted by alice");
}

TEST_CASE("agentsdb promote: the RFC 15.5 command as written, no-op repeats, --supersede, delta untouched") {
  review_repo repo;
  const std::string delta_before = repo.delta();
  const std::string ids = std::to_string(repo.invariant) + "," + std::to_string(repo.note);
  const run_result promoted = repo.run({"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids", ids});
  check_clean_success(promoted);
  CHECK(contains(promoted.out, "chunk " + std::to_string(repo.invariant) + ": promoted (decision "));
  CHECK(contains(promoted.out, "AGENTS.user.db (new file) updated; decisions recorded in AGENTS.delta.db\n"));
  // The delta layer's records are carried over; decisions are appended.
  simdjson::dom::parser delta_parser;
  const auto delta = cli_test::parse_output(delta_parser, repo.run({"inspect", "AGENTS.delta.db", "--list", "--json"}));
  const auto delta_chunks = array_of(delta, "chunks");
  REQUIRE(delta_chunks.size() == 4);
  CHECK(number_of(delta_chunks.at(0).value(), "id") == repo.invariant);
  CHECK(text_of(delta_chunks.at(0).value(), "author") == "mcp");
  CHECK(text_of(delta_chunks.at(2).value(), "kind") == "meta.proposal_event");
  CHECK(repo.delta().size() > delta_before.size());

  const std::string user_before = cli_test::read_file(repo.dir.path() + "/AGENTS.user.db");
  simdjson::dom::parser repeat_parser;
  const auto repeat = cli_test::parse_output(
      repeat_parser, repo.run({"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids", ids, "--json"}));
  CHECK(text_of(array_of(repeat, "chunks").at(0).value(), "outcome") == "unchanged");
  CHECK(cli_test::read_file(repo.dir.path() + "/AGENTS.user.db") == user_before);

  // --supersede replaces only a copy with other content (library tests cover
  // that case): with equal content the chunk stays unchanged.
  const run_result conflict = repo.run({"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids",
                                        std::to_string(repo.note), "--supersede", "--json"});
  check_clean_success(conflict);
  CHECK(contains(conflict.out, "\"outcome\": \"unchanged\""));
  CHECK(cli_test::read_file(repo.dir.path() + "/AGENTS.user.db") == user_before);
}

TEST_CASE("agentsdb diff: new delta chunks, user/delta conflicts and pending proposals, in text and JSON") {
  review_repo repo;
  const std::uint64_t proposal = repo.propose(repo.note);
  check_clean_success(repo.run({"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids",
                                std::to_string(repo.invariant)}));
  const run_result text =
      repo.run({"diff", "--base", "AGENTS.db", "--delta", "AGENTS.delta.db", "--user", "AGENTS.user.db"});
  check_clean_success(text);
  CHECK(contains(text.out, "new in delta (1)\n  + " + std::to_string(repo.note) +
                               " note (mcp, 0.8): The build needs cmake 3.25.\n"));
  CHECK(contains(text.out, "overrides (0)\n"));
  CHECK(contains(text.out, "conflicts between user and delta (0; the user copy is in effect)\n"));
  CHECK(contains(text.out, "pending proposals (1)\n  proposal " + std::to_string(proposal) + ": chunk " +
                               std::to_string(repo.note) + " by mcp - worth keeping\n"));

  simdjson::dom::parser parser;
  const auto json = cli_test::parse_output(
      parser, repo.run({"diff", "--base", "AGENTS.db", "--delta", "AGENTS.delta.db", "--json"}));
  CHECK(array_of(json, "added").size() == 2);  // without the user layer, the promoted chunk is new too
  CHECK(array_of(json, "overrides").size() == 0);
  CHECK(number_of(array_of(json, "pending_proposals").at(0).value(), "proposal_id") == proposal);
  CHECK(json["user"].is_null());

  check_error(repo.run({"diff", "--base", "AGENTS.db", "--delta", "nope.db"}), 2, "nope.db");
  check_error(repo.run({"diff", "--delta", "AGENTS.delta.db"}), 2, "--base is required");
}

TEST_CASE("agentsdb inspect --id follows provenance from a promoted chunk to its delta copy") {
  review_repo repo;
  check_clean_success(repo.run({"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids",
                                std::to_string(repo.invariant)}));
  const std::string id = std::to_string(repo.invariant);
  const run_result text = repo.run({"inspect", "--layer", "AGENTS.user.db", "--id", id});
  check_clean_success(text);
  CHECK(contains(text.out, "provenance\n  chunk " + id + " in AGENTS.user.db (invariant, human, 0.8): Invariant:"));
  CHECK(contains(text.out, "\n      <- src/server/router.ts:88\n"));
  CHECK(contains(text.out, "\n      <- chunk " + id + " in AGENTS.delta.db (invariant, mcp, 0.8): Invariant:"));

  simdjson::dom::parser parser;
  const auto json = cli_test::parse_output(parser, repo.run({"inspect", "--layer", "AGENTS.user.db", "--id", id, "--json"}));
  const auto chain = array_of(json, "provenance");
  REQUIRE(chain.size() == 2);
  CHECK(text_of(chain.at(1).value(), "layer") == "AGENTS.delta.db");
  CHECK(number_of(chain.at(1).value(), "depth") == 1);
  CHECK(text_of(chain.at(1).value(), "author") == "mcp");
}

TEST_CASE("agentsdb compact: a new base with the user layer merged, inputs untouched, --archive rotates") {
  review_repo repo;
  check_clean_success(repo.run({"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids",
                                std::to_string(repo.invariant)}));
  const std::string base_before = cli_test::read_file(repo.dir.path() + "/AGENTS.db");
  const run_result compacted =
      repo.run({"compact", "--base", "AGENTS.db", "--user", "AGENTS.user.db", "--out", "AGENTS.db.new"});
  check_clean_success(compacted);
  CHECK(contains(compacted.out, "wrote AGENTS.db.new: "));
  CHECK(contains(compacted.out, "0 replaced, 0 removed by tombstones, 1 added)"));
  CHECK(cli_test::read_file(repo.dir.path() + "/AGENTS.db") == base_before);
  check_clean_success(repo.run({"validate", "AGENTS.db.new"}));
  check_clean_success(repo.run({"inspect", "--layer", "AGENTS.db.new", "--id", std::to_string(repo.invariant)}));

  simdjson::dom::parser parser;
  const auto json = cli_test::parse_output(
      parser, repo.run({"compact", "--base", "AGENTS.db", "--user", "AGENTS.user.db", "--out", "second.db",
                        "--archive", "archive", "--json"}));
  CHECK(cli_test::read_file(repo.dir.path() + "/second.db") == cli_test::read_file(repo.dir.path() + "/AGENTS.db.new"));
  CHECK(array_of(json, "archived").size() == 2);
  CHECK_FALSE(std::filesystem::exists(repo.dir.path() + "/AGENTS.user.db"));
  CHECK_FALSE(std::filesystem::exists(repo.dir.path() + "/AGENTS.delta.db"));
  CHECK(cli_test::list_directory(repo.dir.path() + "/archive").size() == 2);

  check_error(repo.run({"compact", "--base", "AGENTS.db", "--user", "AGENTS.db.new", "--out", "AGENTS.db"}), 2,
              "compact never writes its inputs");
  check_error(repo.run({"compact", "--base", "AGENTS.db", "--user", "missing.db", "--out", "x.db"}), 2, "missing.db");
}

TEST_CASE("agentsdb review: refused requests exit with one line and write nothing") {
  review_repo repo;
  const std::uint64_t proposal = repo.propose(repo.note);
  const std::string delta_before = repo.delta();
  struct bad_case {
    std::vector<std::string> args;
    int exit_code;
    const char* fragment;
  };
  const std::string note = std::to_string(repo.note);
  const std::vector<bad_case> cases = {
      {{"propose", "--id", "1234"}, 1, "chunk 1234 is not in the delta layer AGENTS.delta.db"},
      {{"propose", "--id", note, "--target", "base"}, 2, "the target of a proposal must be user, not 'base'"},
      {{"propose", "--id", note, "--target", "../AGENTS.db"}, 2, "must be user"},
      {{"propose", "--id", "abc"}, 2, "--id"},
      {{"propose"}, 2, "--id is required"},
      {{"proposals", "show", "--id", "99"}, 1, "there is no proposal 99"},
      {{"proposals", "accept", "--ids", "99"}, 1, "there is no proposal 99"},
      {{"proposals", "accept", "--ids", "1,x"}, 2, "--ids"},
      {{"proposals", "reject", "--ids", std::to_string(proposal)}, 2, "--reason is required"},
      {{"proposals", "reject", "--ids", std::to_string(proposal), "--reason", ""}, 2, "a rejection needs a reason"},
      {{"proposals", "bogus"}, 2, "bogus"},
      {{"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.db", "--ids", note}, 2,
       "the base layer is never a promotion target"},
      {{"promote", "--from", "AGENTS.delta.db", "--to", "./sub/../AGENTS.db", "--ids", note}, 2,
       "the base layer is never a promotion target"},
      {{"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids", "1234"}, 1,
       "chunk 1234 is not in the delta layer"},
      {{"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.delta.db", "--ids", note}, 2, "same file"},
      {{"promote", "--from", "missing.db", "--to", "AGENTS.user.db", "--ids", note}, 1,
       "missing.db: the delta layer does not exist"},
      {{"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db", "--ids", std::to_string(proposal)}, 2,
       "is a meta.proposal_event record, not context to promote"},
      {{"promote", "--from", "AGENTS.delta.db", "--to", "AGENTS.user.db"}, 2, "--ids is required"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(cli_test::joined(c.args));
    check_error(repo.run(c.args), c.exit_code, c.fragment);
  }
  CHECK(repo.delta() == delta_before);
  CHECK_FALSE(std::filesystem::exists(repo.dir.path() + "/AGENTS.user.db"));
}

TEST_CASE("agentsdb: text read from a layer reaches the terminal escaped in every human-readable output") {
  // A chunk, its source, its kind and a proposal's title and author holding
  // ESC, BEL and a bidi override: an escape sequence in a layer file must not
  // act on the terminal of whoever inspects, searches, diffs or reviews it.
  review_repo repo;
  const std::string esc = "\x1b[2J\x1b]0;title\x07";
  const std::uint64_t hostile = repo.write("hello " + esc + "\nsecond line \xE2\x80\xAE", "note" + esc, "docs/" + esc + ".md:1");
  const run_result proposed = repo.run({"propose", "--id", std::to_string(hostile), "--title", "T" + esc, "--by", "bob" + esc});
  check_clean_success(proposed);
  simdjson::dom::parser parser;
  const auto listed_json = cli_test::parse_output(parser, repo.run({"proposals", "list", "--json"}));
  const std::string proposal = std::to_string(number_of(array_of(listed_json, "proposals").at(0), "proposal_id"));
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", "AGENTS.delta.db", "--list"},
      {"inspect", "AGENTS.delta.db", "--id", std::to_string(hostile)},
      {"search", "--delta", "AGENTS.delta.db", "--query", "hello"},
      {"diff", "--base", "AGENTS.db", "--delta", "AGENTS.delta.db"},
      {"proposals", "list"},
      {"proposals", "show", "--id", proposal},
  };
  for (const auto& command : commands) {
    CAPTURE(cli_test::joined(command));
    const run_result r = repo.run(command);
    check_clean_success(r);
    CHECK(r.out.find('\x1b') == std::string::npos);
    CHECK(r.out.find('\x07') == std::string::npos);
    CHECK(r.out.find("\xE2\x80\xAE") == std::string::npos);
    CHECK(contains(r.out, "\\x1b[2J\\x1b]0;title\\x07"));
  }
  // A multi-line content shown whole keeps its lines; a preview shows them on one.
  const run_result shown = repo.run({"inspect", "AGENTS.delta.db", "--id", std::to_string(hostile)});
  CHECK(contains(shown.out, "\\x07\nsecond line \\u202e\n"));
  CHECK(contains(repo.run({"search", "--delta", "AGENTS.delta.db", "--query", "hello"}).out, "\\x07 second line"));
  // The columns of inspect --list keep their widths when what they show is cut.
  repo.write("x", "a-kind-longer-than-the-column", "docs/a/path/longer/than/its/column/file.md:12");
  const run_result table = repo.run({"inspect", "AGENTS.delta.db", "--list"});
  check_clean_success(table);
  CAPTURE(table.out);
  CHECK(contains(table.out, " a-kind-longer... mcp     0.80  docs/a/path/longer/than/i... x\n"));
  CHECK(contains(table.out, " note\\x1b[2J\\x... mcp     0.80  docs/\\x1b[2J\\x1b]0;title\\... hello "));
  // The JSON output carries the text itself, escaped as JSON.
  const auto chunk = cli_test::parse_output(parser, repo.run({"inspect", "AGENTS.delta.db", "--id", std::to_string(hostile), "--json"}));
  CHECK(text_of(chunk, "kind") == "note" + esc);
  CHECK(text_of(array_of(chunk, "provenance").at(0).value(), "kind") == "note" + esc);
  CHECK(std::string(array_of(array_of(chunk, "provenance").at(0).value(), "sources").at(0).get_string().value()) ==
        "docs/" + esc + ".md:1");
}

#endif

}  // namespace cli_agentsdb_review_test
