// relay/mcp_tools.hpp: every tool through an mcp::server (the in-memory
// session of the MCP tests) over a store on an in-memory file system: the
// success paths, every protocol error code, and bad arguments.
#include "agentctx/relay/mcp_tools.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/relay/export.hpp"
#include "agentctx/relay/log_format.hpp"
#include "mcp/mcp_test_support.hpp"
#include "relay_test_support.hpp"

namespace relay_mcp_tools_test {

using namespace relay_test;
using agentctx::errc;
namespace agdb = agentctx::agdb;
namespace io = agentctx::io;
namespace mcp = agentctx::mcp;

namespace {

/// A relay store on `fs` with the relay tools, and sessions over them.
struct relay_fixture {
  explicit relay_fixture(io::file_system& fs, agdb::embedder* embedder = nullptr)
      : store(require_value(relay::store::open(fs, "/r", test_options()))),
        embedder_(embedder != nullptr ? embedder : &hash_embedder) {}

  mcp_test::session session(relay::mcp_tool_options options = {}) {
    mcp::tool_registry tools;
    require_ok(relay::add_mcp_tools(tools, store, *embedder_, options));
    mcp_test::session s(mcp::server({"relay-test", "0.0.1", "Relay", "Use the relay tools."}, std::move(tools)));
    REQUIRE(s.send(mcp_test::initialize(1)).has_value());
    return s;
  }

  relay::store store;
  agdb::hash_embedder hash_embedder{64};

 private:
  agdb::embedder* embedder_;
};

/// An embedder whose embed() is `run` (a failure, an exception), of the
/// hash embedder's profile at dim 8.
class scripted_embedder final : public agdb::embedder {
 public:
  explicit scripted_embedder(std::function<agentctx::result<void>()> run) : run_(std::move(run)) {}
  const agdb::embedding_profile& profile() const override { return profile_; }
  agentctx::result<void> embed(std::span<const std::string_view>, std::span<float>) override { return run_(); }

 private:
  std::function<agentctx::result<void>()> run_;
  agdb::embedding_profile profile_ = agdb::hash_embedding_profile(8);
};

/// A fixture with its own in-memory file system.
struct memory_relay {
  io::memory_file_system fs;
  relay_fixture relay{fs};
};

std::string text_of(const json::value& v) { return require_value(json::serialize(v, json::canonical_form::jcs)); }

std::string deposit_arguments(const json::value& package) { return R"({"package":)" + text_of(package) + "}"; }

/// The protocol error of a failed call: {"code", "status", "message"}.
struct protocol_failure {
  std::string code;
  std::int64_t status = 0;
  std::string message;
};

protocol_failure call_protocol_error(mcp_test::session& s, std::string_view tool, std::string_view arguments) {
  const std::string text = s.call_error(tool, arguments);
  INFO("error text: " << text);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(text).get(root) == simdjson::SUCCESS);
  protocol_failure out;
  out.code = std::string(root["error"]["code"].get_string().value());
  out.status = root["error"]["status"].get_int64().value();
  out.message = std::string(root["error"]["message"].get_string().value());
  return out;
}

void check_protocol_error(mcp_test::session& s, std::string_view tool, std::string_view arguments,
                          std::string_view code, std::int64_t status, std::string_view message_part = {}) {
  INFO(tool << " " << arguments);
  const protocol_failure e = call_protocol_error(s, tool, arguments);
  CHECK(e.code == code);
  CHECK(e.status == status);
  if (!message_part.empty()) CHECK_MESSAGE(e.message.find(message_part) != std::string::npos, e.message);
}

/// Invalid arguments, refused by the input schema or by the tool, are 400
/// invalid_schema like the store's own refusals.
void check_argument_error(mcp_test::session& s, std::string_view tool, std::string_view arguments,
                          std::string_view message_part) {
  INFO(tool << " " << arguments);
  const protocol_failure e = call_protocol_error(s, tool, arguments);
  CHECK(e.code == "invalid_schema");
  CHECK(e.status == 400);
  CHECK_MESSAGE(e.message.starts_with("invalid arguments for " + std::string(tool) + ": "), e.message);
  CHECK_MESSAGE(e.message.find(message_part) != std::string::npos, e.message);
}

std::string str(simdjson::dom::element e) { return std::string(e.get_string().value()); }

/// Checks `result` against the output schema `tool` declares.
void check_output_schema(relay::store& store, std::string_view tool, simdjson::dom::element result) {
  agdb::hash_embedder embedder(64);
  mcp::tool_registry tools;
  require_ok(relay::add_mcp_tools(tools, store, embedder));
  const mcp::tool_definition* found = tools.find(tool);
  REQUIRE(found != nullptr);
  REQUIRE(found->output_schema.has_value());
  auto checked = found->output_schema->validate(result, "the result");
  CHECK_MESSAGE(checked.has_value(), (checked ? std::string() : checked.error().message));
}

}  // namespace

TEST_CASE("tools/list: the thirteen relay tools, each with object input and output schemas") {
  memory_relay f;
  auto s = f.relay.session();
  const simdjson::dom::element list = s.result(mcp_test::request(2, "tools/list"));
  std::vector<std::string> names;
  const simdjson::dom::array tools = list["tools"].get_array().value();
  for (const simdjson::dom::element tool : tools) {
    names.push_back(str(tool["name"]));
    CHECK(str(tool["inputSchema"]["type"]) == "object");
    CHECK(str(tool["outputSchema"]["type"]) == "object");
    CHECK(str(tool["description"]).size() > 40);
    CHECK(str(tool["title"]).size() > 5);
  }
  CHECK(names == std::vector<std::string>{"relay_deposit", "relay_pull", "relay_orient", "relay_orchestrate",
                                          "relay_flag_for_review", "relay_review", "relay_assert_fact",
                                          "relay_invalidate_fact", "relay_query_facts", "relay_awaiting_review",
                                          "relay_start_session", "relay_end_session", "relay_conformance"});
  // The package argument is an open object: members the spec adds (x-*) pass.
  const simdjson::dom::element deposit = list["tools"].at(0)["inputSchema"];
  CHECK(deposit["properties"]["package"]["additionalProperties"].get_bool().value());
  CHECK(str(list["tools"].at(1)["inputSchema"]["required"].at(0)) == "mode");
}

TEST_CASE("add_mcp_tools refuses zero limits and taken names") {
  memory_relay f;
  mcp::tool_registry tools;
  relay::mcp_tool_options zero;
  zero.max_limit = 0;
  CHECK(relay::add_mcp_tools(tools, f.relay.store, f.relay.hash_embedder, zero).error().code == errc::invalid_argument);
  require_ok(relay::add_mcp_tools(tools, f.relay.store, f.relay.hash_embedder));
  CHECK(relay::add_mcp_tools(tools, f.relay.store, f.relay.hash_embedder).error().code == errc::invalid_argument);
}

TEST_CASE("relay_deposit: stored with its hash; the identical package again is idempotent; other content is 409") {
  memory_relay f;
  auto s = f.relay.session();
  json::value p = package("pkg_1");
  p.set("x-trust-score", 0.9);
  p.set("decisions_made", json::value::array_type{"Soft archive via archived_at timestamp"});
  const std::string expected_hash = require_value(relay::content_hash(p));

  const simdjson::dom::element first = s.call_ok("relay_deposit", deposit_arguments(p));
  CHECK(first["created"].get_bool().value());
  CHECK(str(first["hash"]) == expected_hash);
  CHECK(str(first["package"]["package_id"]) == "pkg_1");
  CHECK(first["package"]["x-trust-score"].get_double().value() == 0.9);
  CHECK(f.relay.store.find_package("pkg_1").has_value());

  const simdjson::dom::element again = s.call_ok("relay_deposit", deposit_arguments(p));
  CHECK_FALSE(again["created"].get_bool().value());
  CHECK(str(again["hash"]) == expected_hash);

  // After a status change, a deposit again still answers with the package
  // as deposited and its hash (as relay deposit --json does); a pull shows
  // the current state.
  json::value draft = package("pkg_draft");
  draft.set("status", "draft");
  const std::string draft_hash = require_value(relay::content_hash(draft));
  s.call_ok("relay_deposit", deposit_arguments(draft));
  s.call_ok("relay_flag_for_review", R"({"package_id":"pkg_draft","review_type":"human"})");
  const simdjson::dom::element redeposited = s.call_ok("relay_deposit", deposit_arguments(draft));
  CHECK_FALSE(redeposited["created"].get_bool().value());
  CHECK(str(redeposited["hash"]) == draft_hash);
  CHECK(str(redeposited["package"]["status"]) == "draft");
  CHECK(str(redeposited["package"]["review_type"]) == "none");
  const simdjson::dom::element pulled =
      s.call_ok("relay_pull", R"({"mode":"specific","package_id":"pkg_draft"})")["packages"].at(0);
  CHECK(str(pulled["package"]["status"]) == "awaiting_review");
  CHECK(str(pulled["hash"]) != draft_hash);

  p.set("title", "Another title");
  check_protocol_error(s, "relay_deposit", deposit_arguments(p), "duplicate_package_id", 409, "pkg_1");

  // Without a package_id one is generated.
  const simdjson::dom::element generated = s.call_ok("relay_deposit", deposit_arguments(package("")));
  CHECK(str(generated["package"]["package_id"]).starts_with("pkg_"));
  CHECK(str(generated["package"]["package_id"]).size() == 36);
}

TEST_CASE("relay_deposit: an x-* member holding an integer beyond 64 bits is kept as the nearest double, as deposit does") {
  memory_relay f;
  auto s = f.relay.session();
  json::value p = package("pkg_big");
  p.set("x-n", 18446744073709551616.0);
  const std::string expected_hash = require_value(relay::content_hash(p));
  std::string arguments = deposit_arguments(p);
  const std::size_t at = arguments.find("18446744073709552000");
  REQUIRE(at != std::string::npos);
  arguments.replace(at, 20, "18446744073709551616");  // the text a client sends
  const std::string answer = *s.send(mcp_test::call(90, "relay_deposit", arguments));
  INFO(answer);
  CHECK(answer.find(R"("isError":false)") != std::string::npos);
  CHECK(answer.find(expected_hash) != std::string::npos);
  CHECK(f.relay.store.find_package("pkg_big").value()->hash == expected_hash);
}

TEST_CASE("relay_deposit: schema violations are 400 invalid_schema; an archived project is 403") {
  memory_relay f;
  auto s = f.relay.session();
  json::value p = package("pkg_1");
  p.erase("title");
  check_protocol_error(s, "relay_deposit", deposit_arguments(p), "invalid_schema", 400, "title is required");
  p = package("pkg_1");
  p.set("created_by", json::value::object_type{{"id", "r2"}, {"type", "robot"}});
  check_protocol_error(s, "relay_deposit", deposit_arguments(p), "invalid_schema", 400,
                       "created_by.type must be one of human, agent, script");
  p = package("pkg_1");
  p.set("package_type", "memo");
  check_protocol_error(s, "relay_deposit", deposit_arguments(p), "invalid_schema", 400, "package_type");
  // Duplicate member names (simdjson keeps both; the store's parser refuses them).
  // The message names no byte offset: it would count in the server's compact
  // copy of the package, not in the client's line.
  check_protocol_error(s, "relay_deposit", R"({"package":{"title":"a",   "title":"b"}})", "invalid_schema", 400,
                       "the package is not valid JSON: duplicate member name \"title\"");
  CHECK(call_protocol_error(s, "relay_deposit", R"({"package":{"title":"a","title":"b"}})").message.find("byte") ==
        std::string::npos);

  require_value(f.relay.store.deposit(package("pkg_0")));
  require_value(f.relay.store.set_archived("proj_demo", true));
  check_protocol_error(s, "relay_deposit", deposit_arguments(package("pkg_1")), "project_archived", 403, "archived");
}

TEST_CASE("relay_deposit: bad arguments are refused by the input schema") {
  memory_relay f;
  auto s = f.relay.session();
  check_argument_error(s, "relay_deposit", "{}", "package is required");
  check_argument_error(s, "relay_deposit", R"({"package":"{}"})", "package must be an object, not a string");
  check_argument_error(s, "relay_deposit", R"({"package":{},"extra":1})", "unknown property 'extra'");
}

TEST_CASE("relay_pull latest: newest first, limited; an unknown project is 404 project_not_found") {
  memory_relay f;
  auto s = f.relay.session();
  require_value(f.relay.store.deposit(package("pkg_a", "proj_demo", "first", "2026-04-10T00:00:00Z")));
  require_value(f.relay.store.deposit(package("pkg_c", "proj_demo", "third", "2026-04-12T00:00:00Z")));
  require_value(f.relay.store.deposit(package("pkg_b", "proj_demo", "second", "2026-04-11T00:00:00Z")));

  const simdjson::dom::element all = s.call_ok("relay_pull", R"({"mode":"latest","project_id":"proj_demo"})");
  CHECK(str(all["mode"]) == "latest");
  CHECK(str(all["project_id"]) == "proj_demo");
  const simdjson::dom::array packages = all["packages"].get_array().value();
  REQUIRE(packages.size() == 3);
  CHECK(str(packages.at(0)["package"]["package_id"]) == "pkg_c");
  CHECK(str(packages.at(1)["package"]["package_id"]) == "pkg_b");
  CHECK(str(packages.at(2)["package"]["package_id"]) == "pkg_a");
  CHECK(str(packages.at(0)["hash"]) == require_value(f.relay.store.find_package("pkg_c"))->hash);

  const simdjson::dom::element one = s.call_ok("relay_pull", R"({"mode":"latest","project_id":"proj_demo","limit":1})");
  REQUIRE(one["packages"].get_array().value().size() == 1);
  CHECK(str(one["packages"].at(0)["package"]["package_id"]) == "pkg_c");

  check_protocol_error(s, "relay_pull", R"({"mode":"latest","project_id":"proj_nope"})", "project_not_found", 404,
                       "proj_nope");
  check_argument_error(s, "relay_pull", R"({"mode":"latest"})", "mode latest needs project_id");
  check_argument_error(s, "relay_pull", R"({"mode":"latest","project_id":"proj_demo","limit":0})",
                       "limit must be at least 1, not 0");
  check_argument_error(s, "relay_pull", R"({"mode":"latest","project_id":"proj_demo","limit":1001})",
                       "limit must be at most 1000");
  check_argument_error(s, "relay_pull", R"({"mode":"oldest","project_id":"proj_demo"})",
                       "mode must be one of latest, specific, relevant");
  check_argument_error(s, "relay_pull", R"({"project_id":"proj_demo"})", "mode is required");
}

TEST_CASE("relay_pull specific: the package, in its current state; a missing one is 404 package_not_found") {
  memory_relay f;
  auto s = f.relay.session();
  require_value(f.relay.store.deposit(package("pkg_1")));
  require_value(f.relay.store.deposit(package("pkg_2", "proj_demo")));
  require_value(f.relay.store.deposit(package("pkg_2", "proj_other")));

  const simdjson::dom::element found = s.call_ok("relay_pull", R"({"mode":"specific","package_id":"pkg_1"})");
  REQUIRE(found["packages"].get_array().value().size() == 1);
  CHECK(str(found["packages"].at(0)["package"]["title"]) == "Shipped archive");
  CHECK(str(found["packages"].at(0)["hash"]) == require_value(relay::content_hash(package("pkg_1"))));

  check_protocol_error(s, "relay_pull", R"({"mode":"specific","package_id":"pkg_404"})", "package_not_found", 404,
                       "pkg_404");
  check_protocol_error(s, "relay_pull", R"({"mode":"specific","package_id":"pkg_1","project_id":"proj_other"})",
                       "package_not_found", 404);
  // An id held by two projects needs its project.
  check_protocol_error(s, "relay_pull", R"({"mode":"specific","package_id":"pkg_2"})", "invalid_schema", 400,
                       "name the project");
  const simdjson::dom::element other =
      s.call_ok("relay_pull", R"({"mode":"specific","package_id":"pkg_2","project_id":"proj_other"})");
  CHECK(str(other["packages"].at(0)["package"]["project_id"]) == "proj_other");
  check_argument_error(s, "relay_pull", R"({"mode":"specific"})", "mode specific needs package_id");
  check_argument_error(s, "relay_pull", R"({"mode":"specific","package_id":""})", "package_id must not be empty");
}

TEST_CASE("relay_pull relevant: hybrid ranking with scores, in one project or all") {
  memory_relay f;
  auto s = f.relay.session();
  json::value retrieval = package("pkg_r", "proj_demo", "Retrieval benchmark on LongMemEval");
  retrieval.set("description", "recall at five reached 97 percent with hybrid retrieval");
  json::value dashboard = package("pkg_d", "proj_demo", "Dashboard archive filter");
  dashboard.set("description", "the dashboard hides archived projects");
  require_value(f.relay.store.deposit(retrieval));
  require_value(f.relay.store.deposit(dashboard));
  require_value(f.relay.store.deposit(package("pkg_o", "proj_other", "Retrieval notes elsewhere")));

  const simdjson::dom::element hits =
      s.call_ok("relay_pull", R"({"mode":"relevant","project_id":"proj_demo","query":"hybrid retrieval recall"})");
  CHECK(str(hits["query"]) == "hybrid retrieval recall");
  const simdjson::dom::array packages = hits["packages"].get_array().value();
  REQUIRE(packages.size() == 1);  // pkg_d shares no word with the query: not related
  CHECK(str(packages.at(0)["package"]["package_id"]) == "pkg_r");
  CHECK(packages.at(0)["score"].get_double().value() > 0);
  CHECK(packages.at(0)["lexical_score"].get_double().value() > 0);
  CHECK(packages.at(0)["vector_score"].is_number());

  const simdjson::dom::element everywhere =
      s.call_ok("relay_pull", R"({"mode":"relevant","query":"retrieval dashboard","limit":5})");
  const simdjson::dom::array all = everywhere["packages"].get_array().value();
  REQUIRE(all.size() == 3);
  CHECK(all.at(0)["score"].get_double().value() >= all.at(1)["score"].get_double().value());
  const simdjson::dom::element unrelated =
      s.call_ok("relay_pull", R"({"mode":"relevant","query":"zzzqqq nonsense","limit":5})");
  CHECK(unrelated["packages"].get_array().value().size() == 0);

  // The server ranks through one relevance index across its calls: a package
  // deposited after the pulls above is ranked by the next one.
  json::value newer = package("pkg_n", "proj_demo", "Hybrid retrieval recall, again");
  newer.set("description", "hybrid retrieval recall improved with hybrid reranking");
  s.call_ok("relay_deposit", deposit_arguments(newer));
  const simdjson::dom::element after =
      s.call_ok("relay_pull", R"({"mode":"relevant","project_id":"proj_demo","query":"hybrid retrieval recall"})");
  const simdjson::dom::array ranked = after["packages"].get_array().value();
  REQUIRE(ranked.size() == 2);
  CHECK(str(ranked.at(0)["package"]["package_id"]) == "pkg_n");
  CHECK(str(ranked.at(1)["package"]["package_id"]) == "pkg_r");

  check_protocol_error(s, "relay_pull", R"({"mode":"relevant","project_id":"proj_nope","query":"x"})",
                       "project_not_found", 404);
  check_argument_error(s, "relay_pull", R"({"mode":"relevant","project_id":"proj_demo"})", "mode relevant needs query");
  check_argument_error(s, "relay_pull", R"({"mode":"relevant","query":""})", "query must not be empty");
}

TEST_CASE("relay_pull relevant: only packages sharing a word with the query; archived projects only when named") {
  memory_relay f;
  auto s = f.relay.session();
  require_value(f.relay.store.deposit(package("pkg_ship", "proj_demo", "Shipped archive feature")));
  // A word that shares nothing with the title, yet whose hashed vector (the
  // fixture's 64 dimensions) has a positive cosine with it: a collision.
  std::vector<float> vectors(2 * 64);
  std::string collider;
  for (int i = 0; collider.empty() && i < 10'000; ++i) {
    const std::string word = "zq" + std::to_string(i);
    const std::string_view texts[] = {"Shipped archive feature", word};
    require_ok(f.relay.hash_embedder.embed(texts, vectors));
    float dot = 0;
    for (std::size_t k = 0; k < 64; ++k) dot += vectors[k] * vectors[64 + k];
    if (dot > 0) collider = word;
  }
  REQUIRE_FALSE(collider.empty());
  const simdjson::dom::element unrelated =
      s.call_ok("relay_pull", R"({"mode":"relevant","project_id":"proj_demo","query":")" + collider + R"("})");
  CHECK(unrelated["packages"].get_array().value().size() == 0);

  require_value(f.relay.store.deposit(package("pkg_shelved", "proj_shelved", "Shipped archive, shelved")));
  require_value(f.relay.store.set_archived("proj_shelved", true));
  const simdjson::dom::element global = s.call_ok("relay_pull", R"({"mode":"relevant","query":"archive"})");
  REQUIRE(global["packages"].get_array().value().size() == 1);
  CHECK(str(global["packages"].at(0)["package"]["package_id"]) == "pkg_ship");
  const simdjson::dom::element named =
      s.call_ok("relay_pull", R"({"mode":"relevant","project_id":"proj_shelved","query":"archive"})");
  REQUIRE(named["packages"].get_array().value().size() == 1);
  CHECK(str(named["packages"].at(0)["package"]["package_id"]) == "pkg_shelved");

  // An empty project_id is no project: refused, not read as every project.
  check_argument_error(s, "relay_pull", R"({"mode":"relevant","project_id":"","query":"archive"})",
                       "project_id must not be empty");
  check_argument_error(s, "relay_orchestrate", R"({"project_id":""})", "project_id must not be empty");
}

TEST_CASE("relay_pull, relay_orient and relay_orchestrate: ties go by deposit, times compare exactly, snippets "
          "are not windowed") {
  memory_relay f;
  auto s = f.relay.session();
  // Identical texts deposited alternately into two projects, one long ago.
  for (const auto& [id, project, at] :
       {std::tuple{"pkg_t1", "proj_b", "2026-04-18T20:00:00Z"}, std::tuple{"pkg_t2", "proj_a", "2026-04-18T20:00:00Z"},
        std::tuple{"pkg_t3", "proj_b", "2020-01-01T00:00:00Z"}}) {
    require_value(f.relay.store.deposit(package(id, project, "tied rollout words", at)));
  }
  const auto ids = [](simdjson::dom::array entries) {
    std::vector<std::string> out;
    for (simdjson::dom::element e : entries) {
      simdjson::dom::element p;
      out.push_back(str((e["package"].get(p) == simdjson::SUCCESS ? p : e)["package_id"]));
    }
    return out;
  };
  const std::vector<std::string> deposit_order = {"pkg_t1", "pkg_t2", "pkg_t3"};
  const simdjson::dom::element pulled = s.call_ok("relay_pull", R"({"mode":"relevant","query":"rollout words"})");
  const simdjson::dom::array hits = pulled["packages"].get_array().value();
  CHECK(ids(hits) == deposit_order);
  const double first_score = hits.at(0)["score"].get_double().value();
  for (simdjson::dom::element hit : hits) CHECK(hit["score"].get_double().value() == first_score);
  // The snippets: the same order, the package outside the window included.
  const simdjson::dom::element digest = s.call_ok("relay_orchestrate", R"({"focus":"rollout words"})");
  CHECK(ids(digest["snippets"].get_array().value()) == deposit_order);
  CHECK(digest["summary"]["packages"].get_int64().value() == 2);

  // Within one millisecond, the later instant deposited first.
  require_value(f.relay.store.deposit(package("pkg_later", "proj_c", "later", "2026-04-18T19:00:00.0009Z")));
  require_value(f.relay.store.deposit(package("pkg_earlier", "proj_c", "earlier", "2026-04-18T19:00:00.0001Z")));
  const std::vector<std::string> newest_first = {"pkg_later", "pkg_earlier"};
  CHECK(ids(s.call_ok("relay_pull", R"({"mode":"latest","project_id":"proj_c"})")["packages"].get_array().value()) ==
        newest_first);
  CHECK(ids(s.call_ok("relay_orient", R"({"project_id":"proj_c"})")["recent_packages"].get_array().value()) ==
        newest_first);

  // Of two packages with one created_at and significance, the budget leaves
  // out the one deposited first: the largest budget that leaves any out.
  require_value(f.relay.store.deposit(package("pkg_first", "proj_d", "equal")));
  require_value(f.relay.store.deposit(package("pkg_second", "proj_d", "equal")));
  const auto omitted = [&s](std::size_t budget) {
    const simdjson::dom::element bundle =
        s.call_ok("relay_orient", R"({"project_id":"proj_d","max_bytes":)" + std::to_string(budget) + "}");
    std::vector<std::string> out;
    const simdjson::dom::array listed = bundle["x-agentctx-budget"]["omitted_packages"].get_array().value();
    for (simdjson::dom::element id : listed) out.emplace_back(id.get_string().value());
    return out;
  };
  std::size_t fits = 100'000;
  std::size_t short_of = 1;
  REQUIRE(omitted(fits).empty());
  while (fits - short_of > 1) {
    const std::size_t middle = short_of + (fits - short_of) / 2;
    (omitted(middle).empty() ? fits : short_of) = middle;
  }
  CHECK(omitted(short_of) == std::vector<std::string>{"pkg_first"});
}

TEST_CASE("relay_pull answers with the members of relay pull --json, under its output schema") {
  memory_relay f;
  auto s = f.relay.session();
  require_value(f.relay.store.deposit(draft("pkg_d")));
  s.call_ok("relay_flag_for_review", R"({"package_id":"pkg_d","review_type":"human","note":"check the numbers"})");
  s.call_ok("relay_review", R"({"package_id":"pkg_d","status":"revision_requested","note":"redo table 2"})");
  const relay::stored_package* stored = require_value(f.relay.store.find_package("pkg_d"));

  // specific: the package in full, the review's notes included.
  const simdjson::dom::element specific = s.call_ok("relay_pull", R"({"mode":"specific","package_id":"pkg_d"})");
  check_output_schema(f.relay.store, "relay_pull", specific);
  CHECK(specific["project_id"].is_null());
  CHECK(specific["limit"].error() == simdjson::NO_SUCH_FIELD);
  REQUIRE(specific["packages"].get_array().value().size() == 1);
  const simdjson::dom::element item = specific["packages"].at(0);
  CHECK(str(item["hash"]) == stored->hash);
  CHECK(str(item["deposited_hash"]) == stored->deposited_hash);
  CHECK(stored->hash != stored->deposited_hash);
  CHECK(str(item["package"]["status"]) == "revision_requested");
  const simdjson::dom::array changes = item["status_changes"].get_array().value();
  REQUIRE(changes.size() == 2);
  CHECK(str(changes.at(0)["status"]) == "awaiting_review");
  CHECK(str(changes.at(0)["review_type"]) == "human");
  CHECK(str(changes.at(0)["note"]) == "check the numbers");
  CHECK(str(changes.at(0)["at"]) == stored->changes[0].at);
  CHECK(str(changes.at(1)["status"]) == "revision_requested");
  CHECK(str(changes.at(1)["note"]) == "redo table 2");
  CHECK(str(changes.at(1)["hash"]) == stored->hash);
  // The item is what relay pull --mode specific --json prints beside "mode".
  CHECK(json::to_text(json::value(json::value::array_type{relay::package_detail_json(*stored)})) ==
        std::string(simdjson::minify(specific["packages"])));
  CHECK(str(s.call_ok("relay_pull", R"({"mode":"specific","package_id":"pkg_d","project_id":"proj_demo"})")
                ["project_id"]) == "proj_demo");

  // latest and relevant: the limit, and the project (null: every project).
  const simdjson::dom::element latest = s.call_ok("relay_pull", R"({"mode":"latest","project_id":"proj_demo"})");
  check_output_schema(f.relay.store, "relay_pull", latest);
  CHECK(latest["limit"].get_int64().value() == 5);
  CHECK(str(latest["project_id"]) == "proj_demo");
  CHECK(latest["packages"].at(0)["status_changes"].error() == simdjson::NO_SUCH_FIELD);
  const simdjson::dom::element relevant = s.call_ok("relay_pull", R"({"mode":"relevant","query":"draft","limit":2})");
  check_output_schema(f.relay.store, "relay_pull", relevant);
  CHECK(relevant["project_id"].is_null());
  CHECK(relevant["limit"].get_int64().value() == 2);
  REQUIRE(relevant["packages"].get_array().value().size() == 1);
  CHECK(relevant["packages"].at(0)["score"].get_double().value() > 0);
}

TEST_CASE("relay_pull refuses arguments of another mode, in the words of relay pull") {
  memory_relay f;
  auto s = f.relay.session();
  require_value(f.relay.store.deposit(package("pkg_1")));
  check_argument_error(s, "relay_pull", R"({"mode":"specific","package_id":"pkg_1","limit":3})",
                       "limit does not apply to mode specific");
  check_argument_error(s, "relay_pull", R"({"mode":"latest","project_id":"proj_demo","query":"x"})",
                       "query applies to mode relevant only");
  check_argument_error(s, "relay_pull", R"({"mode":"specific","package_id":"pkg_1","query":"x"})",
                       "query applies to mode relevant only");
  check_argument_error(s, "relay_pull", R"({"mode":"latest","project_id":"proj_demo","package_id":"pkg_1"})",
                       "package_id applies to mode specific only");
  check_argument_error(s, "relay_pull", R"({"mode":"relevant","query":"x","package_id":"pkg_1"})",
                       "package_id applies to mode specific only");
  // An argument given twice is refused, not read as its first value.
  check_argument_error(s, "relay_pull", R"({"mode":"latest","mode":"specific","package_id":"pkg_1"})",
                       "duplicate member name \"mode\"");
  // What applies still works.
  CHECK(s.call_ok("relay_pull", R"({"mode":"latest","project_id":"proj_demo","limit":3})")["packages"]
            .get_array()
            .value()
            .size() == 1);
}

TEST_CASE("an embedder that cannot search is 501 not_implemented") {
  // What a store answers for relevant mode when semantic search is not set
  // up: the embedder reports errc::unsupported.
  io::memory_file_system fs;
  scripted_embedder embedder(
      [] { return agentctx::fail(errc::unsupported, "semantic search is not configured (search_not_supported)"); });
  relay_fixture relay(fs, &embedder);
  auto s = relay.session();
  require_value(relay.store.deposit(package("pkg_1")));
  check_protocol_error(s, "relay_pull", R"({"mode":"relevant","project_id":"proj_demo","query":"archive"})",
                       "not_implemented", 501, "search_not_supported");
  check_protocol_error(s, "relay_orchestrate", R"({"project_id":"proj_demo","focus":"archive"})", "not_implemented",
                       501);
  // Without a focus orchestrate needs no embedder.
  CHECK(relay.session()
            .call_ok("relay_orchestrate", R"({"project_id":"proj_demo"})")["snippets"]
            .get_array()
            .value()
            .size() == 0);
}

TEST_CASE("an exception inside a tool is 500 internal_error in the protocol error's shape, and the server goes on") {
  // An embedder of the caller's that throws (a remote provider's client,
  // say) is the way an exception reaches a relay tool's handler.
  bool throw_other = false;
  io::memory_file_system fs;
  scripted_embedder embedder([&]() -> agentctx::result<void> {
    if (throw_other) throw 42;
    throw std::runtime_error("provider connection reset");
  });
  relay_fixture relay(fs, &embedder);
  auto s = relay.session();
  require_value(relay.store.deposit(package("pkg_1")));
  const protocol_failure e =
      call_protocol_error(s, "relay_pull", R"({"mode":"relevant","project_id":"proj_demo","query":"archive"})");
  CHECK(e.code == "internal_error");
  CHECK(e.status == 500);
  CHECK(e.message == "internal error in relay_pull: provider connection reset");
  throw_other = true;
  check_protocol_error(s, "relay_orchestrate", R"({"project_id":"proj_demo","focus":"archive"})", "internal_error", 500,
                       "internal error in relay_orchestrate: an exception that is not a std::exception");
  // The server and the store go on.
  CHECK(str(s.call_ok("relay_pull", R"({"mode":"specific","package_id":"pkg_1"})")["packages"].at(0)["package"]
                ["package_id"]) == "pkg_1");
  require_value(relay.store.deposit(package("pkg_2")));
}

TEST_CASE("relay_orient: the orientation bundle, with a budget; an unknown project is 404") {
  memory_relay f;
  auto s = f.relay.session();
  json::value asking = package("pkg_q", "proj_demo", "Open questions", "2026-04-18T10:00:00Z");
  asking.set("open_questions", json::value::array_type{"Which embedder ships?"});
  asking.set("significance", 9);
  json::value old = package("pkg_old", "proj_demo", "Long ago", "2026-01-01T00:00:00Z");
  require_value(f.relay.store.deposit(asking));
  require_value(f.relay.store.deposit(old));
  for (int i = 0; i < 5; ++i) {
    json::value filler = package("pkg_f" + std::to_string(i), "proj_demo", "Filler " + std::to_string(i),
                                 "2026-04-17T00:00:0" + std::to_string(i) + "Z");
    filler.set("significance", 1);
    filler.set("description", std::string(400, 'x'));
    require_value(f.relay.store.deposit(filler));
  }
  relay::fact_assertion a;
  a.project_id = "proj_demo";
  a.subject = "dashboard";
  a.predicate = "status";
  a.value = "live";
  require_value(f.relay.store.assert_fact(a));

  const simdjson::dom::element bundle = s.call_ok("relay_orient", R"({"project_id":"proj_demo"})");
  CHECK(str(bundle["project"]["project_id"]) == "proj_demo");
  CHECK(bundle["recent_packages"].get_array().value().size() == 6);  // the one from January is outside 14 days
  CHECK(str(bundle["recent_packages"].at(0)["package_id"]) == "pkg_q");
  CHECK(str(bundle["active_facts"].at(0)["value"]) == "live");
  CHECK(str(bundle["open_questions"].at(0)) == "Which embedder ships?");
  CHECK(bundle["window_days"].get_int64().value() == 14);
  CHECK(bundle["generated_at"].is_string());
  CHECK(bundle["x-agentctx-budget"].error() == simdjson::NO_SUCH_FIELD);

  const simdjson::dom::element wide = s.call_ok("relay_orient", R"({"project_id":"proj_demo","window_days":365})");
  CHECK(wide["recent_packages"].get_array().value().size() == 7);
  const simdjson::dom::element few = s.call_ok("relay_orient", R"({"project_id":"proj_demo","max_packages":2})");
  CHECK(few["recent_packages"].get_array().value().size() == 2);

  const simdjson::dom::element budget = s.call_ok("relay_orient", R"({"project_id":"proj_demo","max_bytes":1500})");
  const simdjson::dom::element report = budget["x-agentctx-budget"];
  CHECK(report["bytes"].get_int64().value() <= 1500);
  CHECK(report["omitted_packages"].get_array().value().size() >= 3);
  CHECK(str(budget["recent_packages"].at(0)["package_id"]) == "pkg_q");  // the significant one stays
  const simdjson::dom::element tokens = s.call_ok("relay_orient", R"({"project_id":"proj_demo","max_tokens":400})");
  CHECK(tokens["x-agentctx-budget"]["estimated_tokens"].get_int64().value() <= 400);

  check_protocol_error(s, "relay_orient", R"({"project_id":"proj_nope"})", "project_not_found", 404, "proj_nope");
  check_argument_error(s, "relay_orient", "{}", "project_id is required");
  check_argument_error(s, "relay_orient", R"({"project_id":"proj_demo","window_days":0})",
                       "window_days must be at least 1");
  check_argument_error(s, "relay_orient", R"({"project_id":"proj_demo","max_bytes":0})",
                       "max_bytes must be at least 1");
  check_argument_error(s, "relay_orient", R"({"project_id":"proj_demo","window_days":1.5})",
                       "window_days must be an integer, not a fraction");
  // A budget too large to compute with is refused, not wrapped around.
  check_argument_error(s, "relay_orient", R"({"project_id":"proj_demo","max_tokens":4611686018427387904})",
                       "max_tokens must be at most 250000000000");
}

TEST_CASE("relay_orchestrate: a project digest with focus snippets, and a global digest") {
  memory_relay f;
  auto s = f.relay.session();
  json::value decision = package("pkg_dec", "proj_demo", "Chose hybrid retrieval");
  decision.set("package_type", "decision");
  decision.set("decisions_made", json::value::array_type{"Fuse BM25 with vectors"});
  decision.set("handoff_note", "Tune the fusion constant next.");
  decision.set("description", "hybrid retrieval beats vectors alone");
  require_value(f.relay.store.deposit(decision));
  require_value(f.relay.store.deposit(draft("pkg_draft")));
  require_value(f.relay.store.deposit(package("pkg_x", "proj_other", "Unrelated work")));

  const simdjson::dom::element digest =
      s.call_ok("relay_orchestrate", R"({"project_id":"proj_demo","focus":"hybrid retrieval","snippets":3})");
  CHECK(str(digest["scope"]) == "project");
  CHECK(str(digest["focus"]) == "hybrid retrieval");
  CHECK(digest["summary"]["packages"].get_int64().value() == 1);  // drafts are left out
  CHECK(str(digest["summary"]["decisions"].at(0)["decision"]) == "Fuse BM25 with vectors");
  CHECK(str(digest["summary"]["handoffs"].at(0)["note"]) == "Tune the fusion constant next.");
  REQUIRE(digest["snippets"].get_array().value().size() == 1);
  CHECK(str(digest["snippets"].at(0)["package_id"]) == "pkg_dec");

  const simdjson::dom::element global = s.call_ok("relay_orchestrate", "{}");
  CHECK(str(global["scope"]) == "global");
  CHECK(global["projects"].get_array().value().size() == 2);
  CHECK(global["snippets"].get_array().value().size() == 0);

  // A question asked in two projects is listed once for each, naming it.
  json::value asks = package("pkg_ask", "proj_demo", "Open points");
  asks.set("open_questions", json::value::array_type{"Ship v2?"});
  require_value(f.relay.store.deposit(asks));
  asks = package("pkg_ask2", "proj_other", "Open points too");
  asks.set("open_questions", json::value::array_type{"Ship v2?"});
  require_value(f.relay.store.deposit(asks));
  const simdjson::dom::element asked = s.call_ok("relay_orchestrate", "{}");
  check_output_schema(f.relay.store, "relay_orchestrate", asked);
  const simdjson::dom::array questions = asked["open_questions"].get_array().value();
  REQUIRE(questions.size() == 2);
  CHECK(str(questions.at(0)["question"]) == "Ship v2?");
  CHECK(str(questions.at(0)["project_id"]) == "proj_other");
  CHECK(str(questions.at(1)["project_id"]) == "proj_demo");
  const simdjson::dom::array projects = asked["projects"].get_array().value();
  for (simdjson::dom::element p : projects) CHECK(p["open_questions"].get_int64().value() == 1);

  check_protocol_error(s, "relay_orchestrate", R"({"project_id":"proj_nope"})", "project_not_found", 404);
  check_argument_error(s, "relay_orchestrate", R"({"snippets":-1})", "snippets must be at least 0");
  check_argument_error(s, "relay_orchestrate", R"({"window_days":0})", "window_days must be at least 1");
  // A count without a focus is an input section 8.4 allows: no snippets.
  const simdjson::dom::element unfocused = s.call_ok("relay_orchestrate", R"({"project_id":"proj_demo","snippets":3})");
  CHECK(unfocused["snippets"].get_array().size() == 0);
  CHECK(unfocused["focus"].error() == simdjson::NO_SUCH_FIELD);
}

TEST_CASE("relay_start_session and relay_end_session: a session lists its actor's packages; errors by code") {
  memory_relay f;
  auto s = f.relay.session();
  const simdjson::dom::element started =
      s.call_ok("relay_start_session", R"({"project_id":"proj_demo","actor_id":"claude","actor_type":"agent"})");
  check_output_schema(f.relay.store, "relay_start_session", started);
  const std::string id = str(started["session_id"]);
  CHECK(id.starts_with("sess_"));
  CHECK(str(started["project_id"]) == "proj_demo");
  CHECK(str(started["callsign"]).find('-') != std::string::npos);
  CHECK(started["ended_at"].is_null());  // section 5.5: null while active
  CHECK(started["packages_deposited"].get_array().value().size() == 0);
  // The same as the CLI's --json: the session's wire form.
  CHECK(std::string(simdjson::minify(started)) ==
        json::to_text(f.relay.store.session_wire(*f.relay.store.find_session(id))));

  json::value mine = package("pkg_mine");
  mine.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
  s.call_ok("relay_deposit", deposit_arguments(mine));
  json::value theirs = package("pkg_theirs");
  theirs.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "human"}, {"session_id", id}});
  s.call_ok("relay_deposit", deposit_arguments(theirs));

  const simdjson::dom::element ended = s.call_ok("relay_end_session", R"({"session_id":")" + id + R"("})");
  check_output_schema(f.relay.store, "relay_end_session", ended);
  CHECK(str(ended["session_id"]) == id);
  CHECK(ended["ended_at"].is_string());
  REQUIRE(ended["packages_deposited"].get_array().value().size() == 1);
  CHECK(str(ended["packages_deposited"].at(0)) == "pkg_mine");

  check_protocol_error(s, "relay_end_session", R"({"session_id":")" + id + R"("})", "invalid_schema", 400,
                       "has already ended");
  check_protocol_error(s, "relay_end_session", R"({"session_id":"sess_nope"})", "session_not_found", 404);
  check_argument_error(s, "relay_start_session", R"({"project_id":"proj_demo","actor_id":"x","actor_type":"robot"})",
                       "actor_type must be one of");
  check_argument_error(s, "relay_start_session", R"({"project_id":"","actor_id":"x","actor_type":"agent"})",
                       "project_id");
  require_value(f.relay.store.set_archived("proj_demo", true));
  check_protocol_error(s, "relay_start_session", R"({"project_id":"proj_demo","actor_id":"x","actor_type":"agent"})",
                       "project_archived", 403);
}

TEST_CASE("relay_end_session of an imported session whose callsign is null answers within its output schema") {
  memory_relay f;
  require_value(relay::import_ndjson(
      f.relay.store, R"({"session_id":"sess_x","project_id":"proj_demo","actor_id":"a","actor_type":"agent",)"
                     R"("callsign":null,"started_at":"2026-04-01T00:00:00Z"})"
                     "\n"));
  auto s = f.relay.session();
  const simdjson::dom::element ended = s.call_ok("relay_end_session", R"({"session_id":"sess_x"})");
  check_output_schema(f.relay.store, "relay_end_session", ended);
  CHECK(ended["callsign"].is_null());  // kept as it was written (section 12.1)
  CHECK(ended["ended_at"].is_string());
}

TEST_CASE("relay_flag_for_review, relay_awaiting_review and relay_review: the L3 transitions") {
  memory_relay f;
  auto s = f.relay.session();
  require_value(f.relay.store.deposit(draft("pkg_d")));
  require_value(f.relay.store.deposit(package("pkg_done")));

  const simdjson::dom::element flagged =
      s.call_ok("relay_flag_for_review", R"({"package_id":"pkg_d","review_type":"human","note":"check the numbers"})");
  CHECK(str(flagged["package"]["status"]) == "awaiting_review");
  CHECK(str(flagged["package"]["review_type"]) == "human");
  const relay::stored_package* stored = require_value(f.relay.store.find_package("pkg_d"));
  CHECK(str(flagged["hash"]) == stored->hash);
  CHECK(stored->hash != stored->deposited_hash);
  REQUIRE(stored->changes.size() == 1);
  CHECK(stored->changes[0].note == std::optional<std::string>("check the numbers"));

  const simdjson::dom::element awaiting = s.call_ok("relay_awaiting_review", R"({"project_id":"proj_demo"})");
  CHECK(str(awaiting["project_id"]) == "proj_demo");
  REQUIRE(awaiting["packages"].get_array().value().size() == 1);
  CHECK(str(awaiting["packages"].at(0)["package"]["package_id"]) == "pkg_d");

  // Flagged again, it waits for the new reviewer (8.5 refuses only complete).
  const simdjson::dom::element again =
      s.call_ok("relay_flag_for_review", R"({"package_id":"pkg_d","review_type":"agent"})");
  CHECK(str(again["package"]["review_type"]) == "agent");
  CHECK(str(again["hash"]) == stored->hash);
  CHECK(stored->changes.size() == 2);
  // A copy: the call appends a change, which may move the store's list.
  const std::string first_flagged = stored->changes[0].hash;
  CHECK(str(s.call_ok("relay_flag_for_review", R"({"package_id":"pkg_d","review_type":"human"})")["hash"]) ==
        first_flagged);
  // A complete package: 400 invalid_transition.
  check_protocol_error(s, "relay_flag_for_review", R"({"package_id":"pkg_done","review_type":"agent"})",
                       "invalid_transition", 400, "complete");
  check_protocol_error(s, "relay_flag_for_review", R"({"package_id":"pkg_404","review_type":"agent"})",
                       "package_not_found", 404);
  check_protocol_error(s, "relay_flag_for_review",
                       R"({"package_id":"pkg_d","review_type":"agent","project_id":"proj_other"})", "package_not_found",
                       404);

  const simdjson::dom::element revise =
      s.call_ok("relay_review", R"({"package_id":"pkg_d","status":"revision_requested","note":"redo table 2"})");
  CHECK(str(revise["package"]["status"]) == "revision_requested");
  CHECK(s.call_ok("relay_awaiting_review", R"({"project_id":"proj_demo"})")["packages"].get_array().value().size() ==
        0);
  CHECK(str(s.call_ok("relay_review", R"({"package_id":"pkg_d","status":"awaiting_review"})")["package"]["status"]) ==
        "awaiting_review");
  const simdjson::dom::element done = s.call_ok("relay_review", R"({"package_id":"pkg_d","status":"complete"})");
  CHECK(str(done["package"]["status"]) == "complete");
  CHECK(str(done["package"]["review_type"]) == "human");
  check_protocol_error(s, "relay_review", R"({"package_id":"pkg_d","status":"revision_requested"})",
                       "invalid_transition", 400);
  check_protocol_error(s, "relay_review", R"({"package_id":"pkg_404","status":"complete"})", "package_not_found", 404);

  // Status changes in an archived project are refused.
  require_value(f.relay.store.deposit(draft("pkg_late")));
  require_value(f.relay.store.set_archived("proj_demo", true));
  check_protocol_error(s, "relay_flag_for_review", R"({"package_id":"pkg_late","review_type":"human"})",
                       "project_archived", 403);

  check_protocol_error(s, "relay_awaiting_review", R"({"project_id":"proj_nope"})", "project_not_found", 404);
  check_argument_error(s, "relay_flag_for_review", R"({"package_id":"pkg_d","review_type":"none"})",
                       "review_type must be one of human, agent");
  check_argument_error(s, "relay_flag_for_review", R"({"review_type":"human"})", "package_id is required");
  check_argument_error(s, "relay_review", R"({"package_id":"pkg_d","status":"draft"})",
                       "status must be one of complete, revision_requested, awaiting_review");
  // As relay review: a review_type goes with awaiting_review only, refused before the store is asked.
  check_argument_error(s, "relay_review", R"({"package_id":"pkg_late","status":"complete","review_type":"human"})",
                       "review_type goes with status awaiting_review");
  check_argument_error(s, "relay_review",
                       R"({"package_id":"pkg_404","status":"revision_requested","review_type":"agent"})",
                       "review_type goes with status awaiting_review");
  check_argument_error(s, "relay_awaiting_review", "{}", "project_id is required");
}

TEST_CASE("relay_assert_fact, relay_query_facts, relay_invalidate_fact: supersession and temporal queries") {
  memory_relay f;
  auto s = f.relay.session();
  json::value source = package("pkg_bench");
  source.set("created_by", json::value::object_type{{"id", "bench-bot"}, {"type", "agent"}});
  require_value(f.relay.store.deposit(source));

  const simdjson::dom::element first = s.call_ok(
      "relay_assert_fact",
      R"({"project_id":"proj_demo","subject":"longmemeval_s","predicate":"recall_any_at_5","value":"95.0",)"
      R"("valid_from":"2026-04-01T00:00:00Z","source_package_id":"pkg_bench","tags":["benchmark"],"confidence":0.9})");
  CHECK(first["changed"].get_bool().value());
  CHECK(first["superseded"].is_null());
  const std::string first_id = str(first["fact"]["fact_id"]);
  CHECK(first_id.starts_with("fact_"));
  CHECK(str(first["fact"]["asserted_by"]["id"]) == "bench-bot");  // from the source package
  CHECK(first["fact"]["confidence"].get_double().value() == 0.9);
  CHECK(str(first["fact"]["tags"].at(0)) == "benchmark");

  const std::string second_arguments =
      R"({"project_id":"proj_demo","subject":"longmemeval_s","predicate":"recall_any_at_5","value":"97.0",)"
      R"("valid_from":"2026-04-10T12:00:00Z","asserted_by":{"id":"jordan","type":"human","session_id":"sess_1"}})";
  const simdjson::dom::element second = s.call_ok("relay_assert_fact", second_arguments);
  CHECK(second["changed"].get_bool().value());
  CHECK(str(second["superseded"]) == first_id);
  const std::string second_id = str(second["fact"]["fact_id"]);
  CHECK(str(second["fact"]["asserted_by"]["id"]) == "jordan");
  CHECK(str(second["fact"]["asserted_by"]["session_id"]) == "sess_1");
  // The same value again: nothing written.
  const simdjson::dom::element same = s.call_ok("relay_assert_fact", second_arguments);
  CHECK_FALSE(same["changed"].get_bool().value());
  CHECK(str(same["fact"]["fact_id"]) == second_id);

  const simdjson::dom::element current = s.call_ok("relay_query_facts", R"({"project_id":"proj_demo"})");
  CHECK(str(current["query"]) == "current");
  REQUIRE(current["facts"].get_array().value().size() == 1);
  CHECK(str(current["facts"].at(0)["value"]) == "97.0");

  const simdjson::dom::element history = s.call_ok(
      "relay_query_facts", R"({"project_id":"proj_demo","subject":"longmemeval_s","predicate":"recall_any_at_5"})");
  CHECK(str(history["query"]) == "history");
  REQUIRE(history["facts"].get_array().value().size() == 2);
  CHECK(str(history["facts"].at(0)["value"]) == "95.0");
  CHECK(str(history["facts"].at(0)["valid_to"]) == "2026-04-10T12:00:00Z");
  CHECK(history["facts"].at(1)["valid_to"].error() == simdjson::NO_SUCH_FIELD);
  CHECK(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","subject":"longmemeval_s"})")["facts"]
            .get_array()
            .value()
            .size() == 2);
  CHECK(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","predicate":"other"})")["facts"]
            .get_array()
            .value()
            .size() == 0);

  const simdjson::dom::element then =
      s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","at":"2026-04-05T00:00:00Z"})");
  CHECK(str(then["query"]) == "at");
  CHECK(str(then["at"]) == "2026-04-05T00:00:00Z");
  REQUIRE(then["facts"].get_array().value().size() == 1);
  CHECK(str(then["facts"].at(0)["value"]) == "95.0");
  CHECK(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","at":"2026-03-01T00:00:00Z"})")["facts"]
            .get_array()
            .value()
            .size() == 0);
  // As relay facts --at: an offset is converted to UTC. 13:30+02:00 is 11:30Z,
  // before the second fact began (12:00Z); 14:30+02:00 is after.
  const simdjson::dom::element offset =
      s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","at":"2026-04-10T13:30:00+02:00"})");
  CHECK(str(offset["at"]) == "2026-04-10T13:30:00+02:00");
  REQUIRE(offset["facts"].get_array().value().size() == 1);
  CHECK(str(offset["facts"].at(0)["value"]) == "95.0");
  CHECK(str(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","at":"2026-04-10T14:30:00+02:00"})")
                ["facts"]
                .at(0)["value"]) == "97.0");

  // Invalidation: only with a matching value, when given; then no current fact.
  const std::string key = R"("project_id":"proj_demo","subject":"longmemeval_s","predicate":"recall_any_at_5")";
  CHECK(s.call_ok("relay_invalidate_fact", "{" + key + R"(,"value":"1.0"})")["invalidated"].get_int64().value() == 0);
  CHECK(s.call_ok("relay_invalidate_fact", "{" + key + R"(,"object":"1.0"})")["invalidated"].get_int64().value() == 0);
  check_argument_error(s, "relay_invalidate_fact", "{" + key + R"(,"value":"97.0","object":"97.0"})",
                       "give value or object (the same), not both");
  // `object`, section 8.7's name for the value.
  CHECK(s.call_ok("relay_invalidate_fact", "{" + key + R"(,"object":"97.0"})")["invalidated"].get_int64().value() == 1);
  CHECK(s.call_ok("relay_invalidate_fact", "{" + key + "}")["invalidated"].get_int64().value() == 0);
  CHECK(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo"})")["facts"].get_array().value().size() == 0);
  check_protocol_error(s, "relay_invalidate_fact", R"({"project_id":"proj_nope","subject":"a","predicate":"b"})",
                       "project_not_found", 404);
  // By subject alone: by predicate, then each key's facts oldest first, not
  // in the order asserted (the later key asserted first, and one of its facts
  // starting before the other key's).
  s.call_ok("relay_assert_fact",
            R"({"project_id":"proj_demo","subject":"longmemeval_s","predicate":"a_first","value":"x",)"
            R"("valid_from":"2026-04-20T00:00:00Z"})");
  s.call_ok("relay_assert_fact",
            R"({"project_id":"proj_demo","subject":"longmemeval_s","predicate":"a_first","value":"y",)"
            R"("valid_from":"2026-04-21T00:00:00Z"})");
  {
    const simdjson::dom::element by_subject =
        s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","subject":"longmemeval_s"})");
    check_output_schema(f.relay.store, "relay_query_facts", by_subject);
    const auto values_of = [](simdjson::dom::element result) {
      std::vector<std::string> values;
      const simdjson::dom::array facts = result["facts"].get_array().value();
      for (simdjson::dom::element fact : facts) values.push_back(str(fact["value"]));
      return values;
    };
    CHECK(values_of(by_subject) == std::vector<std::string>{"x", "y", "95.0", "97.0"});
    CHECK(values_of(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","predicate":"a_first"})")) ==
          std::vector<std::string>{"x", "y"});
  }
}

TEST_CASE("fact errors: invalid_schema, project_archived, project_not_found, and bad arguments") {
  memory_relay f;
  auto s = f.relay.session();
  const std::string key = R"("project_id":"proj_demo","subject":"dashboard","predicate":"status")";
  s.call_ok("relay_assert_fact", "{" + key + R"(,"value":"live","valid_from":"2026-04-10T00:00:00Z"})");
  // Earlier than the current fact: 400.
  check_protocol_error(s, "relay_assert_fact", "{" + key + R"(,"value":"down","valid_from":"2026-04-01T00:00:00Z"})",
                       "invalid_schema", 400, "earlier than the current fact");
  check_protocol_error(s, "relay_assert_fact", "{" + key + R"(,"value":"down","valid_from":"yesterday"})",
                       "invalid_schema", 400, "valid_from must be an RFC 3339 UTC timestamp");
  check_protocol_error(s, "relay_assert_fact",
                       "{" + key + R"(,"value":"down","valid_from":"2026-04-11T00:00:00+02:00"})", "invalid_schema",
                       400, "UTC");
  check_argument_error(s, "relay_assert_fact", "{" + key + R"(,"value":97})", "value must be a string, not a number");
  check_argument_error(s, "relay_assert_fact", "{" + key + R"(,"value":"x","confidence":1.5})",
                       "confidence must be at most 1");
  check_argument_error(s, "relay_assert_fact", "{" + key + R"(,"value":"x","asserted_by":{"id":"a","type":"robot"}})",
                       "asserted_by.type must be one of human, agent, script");
  check_argument_error(s, "relay_assert_fact", R"({"project_id":"proj_demo","subject":"a","value":"x"})",
                       "predicate is required");
  check_argument_error(s, "relay_query_facts", R"({"project_id":"proj_demo","at":"now"})",
                       "at: invalid RFC 3339 timestamp \"now\"");
  check_argument_error(s, "relay_query_facts", R"({"project_id":"proj_demo","at":"1969-12-30T23:59:60Z"})",
                       "a leap second");
  // Before 1970 is a time like any other.
  const simdjson::dom::element before_1970 =
      s.call_ok("relay_query_facts", R"({"project_id":"proj_demo","at":"1969-12-31T23:59:59Z"})");
  CHECK(str(before_1970["at"]) == "1969-12-31T23:59:59Z");
  CHECK(before_1970["facts"].get_array().size() == 0);
  // A null session_id (section 7.5's example) is no session, as when absent.
  const simdjson::dom::element no_session = s.call_ok(
      "relay_assert_fact", "{" + key + R"(,"value":"x","asserted_by":{"id":"a","type":"human","session_id":null}})");
  CHECK(str(no_session["fact"]["asserted_by"]["id"]) == "a");
  CHECK(no_session["fact"]["asserted_by"]["session_id"].error() == simdjson::NO_SUCH_FIELD);
  check_argument_error(s, "relay_assert_fact",
                       "{" + key + R"(,"value":"x","asserted_by":{"id":"a","id":"b","type":"human"}})",
                       "asserted_by: duplicate member name \"id\"");
  check_argument_error(s, "relay_invalidate_fact", R"({"project_id":"proj_demo","subject":"a"})",
                       "predicate is required");
  check_protocol_error(s, "relay_query_facts", R"({"project_id":"proj_nope"})", "project_not_found", 404, "proj_nope");
  // x-* members (section 12.1): kept on the fact and on asserted_by; other
  // unknown members are still refused, and an extension given twice.
  const simdjson::dom::element extended = s.call_ok(
      "relay_assert_fact", "{" + key + R"(,"value":"y","x-trust":0.9,"x-origin":{"tool":"bench","runs":[1,null]},)"
                           R"("asserted_by":{"id":"a","type":"human","x-team":"evals"}})");
  CHECK(extended["fact"]["x-trust"].get_double().value() == 0.9);
  CHECK(extended["fact"]["x-origin"]["runs"].at(1).is_null());
  CHECK(str(extended["fact"]["asserted_by"]["x-team"]) == "evals");
  CHECK(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo"})")["facts"].at(0)["x-trust"].get_double().value() ==
        0.9);
  check_argument_error(s, "relay_assert_fact", "{" + key + R"(,"value":"y","trust":0.9})", "unknown property 'trust'");
  check_argument_error(s, "relay_assert_fact", "{" + key + R"(,"value":"y","x-t":1,"x-t":2})",
                       "duplicate member name \"x-t\"");
  // A name twice inside an extension's value, on the fact or on asserted_by.
  check_argument_error(s, "relay_assert_fact", "{" + key + R"(,"value":"y","x-a":{"k":1,"k":2}})",
                       "x-a: duplicate member name \"k\"");
  check_argument_error(s, "relay_assert_fact",
                       "{" + key + R"(,"value":"y","asserted_by":{"id":"a","type":"human","x-b":[{"k":1,"k":2}]}})",
                       "asserted_by.x-b: duplicate member name \"k\"");
  check_argument_error(s, "relay_assert_fact", "{" + key + R"(,"value":"y","asserted_by":{"id":"a","type":"human","team":1}})",
                       "unknown property 'asserted_by.team'");

  require_value(f.relay.store.set_archived("proj_demo", true));
  check_protocol_error(s, "relay_assert_fact", "{" + key + R"(,"value":"down"})", "project_archived", 403);
  check_protocol_error(s, "relay_invalidate_fact", "{" + key + "}", "project_archived", 403);
  // Reading an archived project still works.
  CHECK(s.call_ok("relay_query_facts", R"({"project_id":"proj_demo"})")["facts"].get_array().value().size() == 1);
}

TEST_CASE("relay_conformance: the L3 descriptor") {
  memory_relay f;
  auto s = f.relay.session();
  const simdjson::dom::element d = s.call_ok("relay_conformance", "{}");
  CHECK(str(d["protocol_version"]) == "0.1");
  CHECK(str(d["conformance_level"]) == "L3");
  CHECK(d["capabilities"]["hybrid_search"].get_bool().value());
  CHECK_FALSE(d["capabilities"]["realtime"].get_bool().value());
  CHECK(str(d["implementation"]["name"]) == "agentctx");
  check_argument_error(s, "relay_conformance", R"({"level":"L0"})", "unknown property 'level'");
}

TEST_CASE("a failed write is 500 internal_error, and so is every write after it until the store is reopened") {
  io::memory_file_system memory;
  io::fault_injecting_file_system faulty(memory);
  relay_fixture relay(faulty);
  auto s = relay.session();
  s.call_ok("relay_deposit", deposit_arguments(package("pkg_1")));
  faulty.fail_write(faulty.operation_count(io::operation_kind::write) + 1);
  check_protocol_error(s, "relay_deposit", deposit_arguments(package("pkg_2")), "internal_error", 500);
  check_protocol_error(s, "relay_assert_fact",
                       R"({"project_id":"proj_demo","subject":"a","predicate":"b","value":"c"})", "internal_error", 500,
                       "reopen the store");
  // Reads go on.
  CHECK(
      s.call_ok("relay_pull", R"({"mode":"latest","project_id":"proj_demo"})")["packages"].get_array().value().size() ==
      1);
}

TEST_CASE("a quarantined package is never pulled: specific is 500 internal_error naming why") {
  io::memory_file_system fs;
  {
    // A log whose one package record carries a hash its bytes do not have.
    json::value record = json::value::object_type{
        {"type", "package"},
        {"hash", "sha256:" + std::string(64, '0')},
        {"package", package("pkg_bad")},
        {"project", json::value::object_type{{"project_id", "proj_demo"}, {"created_at", "2026-04-18T20:00:00Z"}}}};
    std::string bytes = relay::encode_log_header();
    relay::append_record(bytes, text_of(record));
    require_ok(fs.create_dir("/r"));
    auto file = require_value(fs.open("/r/relay.log", io::create_or_open));
    require_ok(file->append(std::as_bytes(std::span(bytes.data(), bytes.size()))));
  }
  relay_fixture relay(fs);
  REQUIRE(relay.store.quarantined().size() == 1);
  auto s = relay.session();
  check_protocol_error(s, "relay_pull", R"({"mode":"specific","package_id":"pkg_bad"})", "internal_error", 500,
                       "quarantined");
  CHECK(
      s.call_ok("relay_pull", R"({"mode":"latest","project_id":"proj_demo"})")["packages"].get_array().value().size() ==
      0);
  check_protocol_error(s, "relay_flag_for_review", R"({"package_id":"pkg_bad","review_type":"human"})",
                       "internal_error", 500, "quarantined");
  // Nor is it answered to a deposit of its id, nor a fact's source.
  check_protocol_error(s, "relay_deposit", deposit_arguments(package("pkg_bad")), "internal_error", 500,
                       "quarantined");
  check_protocol_error(s, "relay_assert_fact",
                       R"({"project_id":"proj_demo","subject":"s","predicate":"p","value":"v",)"
                       R"("source_package_id":"pkg_bad"})",
                       "internal_error", 500, "quarantined");
}

TEST_CASE("protocol_error_json names the code and HTTP status of every store error") {
  struct row {
    errc code;
    std::string message;
    std::string_view protocol_code;
    int status;
  };
  const row rows[] = {
      {errc::invalid_argument, "title is required", "invalid_schema", 400},
      {errc::invalid_transition, "package \"p\" cannot go from complete", "invalid_transition", 400},
      {errc::archived, "project \"p\" is archived", "project_archived", 403},
      {errc::not_found, "package \"p\" does not exist", "package_not_found", 404},
      {errc::not_found, "project \"p\" does not exist", "project_not_found", 404},
      {errc::not_found, "session \"s\" does not exist", "session_not_found", 404},
      {errc::already_exists, "package \"p\" already exists", "duplicate_package_id", 409},
      {errc::unsupported, "no search", "not_implemented", 501},
      {errc::locked, "store is locked by pid 7", "store_locked", 503},
      {errc::corrupt, "record does not apply", "internal_error", 500},
      {errc::io_error, "disk full", "internal_error", 500},
  };
  for (const row& r : rows) {
    const std::string text = relay::protocol_error_json(agentctx::make_error(r.code, r.message, "/r/relay.log", 40));
    INFO(text);
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    REQUIRE(parser.parse(text).get(root) == simdjson::SUCCESS);
    const simdjson::dom::element e = root["error"];
    CHECK(str(e["code"]) == r.protocol_code);
    CHECK(e["status"].get_int64().value() == r.status);
    CHECK(str(e["message"]) == "/r/relay.log: at byte 40: " + r.message);
  }
}

}  // namespace relay_mcp_tools_test
