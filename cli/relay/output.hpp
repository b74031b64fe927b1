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

#include "agentctx/json/value.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/relay/model.hpp"
#include "agentctx/relay/store.hpp"
#include "relay/command.hpp"

namespace relay_cli {

using json::write_value;  // a json::value, members in their order

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

/// A stored package as {"hash", "package"}: its current content hash and wire form.
inline void write_stored_package(json::writer& w, const relay::stored_package& p) {
  w.begin_object();
  w.key("hash").value(p.hash);
  w.key("package");
  write_value(w, p.package.wire);
  w.end_object();
}

/// {"packages": [{"hash", "package"}, ...]} after the members `write_members` writes.
inline int print_package_list(const std::vector<const relay::stored_package*>& packages,
                              const std::function<void(json::writer&)>& write_members) {
  return print_json([&](json::writer& w) {
    w.begin_object();
    write_members(w);
    w.key("packages").begin_array();
    for (const relay::stored_package* p : packages) write_stored_package(w, *p);
    w.end_array();
    w.end_object();
  });
}

/// "complete", or "awaiting_review (human)" when a review type is set.
inline std::string status_text(const relay::package& p) {
  std::string out(relay::to_string(p.status));
  if (p.review != relay::review_type::none) out += " (" + std::string(relay::to_string(p.review)) + ")";
  return out;
}

/// "pkg_1a2b...  2026-04-18T20:00:00Z  milestone, complete  Shipped archive"
inline std::string package_line(const relay::package& p) {
  return p.package_id + "  " + p.created_at + "  " + p.package_type + ", " + status_text(p) + "  " + p.title;
}

/// Prints the packages one line each, or `none` when there are none.
inline void print_package_lines(const std::vector<const relay::stored_package*>& packages, std::string_view none) {
  if (packages.empty()) std::cout << none << '\n';
  for (const relay::stored_package* p : packages) std::cout << package_line(p->package) << '\n';
}

/// "jordan (human, session sess_abc)"
inline std::string actor_text(const relay::actor& a) {
  return a.id + " (" + std::string(relay::to_string(a.type)) + (a.session_id ? ", session " + *a.session_id : "") + ")";
}

inline std::string joined(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

/// Every field of a stored package, one per line, the lists indented below
/// their label, and its status changes.
inline void print_package_detail(const relay::stored_package& stored) {
  const relay::package& p = stored.package;
  const auto field = [](std::string_view label, const std::string& text) {
    if (!text.empty()) std::cout << "  " << label << std::string(14 - label.size(), ' ') << text << '\n';
  };
  const auto list = [](std::string_view label, const std::vector<std::string>& items) {
    if (items.empty()) return;
    std::cout << "  " << label << '\n';
    for (const std::string& item : items) std::cout << "    - " << item << '\n';
  };
  std::cout << p.package_id << " in project " << p.project_id << (stored.quarantined ? " (QUARANTINED)" : "") << '\n';
  field("title", p.title);
  field("type", p.package_type + (p.artifact_type ? " (artifact " + *p.artifact_type + ")" : ""));
  field("status", status_text(p));
  field("significance", std::to_string(p.significance));
  field("created", p.created_at + " by " + actor_text(p.created_by));
  field("hash", stored.hash);
  if (stored.deposited_hash != stored.hash) field("deposited as", stored.deposited_hash);
  field("topic", p.topic.value_or(""));
  field("tags", joined(p.tags));
  field("parent", p.parent_package_id.value_or(""));
  field("storage path", p.storage_path.value_or(""));
  field("description", p.description);
  list("decisions", p.decisions_made);
  list("open questions", p.open_questions);
  field("handoff", p.handoff_note.empty() || !p.estimated_next_actor
                       ? p.handoff_note
                       : p.handoff_note + " (next: " + std::string(relay::to_string(*p.estimated_next_actor)) + ")");
  std::vector<std::string> deliverables;
  for (const relay::deliverable& d : p.deliverables) {
    deliverables.push_back(d.path + " (" + d.type + (d.hash ? ", " + *d.hash : "") +
                           (d.size_bytes ? ", " + count_of(*d.size_bytes, "byte") : "") + ")");
  }
  list("deliverables", deliverables);
  std::vector<std::string> changes;
  for (const relay::status_change& c : stored.changes) {
    changes.push_back(c.at + " " + std::string(relay::to_string(c.status)) + " (review " +
                      std::string(relay::to_string(c.review)) + ")" + (c.note ? ": " + *c.note : ""));
  }
  list("status changes", changes);
  if (!p.content_md.empty()) std::cout << "  content\n" << p.content_md << (p.content_md.ends_with('\n') ? "" : "\n");
}

/// "longmemeval_s recall_any_at_5 = 97.0  (from 2026-04-10T12:00:00Z)  fact_ab12..."
inline std::string fact_line(const relay::fact& f) {
  return f.subject + " " + f.predicate + " = " + f.value + "  (from " + f.valid_from +
         (f.valid_to ? " to " + *f.valid_to : "") + ")  " + f.fact_id;
}

/// "proj_demo  Demo  created 2026-04-18T20:00:00.000Z[  archived ...]"
inline std::string project_line(const relay::project& p) {
  return p.project_id + "  " + p.name + "  created " + p.created_at +
         (p.archived_at ? "  archived " + *p.archived_at : "");
}

/// "sess_...  coral-heron  agent claude in proj_demo  started ...  ended ..."
inline std::string session_line(const relay::session& s) {
  return s.session_id + "  " + s.callsign.value_or("-") + "  " + std::string(relay::to_string(s.type)) + " " +
         s.actor_id + " in " + s.project_id + "  started " + s.started_at +
         (s.ended_at ? "  ended " + *s.ended_at : "  (active)");
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
  std::cout << p.package.package_id << "  now " << status_text(p.package) << "  " << p.hash << '\n';
  return exit_ok;
}

}  // namespace relay_cli
