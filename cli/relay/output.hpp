// Output formatting shared by the relay subcommands: JSON documents (a
// json::value written with its members in their order), reading the members
// of the bundles the library builds, and the text lines of a package, a
// fact, a project and a session.
#pragma once

#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/quote.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/relay/model.hpp"
#include "agentctx/relay/pull_json.hpp"
#include "agentctx/relay/store.hpp"
#include "relay/command.hpp"

namespace relay_cli {

using json::write_value;  // a json::value, members in their order

using agentctx_cli::shown;
using agentctx_cli::shown_lines;

/// Member `name` of an object; a null value when it is absent.
inline const json::value& member(const json::value& object, std::string_view name) {
  static const json::value null;
  const json::value* v = object.find(name);
  return v != nullptr ? *v : null;
}

/// The string member `name`, or "" when it is absent or not a string.
inline std::string text_of(const json::value& object, std::string_view name) {
  const json::value& v = member(object, name);
  return v.is_string() ? v.as_string() : std::string();
}

/// The number member `name` as a count, or 0 when it is absent or not a number.
inline std::uint64_t count_in(const json::value& object, std::string_view name) {
  const json::value& v = member(object, name);
  return v.is_number() ? static_cast<std::uint64_t>(v.as_number()) : 0;
}

/// The items of the array member `name`, or none.
inline const json::value::array_type& array_in(const json::value& object, std::string_view name) {
  static const json::value::array_type none;
  const json::value& v = member(object, name);
  return v.is_array() ? v.as_array() : none;
}

/// Prints the one JSON document `write` makes (indented), and a newline.
inline int print_json(const std::function<void(json::writer&)>& write) {
  std::string out;
  json::writer w(out, json::layout::pretty);
  write(w);
  std::cout << out << '\n';
  return exit_ok;
}

/// Prints `v` as the one JSON document of the output.
inline int print_value(const json::value& v) {
  std::cout << json::to_text(v, json::layout::pretty) << '\n';
  return exit_ok;
}

/// "complete", or "awaiting_review (human)" when a review type is set.
inline std::string status_text(const relay::package& p) {
  std::string out(relay::to_string(p.status));
  if (p.review != relay::review_type::none) out += " (" + std::string(relay::to_string(p.review)) + ")";
  return out;
}

/// "pkg_1a2b...  2026-04-18T20:00:00Z  milestone, complete  Shipped archive"
inline std::string package_line(const relay::package& p) {
  return shown(p.package_id) + "  " + shown(p.created_at) + "  " + shown(p.package_type) + ", " + status_text(p) + "  " +
         shown(p.title);
}

/// Prints the packages one line each, or `none` when there are none.
inline void print_package_lines(const std::vector<const relay::stored_package*>& packages, std::string_view none) {
  if (packages.empty()) std::cout << none << '\n';
  for (const relay::stored_package* p : packages) std::cout << package_line(p->package) << '\n';
}

/// "jordan (human, session sess_abc)"
inline std::string actor_text(const relay::actor& a) {
  return shown(a.id) + " (" + std::string(relay::to_string(a.type)) + (a.session_id ? ", session " + shown(*a.session_id) : "") +
         ")";
}

inline std::string joined(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

/// Every field of a stored package, one per line, the lists indented below
/// their label, and its status changes; the stored text as shown() makes it.
inline void print_package_detail(const relay::stored_package& stored) {
  const relay::package& p = stored.package;
  const auto field = [](std::string_view label, const std::string& text) {
    if (!text.empty()) std::cout << "  " << label << std::string(14 - label.size(), ' ') << text << '\n';
  };
  const auto shown_field = [&](std::string_view label, const std::string& text) { field(label, shown(text)); };
  // The items are printed as they are: text shown() already made safe.
  const auto list = [](std::string_view label, const std::vector<std::string>& items) {
    if (items.empty()) return;
    std::cout << "  " << label << '\n';
    for (const std::string& item : items) std::cout << "    - " << item << '\n';
  };
  const auto shown_all = [](const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const std::string& item : items) out.push_back(shown(item));
    return out;
  };
  std::cout << shown(p.package_id) << " in project " << shown(p.project_id) << (stored.quarantined ? " (QUARANTINED)" : "")
            << '\n';
  shown_field("title", p.title);
  field("type", shown(p.package_type) + (p.artifact_type ? " (artifact " + shown(*p.artifact_type) + ")" : ""));
  field("status", status_text(p));
  field("significance", std::to_string(p.significance));
  field("created", shown(p.created_at) + " by " + actor_text(p.created_by));
  shown_field("hash", stored.hash);
  if (stored.deposited_hash != stored.hash) shown_field("deposited as", stored.deposited_hash);
  shown_field("topic", p.topic.value_or(""));
  field("tags", joined(shown_all(p.tags)));
  shown_field("parent", p.parent_package_id.value_or(""));
  shown_field("storage path", p.storage_path.value_or(""));
  shown_field("description", p.description);
  list("decisions", shown_all(p.decisions_made));
  list("open questions", shown_all(p.open_questions));
  field("handoff", p.handoff_note.empty() || !p.estimated_next_actor
                       ? shown(p.handoff_note)
                       : shown(p.handoff_note) + " (next: " + std::string(relay::to_string(*p.estimated_next_actor)) + ")");
  std::vector<std::string> deliverables;
  for (const relay::deliverable& d : p.deliverables) {
    deliverables.push_back(shown(d.path) + " (" + shown(d.type) + (d.hash ? ", " + shown(*d.hash) : "") +
                           (d.size_bytes ? ", " + count_of(*d.size_bytes, "byte") : "") + ")");
  }
  list("deliverables", deliverables);
  std::vector<std::string> changes;
  for (const relay::status_change& c : stored.changes) {
    changes.push_back(shown(c.at) + " " + std::string(relay::to_string(c.status)) + " (review " +
                      std::string(relay::to_string(c.review)) + ")" + (c.note ? ": " + shown(*c.note) : ""));
  }
  list("status changes", changes);
  // Indented under its label, so that no line of it reads as a field.
  if (!p.content_md.empty()) std::cout << "  content\n" << shown_lines(p.content_md, "    ");
}

/// "longmemeval_s recall_any_at_5 = 97.0  (from 2026-04-10T12:00:00Z)  fact_ab12..."
inline std::string fact_line(const relay::fact& f) {
  return shown(f.subject) + " " + shown(f.predicate) + " = " + shown(f.value) + "  (from " + shown(f.valid_from) +
         (f.valid_to ? " to " + shown(*f.valid_to) : "") + ")  " + shown(f.fact_id);
}

/// "proj_demo  Demo  created 2026-04-18T20:00:00.000Z[  archived ...]"
inline std::string project_line(const relay::project& p) {
  return shown(p.project_id) + "  " + shown(p.name) + "  created " + shown(p.created_at) +
         (p.archived_at ? "  archived " + shown(*p.archived_at) : "");
}

/// "sess_...  coral-heron  agent claude in proj_demo  started ...  ended ..."
inline std::string session_line(const relay::session& s) {
  return shown(s.session_id) + "  " + shown(s.callsign.value_or("-")) + "  " + std::string(relay::to_string(s.type)) +
         " " + shown(s.actor_id) + " in " + shown(s.project_id) + "  started " + shown(s.started_at) +
         (s.ended_at ? "  ended " + shown(*s.ended_at) : "  (active)");
}

/// What flag and review print for the package they moved: "pkg_...  now
/// awaiting_review (human)  sha256:..." or, with --json, {"package_id",
/// "project_id", "status", "review_type", "hash", "package"}.
inline int print_status_changed(const common_options& o, const relay::stored_package& p) {
  if (o.json) {
    return print_json([&](json::writer& w) {
      w.begin_object();
      w.key("package_id").value(p.package.package_id);
      w.key("project_id").value(p.package.project_id);
      w.key("status").value(relay::to_string(p.package.status));
      w.key("review_type").value(relay::to_string(p.package.review));
      w.key("hash").value(p.hash);
      w.key("package");
      write_value(w, p.package.wire);
      w.end_object();
    });
  }
  std::cout << shown(p.package.package_id) << "  now " << status_text(p.package) << "  " << shown(p.hash) << '\n';
  return exit_ok;
}

}  // namespace relay_cli
