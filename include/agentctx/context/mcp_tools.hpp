// agentctx/context/mcp_tools.hpp: the context loader (seed 003) as MCP
// tools over one root, for agentctx/mcp/server.hpp.
//
//   read_context     {item_id}                                   the bundle (loader.hpp)
//   read_full_notes  {item_id, start_line?, max_lines?}          a page of the whole notes
//   propose          {target, item_id?, mode, content, reason?, proposed_by?}
//   list_proposals   {all?}                                      pending ones (all: decided too)
//   confirm          {proposal_id, actor, note?}                 applies it; conflict if the target changed
//   decline          {proposal_id, actor, note?}
//
// Results are the seed's envelope {"success": true, "data": {...}}
// (result_json.hpp); failures are isError results whose text is
// {"success": false, "error": {"code", "message"}}. item_id is the seed's
// image_id: any safe name. The file system and options are the caller's and
// must outlive the registry.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "agentctx/context/loader.hpp"
#include "agentctx/context/proposals.hpp"
#include "agentctx/context/result_json.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/mcp/json_schema.hpp"
#include "agentctx/mcp/tool_arguments.hpp"
#include "agentctx/mcp/tool_registry.hpp"

namespace agentctx::context {

namespace detail {

struct mcp_tool_state {
  io::file_system* fs = nullptr;
  loader_options options;
};

template <class T>
mcp::tool_result envelope(const result<T>& r) {
  if (!r) return mcp::tool_result::failure(error_json(r.error()));
  return mcp::tool_result::object(to_json(*r));
}

inline mcp::tool_result read_context_tool(mcp_tool_state& s, simdjson::dom::object arguments) {
  loader load(*s.fs, s.options);
  return envelope(load.read_context(mcp::string_argument(arguments, "item_id").value_or("")));
}

inline mcp::tool_result read_full_notes_tool(mcp_tool_state& s, simdjson::dom::object arguments) {
  loader load(*s.fs, s.options);
  const auto start = mcp::integer_argument(arguments, "start_line").value_or(1);
  const auto count = mcp::integer_argument(arguments, "max_lines").value_or(0);
  return envelope(load.read_full_notes(mcp::string_argument(arguments, "item_id").value_or(""),
                                       static_cast<std::size_t>(start), static_cast<std::size_t>(count)));
}

inline mcp::tool_result propose_tool(mcp_tool_state& s, simdjson::dom::object arguments) {
  proposal_book book(*s.fs, s.options);
  proposal_request request;
  request.target = mcp::string_argument(arguments, "target").value_or("");
  request.item_id = mcp::string_argument(arguments, "item_id").value_or("");
  request.mode = mcp::string_argument(arguments, "mode").value_or("");
  request.content = mcp::string_argument(arguments, "content").value_or("");
  request.reason = mcp::string_argument(arguments, "reason").value_or("");
  request.proposed_by = mcp::string_argument(arguments, "proposed_by").value_or("agent");
  return envelope(book.propose(request));
}

inline mcp::tool_result list_proposals_tool(mcp_tool_state& s, simdjson::dom::object arguments) {
  proposal_book book(*s.fs, s.options);
  bool all = false;
  if (arguments.at_key("all").get_bool().get(all) != simdjson::SUCCESS) all = false;
  return envelope(book.list(!all));
}

inline mcp::tool_result confirm_tool(mcp_tool_state& s, simdjson::dom::object arguments) {
  proposal_book book(*s.fs, s.options);
  return envelope(book.confirm(mcp::string_argument(arguments, "proposal_id").value_or(""),
                               mcp::string_argument(arguments, "actor").value_or(""),
                               mcp::string_argument(arguments, "note").value_or("")));
}

inline mcp::tool_result decline_tool(mcp_tool_state& s, simdjson::dom::object arguments) {
  proposal_book book(*s.fs, s.options);
  return envelope(book.decline(mcp::string_argument(arguments, "proposal_id").value_or(""),
                               mcp::string_argument(arguments, "actor").value_or(""),
                               mcp::string_argument(arguments, "note").value_or("")));
}

inline mcp::json_schema envelope_schema(std::string description) {
  using mcp::json_schema;
  return json_schema::object()
      .required_property("success", json_schema::boolean())
      .required_property("data", json_schema::object().allow_other_properties().description(std::move(description)));
}

inline mcp::json_schema item_schema() {
  return mcp::json_schema::string().description(
      "The item (the seed's image_id): 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit");
}

}  // namespace detail

/// Adds the six tools over `fs` (the root). Errors: those of
/// tool_registry::add (a name already taken).
inline result<void> add_mcp_tools(mcp::tool_registry& registry, io::file_system& fs, loader_options options = {}) {
  using mcp::json_schema;
  auto state = std::make_shared<detail::mcp_tool_state>();
  state->fs = &fs;
  state->options = std::move(options);
  const json_schema actor = json_schema::string().description("Who decides (a safe name, e.g. jordan)");
  const mcp::stateful_tool<detail::mcp_tool_state> specs[] = {
      {"read_context", "Read the context of an item",
       "The bundle to read at the start of a session on an item, in reading order: taste (global preferences), "
       "brief (the item's intent), notes (working observations; long notes keep their first 10 and last 30 lines), "
       "recent_log (the last sessions' highlights) and vocabulary_gaps. Every tier has its path, last_modified and "
       "hash; whatever was shortened says so.",
       json_schema::object().required_property("item_id", detail::item_schema()),
       detail::envelope_schema("item_id, loaded_at, reading_order, taste, brief, notes, recent_log, "
                               "vocabulary_gaps, recent_log_info, vocabulary_gaps_info, budget"),
       detail::read_context_tool},
      {"read_full_notes", "Read the full notes",
       "The whole notes of an item, a page of lines at a time (read_context elides the middle of long notes).",
       json_schema::object()
           .required_property("item_id", detail::item_schema())
           .property("start_line", json_schema::integer().minimum(1).description("First line, from 1 (default 1)"))
           .property("max_lines", json_schema::integer().minimum(1).maximum(100'000).description(
                                      "How many lines at most (default: to the end)")),
       detail::envelope_schema("path, exists, hash, start_line, total_lines, lines, next_line"),
       detail::read_full_notes_tool},
      {"propose", "Propose a taste or notes update",
       "Proposes a change to taste.md (target taste) or an item's notes.md (target notes, with item_id): mode "
       "append adds content at the end, replace replaces the file. Nothing changes until a human confirms it.",
       json_schema::object()
           .required_property("target", json_schema::string().allowed_values({"taste", "notes"}))
           .property("item_id", detail::item_schema())
           .required_property("mode", json_schema::string().allowed_values({"append", "replace"}))
           .required_property("content", json_schema::string().min_length(1).description("Markdown"))
           .property("reason", json_schema::string().description("Why, for the human who decides"))
           .property("proposed_by", json_schema::string().description("Who proposes (default agent)")),
       detail::envelope_schema("proposal"), detail::propose_tool},
      {"list_proposals", "List proposals",
       "The pending proposals, oldest first (with all: decided ones too).",
       json_schema::object().property("all", json_schema::boolean().description("Include decided proposals")),
       detail::envelope_schema("proposals"), detail::list_proposals_tool},
      {"confirm", "Confirm a proposal",
       "Applies a pending proposal to its file and records the decision; fails with conflict if the file changed "
       "since the proposal was made.",
       json_schema::object()
           .required_property("proposal_id", json_schema::string().min_length(1))
           .required_property("actor", actor)
           .property("note", json_schema::string()),
       detail::envelope_schema("proposal"), detail::confirm_tool},
      {"decline", "Decline a proposal", "Declines a pending proposal and records the decision.",
       json_schema::object()
           .required_property("proposal_id", json_schema::string().min_length(1))
           .required_property("actor", actor)
           .property("note", json_schema::string()),
       detail::envelope_schema("proposal"), detail::decline_tool},
  };
  return mcp::add_stateful_tools(registry, state, specs);
}

}  // namespace agentctx::context
