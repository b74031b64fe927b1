// agentctx/context/result_json.hpp: the context loader's results as JSON,
// in the seed's envelope {"success": true, "data": {...}} (seed 003,
// RFC-011 "Response shape"), and its errors as
// {"success": false, "error": {"code", "message"}}. The MCP tools
// (mcp_tools.hpp) return these and `read-context --json` prints them;
// docs/context/read-context.md describes every member.
#pragma once

#include <string>
#include <string_view>

#include "agentctx/context/loader.hpp"
#include "agentctx/context/proposals.hpp"
#include "agentctx/core/error.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/core/token_estimate.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::context {

/// The error code a result shows for a library error.
constexpr std::string_view error_code_of(const error& e) noexcept {
  switch (e.code) {
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::outside_root: return "path_outside_root";
    case errc::conflict: return "conflict";
    case errc::invalid_transition: return "already_decided";
    case errc::locked: return "locked";
    default: return is_data_error(e.code) ? "damaged_file" : "io_error";
  }
}

inline std::string error_json(const error& e, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  w.begin_object().key("success").value(false).key("error").begin_object();
  w.key("code").value(error_code_of(e)).key("message").value(e.describe());
  w.end_object().end_object();
  return out;
}

namespace detail {

inline void write_time(json::writer& w, std::string_view key, const std::optional<std::uint64_t>& ms) {
  w.key(key);
  if (ms) {
    w.value(format_rfc3339_utc_ms(*ms));
  } else {
    w.value(nullptr);
  }
}

inline void write_text_tier(json::writer& w, const text_tier& t) {
  w.begin_object().key("path").value(t.path).key("exists").value(t.exists);
  write_time(w, "last_modified", t.last_modified_ms);
  w.key("hash").value(t.hash).key("bytes").value(t.bytes);
  w.key("content").value(t.content).key("summarized").value(t.summarized());
  w.key("full_length_lines").value(t.full_length_lines).key("elided_lines").value(t.elided_lines);
  w.key("budget_cut_lines").value(t.budget_cut_lines);
  w.end_object();
}

inline void write_envelope_begin(json::writer& w) { w.begin_object().key("success").value(true).key("data").begin_object(); }
inline void write_envelope_end(json::writer& w) { w.end_object().end_object(); }

inline void write_proposal(json::writer& w, const proposal& p) {
  w.begin_object().key("id").value(p.id).key("target").value(p.target);
  if (!p.item_id.empty()) w.key("item_id").value(p.item_id);
  w.key("mode").value(p.mode).key("path").value(p.path).key("content").value(p.content);
  w.key("reason").value(p.reason).key("proposed_by").value(p.proposed_by).key("proposed_at").value(p.proposed_at);
  w.key("base_hash").value(p.base_hash).key("status").value(p.status);
  if (p.status != "pending") {
    w.key("decided_by").value(p.decided_by).key("decided_at").value(p.decided_at);
    w.key("decision_note").value(p.decision_note);
    if (!p.result_hash.empty()) w.key("result_hash").value(p.result_hash);
  }
  w.end_object();
}

}  // namespace detail

/// {"success": true, "data": {item_id, loaded_at, reading_order, taste,
/// brief, notes, recent_log, vocabulary_gaps, recent_log_info,
/// vocabulary_gaps_info, budget}}.
inline std::string to_json(const context_bundle& b, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  detail::write_envelope_begin(w);
  w.key("item_id").value(b.item_id).key("loaded_at").value(b.loaded_at);
  w.key("reading_order").begin_array();
  for (const char* tier : {"taste", "brief", "notes", "recent_log", "vocabulary_gaps"}) w.value(tier);
  w.end_array();
  w.key("taste");
  detail::write_text_tier(w, b.taste);
  w.key("brief");
  detail::write_text_tier(w, b.brief);
  w.key("notes");
  detail::write_text_tier(w, b.notes);
  w.key("recent_log").begin_array();
  for (const log_entry& e : b.recent_log.entries) {
    w.begin_object();
    if (e.timestamp) w.key("timestamp").value(*e.timestamp);
    if (e.session_id) w.key("session_id").value(*e.session_id);
    if (e.summary) w.key("summary").value(*e.summary);
    w.end_object();
  }
  w.end_array();
  w.key("vocabulary_gaps").begin_array();
  for (const std::string& gap : b.vocabulary_gaps.entries) w.raw(gap);
  w.end_array();
  const log_tier& log = b.recent_log;
  w.key("recent_log_info").begin_object().key("path").value(log.path).key("exists").value(log.exists);
  detail::write_time(w, "last_modified", log.last_modified_ms);
  w.key("entries").value(log.entries.size()).key("sessions").value(log.sessions);
  w.key("partial_last_line").value(log.partial_last_line).key("skipped_lines").value(log.skipped_lines);
  w.key("capped").value(log.capped).key("budget_dropped").value(log.budget_dropped).end_object();
  const gaps_tier& gaps = b.vocabulary_gaps;
  w.key("vocabulary_gaps_info").begin_object().key("path").value(gaps.path).key("exists").value(gaps.exists);
  detail::write_time(w, "last_modified", gaps.last_modified_ms);
  w.key("entries").value(gaps.entries.size()).key("partial_last_line").value(gaps.partial_last_line);
  w.key("skipped_lines").value(gaps.skipped_lines).key("budget_dropped").value(gaps.budget_dropped).end_object();
  w.key("budget").begin_object();
  w.key("max_bytes").value(b.max_bytes).key("max_tokens").value(b.max_tokens);
  w.key("used_bytes").value(b.used.bytes).key("used_tokens").value(b.used.tokens);
  w.key("estimator").value(token_estimator_name);
  w.key("omitted").begin_array();
  for (const omission& o : b.omitted) w.begin_object().key("tier").value(o.tier).key("what").value(o.what).end_object();
  w.end_array().end_object();
  detail::write_envelope_end(w);
  return out;
}

/// {"success": true, "data": {path, exists, hash, start_line, total_lines, lines, next_line?}}
inline std::string to_json(const notes_page& p, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  detail::write_envelope_begin(w);
  w.key("path").value(p.path).key("exists").value(p.exists).key("hash").value(p.hash);
  w.key("start_line").value(p.start_line).key("total_lines").value(p.total_lines);
  w.key("lines").begin_array();
  for (const std::string& line : p.lines) w.value(line);
  w.end_array();
  if (p.next_line) w.key("next_line").value(*p.next_line);
  detail::write_envelope_end(w);
  return out;
}

/// {"success": true, "data": {"proposal": {...}}}
inline std::string to_json(const proposal& p, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  detail::write_envelope_begin(w);
  w.key("proposal");
  detail::write_proposal(w, p);
  detail::write_envelope_end(w);
  return out;
}

/// {"success": true, "data": {"proposals": [...]}}
inline std::string to_json(const std::vector<proposal>& list, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  detail::write_envelope_begin(w);
  w.key("proposals").begin_array();
  for (const proposal& p : list) detail::write_proposal(w, p);
  w.end_array();
  detail::write_envelope_end(w);
  return out;
}

/// {"success": true, "data": {path, exists, decisions: [...], partial_last_line, skipped_lines}}
inline std::string to_json(const decision_log& log, json::layout style = json::layout::compact) {
  std::string out;
  json::writer w(out, style);
  detail::write_envelope_begin(w);
  w.key("path").value(log.path).key("exists").value(log.exists);
  w.key("decisions").begin_array();
  for (const decision_record& d : log.decisions) {
    w.begin_object().key("at").value(d.at).key("proposal_id").value(d.proposal_id);
    w.key("decision").value(d.decision).key("actor").value(d.actor).key("target").value(d.target);
    if (!d.item_id.empty()) w.key("item_id").value(d.item_id);
    w.key("path").value(d.path).key("base_hash").value(d.base_hash);
    if (!d.result_hash.empty()) w.key("result_hash").value(d.result_hash);
    if (!d.note.empty()) w.key("note").value(d.note);
    w.end_object();
  }
  w.end_array();
  w.key("partial_last_line").value(log.partial_last_line).key("skipped_lines").value(log.skipped_lines);
  detail::write_envelope_end(w);
  return out;
}

}  // namespace agentctx::context
