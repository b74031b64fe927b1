// agentctx/memory/mcp_tools.hpp: agent memory (seed 004) as MCP tools, with
// exactly the seed's tool names and input fields, for agentctx/mcp/server.hpp.
//
//   mcp::tool_registry tools;
//   auto added = memory::add_mcp_tools(tools, {});
//   mcp::server server({"agent-memory", "0.1.0"}, std::move(tools));
//
//   start_session    {agent_name, repo_root, date?}                       -> {"session_file", "created"}
//   append_entry     {agent_name, repo_root, date?, section, content}     -> {"session_file", "section", "created"}
//   read_summary     {agent_name, repo_root}                              -> {"summary", "summary_file", "hash", ...}
//   update_summary   {agent_name, repo_root, section, content, mode, base_hash?} -> {"summary_file", "hash", ...}
//   list_sessions    {agent_name, repo_root, limit?, before?}             -> {"sessions", "total", ...}
// (result_json.hpp has every result member; base_hash and before are this
// implementation's additions: the optimistic check of an update and paging.)
//
// Every call opens the repository afresh (open_repository: an absolute,
// canonical path other than "/"; one of `allowed_roots` when that list is
// not empty), so the tools serve any number of repositories and see the
// writes of other processes.
//
// Errors. A refused or failed call is an isError result whose text is the
// seed's error object, {"error": "InvalidSection", "message": "..."}
// (errors.hpp lists the codes). section and mode are checked by the tool,
// not by the input schema, so that a wrong value gets that shape too;
// arguments of the wrong JSON type are refused by the server before the
// tool runs ("invalid arguments for append_entry: ...").
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/mcp/json_schema.hpp"
#include "agentctx/mcp/tool_arguments.hpp"
#include "agentctx/mcp/tool_registry.hpp"
#include "agentctx/memory/agent_memory.hpp"
#include "agentctx/memory/errors.hpp"
#include "agentctx/memory/result_json.hpp"

namespace agentctx::memory {

struct mcp_tool_options {
  /// The repositories the tools may use; empty: any (see open_repository).
  std::vector<std::string> allowed_roots;
  /// Content and file limits, and whether writers wait for the lock.
  memory_options memory;
  /// The largest `limit` list_sessions accepts.
  std::int64_t max_limit = 100'000;
};

namespace detail {

struct mcp_tool_state {
  mcp_tool_options options;
};

inline mcp::tool_result memory_failure(const memory_error& e) { return mcp::tool_result::failure(e.json()); }

/// Opens the repository and the agent's memory named by the arguments and
/// runs `operation` on it.
template <class Operation>
mcp::tool_result with_agent_memory(mcp_tool_state& state, simdjson::dom::object arguments, Operation&& operation) {
  const std::string root = mcp::string_argument(arguments, "repo_root").value_or("");
  auto repo = open_repository(root, state.options.allowed_roots);
  if (!repo) return memory_failure(repo.error());
  auto opened = agent_memory::open(**repo, mcp::string_argument(arguments, "agent_name").value_or(""),
                                   state.options.memory);
  if (!opened) return memory_failure(opened.error());
  auto done = operation(*opened);
  if (!done) return memory_failure(done.error());
  return mcp::tool_result::object(to_json(*done));
}

inline std::optional<std::string> date_argument(simdjson::dom::object arguments) {
  return mcp::string_argument(arguments, "date");
}

inline mcp::tool_result start_session_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const auto date = date_argument(arguments);
  return with_agent_memory(state, arguments, [&](agent_memory& m) {
    return m.start_session(date ? std::optional<std::string_view>(*date) : std::nullopt);
  });
}

inline mcp::tool_result append_entry_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const auto date = date_argument(arguments);
  const std::string section = mcp::string_argument(arguments, "section").value_or("");
  const std::string content = mcp::string_argument(arguments, "content").value_or("");
  return with_agent_memory(state, arguments, [&](agent_memory& m) {
    return m.append_entry(section, content, date ? std::optional<std::string_view>(*date) : std::nullopt);
  });
}

inline mcp::tool_result read_summary_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  return with_agent_memory(state, arguments, [&](agent_memory& m) { return m.read_summary(); });
}

inline mcp::tool_result update_summary_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const std::string section = mcp::string_argument(arguments, "section").value_or("");
  const std::string content = mcp::string_argument(arguments, "content").value_or("");
  const auto mode = parse_summary_mode(mcp::string_argument(arguments, "mode").value_or(""));
  if (!mode) return memory_failure(mode.error());
  const auto base_hash = mcp::string_argument(arguments, "base_hash");
  return with_agent_memory(state, arguments, [&](agent_memory& m) {
    return m.update_summary(section, content, *mode,
                            base_hash ? std::optional<std::string_view>(*base_hash) : std::nullopt);
  });
}

inline mcp::tool_result list_sessions_tool(mcp_tool_state& state, simdjson::dom::object arguments) {
  const auto limit = mcp::integer_argument(arguments, "limit");
  const auto before = mcp::string_argument(arguments, "before");
  return with_agent_memory(state, arguments, [&](agent_memory& m) {
    return m.list_sessions(limit ? static_cast<std::size_t>(*limit) : 0,
                           before ? std::optional<std::string_view>(*before) : std::nullopt);
  });
}

// --- schemas ---------------------------------------------------------------------------

inline mcp::json_schema agent_input_schema() {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("agent_name", json_schema::string().description(
                                           "Logical agent identifier (e.g. aristotle): 1-64 of A-Z a-z 0-9 . _ -, "
                                           "starting with a letter or digit; case is kept"))
      .required_property("repo_root",
                         json_schema::string().description("Absolute, canonical path of the repository root"));
}

inline mcp::json_schema date_schema() {
  return mcp::json_schema::string().description("The session's day, YYYY-MM-DD (default: today, UTC)");
}

inline mcp::json_schema section_schema(std::string_view what) {
  return mcp::json_schema::string().description(
      std::string(what) + ": a section of the agent's _schema.md other than Header; with the default schema "
                          "Context, Discussion Summary, Decisions, Open Questions or Next Actions");
}

inline mcp::json_schema content_schema() {
  return mcp::json_schema::string().description(
      "Markdown to add (64 KiB at most by default). It may not contain headings (# ...), setext underlines, "
      "unclosed code fences or HTML comments, carriage returns or control characters: it can never create a "
      "section");
}

inline mcp::json_schema warnings_schema() {
  using mcp::json_schema;
  return json_schema::array(json_schema::object()
                                .required_property("code", json_schema::string())
                                .required_property("message", json_schema::string()))
      .description("Things to know about a successful call (SchemaVersionMismatch, MalformedSummary)");
}

}  // namespace detail

/// Adds the five tools. Errors: invalid_argument (max_limit below 1, a name
/// already taken in `registry`).
inline result<void> add_mcp_tools(mcp::tool_registry& registry, mcp_tool_options options = {}) {
  using mcp::json_schema;
  if (options.max_limit < 1) return fail(errc::invalid_argument, "max_limit must be at least 1");
  auto state = std::make_shared<detail::mcp_tool_state>();
  state->options = std::move(options);
  const mcp::stateful_tool<detail::mcp_tool_state> specs[] = {
      {"start_session", "Start a session log",
       "Creates or opens the agent's session log .github/agent-memory/<agent_name>/logs/YYYY-MM-DD.md for a day "
       "(default today, UTC), with the schema's sections and a filled-in Header. Never overwrites: created is "
       "false when the log existed.",
       detail::agent_input_schema().property("date", detail::date_schema()),
       json_schema::object()
           .required_property("session_file", json_schema::string().description("Relative to repo_root"))
           .required_property("created", json_schema::boolean())
           .property("warnings", detail::warnings_schema()),
       detail::start_session_tool},
      {"append_entry", "Append to a session log",
       "Appends content at the end of one section of the day's session log (started if missing), after the "
       "entries already there. Never rewrites or deletes anything. Errors: InvalidSection, InvalidContent, "
       "ContentTooLarge (refused, never cut), MalformedLog.",
       detail::agent_input_schema()
           .property("date", detail::date_schema())
           .required_property("section", detail::section_schema("The section to append to"))
           .required_property("content", detail::content_schema()),
       json_schema::object()
           .required_property("session_file", json_schema::string())
           .required_property("section", json_schema::string())
           .required_property("created", json_schema::boolean().description("The log was started for this entry"))
           .property("warnings", detail::warnings_schema()),
       detail::append_entry_tool},
      {"read_summary", "Read the agent's summary",
       "Reads the agent's curated summary _summary.md (created from the schema's sections when missing). "
       "hash identifies this version: pass it as base_hash to update_summary to refuse an update if the "
       "summary changed meanwhile.",
       detail::agent_input_schema(),
       json_schema::object()
           .required_property("summary", json_schema::string().description("The markdown content"))
           .required_property("summary_file", json_schema::string())
           .required_property("hash", json_schema::string().description("sha256:<hex> of the summary's bytes"))
           .required_property("initialized", json_schema::boolean().description("Created from the template now"))
           .property("warnings", detail::warnings_schema()),
       detail::read_summary_tool},
      {"update_summary", "Update one section of the summary",
       "Appends to (mode append) or replaces (mode replace) the body of one section of _summary.md; no other "
       "section changes. The section must be one of the schema's. With base_hash (from read_summary) the "
       "update fails with Conflict if the summary changed since.",
       detail::agent_input_schema()
           .required_property("section", detail::section_schema("The section to update"))
           .required_property("content", detail::content_schema())
           .required_property("mode", json_schema::string().description("append or replace"))
           .property("base_hash", json_schema::string().description(
                                      "The hash read_summary returned; the update fails with Conflict if the "
                                      "summary changed since")),
       json_schema::object()
           .required_property("summary_file", json_schema::string())
           .required_property("section", json_schema::string())
           .required_property("mode", json_schema::string())
           .required_property("previous_hash", json_schema::string())
           .required_property("hash", json_schema::string().description("The summary's hash after the update"))
           .required_property("section_added", json_schema::boolean())
           .property("warnings", detail::warnings_schema()),
       detail::update_summary_tool},
      {"list_sessions", "List session logs",
       "Lists the agent's session logs, newest first: at most limit of them (default all), those before the "
       "day `before` when given. next_before, when present, is the `before` of the next page.",
       detail::agent_input_schema()
           .property("limit", json_schema::integer()
                                  .minimum(1)
                                  .maximum(static_cast<double>(state->options.max_limit))
                                  .description("How many sessions at most (default: all)"))
           .property("before", json_schema::string().description("Only sessions before this day (YYYY-MM-DD)")),
       json_schema::object()
           .required_property("sessions", json_schema::array(json_schema::string()).description(
                                              "Log file names (YYYY-MM-DD.md), newest first"))
           .required_property("total", json_schema::integer().description("Session logs in all"))
           .property("next_before", json_schema::string())
           .property("ignored", json_schema::array(json_schema::string())
                                    .description("Entries of logs/ that are not session logs")),
       detail::list_sessions_tool},
  };
  return mcp::add_stateful_tools(registry, state, specs);
}

}  // namespace agentctx::memory
