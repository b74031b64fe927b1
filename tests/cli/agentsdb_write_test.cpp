// End-to-end tests of `agentsdb write`: the RFC 11.1 / 15.3 / 15.4 examples as
// written, the outcome in text and JSON, the written chunk found by search,
// and every refused request as exit 2 with one line.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

#ifndef AGENTSDB_BIN
TEST_CASE("agentsdb write: end-to-end tests") {
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

TEST_CASE("agentsdb write: the RFC examples, then search finds the chunks with their provenance") {
  io_test::temporary_directory dir;
  const run_result local = agentsdb({"write", "--scope", "local", "--content", "The repo uses X for Y; entrypoint is Z.",
                                     "--kind", "derived-summary", "--confidence", "0.7", "--source",
                                     "docs/ARCHITECTURE.md:12"},
                                    dir.path());
  check_clean_success(local);
  CHECK(local.out.rfind("wrote chunk ", 0) == 0);
  CHECK(contains(local.out, " to the local layer (AGENTS.local.db, new file, 1 chunks)\n"));

  simdjson::dom::parser parser;
  const run_result delta = agentsdb({"write", "--scope", "delta", "--content",
                                     "Invariant: requests to /foo MUST include header Bar.", "--kind", "invariant",
                                     "--confidence", "0.8", "--source", "src/server/router.ts:88", "--json"},
                                    dir.path());
  check_clean_success(delta);
  const auto outcome = cli_test::parse_json(parser, delta.out);
  CHECK(text_of(outcome, "layer") == "delta");
  CHECK(text_of(outcome, "path") == "AGENTS.delta.db");
  CHECK(outcome["created"].get_bool().value());
  CHECK(number_of(outcome, "chunks") == 1);
  const std::uint64_t delta_id = number_of(outcome, "id");

  // A second local write cites the delta chunk by id and comes from a file.
  cli_test::write_file(dir.path() + "/note.md", "Bar is checked by the router middleware.");
  const run_result citing = agentsdb({"write", "--scope", "local", "--file", "note.md", "--kind", "note",
                                      "--confidence", "1", "--source", std::to_string(delta_id), "--json"},
                                     dir.path());
  check_clean_success(citing);
  simdjson::dom::parser citing_parser;
  CHECK(number_of(cli_test::parse_json(citing_parser, citing.out), "chunks") == 2);

  simdjson::dom::parser search_parser;
  const auto found = cli_test::parse_output(
      search_parser, agentsdb({"search", "--query", "Invariant: requests to /foo MUST include header Bar.", "-k", "1",
                               "--json"},
                              dir.path()));
  const auto results = array_of(found, "results");
  REQUIRE(results.size() == 1);
  const simdjson::dom::element hit = results.at(0).value();
  CHECK(text_of(hit, "layer") == "delta");
  const simdjson::dom::element chunk = hit["chunk"].value();
  CHECK(number_of(chunk, "id") == delta_id);
  CHECK(text_of(chunk, "author") == "mcp");
  CHECK(text_of(chunk, "kind") == "invariant");
}

TEST_CASE("agentsdb write: refused requests exit 2 with one line and write nothing") {
  io_test::temporary_directory dir;
  struct bad_case {
    std::vector<std::string> args;
    std::string fragment;
  };
  const std::vector<std::string> ok = {"--content", "x", "--kind", "note", "--confidence", "0.5"};
  const auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> out = {"write"};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  };
  const auto scoped = [&](std::string scope, std::vector<std::string> extra = {}) {
    std::vector<std::string> out = {"write", "--scope", scope};
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
  };
  std::vector<std::string> base_args = scoped("base", ok);
  std::vector<std::string> user_args = scoped("user", ok);
  const std::vector<bad_case> cases = {
      {base_args, "agents write to the local or delta layer, not base"},
      {user_args, "agents write to the local or delta layer, not user"},
      {scoped("global", ok), "--scope must be local or delta, not 'global'"},
      {scoped("local", {"--kind", "note", "--confidence", "0.5"}), "give exactly one of --content TEXT and --file F"},
      {scoped("local", {"--content", "x", "--file", "a", "--kind", "note", "--confidence", "0.5"}),
       "give exactly one of --content TEXT and --file F"},
      {scoped("local", {"--file", "missing.md", "--kind", "note", "--confidence", "0.5"}), "cannot read missing.md"},
      {scoped("local", {"--content", "x", "--kind", "note"}), "--confidence is required"},
      {scoped("local", {"--content", "x", "--kind", "note", "--confidence", "1.5"}),
       "the confidence must be a number from 0 to 1"},
      {scoped("local", {"--content", "x", "--kind", "options", "--confidence", "1"}), "the kind 'options' is reserved"},
      {scoped("local", {"--content", "x", "--kind", "meta.proposal_event", "--confidence", "1"}),
       "the kind 'meta.proposal_event' is reserved"},
      {scoped("local", {"--content", "x", "--kind", "note", "--confidence", "1", "--source", "README"}),
       "source 'README' is neither a chunk id nor file:line"},
      {scoped("local", {"--content", "x", "--kind", "note", "--confidence", "1", "--source", "42"}),
       "source chunk 42 is in none of the layers"},
      {with({"--content", "x", "--kind", "note", "--confidence", "1"}), "--scope is required"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(cli_test::joined(c.args));
    check_error(agentsdb(c.args, dir.path()), 2, c.fragment);
  }
  // Only the writers' lock file may have been made (it stays, like LMDB's).
  for (const std::string& name : cli_test::list_directory(dir.path())) CHECK(name == "AGENTS.local.db.lock");
}

TEST_CASE("agentsdb write: an embedder that differs from the layers' profile is refused, naming both") {
  io_test::temporary_directory dir;
  check_clean_success(agentsdb({"write", "--scope", "local", "--content", "first", "--kind", "note", "--confidence",
                                "0.5"},
                               dir.path()));
  const std::string before = cli_test::read_file(dir.path() + "/AGENTS.local.db");
  check_error(agentsdb({"write", "--scope", "delta", "--content", "second", "--kind", "note", "--confidence", "0.5",
                        "--dim", "32"},
                       dir.path()),
              2, "was embedded with hash(dim=128, norm=none), which differs from the configured embedder hash(dim=32");
  CHECK(cli_test::read_file(dir.path() + "/AGENTS.local.db") == before);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/AGENTS.delta.db"));
}

TEST_CASE("agentsdb write: processes writing to one layer at once lose nothing") {
  io_test::temporary_directory dir;
  constexpr int writers = 4;
  constexpr int writes_each = 5;
  std::vector<int> failures(writers, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < writes_each; ++i) {
        const std::string content = "process " + std::to_string(w) + " note " + std::to_string(i);
        const run_result r = cli_test::run(AGENTSDB_BIN, {"write", "--scope", "delta", "--content", content, "--kind",
                                                          "note", "--confidence", "0.5"},
                                           dir.path());
        if (r.exit_code != 0 || !r.err.empty()) ++failures[w];
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == std::vector<int>(writers, 0));
  simdjson::dom::parser parser;
  const auto listed = cli_test::parse_output(
      parser, agentsdb({"inspect", "--list", "--json", dir.path() + "/AGENTS.delta.db"}));
  std::set<std::uint64_t> ids;
  std::set<std::string> contents;
  for (simdjson::dom::element chunk : array_of(listed, "chunks")) {
    ids.insert(number_of(chunk, "id"));
    contents.insert(text_of(chunk, "content"));
  }
  CHECK(ids.size() == writers * writes_each);
  CHECK(contents.size() == writers * writes_each);
}

#endif
