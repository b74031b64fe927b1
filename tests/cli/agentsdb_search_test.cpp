// End-to-end tests of `agentsdb search`: the real binary over layer files
// written by the library, and over the reference fixtures (skipped, saying
// so, when absent). JSON output is parsed; text output is checked by line.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"
#include "support/hash_layer.hpp"

namespace cli_agentsdb_search_test {

#ifndef AGENTSDB_BIN
#error "AGENTSDB_BIN must name the agentsdb binary under test"
#endif

namespace agdb = agentctx::agdb;
using cli_test::agentsdb;
using cli_test::array_of;
using cli_test::check_error;
using cli_test::contains;
using cli_test::run_result;

namespace {

using entry = test_support::layer_entry;

// A hash-embedded layer on disk (tests/support/hash_layer.hpp).
void write_hash_layer(const std::string& path, const std::vector<entry>& entries, bool with_metadata = true) {
  test_support::write_hash_layer(agentctx::io::default_file_system(), path, entries, with_metadata);
}

struct result_row {
  std::string layer;
  std::uint64_t id;
  std::string content;
  std::size_t conflicts;
};

std::vector<result_row> rows_of(simdjson::dom::element root) {
  std::vector<result_row> rows;
  for (simdjson::dom::element hit : array_of(root, "results")) {
    const simdjson::dom::element chunk = hit["chunk"].value();
    rows.push_back({std::string(hit["layer"].get_string().value()), chunk["id"].get_uint64().value(),
                    std::string(chunk["content"].get_string().value()),
                    array_of(hit, "conflicts").size()});
  }
  return rows;
}

// A project folder with the standard base and local layers.
struct project {
  io_test::temporary_directory dir;
  project() {
    write_hash_layer(dir.path() + "/AGENTS.db",
                     {{10, "canonical", "Releases are cut from main every Tuesday.", {agdb::source_ref::to_string("RELEASE.md:1")}},
                      {11, "canonical", "The zebra crossing module validates pedestrian input."},
                      {12, "options", "{\"theme\":\"dark\"}"},
                      {13, "note", "Notes are kept short."}});
    write_hash_layer(dir.path() + "/AGENTS.local.db",
                     {{10, "canonical", "Releases are cut from the release branch on Tuesdays."}});
  }
  std::string path() const { return dir.path(); }
};

}  // namespace

TEST_CASE("agentsdb search: the standard files of the current directory, local overriding base") {
  project p;
  simdjson::dom::parser parser;
  const run_result r = agentsdb({"search", "--query", "Releases are cut from main every Tuesday.", "--json"}, p.path());
  const auto root = cli_test::parse_output(parser, r);
  CHECK(root["mode"].get_string().value() == "vector");
  CHECK(root["k"].get_uint64().value() == 10);
  std::set<std::string> layers;
  for (simdjson::dom::element layer : array_of(root, "layers")) {
    layers.insert(std::string(layer["layer"].get_string().value()));
    CHECK(layer["embedding_profile"]["backend"].get_string().value() == "hash");
  }
  CHECK(layers == std::set<std::string>{"base", "local"});
  const auto rows = rows_of(root);
  // Id 10 answers once, from local, with base's different copy as a conflict;
  // options is a reserved kind and is left out.
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].layer == "local");
  CHECK(rows[0].id == 10);
  CHECK(rows[0].conflicts == 1);
  std::set<std::uint64_t> ids;
  for (const auto& row : rows) ids.insert(row.id);
  CHECK(ids == std::set<std::uint64_t>{10, 11, 13});
  const simdjson::dom::element conflict = root["results"].at(0)["conflicts"].at(0).value();
  CHECK(conflict["layer"].get_string().value() == "base");
  CHECK(conflict["content_sha256"].get_string().value().size() == 64);

  const run_result text = agentsdb({"search", "--query", "zebra crossing", "-k", "1"}, p.path());
  CAPTURE(text.err);
  CHECK(text.exit_code == 0);
  CHECK(text.err.empty());
  CHECK(text.out.rfind("1. [base] id 11  score ", 0) == 0);
  CHECK(contains(text.out, "canonical  human  confidence 1.00\n"));
  CHECK(contains(text.out, "   The zebra crossing module validates pedestrian input.\n"));
  CHECK_FALSE(contains(text.out, "2. "));
}

TEST_CASE("agentsdb search: --layers, --kind, explicit files, hybrid mode") {
  project p;
  simdjson::dom::parser parser;
  SUBCASE("--layers base: the base copy, no conflict") {
    const auto rows = rows_of(cli_test::parse_output(parser, agentsdb({"search", "--query", "Releases", "--layers", "base", "--json"}, p.path())));
    REQUIRE_FALSE(rows.empty());
    for (const auto& row : rows) CHECK(row.layer == "base");
    for (const auto& row : rows) CHECK(row.conflicts == 0);
  }
  SUBCASE("--kind") {
    auto rows = rows_of(cli_test::parse_output(parser, agentsdb({"search", "--query", "x", "--kind", "options", "--json"}, p.path())));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].id == 12);
    rows = rows_of(cli_test::parse_output(parser, agentsdb({"search", "--query", "x", "--kind", "note", "--kind", "options", "--json"}, p.path())));
    CHECK(rows.size() == 2);
  }
  SUBCASE("explicit files: only those are searched") {
    const auto rows = rows_of(cli_test::parse_output(parser, agentsdb({"search", "--base", p.path() + "/AGENTS.db", "--query", "Releases", "--json"})));
    for (const auto& row : rows) CHECK(row.layer == "base");
  }
  SUBCASE("hybrid: lexical scores reported, the overridden base copy never returned") {
    const auto root = cli_test::parse_output(parser, agentsdb({"search", "--query", "main Tuesday", "--mode", "hybrid", "--json"}, p.path()));
    const auto rows = rows_of(root);
    REQUIRE_FALSE(rows.empty());
    for (const auto& row : rows) CHECK_FALSE((row.layer == "base" && row.id == 10));
    for (simdjson::dom::element hit : array_of(root, "results")) {
      CHECK(hit["lexical_score"].is_double());
    }
    const run_result text = agentsdb({"search", "--query", "zebra", "--mode", "hybrid", "-k", "1"}, p.path());
    CHECK(text.exit_code == 0);
    CHECK(contains(text.out, "bm25 "));
  }
  SUBCASE("--query-vec") {
    std::string vec = "[";
    for (int i = 0; i < 128; ++i) vec += (i ? ",0" : "1");
    vec += "]";
    const auto rows = rows_of(cli_test::parse_output(parser, agentsdb({"search", "--query-vec", vec, "-k", "2", "--json"}, p.path())));
    CHECK(rows.size() == 2);
  }
}

TEST_CASE("agentsdb search: errors exit 1 or 2 with one line") {
  project p;
  io_test::temporary_directory empty;
  struct error_case {
    std::vector<std::string> args;
    std::string cwd;
    int exit_code;
    std::string fragment;
  };
  const std::vector<error_case> cases = {
      {{"search"}, p.path(), 2, "give --query TEXT or --query-vec JSON"},
      {{"search", "--query", ""}, p.path(), 2, "--query must not be empty"},
      {{"search", "--query", "x", "--mode", "fuzzy"}, p.path(), 2, "--mode must be vector or hybrid"},
      {{"search", "--query", "x", "--metric", "l1"}, p.path(), 2, "--metric must be cosine or dot"},
      {{"search", "--query", "x", "--layers", "base,global"}, p.path(), 2, "unknown layer 'global'"},
      {{"search", "--query", "x", "-k", "0"}, p.path(), 2, "-k"},
      {{"search", "--query", "x", "--threads", "99999999999"}, p.path(), 2, "--threads: must be at most 1024, not '99999999999'"},
      {{"search", "--query", "x", "--threads", "1025"}, p.path(), 2, "--threads: must be at most 1024, not '1025'"},
      {{"search", "--query-vec", "[1,2,3]"}, p.path(), 2, "the query vector has 3 values but the layers have 128"},
      {{"search", "--query-vec", "[1,\"a\"]"}, p.path(), 2, "--query-vec: value 2 is not a number"},
      {{"search", "--query-vec", "{}"}, p.path(), 2, "--query-vec: not a JSON array of numbers"},
      {{"search", "--query-vec", "[1e39]"}, p.path(), 2, "--query-vec: value 1 is not a finite f32"},
      {{"search", "--query-vec", "[1,2"}, p.path(), 2, "--query-vec: not a JSON array of numbers"},
      {{"search", "--query-vec", "[1]", "--mode", "hybrid"}, p.path(), 2, "--mode hybrid needs --query"},
      {{"search", "--query", "x"}, empty.path(), 1, "no layer to search: none of AGENTS.db, AGENTS.user.db"},
      {{"search", "--query", "x", "--layers", "user"}, p.path(), 1, "no layer to search"},
      {{"search", "--query", "x", "--base", "missing.db"}, p.path(), 2, "missing.db"},
      {{"search", "--query", "x", "--embedder", "hash", "--dim", "64"}, p.path(), 2, "hash(dim=64"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.fragment);
    check_error(agentsdb(c.args, c.cwd), c.exit_code, c.fragment);
  }
}

TEST_CASE("agentsdb search: a layer declaring a dim beyond the limit is refused with one line, exit 1") {
  io_test::temporary_directory dir;
  agdb::layer_contents layer;  // no rows: any dim is consistent with the (empty) matrix
  layer.embeddings.dim = agdb::layer_stack::max_dim + 1;
  REQUIRE(agdb::write_layer(agentctx::io::default_file_system(), dir.path() + "/AGENTS.db", layer).has_value());
  check_error(agentsdb({"search", "--query", "anything"}, dir.path()), 1,
              "the embedding matrix has dim 65537; search supports at most 65536");
}

TEST_CASE("agentsdb search: a layer without metadata is searched with the hash embedder and a warning") {
  io_test::temporary_directory dir;
  write_hash_layer(dir.path() + "/AGENTS.db", {{1, "canonical", "alpha beta"}, {2, "canonical", "gamma delta"}}, false);
  const run_result r = agentsdb({"search", "--query", "gamma delta", "-k", "1"}, dir.path());
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("1. [base] id 2  score 1.0000", 0) == 0);
  CHECK(contains(r.err, "agentsdb: warning: no selected layer records an embedding profile; assuming hash(dim=128, norm=none)"));
}

TEST_CASE("agentsdb search: the reference fixtures") {
  const auto base = cli_test::agdb_fixture("AGENTS.db");
  const auto delta = cli_test::agdb_fixture("AGENTS.delta.db");
  if (!base || !delta) return;  // agdb_fixture said why
  simdjson::dom::parser parser;
  // Chunk 2's exact content finds chunk 2 first, with the hash embedder at the
  // layer's dimension (384).
  simdjson::dom::element chunk;
  const run_result inspected = agentsdb({"inspect", *base, "--id", "2", "--json"});
  REQUIRE(inspected.exit_code == 0);
  REQUIRE(parser.parse(inspected.out).get(chunk) == simdjson::SUCCESS);
  const std::string content(chunk["content"].get_string().value());
  simdjson::dom::parser search_parser;
  const auto root = cli_test::parse_output(search_parser, agentsdb({"search", "--base", *base, "--query", content, "-k", "3", "--json"}));
  const auto rows = rows_of(root);
  REQUIRE_FALSE(rows.empty());
  CHECK(rows[0].id == 2);
  CHECK(root["results"].at(0)["score"].get_double().value() == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(array_of(root, "warnings").size() == 1);

  // The delta was embedded by a model this build cannot run: a text query is
  // refused naming the profile, a vector query works.
  check_error(agentsdb({"search", "--base", *base, "--delta", *delta, "--query", "mental model"}), 2,
              "candle:all-minilm-l6-v2@main(dim=384, norm=none)");
  std::string vec = "[";
  for (int i = 0; i < 384; ++i) vec += (i ? ",0.05" : "0.05");
  vec += "]";
  const auto by_vector = rows_of(cli_test::parse_output(search_parser, agentsdb({"search", "--base", *base, "--delta", *delta, "--query-vec", vec, "--json"})));
  CHECK(by_vector.size() == 10);
  // Configuring the hash embedder explicitly is a mismatch naming both profiles.
  const run_result mismatch =
      agentsdb({"search", "--base", *base, "--delta", *delta, "--query", "x", "--embedder", "hash", "--dim", "384"});
  check_error(mismatch, 2, "hash(dim=384, norm=none)");
  CHECK(contains(mismatch.err, "candle:all-minilm-l6-v2@main"));
}

}  // namespace cli_agentsdb_search_test
