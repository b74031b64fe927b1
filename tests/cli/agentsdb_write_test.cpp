// End-to-end tests of `agentsdb write`: the RFC 11.1 / 15.3 / 15.4 examples as
// written, the outcome in text and JSON, the written chunk found by search,
// and every refused request as exit 2 with one line.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "agdb/concurrent_writes.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_agentsdb_write_test {

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
  CHECK(contains(local.out, " to the local layer (AGENTS.local.db, new file, 1 chunk)\n"));

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

  // --file - reads standard input.
  const run_result piped = agentsdb({"write", "--scope", "local", "--file", "-", "--kind", "note", "--confidence", "1",
                                     "--json"},
                                    dir.path(), dir.path() + "/note.md");
  check_clean_success(piped);
  simdjson::dom::parser piped_parser;
  CHECK(number_of(cli_test::parse_json(piped_parser, piped.out), "chunks") == 3);

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
      {scoped("global", ok), "--scope must be local or delta, not 'global' (run 'agentsdb write --help' for usage)\n"},
      {scoped("local", {"--kind", "note", "--confidence", "0.5"}), "give exactly one of --content TEXT and --file F"},
      {scoped("local", {"--content", "x", "--file", "a", "--kind", "note", "--confidence", "0.5"}),
       "give exactly one of --content TEXT and --file F"},
      {scoped("local", {"--file", "missing.md", "--kind", "note", "--confidence", "0.5"}), "missing.md: open failed: No such file or directory"},
      {scoped("local", {"--file", ".", "--kind", "note", "--confidence", "0.5"}), ".: read failed: Is a directory"},
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
  // Four writers, each running its writes one after the other, so that four
  // processes write at any moment; none finds the layer at first. (The
  // 4 x 200 stress of the same protocol, cheaper without a process start per
  // write, is agdb/layer_append_concurrency_test.cpp.)
  io_test::temporary_directory dir;
  constexpr std::size_t writers = 4;
  constexpr std::size_t writes_each = 5;
  std::vector<std::vector<run_result>> runs(writers);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      for (std::size_t i = 0; i < writes_each; ++i) {
        runs[w].push_back(cli_test::run(AGENTSDB_BIN,
                                         {"write", "--scope", "delta", "--content", agdb_test::agent_note(w, i),
                                          "--kind", "note", "--confidence", "0.5", "--dim", "16", "--json"},
                                         dir.path()));
      }
    });
  }
  for (auto& t : threads) t.join();

  std::vector<std::vector<agdb_test::reported_write>> reported(writers);
  std::size_t created = 0;
  for (std::size_t w = 0; w < writers; ++w) {
    for (std::size_t i = 0; i < writes_each; ++i) {
      CAPTURE(w);
      CAPTURE(i);
      simdjson::dom::parser parser;
      const auto outcome = cli_test::parse_output(parser, runs[w][i]);
      CHECK(runs[w][i].err.empty());
      if (outcome["created"].get_bool().value()) ++created;
      reported[w].push_back({agdb_test::agent_note(w, i), static_cast<std::uint32_t>(number_of(outcome, "id")),
                             static_cast<std::size_t>(number_of(outcome, "chunks"))});
    }
  }
  CHECK(created == 1);  // exactly one process found no layer
  agdb_test::check_concurrent_writes(agentctx::io::default_file_system(), dir.path() + "/AGENTS.delta.db", {},
                                     reported);
}

#endif

}  // namespace cli_agentsdb_write_test
