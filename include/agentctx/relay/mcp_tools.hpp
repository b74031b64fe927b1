// agentctx/relay/mcp_tools.hpp: the Agentic Protocol's operations (seed 001
// section 8) as MCP tools over a relay::store, for agentctx/mcp/server.hpp
// (section 13: "Relay-compatible services can expose themselves as MCP
// tools").
//
//   auto store = relay::store::open(fs, ".relay");     // a writer
//   agdb::hash_embedder embedder(128);
//   mcp::tool_registry tools;
//   auto added = relay::add_mcp_tools(tools, *store, embedder);
//   mcp::server server({"relay", "0.1.0"}, std::move(tools));
//
//   relay_deposit          deposit (8.1): {"created", "hash", "package"}
//   relay_pull             pull (8.2), mode latest | specific | relevant:
//                          {"mode", "project_id", "query"?, "limit"?,
//                          "packages": [...]}, the members of `relay pull
//                          --json` (pull_json.hpp)
//   relay_orient           orient (8.3): the OrientationBundle (briefing.hpp)
//   relay_orchestrate      orchestrate (8.4): the DigestBundle (briefing.hpp)
//   relay_flag_for_review  flag_for_review (8.5): {"hash", "package"}
//   relay_review           an L3 status transition (11.4): {"hash", "package"}
//   relay_assert_fact      assert_fact (8.6): {"changed", "superseded", "fact"}
//   relay_invalidate_fact  invalidate_fact (8.7): {"invalidated"}
//   relay_query_facts      current facts, one key's history, or the facts
//                          that held at a time (11.3): {"query", "facts", ...}
//   relay_awaiting_review  the packages awaiting review (11.4)
//   relay_start_session    start a session (5.5): the session
//   relay_end_session      end a session (5.5): the session
//   relay_conformance      the conformance descriptor (11.5)
//
// Packages appear in their current wire form with the content hash of that
// form beside them (section 6.6: the hash is never inside the package);
// relay_deposit alone answers with the package as deposited and its hash
// then, as `relay deposit --json` does, also when the identical package was
// there already and its status has changed since.
// Results are JSON objects (members in the order built: a package's as the
// store holds them), sent as the text content and as structured content
// under the declared output schemas.
//
// Errors. Every refusal is an isError result whose text is the protocol
// error (errors.hpp):
//   {"error":{"code":"duplicate_package_id","status":409,"message":"..."}}
// Arguments that break a tool's input schema are refused by the server
// before the tool runs, as 400 invalid_schema ("invalid arguments for
// relay_pull: limit must be at least 1, not 0"); arguments whose need
// depends on another (a latest pull without project_id, a limit given to a
// specific pull, a review_type with a status other than awaiting_review, an
// `at` that is not an RFC 3339 time) are refused the same way by the tool,
// in the words of the `relay` command that does the same; and so is
// everything the store refuses, with its own code.
//
// The store is the caller's, opened as a writer (a reader's writes fail);
// the embedder ranks pull mode=relevant and orchestrate's snippets. Both
// must outlive the registry. The handlers are not thread-safe, like the
// server that calls them.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/mcp/json_schema.hpp"
#include "agentctx/mcp/tool_arguments.hpp"
#include "agentctx/mcp/tool_registry.hpp"
#include "agentctx/relay/briefing.hpp"
#include "agentctx/relay/conformance.hpp"
#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/model.hpp"
#include "agentctx/relay/pull_json.hpp"
#include "agentctx/relay/search.hpp"
#include "agentctx/relay/store.hpp"

namespace agentctx::relay {

struct mcp_tool_options {
  /// The largest `limit` relay_pull accepts and the largest `snippets`
  /// relay_orchestrate accepts.
  std::size_t max_limit = max_pull_limit;
  /// The largest window_days relay_orient and relay_orchestrate accept.
  unsigned max_window_days = relay::max_window_days;
};

/// The text of a tool error: {"error": {"code", "status", "message"}}.
inline std::string protocol_error_json(const protocol_error& p, std::string_view message) {
  std::string out;
  json::writer w(out);
  w.begin_object().key("error").begin_object();
  w.key("code").value(p.code);
  w.key("status").value(p.http_status);
  w.key("message").value(message);
  w.end_object().end_object();
  return out;
}

/// The text of a tool error for a store error, with the protocol code and
/// HTTP status of protocol_error_of().
inline std::string protocol_error_json(const error& e) { return protocol_error_json(protocol_error_of(e), e.describe()); }

namespace detail {

struct mcp_tool_state {
  store* relay = nullptr;
  agdb::embedder* embedder = nullptr;
  mcp_tool_options options;
  relevance_index index;  // the server's pulls and digests rank through it: each package is read once
};

using mcp::integer_argument;
using mcp::string_argument;
using mcp::string_list_argument;

// --- results ---------------------------------------------------------------------------

inline mcp::tool_result protocol_failure(const error& e) { return mcp::tool_result::failure(protocol_error_json(e)); }

/// Arguments a tool refuses, as the protocol error they are (400
/// invalid_schema), like everything the store refuses: `message` is the
/// whole text, "invalid arguments for relay_pull: ...". The server reports
/// arguments that break a tool's input schema through this too.
inline mcp::tool_result invalid_arguments(const std::string& message) {
  return protocol_failure(make_error(errc::invalid_argument, message));
}

/// An exception a tool threw (a bug, or an embedder of the caller's that
/// throws), as the server reports it: 500 internal_error, in the shape of
/// every other failure, `message` "internal error in relay_pull: ...".
inline mcp::tool_result internal_failure(const std::string& message) {
  return mcp::tool_result::failure(protocol_error_json(protocol_error{"internal_error", 500}, message));
}

inline mcp::tool_result argument_failure(std::string_view tool, std::string_view problem) {
  return invalid_arguments("invalid arguments for " + std::string(tool) + ": " + std::string(problem));
}

// A result object as JSON text, members in the order built (the bundles'
// as section 8.3 lists them, packages as the store holds them).
inline mcp::tool_result object_result(const json::value& result) {
  return mcp::tool_result::object(json::to_text(result));
}

inline json::value fact_list_json(const std::vector<const fact*>& facts) {
  json::value::array_type out;
  for (const fact* f : facts) out.push_back(f->wire);
  return out;
}

// --- schemas ---------------------------------------------------------------------------

inline mcp::json_schema open_object(std::string description) {
  return mcp::json_schema::object().allow_other_properties().description(std::move(description));
}

inline mcp::json_schema id_schema(std::string description) {
  return mcp::json_schema::string().min_length(1).description(std::move(description));
}

inline mcp::json_schema window_schema(unsigned max_days) {
  return mcp::json_schema::integer()
      .minimum(1)
      .maximum(max_days)
      .default_json(std::to_string(default_window_days))
      .description("How many days back counts as recent (default 14)");
}

inline mcp::json_schema status_change_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("status", json_schema::string().description("The status it entered"))
      .required_property("review_type", json_schema::string())
      .required_property("at", json_schema::string().description("When (RFC 3339 UTC)"))
      .property("note", json_schema::string().description("The note of the flag or review"))
      .required_property("hash", json_schema::string().description("Content hash of the package in its new state"));
}

inline mcp::json_schema stored_package_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("hash", json_schema::string().description("Content hash of the package as shown (sha256:...)"))
      .required_property("package", open_object("The Context Package (seed 001 section 6)"))
      .property("deposited_hash",
                json_schema::string().description("Content hash of the package as deposited (specific mode)"))
      .property("status_changes", json_schema::array(status_change_schema())
                                      .description("Its status changes, oldest first (specific mode)"))
      .property("score", json_schema::number().description("Fused rank score (relevant mode)"))
      .property("vector_score", json_schema::number().description("Cosine similarity with the query (relevant mode)"))
      .property("lexical_score", json_schema::number().description("BM25 score (relevant mode)"));
}

inline mcp::json_schema stored_package_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("hash", json_schema::string())
      .required_property("package", open_object("The package in its new state"));
}

inline mcp::json_schema deposit_input_schema() {
  return mcp::json_schema::object().required_property(
      "package",
      open_object("A Context Package (seed 001 section 6). Required: project_id, relay_version \"0.1\", title, "
                  "status (draft|complete|awaiting_review|revision_requested), package_type (standard, milestone, "
                  "decision, handoff, auto_deposit, analysis, question, orchestrator_report or x-*), review_type "
                  "(none|human|agent), created_at (RFC 3339 UTC), created_by {id, type human|agent|script, "
                  "session_id?}. package_id is generated when absent. Optional: description, tags, decisions_made, "
                  "open_questions, handoff_note, estimated_next_actor, deliverables, parent_package_id, significance "
                  "1-10, content_md, topic, artifact_type, storage_path, x-* members"));
}

inline mcp::json_schema deposit_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("created", json_schema::boolean().description(
                                        "false: the identical package was already stored (idempotent deposit)"))
      .required_property("hash", json_schema::string().description(
                                     "Content hash of the package as deposited (sha256:...)"))
      .required_property("package", open_object("The package as deposited (relay_pull shows its current state)"));
}

inline mcp::json_schema pull_input_schema(std::size_t max_limit) {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("mode", json_schema::string()
                                     .allowed_values({"latest", "specific", "relevant"})
                                     .description("latest: the newest packages of project_id; specific: the package "
                                                  "package_id; relevant: the packages most related to query"))
      .property("project_id", id_schema("The project, archived or not (required for latest; optional for specific, "
                                        "absent: any project, and relevant, absent: every project not archived)"))
      .property("package_id", id_schema("The package (specific mode)"))
      .property("query", json_schema::string().min_length(1).description("What to look for (relevant mode)"))
      .property("limit", json_schema::integer()
                             .minimum(1)
                             .maximum(static_cast<double>(max_limit))
                             .default_json("5")
                             .description("How many packages at most (latest and relevant; default 5)"));
}

inline mcp::json_schema pull_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("mode", json_schema::string().allowed_values({"latest", "specific", "relevant"}))
      .required_property("project_id", json_schema::any_of_types({mcp::json_type::string, mcp::json_type::null})
                                           .description("The project pulled from; null: none was named"))
      .property("query", json_schema::string().description("relevant mode"))
      .property("limit", json_schema::integer().description("latest and relevant modes"))
      .required_property("packages",
                         json_schema::array(stored_package_schema())
                             .description("Newest first (latest), best first (relevant), or the one package"));
}

inline mcp::json_schema orient_input_schema(unsigned max_days) {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("project_id", id_schema("The project"))
      .property("window_days", window_schema(max_days))
      .property("max_packages", json_schema::integer().minimum(1).maximum(max_orient_packages).default_json("50").description(
                                    "The most recent packages to include at most (default 50)"))
      .property("max_bytes",
                json_schema::integer()
                    .minimum(1)
                    .maximum(static_cast<double>(max_budget_bytes))
                    .description("Budget: the bundle's compact JSON size; the least significant items are left out"))
      .property("max_tokens", json_schema::integer()
                                  .minimum(1)
                                  .maximum(static_cast<double>(max_budget_tokens))
                                  .description("Budget in estimated tokens (bytes / 4), like max_bytes"));
}

inline mcp::json_schema orient_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .allow_other_properties()
      .required_property("project", open_object("The project"))
      .required_property("recent_packages", json_schema::array(open_object("A package")))
      .required_property("active_facts", json_schema::array(open_object("A current fact")))
      .required_property("open_questions", json_schema::array(json_schema::string()))
      .required_property("window_days", json_schema::integer())
      .required_property("generated_at", json_schema::string())
      .description("The OrientationBundle (seed 001 section 8.3); x-agentctx-budget reports what a budget left out");
}

inline mcp::json_schema orchestrate_input_schema(std::size_t max_limit, unsigned max_days) {
  using mcp::json_schema;
  return json_schema::object()
      .property("project_id", id_schema("The project, archived or not; absent: a global digest over every project "
                                        "not archived"))
      .property("focus", json_schema::string().description("A topic: the snippets are the packages most related to it"))
      .property("snippets", json_schema::integer()
                                .minimum(0)
                                .maximum(static_cast<double>(max_limit))
                                .default_json("25")
                                .description("How many similarity snippets at most (default 25; without a focus "
                                             "there are none, whatever the count)"))
      .property("window_days", window_schema(max_days));
}

inline mcp::json_schema orchestrate_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .allow_other_properties()
      .required_property("scope", json_schema::string().allowed_values({"project", "global"}))
      .required_property("window_days", json_schema::integer())
      .required_property("generated_at", json_schema::string())
      .required_property("summary", open_object("Counts, decisions, handoffs, packages awaiting review"))
      .required_property("active_facts", json_schema::array(open_object("A current fact")))
      .required_property("open_questions",
                         json_schema::array(json_schema::object()
                                                .allow_other_properties()
                                                .required_property("question", json_schema::string())
                                                .required_property("project_id", json_schema::string())
                                                .description("An open question of the window, once per project")))
      .required_property("snippets", json_schema::array(open_object("A package related to the focus")))
      .description("The DigestBundle (seed 001 section 8.4)");
}

inline mcp::json_schema flag_input_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("package_id", id_schema("The package to review"))
      .required_property("review_type",
                         json_schema::string().allowed_values({"human", "agent"}).description("Who should review it"))
      .property("note", json_schema::string().description("What to review"))
      .property("project_id", id_schema("The package's project (needed when the id exists in several projects)"));
}

inline mcp::json_schema session_start_input_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("project_id", id_schema("The project the session works in (created if new)"))
      .required_property("actor_id", id_schema("Who works in it: the id its packages give in created_by.id"))
      .required_property("actor_type", json_schema::string()
                                           .allowed_values({"agent", "human", "script"})
                                           .description("The actor's type: its packages' created_by.type"));
}

inline mcp::json_schema session_end_input_schema() {
  return mcp::json_schema::object().required_property("session_id", id_schema("The session to end"));
}

/// A session's wire form (seed 001 section 5.5), as `relay session start
/// --json` prints it: ended_at null while it is open.
inline mcp::json_schema session_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .allow_other_properties()
      .required_property("session_id", json_schema::string())
      .required_property("project_id", json_schema::string())
      .required_property("actor_id", json_schema::string())
      .required_property("actor_type", json_schema::string())
      .property("callsign", json_schema::any_of_types({mcp::json_type::string, mcp::json_type::null})
                                .description("adjective-noun, e.g. coral-heron (an imported session may have none: "
                                             "absent or null, as it was written)"))
      .required_property("started_at", json_schema::string())
      .required_property("ended_at", json_schema::any_of_types({mcp::json_type::string, mcp::json_type::null})
                                         .description("When it ended; null while it is open"))
      .required_property("packages_deposited", json_schema::array(json_schema::string())
                                                   .description("The ids of its actor's packages deposited in it"));
}

inline mcp::json_schema review_input_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("package_id", id_schema("The package"))
      .required_property("status", json_schema::string()
                                       .allowed_values({"complete", "revision_requested", "awaiting_review"})
                                       .description("The new status: a reviewer's complete or revision_requested, "
                                                    "or awaiting_review to resubmit after a revision"))
      .property("review_type", json_schema::string()
                                   .allowed_values({"human", "agent"})
                                   .description("With status awaiting_review: who should review it (default: the "
                                                "package's review_type, which must then not be none)"))
      .property("note", json_schema::string().description("The reviewer's note"))
      .property("project_id", id_schema("The package's project (needed when the id exists in several projects)"));
}

inline mcp::json_schema assert_input_schema() {
  using mcp::json_schema;
  json_schema actor_schema =
      json_schema::object()
          .required_property("id", id_schema("Actor identifier"))
          .required_property("type", json_schema::string().allowed_values({"human", "agent", "script"}))
          // Null (as in section 7.5's example) is no session, like absent: the
          // fact's asserted_by is then written without it.
          .property("session_id", json_schema::any_of_types({mcp::json_type::string, mcp::json_type::null})
                                      .description("The actor's session; null or absent: none"))
          .allow_extensions()
          .description("Who asserts it (default: the source package's created_by); x-* members are kept");
  return json_schema::object()
      .required_property("project_id", id_schema("The project"))
      .required_property("subject", id_schema("What the fact is about, e.g. longmemeval_s"))
      .required_property("predicate", id_schema("The property, e.g. recall_any_at_5"))
      .required_property("value", json_schema::string().description("The value, as a string (numbers too: \"97.0\")"))
      .property("valid_from", json_schema::string().description("When it became true (RFC 3339 UTC; default now)"))
      .property("source_package_id", id_schema("The package this fact comes from"))
      .property("confidence",
                json_schema::number().minimum(0).maximum(1).default_json("1").description("From 0 to 1 (default 1)"))
      .property("asserted_by", std::move(actor_schema))
      .property("tags", json_schema::array(json_schema::string()).description("Free-form labels"))
      .allow_extensions();  // x-* members of the fact (section 12.1), kept as given
}

inline mcp::json_schema assert_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("changed", json_schema::boolean().description(
                                        "false: the same value was already current; nothing was written"))
      .required_property("superseded", json_schema::any_of_types({mcp::json_type::string, mcp::json_type::null})
                                           .description("The fact_id whose valid_to this assertion set"))
      .required_property("fact", open_object("The current fact (seed 001 section 7)"));
}

inline mcp::json_schema invalidate_input_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("project_id", id_schema("The project"))
      .required_property("subject", id_schema("The fact's subject"))
      .required_property("predicate", id_schema("The fact's predicate"))
      .property("value", json_schema::string().description("Only invalidate the current fact if it has this value"))
      .property("object", json_schema::string().description(
                              "The same as value, by the name section 8.7 gives it (give one of the two)"));
}

inline mcp::json_schema invalidate_output_schema() {
  return mcp::json_schema::object().required_property(
      "invalidated", mcp::json_schema::integer().description("How many current facts were ended (0 or 1)"));
}

inline mcp::json_schema query_facts_input_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("project_id", id_schema("The project"))
      .property("subject", id_schema("Only facts about this subject"))
      .property("predicate", id_schema("Only facts of this predicate"))
      .property("at", json_schema::string().description(
                          "A time (RFC 3339; an offset is converted to UTC): the facts that held then. Without it: "
                          "the history of the facts matching subject/predicate when either is given, else the "
                          "current facts"));
}

inline mcp::json_schema query_facts_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("project_id", json_schema::string())
      .required_property("query", json_schema::string().allowed_values({"current", "history", "at"}))
      .property("at", json_schema::string())
      .property("subject", json_schema::string())
      .property("predicate", json_schema::string())
      .required_property("facts", json_schema::array(open_object("A fact; valid_to is set once it has ended")));
}

inline mcp::json_schema project_input_schema() {
  return mcp::json_schema::object().required_property("project_id", id_schema("The project"));
}

inline mcp::json_schema awaiting_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("project_id", json_schema::string())
      .required_property("packages", json_schema::array(stored_package_schema()).description("Oldest first"));
}

inline mcp::json_schema conformance_output_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .allow_other_properties()
      .required_property("protocol_version", json_schema::string())
      .required_property("conformance_level", json_schema::string())
      .required_property("capabilities", open_object("hybrid_search, semantic_search, realtime, blob_storage"))
      .required_property("implementation", open_object("name and version"));
}

// --- the tools -------------------------------------------------------------------------

inline mcp::tool_result deposit_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  // The store parses the text itself, with its checks (duplicate names, lone
  // surrogates), and hashes what it parsed.
  const std::string text = simdjson::minify(arguments["package"].value_unsafe());
  auto deposited = state.relay->deposit_json(text);
  if (!deposited) {
    // A byte offset would count in this compact copy, not in the client's line.
    error refused = std::move(deposited).error();
    refused.offset = error::no_offset;
    return protocol_failure(refused);
  }
  const stored_package& p = *deposited->package;
  // As deposited (the caller's package, whose hash `relay hash` computes),
  // also when it was there already and has changed status since.
  return object_result(json::value::object_type{
      {"created", deposited->created}, {"hash", p.deposited_hash}, {"package", p.deposited_wire()}});
}

inline mcp::tool_result pull_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  constexpr std::string_view tool = "relay_pull";
  const std::string mode = *string_argument(arguments, "mode");
  const std::string project_id = string_argument(arguments, "project_id").value_or(std::string());
  const std::optional<std::string> package_id = string_argument(arguments, "package_id");
  const std::optional<std::string> query = string_argument(arguments, "query");
  const std::optional<std::int64_t> limit_argument = integer_argument(arguments, "limit");
  const std::size_t limit = static_cast<std::size_t>(limit_argument.value_or(5));
  // As `relay pull`: an argument of another mode is refused, not ignored.
  if (mode != "relevant" && query) return argument_failure(tool, "query applies to mode relevant only");
  if (mode != "specific" && package_id) return argument_failure(tool, "package_id applies to mode specific only");

  if (mode == "latest") {
    if (project_id.empty()) return argument_failure(tool, "mode latest needs project_id");
    auto latest = state.relay->latest(project_id, limit);
    if (!latest) return protocol_failure(latest.error());
    return object_result(latest_pull_json(project_id, limit, *latest));
  }
  if (mode == "specific") {
    if (!package_id) return argument_failure(tool, "mode specific needs package_id");
    if (limit_argument) return argument_failure(tool, "limit does not apply to mode specific");
    auto found = state.relay->pull_specific(*package_id, project_id);
    if (!found) return protocol_failure(found.error());
    return object_result(specific_pull_json(project_id, **found));
  }
  if (!query) return argument_failure(tool, "mode relevant needs query");
  auto hits = pull_relevant(*state.relay, project_id, *query, limit, *state.embedder, &state.index);
  if (!hits) return protocol_failure(hits.error());
  return object_result(relevant_pull_json(project_id, *query, limit, *hits));
}

inline mcp::tool_result orient_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  orient_options options;
  if (const auto days = integer_argument(arguments, "window_days")) options.window_days = static_cast<unsigned>(*days);
  if (const auto n = integer_argument(arguments, "max_packages")) options.max_packages = static_cast<std::size_t>(*n);
  if (const auto n = integer_argument(arguments, "max_bytes")) options.max_bytes = static_cast<std::size_t>(*n);
  if (const auto n = integer_argument(arguments, "max_tokens")) options.max_tokens = static_cast<std::size_t>(*n);
  auto oriented = orient(*state.relay, *string_argument(arguments, "project_id"), options);
  if (!oriented) return protocol_failure(oriented.error());
  return object_result(oriented->bundle);
}

inline mcp::tool_result orchestrate_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  orchestrate_options options;
  options.project_id = string_argument(arguments, "project_id").value_or(std::string());
  options.focus = string_argument(arguments, "focus").value_or(std::string());
  // Section 8.4 makes snippets an input of its own, with a default, and
  // pulls snippets only when a focus is given: a client may send the count
  // without a focus (the CLI, for a person, says --snippets needs --focus).
  if (const auto n = integer_argument(arguments, "snippets")) options.snippets = static_cast<std::size_t>(*n);
  if (const auto days = integer_argument(arguments, "window_days")) options.window_days = static_cast<unsigned>(*days);
  auto digest = orchestrate(*state.relay, options, *state.embedder, &state.index);
  if (!digest) return protocol_failure(digest.error());
  return object_result(*digest);
}

inline mcp::tool_result flag_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  auto flagged = state.relay->flag_for_review(
      *string_argument(arguments, "package_id"), *parse_review_type(*string_argument(arguments, "review_type")),
      string_argument(arguments, "note"), string_argument(arguments, "project_id").value_or(std::string()));
  if (!flagged) return protocol_failure(flagged.error());
  return object_result(stored_package_json(**flagged));
}

inline mcp::tool_result review_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const package_status status = *parse_package_status(*string_argument(arguments, "status"));
  std::optional<review_type> type;
  if (auto text = string_argument(arguments, "review_type")) {
    // As `relay review`: a reviewer's decision names no reviewer.
    if (status != package_status::awaiting_review) {
      return argument_failure("relay_review", "review_type goes with status awaiting_review");
    }
    type = parse_review_type(*text);
  }
  auto reviewed = state.relay->review(*string_argument(arguments, "package_id"), status, string_argument(arguments, "note"),
                                      string_argument(arguments, "project_id").value_or(std::string()), type);
  if (!reviewed) return protocol_failure(reviewed.error());
  return object_result(stored_package_json(**reviewed));
}

// The x-* members of `object` (the input schema let only those through
// undeclared), parsed as the store parses JSON text: the members of the
// assertion that are extensions (section 12.1). A member the store's parser
// refuses (a name twice inside it) is an invalid argument of relay_assert_fact.
inline result<json::value::object_type> extension_members(simdjson::dom::object object, std::string_view where) {
  json::value::object_type out;
  for (const simdjson::dom::key_value_pair member : object) {
    if (!member.key.starts_with("x-")) continue;
    auto value = json::parse(simdjson::minify(member.value));
    if (!value) {
      return fail(errc::invalid_argument, "invalid arguments for relay_assert_fact: " + std::string(where) +
                                              std::string(member.key) + ": " + value.error().message);
    }
    out.emplace_back(std::string(member.key), std::move(*value));
  }
  return out;
}

inline mcp::tool_result assert_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  fact_assertion input;
  auto extensions = extension_members(arguments, "");
  if (!extensions) return protocol_failure(extensions.error());
  input.extensions = std::move(*extensions);
  input.project_id = *string_argument(arguments, "project_id");
  input.subject = *string_argument(arguments, "subject");
  input.predicate = *string_argument(arguments, "predicate");
  input.value = *string_argument(arguments, "value");
  input.valid_from = string_argument(arguments, "valid_from");
  input.source_package_id = string_argument(arguments, "source_package_id");
  if (double confidence = 0; arguments.at_key("confidence").get_double().get(confidence) == simdjson::SUCCESS) {
    input.confidence = confidence;
  }
  if (simdjson::dom::object by; arguments.at_key("asserted_by").get_object().get(by) == simdjson::SUCCESS) {
    actor a;
    a.id = *string_argument(by, "id");
    a.type = *parse_actor_type(*string_argument(by, "type"));
    a.session_id = string_argument(by, "session_id");
    input.asserted_by = std::move(a);
    auto by_extensions = extension_members(by, "asserted_by.");
    if (!by_extensions) return protocol_failure(by_extensions.error());
    input.asserted_by_extensions = std::move(*by_extensions);
  }
  input.tags = string_list_argument(arguments, "tags");
  auto asserted = state.relay->assert_fact(input);
  if (!asserted) return protocol_failure(asserted.error());
  json::value superseded = asserted->superseded ? json::value(*asserted->superseded) : json::value();
  return object_result(json::value::object_type{
      {"changed", asserted->changed}, {"superseded", std::move(superseded)}, {"fact", asserted->asserted->wire}});
}

inline mcp::tool_result invalidate_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  std::optional<std::string> value = string_argument(arguments, "value");
  std::optional<std::string> object = string_argument(arguments, "object");
  if (value && object) return argument_failure("relay_invalidate_fact", "give value or object (the same), not both");
  auto count =
      state.relay->invalidate_fact(*string_argument(arguments, "project_id"), *string_argument(arguments, "subject"),
                                   *string_argument(arguments, "predicate"), value ? value : object);
  if (!count) return protocol_failure(count.error());
  return object_result(json::value::object_type{{"invalidated", *count}});
}

inline mcp::tool_result query_facts_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const std::string project_id = *string_argument(arguments, "project_id");
  const std::optional<std::string> subject = string_argument(arguments, "subject");
  const std::optional<std::string> predicate = string_argument(arguments, "predicate");
  const std::optional<std::string> at = string_argument(arguments, "at");
  std::optional<utc_instant> at_instant;
  if (at) {
    // As `relay facts --at`: any RFC 3339 time, an offset converted to UTC.
    auto parsed = parse_rfc3339_utc_instant(*at);
    if (!parsed) return argument_failure("relay_query_facts", "at: " + parsed.error().message);
    at_instant = std::move(*parsed);
  }
  if (state.relay->find_project(project_id) == nullptr) {
    return protocol_failure(project_not_found(project_id));
  }
  const auto matches = [&](const fact* f) {
    return (!subject || f->subject == *subject) && (!predicate || f->predicate == *predicate);
  };
  std::vector<const fact*> facts;
  std::string_view query = "current";
  if (at_instant) {
    query = "at";
    for (const fact* f : state.relay->facts(project_id, at_instant)) {
      if (matches(f)) facts.push_back(f);
    }
  } else if (subject || predicate) {
    query = "history";
    facts = state.relay->histories(project_id, subject, predicate);
  } else {
    facts = state.relay->facts(project_id);
  }
  json::value out = json::value::object_type{{"project_id", project_id}, {"query", query}};
  if (at) out.set("at", *at);
  if (subject) out.set("subject", *subject);
  if (predicate) out.set("predicate", *predicate);
  out.set("facts", fact_list_json(facts));
  return object_result(out);
}

inline mcp::tool_result awaiting_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const std::string project_id = *string_argument(arguments, "project_id");
  auto awaiting = state.relay->awaiting_review(project_id);
  if (!awaiting) return protocol_failure(awaiting.error());
  return object_result(
      json::value::object_type{{"project_id", project_id}, {"packages", stored_package_list_json(*awaiting)}});
}

inline mcp::tool_result session_start_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  auto started = state.relay->start_session(*string_argument(arguments, "project_id"),
                                            *string_argument(arguments, "actor_id"),
                                            *parse_actor_type(*string_argument(arguments, "actor_type")));
  if (!started) return protocol_failure(started.error());
  return object_result(state.relay->session_wire(**started));
}

inline mcp::tool_result session_end_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  auto ended = state.relay->end_session(*string_argument(arguments, "session_id"));
  if (!ended) return protocol_failure(ended.error());
  return object_result(state.relay->session_wire(**ended));
}

inline mcp::tool_result conformance_tool(mcp_tool_state&, simdjson::dom::object) {
  return object_result(conformance_descriptor());
}

}  // namespace detail

/// Adds the relay_* tools above to `registry`. `relay` (a writer) and
/// `embedder` must outlive the registry. Errors: invalid_argument when a
/// tool name is taken, or options.max_limit or max_window_days is 0.
inline result<void> add_mcp_tools(mcp::tool_registry& registry, store& relay, agdb::embedder& embedder,
                                  mcp_tool_options options = {}) {
  if (options.max_limit == 0 || options.max_window_days == 0) {
    return fail(errc::invalid_argument, "max_limit and max_window_days must be at least 1");
  }
  auto state = std::make_shared<detail::mcp_tool_state>();
  state->relay = &relay;
  state->embedder = &embedder;
  state->options = options;

  const std::size_t max_limit = state->options.max_limit;
  const unsigned max_days = state->options.max_window_days;
  const mcp::stateful_tool<detail::mcp_tool_state> specs[] = {
      {"relay_deposit", "Deposit a context package",
       "Deposits an immutable Context Package: a record of work done (title, description, decisions_made, "
       "open_questions, handoff_note, deliverables). Returns it, as deposited, with its content hash. "
       "Depositing the identical package again returns it so (created false), also when its status has changed "
       "since (relay_pull shows its current state); the same package_id with other "
       "content is error 409 duplicate_package_id.",
       detail::deposit_input_schema(), detail::deposit_output_schema(), detail::deposit_tool},
      {"relay_pull", "Pull context packages",
       "Reads packages: mode latest (the newest of project_id, newest first), specific (package_id, in full: "
       "its status changes with the notes of flags and reviews; 404 package_not_found when missing) or "
       "relevant (hybrid semantic and keyword search for query, best "
       "first, with scores; only packages related to query, so possibly none).",
       detail::pull_input_schema(max_limit), detail::pull_output_schema(), detail::pull_tool},
      {"relay_orient", "Orient in a project",
       "Returns the orientation bundle to read at the start of a session: the project, its recent "
       "packages, active facts and open questions. Optional budget (max_bytes or max_tokens) leaves out "
       "the least significant items and says which.",
       detail::orient_input_schema(max_days), detail::orient_output_schema(), detail::orient_tool},
      {"relay_orchestrate", "Digest recent work",
       "Returns a digest across packages of one project (or of every active project): counts by type and "
       "status, decisions, handoffs, packages awaiting review, the most significant packages, active "
       "facts, open questions (each with its project), and snippets of the packages most related to focus "
       "(any package of the scope but drafts, not only recent ones).",
       detail::orchestrate_input_schema(max_limit, max_days), detail::orchestrate_output_schema(),
       detail::orchestrate_tool},
      {"relay_flag_for_review", "Flag a package for review",
       "Sets a package's status to awaiting_review with a human or agent review_type, so that nobody "
       "proceeds on it before the review. A package already awaiting review may be flagged again, for "
       "another reviewer or with a note. A complete package cannot be flagged (400 invalid_transition).",
       detail::flag_input_schema(), detail::stored_package_output_schema(), detail::flag_tool},
      {"relay_review", "Review a package",
       "Records a review decision: awaiting_review -> complete or revision_requested; revision_requested "
       "-> awaiting_review (resubmitted) or complete. complete is final (400 invalid_transition).",
       detail::review_input_schema(), detail::stored_package_output_schema(), detail::review_tool},
      {"relay_assert_fact", "Assert a fact",
       "Records that (subject, predicate) now has value in a project: the current fact of that key, if "
       "any, ends (valid_to) where the new one begins, atomically. The current value again changes "
       "nothing, unless source_package_id, confidence, asserted_by, tags or x-* members are given and differ. "
       "x-* members of the arguments (and of asserted_by) are kept in the fact as given.",
       detail::assert_input_schema(), detail::assert_output_schema(), detail::assert_tool},
      {"relay_invalidate_fact", "Invalidate a fact",
       "Ends the current fact of (subject, predicate) without a replacement (only if its value is value, "
       "when given). Returns how many facts were invalidated.",
       detail::invalidate_input_schema(), detail::invalidate_output_schema(), detail::invalidate_tool},
      {"relay_query_facts", "Query facts",
       "Reads a project's facts: the current ones; with at, the ones that held at that time; with subject "
       "and/or predicate (and no at), their whole history, ended facts included: by subject, then predicate, "
       "each key's facts oldest first.",
       detail::query_facts_input_schema(), detail::query_facts_output_schema(), detail::query_facts_tool},
      {"relay_awaiting_review", "List packages awaiting review",
       "Lists the packages of a project whose status is awaiting_review, oldest first.", detail::project_input_schema(),
       detail::awaiting_output_schema(), detail::awaiting_tool},
      {"relay_start_session", "Start a session",
       "Starts a session (section 5.5) of an actor in a project and returns it with its session_id and an "
       "adjective-noun callsign. Give the session_id as created_by.session_id in the packages deposited during "
       "it (with the same actor_id and actor_type): the session lists them as packages_deposited.",
       detail::session_start_input_schema(), detail::session_output_schema(), detail::session_start_tool},
      {"relay_end_session", "End a session",
       "Ends a session (sets ended_at) and returns it with the packages deposited during it. A session ends "
       "once (400 invalid_schema when it has ended; 404 session_not_found for an unknown id).",
       detail::session_end_input_schema(), detail::session_output_schema(), detail::session_end_tool},
      {"relay_conformance", "Conformance descriptor",
       "Returns this implementation's Agentic Protocol conformance descriptor: protocol_version, "
       "conformance_level and capabilities.",
       mcp::json_schema::object(), detail::conformance_output_schema(), detail::conformance_tool},
  };
  return mcp::add_stateful_tools(registry, state, specs,
                                 {.invalid_arguments = detail::invalid_arguments, .internal_error = detail::internal_failure});
}

}  // namespace agentctx::relay
