// The AGDB MCP tools (agentctx/agdb/mcp_tools.hpp) through the MCP server
// core: search over the layers with precedence, filters and conflicts; agent
// writes that later searches find; proposals recorded in the delta layer.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "mcp/mcp_test_support.hpp"
#include "support/hash_layer.hpp"

namespace agdb_mcp_tools_test {

namespace agdb = agentctx::agdb;
using agdb::layer_id;

namespace {

std::string text(simdjson::dom::element e, std::string_view key) { return std::string(e[key].get_string().value()); }
std::uint64_t number(simdjson::dom::element e, std::string_view key) { return e[key].get_uint64().value(); }
// The array member `key`, named: iterating a temporary trips GCC 12's -Wdangling-pointer inside simdjson.
simdjson::dom::array array(simdjson::dom::element e, std::string_view key) {
  simdjson::dom::array out;
  REQUIRE(e[key].get(out) == simdjson::SUCCESS);
  return out;
}

// The (layer, id) of each result, in rank order.
std::vector<std::pair<std::string, std::uint64_t>> hits_of(simdjson::dom::element search) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  std::uint64_t rank = 0;
  for (const simdjson::dom::element hit : array(search, "results")) {
    CHECK(number(hit, "rank") == ++rank);
    out.emplace_back(text(hit, "layer"), number(hit, "id"));
  }
  return out;
}

// Base: 1 canonical, 2 note, 3 tombstone-free; user overrides 1 with other
// content; delta holds 31 (and a meta record); local overrides 2 with the
// same content.
void write_layers(mcp_test::agdb_server& f) {
  test_support::write_hash_layer(f.fs, f.path(layer_id::base),
                                 {{1, "canonical", "Releases are cut from the release branch on Tuesdays."},
                                  {2, "note", "The CLI lives in cli/."},
                                  {3, "options", "{\"k\":1}"}});
  test_support::write_hash_layer(f.fs, f.path(layer_id::user),
                                 {{1, "canonical", "Releases are cut on Wednesdays since 2024.",
                                   {agdb::source_ref::to_string("RELEASE.md:3"), agdb::source_ref::to_chunk(2)}}});
  test_support::write_hash_layer(f.fs, f.path(layer_id::delta),
                                 {{31, "invariant", "Requests to /foo must include header Bar."},
                                  {32, "meta.note", "bookkeeping"}});
  test_support::write_hash_layer(f.fs, f.path(layer_id::local), {{2, "note", "The CLI lives in cli/."}});
}

}  // namespace

TEST_CASE("agents_search: precedence, provenance, conflicts, layer and kind selection") {
  mcp_test::agdb_server fixture;
  write_layers(fixture);
  mcp_test::session s = mcp_test::initialized_session(fixture);

  const auto all = s.call_ok("agents_search", R"({"query":"Releases are cut on Wednesdays since 2024."})");
  CHECK(text(all, "query") == "Releases are cut on Wednesdays since 2024.");
  CHECK(number(all, "k") == 10);
  CHECK(all["warnings"].get_array().value().size() == 0);
  std::vector<std::string> searched;
  for (const auto layer : array(all, "layers")) searched.push_back(text(layer, "layer"));
  CHECK(searched == std::vector<std::string>{"local", "user", "delta", "base"});
  // 1 from user (overrides base), 2 from local (overrides base), 31 from delta;
  // options and meta.* are not returned by default.
  const auto hits = hits_of(all);
  REQUIRE(hits.size() == 3);
  CHECK(hits.front() == std::pair<std::string, std::uint64_t>{"user", 1});
  CHECK(std::set<std::pair<std::string, std::uint64_t>>(hits.begin(), hits.end()) ==
        std::set<std::pair<std::string, std::uint64_t>>{{"user", 1}, {"local", 2}, {"delta", 31}});

  const simdjson::dom::element top = all["results"].at(0).value();
  CHECK(text(top, "kind") == "canonical");
  CHECK(text(top, "content") == "Releases are cut on Wednesdays since 2024.");
  CHECK(text(top, "author") == "human");
  CHECK(top["confidence"].get_double().value() == 1.0);
  CHECK(top["score"].get_double().value() > 0.99);
  CHECK(simdjson::minify(top["sources"].value()) ==
        R"([{"type":"source_string","value":"RELEASE.md:3"},{"type":"chunk_id","value":2}])");
  // Seed 000 section 12: the base copy of 1 differs, so it is surfaced.
  const simdjson::dom::array conflicts = top["conflicts"].get_array().value();
  REQUIRE(conflicts.size() == 1);
  CHECK(text(conflicts.at(0).value(), "layer") == "base");
  CHECK(text(conflicts.at(0).value(), "content_sha256") ==
        agentctx::to_hex(agentctx::sha256("Releases are cut from the release branch on Tuesdays.")));
  // Local's copy of 2 has the base's content: no conflict.
  for (const auto hit : array(all, "results")) {
    if (number(hit, "id") == 2) CHECK(hit["conflicts"].get_array().value().size() == 0);
  }

  // Base alone still answers with its own copy; k bounds the results.
  CHECK(hits_of(s.call_ok("agents_search", R"({"query":"Releases","layers":["base"],"k":1})")) ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"base", 1}});
  CHECK(hits_of(s.call_ok("agents_search", R"({"query":"x","k":2})")).size() == 2);
  // Kind filters: exact kinds, reserved kinds on request, meta.*; an empty list matches nothing.
  CHECK(hits_of(s.call_ok("agents_search", R"({"query":"x","filters":{"kind":["invariant"]}})")) ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"delta", 31}});
  CHECK(hits_of(s.call_ok("agents_search", R"({"query":"x","filters":{"kind":["options"]}})")) ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"base", 3}});
  CHECK(hits_of(s.call_ok("agents_search", R"({"query":"x","filters":{"kind":["meta.*"]}})")) ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"delta", 32}});
  CHECK(hits_of(s.call_ok("agents_search", R"({"query":"x","filters":{"kind":[]}})")).empty());
  CHECK(hits_of(s.call_ok("agents_search", R"({"query":"x","filters":{}})")).size() == 3);
  // Zero layers: nothing searched, nothing found, no error.
  const auto none = s.call_ok("agents_search", R"({"query":"x","layers":[]})");
  CHECK(hits_of(none).empty());
  CHECK(none["layers"].get_array().value().size() == 0);
  // The dotted alias.
  CHECK(hits_of(s.call_ok("agents.search", R"({"query":"x","layers":["local"]})")) ==
        std::vector<std::pair<std::string, std::uint64_t>>{{"local", 2}});
}

TEST_CASE("agents_search: missing layers are a warning; incompatible layers are a tool error") {
  mcp_test::agdb_server fixture;
  mcp_test::session s = mcp_test::initialized_session(fixture);
  const auto empty = s.call_ok("agents_search", R"({"query":"anything"})");
  CHECK(hits_of(empty).empty());
  REQUIRE(empty["warnings"].get_array().value().size() == 1);
  CHECK(std::string_view(empty["warnings"].at(0).get_string().value()) ==
        "none of the selected layers exists (/repo/AGENTS.db, /repo/AGENTS.user.db, /repo/AGENTS.delta.db, "
        "/repo/AGENTS.local.db)");

  // A layer without a recorded profile is searched with a warning.
  test_support::write_hash_layer(fixture.fs, fixture.path(layer_id::base), {{1, "note", "old tool"}}, false);
  const auto warned = s.call_ok("agents_search", R"({"query":"old tool"})");
  CHECK(hits_of(warned).size() == 1);
  CHECK(warned["warnings"].get_array().value().size() == 1);

  // A layer of another dimension cannot be searched with the others.
  agdb::layer_contents other;
  other.embeddings.dim = 4;
  REQUIRE(agdb::write_layer(fixture.fs, fixture.path(layer_id::user), other).has_value());
  CHECK(s.call_error("agents_search", R"({"query":"x"})").find("dim") != std::string::npos);
}

TEST_CASE("agents_context_write: the RFC examples, then search finds the chunks") {
  mcp_test::agdb_server fixture;
  write_layers(fixture);
  mcp_test::session s = mcp_test::initialized_session(fixture);

  const auto local = s.call_ok("agents_context_write", R"({"content":"The repo uses X for Y; entrypoint is Z.",)"
                                                       R"("kind":"derived-summary","confidence":0.7,)"
                                                       R"("sources":["docs/ARCHITECTURE.md:12"],"scope":"local"})");
  CHECK(text(local, "layer") == "local");
  CHECK(text(local, "path") == fixture.path(layer_id::local));
  CHECK_FALSE(local["created"].get_bool().value());
  CHECK(number(local, "chunks") == 2);
  const std::uint64_t local_id = number(local, "context_id");
  CHECK(local_id != 0);

  // The delta write cites the local chunk by id, as an integer and as digits.
  const auto delta = s.call_ok("agents.context.write",
                               R"({"content":"Invariant: requests to /foo MUST include header Bar.","kind":"invariant",)"
                               R"("confidence":0.8,"sources":["src/server/router.ts:88",31,")" +
                                   std::to_string(local_id) + R"("],"scope":"delta"})");
  CHECK(text(delta, "layer") == "delta");
  const std::uint64_t delta_id = number(delta, "context_id");

  const auto found = s.call_ok("agents_search", R"({"query":"Invariant: requests to /foo MUST include header Bar.",)"
                                                R"("k":1})");
  const simdjson::dom::element hit = found["results"].at(0).value();
  CHECK(number(hit, "id") == delta_id);
  CHECK(text(hit, "layer") == "delta");
  CHECK(text(hit, "author") == "mcp");
  CHECK(text(hit, "kind") == "invariant");
  CHECK(hit["confidence"].get_double().value() == doctest::Approx(0.8));
  CHECK(simdjson::minify(hit["sources"].value()) ==
        R"([{"type":"source_string","value":"src/server/router.ts:88"},{"type":"chunk_id","value":31},)"
        R"({"type":"chunk_id","value":)" + std::to_string(local_id) + "}]");

  // A write to a layer that does not exist yet creates it.
  mcp_test::agdb_server fresh;
  mcp_test::session first = mcp_test::initialized_session(fresh);
  const auto created =
      first.call_ok("agents_context_write", R"({"content":"first","kind":"note","confidence":1,"scope":"delta"})");
  CHECK(created["created"].get_bool().value());
  CHECK(number(created, "chunks") == 1);
  auto reader = agdb::layer_reader::open(fresh.fs, fresh.path(layer_id::delta));
  REQUIRE(reader.has_value());
  CHECK(reader->chunk(0)->author == "mcp");
}

TEST_CASE("agents_context_propose: a proposal event in the delta layer, once per pending chunk") {
  mcp_test::agdb_server fixture;
  write_layers(fixture);
  mcp_test::session s = mcp_test::initialized_session(fixture);

  const auto proposed = s.call_ok("agents_context_propose", R"({"context_id":31,"target":"user","title":"Bar header",)"
                                                            R"("why":"every client needs it"})");
  CHECK(number(proposed, "context_id") == 31);
  CHECK(text(proposed, "target") == "user");
  CHECK_FALSE(proposed["already_pending"].get_bool().value());
  CHECK(text(proposed, "path") == fixture.path(layer_id::delta));
  const std::uint64_t proposal_id = number(proposed, "proposal_id");

  auto reader = agdb::layer_reader::open(fixture.fs, fixture.path(layer_id::delta));
  REQUIRE(reader.has_value());
  auto ledger = agdb::fold_proposals(*reader);
  REQUIRE(ledger.has_value());
  REQUIRE(ledger->proposals.size() == 1);
  CHECK(ledger->proposals[0].id == proposal_id);
  CHECK(ledger->proposals[0].context_id == 31);
  CHECK(ledger->proposals[0].proposed_by == "mcp");
  CHECK(ledger->proposals[0].title == "Bar header");
  CHECK(ledger->proposals[0].why == "every client needs it");

  // Proposing again names the pending proposal and writes nothing; target defaults to user.
  const auto again = s.call_ok("agents.context.propose", R"({"context_id":31})");
  CHECK(again["already_pending"].get_bool().value());
  CHECK(number(again, "proposal_id") == proposal_id);
  // Proposal events are not context: the default search does not return them.
  for (const auto hit : array(s.call_ok("agents_search", R"({"query":"x","k":100})"), "results")) {
    CHECK(text(hit, "kind") != "meta.proposal_event");
  }
  CHECK(s.call_error("agents_context_propose", R"({"context_id":32})").find("meta.note") != std::string::npos);
}

TEST_CASE("add_mcp_tools: three tools with aliases; a bad max_k or a taken name is refused") {
  mcp_test::agdb_server fixture;
  agentctx::mcp::tool_registry tools;
  REQUIRE(agdb::add_mcp_tools(tools, fixture.fs, {}).has_value());
  REQUIRE(tools.tools().size() == 3);
  CHECK(tools.find("agents.search") == &tools.tools()[0]);
  CHECK(tools.find("agents.context.write") == &tools.tools()[1]);
  CHECK(tools.find("agents.context.propose") == &tools.tools()[2]);
  CHECK(agdb::add_mcp_tools(tools, fixture.fs, {}).error().message == "tool name agents_search is taken");
  agdb::mcp_tool_options options;
  options.max_k = 0;
  agentctx::mcp::tool_registry other;
  CHECK_FALSE(agdb::add_mcp_tools(other, fixture.fs, options).has_value());
  options.max_k = agdb::search_request::max_k + 1;
  CHECK_FALSE(agdb::add_mcp_tools(other, fixture.fs, options).has_value());
}

}  // namespace agdb_mcp_tools_test
