// agentctx/memory/result_json.hpp: the results of the agent-memory
// operations as JSON objects, the seed 004 "Returns" shapes with a few
// members added after them (docs/memory/agent-memory.md). The MCP tools
// (mcp_tools.hpp) return them and `agent-memory --json` prints them.
//
//   start_session   {"session_file", "created"}
//   append_entry    {"session_file", "section", "created"}
//   read_summary    {"summary", "summary_file", "hash", "initialized"}
//   update_summary  {"summary_file", "section", "mode", "previous_hash", "hash", "section_added"}
//   list_sessions   {"sessions", "total", "next_before"?, "ignored"?}
// plus "warnings": [{"code", "message"}] on any result that has warnings.
#pragma once

#include <string>
#include <vector>

#include "agentctx/json/writer.hpp"
#include "agentctx/memory/agent_memory.hpp"
#include "agentctx/memory/errors.hpp"

namespace agentctx::memory {

namespace detail {

inline void write_warnings(json::writer& w, const std::vector<warning>& warnings) {
  if (warnings.empty()) return;
  w.key("warnings").begin_array();
  for (const warning& item : warnings) {
    w.begin_object().key("code").value(code_name(item.code)).key("message").value(item.message).end_object();
  }
  w.end_array();
}

}  // namespace detail

inline std::string to_json(const session_opened& r, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  w.begin_object().key("session_file").value(r.session_file).key("created").value(r.created);
  detail::write_warnings(w, r.warnings);
  w.end_object();
  return out;
}

inline std::string to_json(const entry_appended& r, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  w.begin_object().key("session_file").value(r.session_file).key("section").value(r.section);
  w.key("created").value(r.created);
  detail::write_warnings(w, r.warnings);
  w.end_object();
  return out;
}

inline std::string to_json(const summary_read& r, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  w.begin_object().key("summary").value(r.summary).key("summary_file").value(r.summary_file);
  w.key("hash").value(r.hash).key("initialized").value(r.initialized);
  detail::write_warnings(w, r.warnings);
  w.end_object();
  return out;
}

inline std::string to_json(const summary_updated& r, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  w.begin_object().key("summary_file").value(r.summary_file).key("section").value(r.section);
  w.key("mode").value(to_string(r.mode)).key("previous_hash").value(r.previous_hash).key("hash").value(r.hash);
  w.key("section_added").value(r.section_added);
  detail::write_warnings(w, r.warnings);
  w.end_object();
  return out;
}

inline std::string to_json(const session_list& r, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  w.begin_object().key("sessions").begin_array();
  for (const std::string& name : r.sessions) w.value(name);
  w.end_array().key("total").value(r.total);
  if (r.next_before) w.key("next_before").value(*r.next_before);
  if (!r.ignored.empty()) {
    w.key("ignored").begin_array();
    for (const std::string& name : r.ignored) w.value(name);
    w.end_array();
  }
  w.end_object();
  return out;
}

}  // namespace agentctx::memory
