// agentctx/relay/export.hpp: backup and restore of a Relay store as NDJSON of
// wire-format objects (seed 001 sections 10.1 and 10.3).
//
// One JSON object per line, each in RFC 8785 canonical form
// (docs/format/relay-export.md):
//
//   {"kind":"relay-export","protocol_version":"0.1","exported_at":...,"projects":[...]}
//   {"kind":"project","project":{...}}
//   {"kind":"session","session":{...}}                  packages_deposited filled in
//   {"kind":"package","hash":"sha256:...","package":{...}}   as deposited
//   {"kind":"status","project_id":...,"package_id":...,"status":...,"review_type":...,
//    "at":...,"note":...,"hash":"sha256:..."}            each later status change, in order
//   {"kind":"fact","fact":{...}}                       every fact, valid_to included
//   {"kind":"relay-export-end","projects":N,"sessions":N,"packages":N,"status_changes":N,"facts":N}
//                                                      last: how many lines of each kind precede it
//
// Packages travel as deposited, with their status changes after them, so an
// import recomputes and checks every hash (the deposited one and the one
// after each change) and preserves every member, x-* ones included. A
// consumer that wants only current state applies the status lines' status
// and review_type to the package. A quarantined package (its bytes no longer
// match its hash) cannot be restored, so export leaves it out (with its
// status changes) and lists it in export_report::left_out.
//
// The end line makes a cut-short file detectable: import refuses input
// without it (unless import_options::allow_incomplete), with lines after it,
// or with other counts of lines than it states.
//
// Import checks the whole file against the target store before it writes
// anything: a line that is not valid, a hash that does not match, a package
// id that exists with other content (already_exists), a current fact that
// would make two current facts for one key, or a fact that would hold at a
// time another fact of its key holds (already_exists; invalid_argument when
// both are in the file) are errors naming the line, and so
// is a line that would write into a project the target holds archived
// (project_archived; but for a project it holds exactly as the export has
// it, archived: the export's own, from an import of it that stopped
// part-way), and so is a status change or a session the target holds
// otherwise (already_exists), a project, session, package or fact id on two
// lines, and a record larger than the log takes. (A session may end before
// it starts: a store before 2026-11-27 wrote one so when its clock stepped
// back, and an import takes it as it is.) What the target already holds
// identically is skipped, so importing the same file twice changes nothing;
// so are the status changes it holds and a session it holds ended where the
// export has it open (the target's are later), and so is a fact it holds
// ended where the export has it current. A session the target holds open
// and the export has ended is ended as exported, and a fact it holds
// current that the export has ended is ended at the export's valid_to (an
// invalidate record). A project the target already holds keeps the
// target's content. A session's packages_deposited is imported as listed,
// in its order (then what only the target lists). The records are then
// appended one by one; a crash part-way leaves a prefix, and importing
// again completes it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "agentctx/core/lines.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/hash.hpp"
#include "agentctx/relay/model.hpp"
#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/store.hpp"

namespace agentctx::relay {

/// The kind of the export's last line.
inline constexpr std::string_view export_end_kind = "relay-export-end";

/// How many lines of each kind an export holds (its end line states them).
struct export_counts {
  std::size_t projects = 0;
  std::size_t sessions = 0;
  std::size_t packages = 0;
  std::size_t status_changes = 0;
  std::size_t facts = 0;
  bool operator==(const export_counts&) const = default;
};

/// What export_ndjson() wrote, and what it left out.
struct export_report {
  export_counts lines;  ///< the counts of the end line
  /// Quarantined packages, left out: "project_id/package_id: why".
  std::vector<std::string> left_out;
};

namespace detail {

// The counts: the end line's member names, the words for a message, and
// the fields.
struct export_count_member {
  std::string_view name;
  std::string_view word;  // singular; the plural adds an s
  std::size_t export_counts::*field;
};
inline constexpr export_count_member export_count_members[] = {
    {"projects", "project", &export_counts::projects},
    {"sessions", "session", &export_counts::sessions},
    {"packages", "package", &export_counts::packages},
    {"status_changes", "status change", &export_counts::status_changes},
    {"facts", "fact", &export_counts::facts},
};

// "1 project, 0 sessions, 2 packages, 0 status changes, 3 facts"
inline std::string describe_counts(const export_counts& c) {
  std::string out;
  for (const export_count_member& m : export_count_members) {
    if (!out.empty()) out += ", ";
    out += std::to_string(c.*m.field) + " " + std::string(m.word) + (c.*m.field == 1 ? "" : "s");
  }
  return out;
}

// ("a", "b"): the ids, each quoted, as a list in a message.
inline std::string joined_ids(const std::vector<std::string>& ids) {
  std::string out = "(";
  for (const std::string& id : ids) out += (out.size() > 1 ? ", " : "") + quote_for_message(id);
  return out + ")";
}

}  // namespace detail

/// Appends `v` in canonical form (RFC 8785) and a line break to `out`: one
/// line of NDJSON, as exports write them.
inline result<void> append_ndjson_line(json::canonicalizer& canonicalizer, const json::value& v, std::string& out) {
  auto text = canonicalizer.serialize(v, json::canonical_form::jcs);
  if (!text) return unexpected(std::move(text).error());
  out.append(*text);
  out.push_back('\n');
  return {};
}

namespace detail {

// Why an input line that does not parse is refused.
inline std::string not_json(const error& e) {
  return e.message.starts_with("not JSON") ? e.message : "not JSON: " + e.message;
}

// Whether `line`, a line of `text`, ends it without a line break, as every
// exported line ends: the file was cut in the middle of it.
inline bool ends_without_break(std::string_view line, std::string_view text) {
  return line.data() + line.size() == text.data() + text.size();
}

// The refusal of such a last line that does not parse (`why`).
inline std::string cut_short(const std::string& why) {
  return "the last line is cut short (no line break after it, and " + why + "): the file was cut short";
}

// A status line of an export.
inline json::value status_line(const stored_package& sp, package_status status, review_type review, std::string at,
                               std::string hash, const std::optional<std::string>& note = {}) {
  json::value event = json::value::object_type{{"kind", "status"},
                                               {"project_id", sp.package.project_id},
                                               {"package_id", sp.package.package_id},
                                               {"status", std::string(to_string(status))},
                                               {"review_type", std::string(to_string(review))},
                                               {"at", std::move(at)},
                                               {"hash", std::move(hash)}};
  if (note) event.set("note", *note);
  return event;
}

// A package's lines of an export: the package as deposited, then each
// status change.
inline std::vector<json::value> package_lines(const stored_package& sp) {
  std::vector<json::value> out;
  out.push_back(json::value::object_type{{"kind", "package"}, {"hash", sp.deposited_hash}, {"package", sp.deposited_wire()}});
  for (const status_change& c : sp.changes) out.push_back(status_line(sp, c.status, c.review, c.at, c.hash, c.note));
  return out;
}

}  // namespace detail

/// Appends the export of `project_id` (every project when empty) to `out`,
/// leaving quarantined packages out (export_report::left_out names them).
/// Errors: not_found for an unknown project.
inline result<export_report> export_ndjson(const store& s, const std::string& project_id, std::string& out) {
  std::vector<const project*> chosen;
  if (project_id.empty()) {
    chosen = s.projects();
  } else if (const project* p = s.find_project(project_id)) {
    chosen.push_back(p);
  } else {
    return unexpected(project_not_found(project_id));
  }
  json::canonicalizer canonicalizer;
  const auto line = [&](const json::value& v) { return append_ndjson_line(canonicalizer, v, out); };
  export_report report;
  export_counts& counts = report.lines;
  json::value::array_type ids;
  for (const project* p : chosen) ids.emplace_back(p->project_id);
  AGENTCTX_TRY(line(json::value::object_type{{"kind", "relay-export"},
                                             {"protocol_version", std::string(protocol_version)},
                                             {"exported_at", s.now_text()},
                                             {"projects", std::move(ids)}}));
  for (const project* p : chosen) {
    AGENTCTX_TRY(line(json::value::object_type{{"kind", "project"}, {"project", p->wire}}));
    ++counts.projects;
  }
  for (const project* p : chosen) {
    for (const session* ses : s.sessions(p->project_id)) {
      AGENTCTX_TRY(line(json::value::object_type{{"kind", "session"}, {"session", s.session_wire(*ses)}}));
      ++counts.sessions;
    }
  }
  for (const project* p : chosen) {
    auto packages = s.packages_of(p->project_id);
    if (!packages) return unexpected(std::move(packages).error());
    for (const stored_package* sp : *packages) {
      if (sp->quarantined) {
        report.left_out.push_back(sp->package.project_id + "/" + sp->package.package_id + ": " +
                                  s.quarantine_reason(*sp));
        continue;
      }
      for (const json::value& v : detail::package_lines(*sp)) AGENTCTX_TRY(line(v));
      ++counts.packages;
      counts.status_changes += sp->changes.size();
    }
  }
  for (const project* p : chosen) {
    for (const fact* f : s.all_facts(p->project_id)) {
      AGENTCTX_TRY(line(json::value::object_type{{"kind", "fact"}, {"fact", f->wire}}));
      ++counts.facts;
    }
  }
  json::value end = json::value::object_type{{"kind", std::string(export_end_kind)}};
  for (const detail::export_count_member& m : detail::export_count_members) {
    end.set(std::string(m.name), static_cast<double>(counts.*m.field));
  }
  AGENTCTX_TRY(line(end));
  return report;
}

/// How import_ndjson() reads its input.
struct import_options {
  /// Imports input that lacks the end line (a file cut short, or an export
  /// written before exports had end lines): what it holds is checked and
  /// imported as usual, but for a last line cut short in the middle (no
  /// line break after it, and not JSON), which is left out. Lines after an
  /// end line, and counts that differ from it, are errors still.
  bool allow_incomplete = false;
};

/// Reads the next piece of an import's input into `buffer` (up to its
/// size) and returns how many bytes it read: 0 at the end of the input.
/// Its errors end the import, which then writes nothing.
using import_reader = std::function<result<std::size_t>(std::span<char> buffer)>;

/// The longest line read_import_input() reads: eight times the largest
/// record the log takes (a line may spell each byte of its text as a six-
/// byte escape, \u00e9). Longer is refused as soon as it is read that far.
inline constexpr std::size_t max_import_line = std::size_t{8} * max_record_payload;

/// What import_ndjson() did.
struct import_report {
  std::size_t projects = 0;  ///< created
  std::size_t sessions = 0;
  std::size_t packages = 0;
  std::size_t status_changes = 0;
  std::size_t facts = 0;
  std::size_t skipped = 0;  ///< lines not written: held identically, or a project the store already holds
  /// The input had no end line (import_options::allow_incomplete).
  bool incomplete = false;
  /// Its last line was cut short in the middle and left out (with
  /// allow_incomplete): the line's number, else 0.
  std::size_t cut_line = 0;
  /// Projects the store already held with other content (another
  /// created_at, name or archived state): the store's is kept, the export's
  /// project line is skipped, and the import's packages, facts and sessions
  /// go into the store's project.
  std::vector<std::string> differing_projects;
  /// The input was bare wire objects (another implementation's backup), not
  /// an export: see import_ndjson().
  bool wire_objects = false;
};

namespace detail {

// A record import_ndjson() appends, and the line of the export it is from.
struct planned_record {
  planned_record(std::size_t line_number, json::value r) : line(line_number), record(std::move(r)) {}
  planned_record(std::size_t line_number, store::prepared_package p) : line(line_number), package(std::move(p)) {}

  std::size_t line = 0;
  json::value record;  ///< unless `package` holds it
  /// A package record, read and hashed as the import checked it (the
  /// append reads and hashes it no more).
  std::optional<store::prepared_package> package;

  const json::value& to_write() const { return package ? package->record() : record; }
};

// A fact line of an export that import_ndjson() writes: a fact the store
// does not hold, or one it holds with another end (fact::wire: the line's).
struct fact_line {
  std::size_t line = 0;
  fact f;
  bool held = false;  ///< the store holds a fact of this id
};

// Plans the writes of an import's fact lines, weighed together whatever
// their order, after its other records:
// - the facts the store holds that the lines end otherwise, by key: one
//   invalidation at the earliest of their ends (store.hpp apply_invalidate)
//   must end each exactly as its line says and no other fact of the key (an
//   export of a store that superseded or invalidated since, also a fact that
//   was to hold later). It names the key's current fact, which must be among
//   them, or a fact the lines add that was current then (below). Written as
//   that invalidation; an added fact is written current (superseding the
//   store's current fact) just before it, at its place among the new lines,
//   or before the key's first new line when one before it is current, would
//   be cut by the invalidation or holds while the store's current fact does;
// - the facts the store does not hold, each checked against the store as
//   the invalidations leave it and against each other: no second current
//   fact for a key, no time when two facts of a key hold.
inline result<void> plan_fact_lines(const store& s, const std::vector<fact_line>& lines,
                                    std::vector<planned_record>& plan, import_report& report) {
  using key_type = std::tuple<std::string, std::string, std::string>;  // project, subject, predicate
  const auto key_of = [](const fact& f) { return key_type{f.project_id, f.subject, f.predicate}; };
  const auto at_line = [](const fact_line& l) { return "line " + std::to_string(l.line) + ": "; };
  const auto other_content = [&](const fact_line& l) {
    return fail(errc::already_exists, at_line(l) + "fact " + quote_for_message(l.f.fact_id) + " exists with other content");
  };

  std::map<key_type, std::vector<const fact_line*>> ended;
  std::map<key_type, std::vector<const fact_line*>> added;  // in the file's order
  for (const fact_line& l : lines) {
    (l.held ? ended : added)[key_of(l.f)].push_back(&l);
  }
  std::map<std::string, fact> after;  // fact id -> a fact the store holds, as the import leaves it
  // A new fact written current (superseding the store's current fact,
  // if any) and then invalidated at `at`, before the new line `slot` (or
  // as it).
  struct current_then {
    const fact_line* named;
    const fact* superseded;
    std::string at;
  };
  std::map<const fact_line*, current_then> written_before;  // by slot
  std::set<const fact_line*> named_new;
  for (const auto& entry : ended) {
    // (No structured bindings: clang 14 takes none into a lambda.)
    const key_type& key = entry.first;
    const std::vector<const fact_line*>& key_lines = entry.second;
    const std::string& project_id = std::get<0>(key);
    const std::string& subject = std::get<1>(key);
    const std::string& predicate = std::get<2>(key);
    const fact_line& earliest = **std::min_element(key_lines.begin(), key_lines.end(), [](const fact_line* a, const fact_line* b) {
      return a->f.valid_to_at < b->f.valid_to_at;
    });
    const utc_instant& at = earliest.f.valid_to_at;
    const std::string& at_text = *earliest.f.valid_to;
    const std::vector<const fact*> held_facts = s.history(project_id, subject, predicate);
    const fact* current = s.current_fact(project_id, subject, predicate);

    // The ends an invalidation of `named` (of `named_line`) at `at` gives
    // the store's facts of the key, `named` first superseding the current
    // fact when it is a new one: into `left`, refused unless each line of
    // the key ends as it says (`loose`: or never held, as the fact then
    // does, whatever its valid_to) and no other fact ends.
    const auto ends_as_lines = [&](const fact& named, const fact_line& named_line, bool loose,
                                   std::map<std::string, fact>& left) -> result<void> {
      std::size_t changed = 0;
      for (const fact* held : held_facts) {
        fact was;  // what the invalidation and the overlap checks below read of it
        was.fact_id = held->fact_id;
        was.valid_from = held->valid_from;
        was.valid_from_at = held->valid_from_at;
        was.valid_to = held->valid_to;
        was.valid_to_at = held->valid_to_at;
        if (held == current && &named != current) {  // superseded by `named`
          was.valid_to = named.valid_from;
          was.valid_to_at = named.valid_from_at;
        }
        if (auto end = invalidation_end(named, was, at_text, at)) {
          was.valid_to = std::move(end->first);
          was.valid_to_at = std::move(end->second);
        }
        if (was.valid_to == held->valid_to) continue;  // left as it is, or ends where it ends already
        ++changed;
        left.insert_or_assign(held->fact_id, std::move(was));
      }
      for (const fact_line* l : key_lines) {
        auto it = left.find(l->f.fact_id);
        if (it == left.end() || (it->second.valid_to != l->f.valid_to &&
                                 !(loose && it->second.never_held() && l->f.never_held()))) {
          return other_content(*l);
        }
      }
      if (changed != key_lines.size()) {
        return fail(errc::already_exists, at_line(named_line) + "ending fact " + quote_for_message(named_line.f.fact_id) +
                                              " as the export says would also end another fact the store holds of (" +
                                              subject + ", " + predicate + ")");
      }
      return {};
    };

    // The invalidation names the store's current fact, which the lines
    // must end; failing that, a new fact that never held, current then,
    // starting after `at`: with a current fact, one that starts where the
    // current fact's line ends, spelled so (it supersedes it: starting
    // later, it would end it as naming it does); with none, the first of
    // the key's new lines that starts no earlier than every fact of the key
    // that held ends, so that, written current, it holds at no time another
    // fact holds (a crash may leave it so); failing that, the store's
    // current fact, a line of a fact that never held taken whatever its
    // valid_to (the fact that superseded it at that instant was superseded
    // there too, spelled otherwise again).
    std::map<std::string, fact> left;
    result<void> fits = {};
    const fact_line* current_line = nullptr;
    if (current != nullptr) {
      const auto named = std::find_if(key_lines.begin(), key_lines.end(),
                                      [&](const fact_line* l) { return l->f.fact_id == current->fact_id; });
      if (named == key_lines.end()) return other_content(*key_lines.front());
      current_line = *named;
      fits = ends_as_lines(*current, *current_line, false, left);
    }
    const fact_line* named_line = nullptr;  // a new line, named
    if (current == nullptr || !fits) {
      const utc_instant* starts_after = current != nullptr ? &current->valid_from_at : nullptr;
      if (current == nullptr) {
        for (const fact* held : held_facts) {
          if (!held->never_held() && (starts_after == nullptr || *starts_after < held->valid_to_at)) {
            starts_after = &held->valid_to_at;
          }
        }
      }
      const auto& news = added[key];
      const auto first = std::find_if(news.begin(), news.end(), [&](const fact_line* l) {
        return l->f.never_held() && *l->f.valid_to == l->f.valid_from && at < l->f.valid_from_at &&
               (starts_after == nullptr || !(l->f.valid_from_at < *starts_after)) &&
               (current_line == nullptr || l->f.valid_from == *current_line->f.valid_to);
      });
      if (first != news.end()) {
        std::map<std::string, fact> by_new;
        if (auto by_it = ends_as_lines((*first)->f, **first, false, by_new)) {
          left = std::move(by_new);
          fits = {};
          named_line = *first;
          // At its place, unless a new line before it would not be left
          // as it is while it is current and invalidated, or would hold
          // while the store's current fact holds.
          const bool in_place = std::all_of(news.begin(), first, [&](const fact_line* before) {
            auto end = invalidation_end((*first)->f, before->f, at_text, at);
            return !before->f.is_current() && (!end || end->first == before->f.valid_to) &&
                   (current == nullptr || !before->f.overlaps(*current));
          });
          written_before.emplace(in_place ? *first : news.front(), current_then{*first, current, at_text});
          named_new.insert(*first);
        } else if (current == nullptr) {
          fits = std::move(by_it);
        }
      } else if (current == nullptr) {
        return fail(errc::already_exists,
                    at_line(*key_lines.front()) + "fact " + quote_for_message(key_lines.front()->f.fact_id) +
                        " ends earlier in the export than in the store, which holds no current fact of (" + subject +
                        ", " + predicate +
                        "): the export must add one that an invalidation then ended, starting after the store's ends");
      }
    }
    if (!fits && current != nullptr) {
      std::map<std::string, fact> loosely;
      if (ends_as_lines(*current, *current_line, true, loosely)) {
        left = std::move(loosely);
        fits = {};
      }
    }
    if (!fits) return fits;
    for (auto& [id, f] : left) after.insert_or_assign(id, std::move(f));
    if (named_line == nullptr) plan.push_back({earliest.line, invalidation_record(*current, at_text)});
    report.facts += key_lines.size();
  }

  std::set<key_type> current_keys;
  std::map<key_type, std::vector<const fact*>> planned;  // new facts that held for a while
  for (const fact_line& l : lines) {
    if (l.held) continue;
    const key_type key = key_of(l.f);
    const std::string about = " of (" + l.f.subject + ", " + l.f.predicate + ")";
    if (l.f.is_current()) {
      const fact* current = s.current_fact(l.f.project_id, l.f.subject, l.f.predicate);
      if (current != nullptr && after.count(current->fact_id) == 0) {
        return fail(errc::already_exists, at_line(l) + "fact " + quote_for_message(l.f.fact_id) +
                                              " would be a second current fact" + about + ": the store holds " +
                                              quote_for_message(current->fact_id));
      }
      if (!current_keys.insert(key).second) {
        return fail(errc::invalid_argument, at_line(l) + "fact " + quote_for_message(l.f.fact_id) +
                                                " would be a second current fact" + about + " in the import");
      }
    }
    // A fact that held for a while must not hold at a time another fact of
    // its key holds, in the store (as the import leaves it) or in the import.
    if (l.f.never_held()) continue;
    for (const fact* held : s.history(l.f.project_id, l.f.subject, l.f.predicate)) {
      auto left = after.find(held->fact_id);
      if (l.f.overlaps(left != after.end() ? left->second : *held)) {
        return fail(errc::already_exists, at_line(l) + "fact " + quote_for_message(l.f.fact_id) +
                                              " would hold at the same time as fact " +
                                              quote_for_message(held->fact_id) + about);
      }
    }
    for (const fact* other : planned[key]) {
      if (l.f.overlaps(*other)) {
        return fail(errc::invalid_argument, at_line(l) + "fact " + quote_for_message(l.f.fact_id) +
                                                " would hold at the same time as another fact" + about + " in the import");
      }
    }
    planned[key].push_back(&l.f);
  }
  for (const fact_line& l : lines) {
    if (l.held) continue;
    if (auto then = written_before.find(&l); then != written_before.end()) {
      const fact_line& named = *then->second.named;
      json::value wire = named.f.wire;
      wire.erase("valid_to");
      json::value record = json::value::object_type{{"type", "fact"}, {"fact", std::move(wire)}};
      if (then->second.superseded != nullptr) record.set("supersedes", then->second.superseded->fact_id);
      plan.push_back({named.line, std::move(record)});
      plan.push_back({named.line, invalidation_record(named.f, std::move(then->second.at))});
    }
    if (named_new.count(&l) == 0) plan.push_back({l.line, json::value::object_type{{"type", "fact"}, {"fact", l.f.wire}}});
    ++report.facts;
  }
  return {};
}

}  // namespace detail

namespace detail {

// A kind of line this format writes.
inline bool is_export_kind(std::string_view kind) {
  return kind == "relay-export" || kind == export_end_kind || kind == "status" || kind == "project" ||
         kind == "session" || kind == "package" || kind == "fact";
}

// A line of an export (not a bare wire object): a kind this format writes,
// with the member that kind carries.
inline bool is_export_line(const json::value& object) {
  const std::string* kind = string_member(object, "kind");
  if (kind == nullptr || !is_export_kind(*kind)) return false;
  if (*kind == "relay-export" || *kind == export_end_kind || *kind == "status") return true;
  return object.find(*kind) != nullptr;
}

// The kind of a bare wire object (sections 5.2, 5.5, 6, 7), by the member
// only it has at its top level: export's order, 0 project, 1 session,
// 2 package, 3 fact; -1 for none.
inline int wire_rank(const json::value& object) {
  if (!object.is_object()) return -1;
  if (object.find("relay_version") != nullptr) return 2;
  if (object.find("fact_id") != nullptr) return 3;
  if (object.find("session_id") != nullptr) return 1;
  if (object.find("project_id") != nullptr) return 0;
  return -1;
}

// Whether the input's first line, parsed (none: not JSON), makes it bare
// wire objects: a wire object, and no export's line.
inline bool is_wire_object_line(const std::optional<json::value>& first) {
  return first && !is_export_line(*first) && wire_rank(*first) >= 0;
}

// The export's lines for a bare wire package `wire` (content hash `hash`)
// that the store holds in another state than deposited: none when it does
// not hold it (or holds it quarantined, or as deposited: the import decides).
// A state the store's package has had (its current one, or one before): the
// store's lines for it, which the import skips. A later state, the same
// package with another status and review_type that an allowed status
// change reaches from the store's: those lines and that change, at now.
// Another package with the id: none (the import's conflict). Errors:
// already_exists for a state no allowed status change reaches.
inline result<std::vector<json::value>> held_state_lines(const store& s, const json::value& wire, const std::string& hash,
                                                         json::canonicalizer& canonicalizer) {
  const std::string* package_id = string_member(wire, "package_id");
  const std::string* project_id = string_member(wire, "project_id");
  if (package_id == nullptr || project_id == nullptr) return std::vector<json::value>{};
  auto found = s.find_package(*package_id, *project_id);
  if (!found || (*found)->quarantined || (*found)->deposited_hash == hash) return std::vector<json::value>{};
  const stored_package& sp = **found;
  std::vector<json::value> out = package_lines(sp);
  const bool had = sp.hash == hash || std::any_of(sp.changes.begin(), sp.changes.end(),
                                                  [&](const status_change& c) { return c.hash == hash; });
  if (had) return out;
  const std::string* status_text = string_member(wire, "status");
  const std::string* review_text = string_member(wire, "review_type");
  if (status_text == nullptr || review_text == nullptr) return std::vector<json::value>{};
  const auto status = parse_package_status(*status_text);
  const auto review = parse_review_type(*review_text);
  if (!status || !review) return std::vector<json::value>{};
  json::value as_held = wire;
  as_held.set("status", std::string(to_string(sp.package.status)));
  as_held.set("review_type", std::string(to_string(sp.package.review)));
  auto held_hash = content_hash(as_held, canonicalizer);
  if (!held_hash || *held_hash != sp.hash) return std::vector<json::value>{};  // another package
  if (!is_recordable_status_change(sp.package.status, *status)) {
    return fail(errc::already_exists,
                "package " + quote_for_message(*package_id) + " is " + std::string(to_string(sp.package.status)) +
                    " in the store, and no allowed status change leads from there to the file's " + *status_text +
                    " (" + *review_text + ")");
  }
  out.push_back(status_line(sp, *status, *review, s.now_text(), hash));
  return out;
}

// A line of an export as the import reads it.
struct export_line {
  /// The input's number of the line; errors name it. 0 for a line the
  /// import made itself (the header and end line of bare wire objects).
  std::size_t number = 0;
  /// The line's object; none when the line is not JSON (`not_json` says why).
  std::optional<json::value> object;
  std::string not_json;
  /// Not JSON, and the input's last line without a line break after it:
  /// the file was cut in the middle of it.
  bool cut = false;
  /// The input could not be read on (its reader's error, or a line longer
  /// than max_import_line): the import fails with it, writing nothing.
  std::optional<error> failed;
};

// The lines of input held whole in memory, blank ones skipped.
class text_lines {
 public:
  explicit text_lines(std::string_view text) noexcept : text_(text), lines_(text) {}

  /// The next line that is not blank, and whether it ends the input
  /// without a line break after it; false at the end.
  bool next(std::string_view& line, bool& unbroken) {
    if (!lines_.next(line)) return false;
    unbroken = ends_without_break(line, text_);
    return true;
  }
  std::size_t number() const noexcept { return lines_.number(); }
  /// Never set: text in memory cannot fail to be read.
  static const std::optional<error>& failure() noexcept {
    static const std::optional<error> none;
    return none;
  }

 private:
  std::string_view text_;
  line_cursor lines_;
};

// The lines of input read piece by piece with an import_reader, blank ones
// skipped (as line_cursor skips them, and counts them): only the line being
// read is held, and at most 64 KiB read past it. A read error, or a line
// longer than `max_line` bytes (white space too), ends the lines, and
// failure() says why. `read` must outlive it.
class stream_lines {
 public:
  explicit stream_lines(const import_reader& read, std::size_t max_line = max_import_line)
      : read_(read), max_line_(max_line) {}

  bool next(std::string_view& line, bool& unbroken) {
    for (;;) {
      if (failure_) return false;
      const char* const data = buffer_.get();
      const void* found = scanned_ < filled_ ? std::memchr(data + scanned_, '\n', filled_ - scanned_) : nullptr;
      std::size_t end = found != nullptr ? static_cast<std::size_t>(static_cast<const char*>(found) - data) : filled_;
      if (found == nullptr && !at_end_) {
        scanned_ = filled_;
        if (!fill()) return false;
        continue;
      }
      if (found == nullptr && begin_ == filled_) return false;  // the end, after a line break
      if (end - begin_ > max_line_) return too_long();
      line = std::string_view(data + begin_, end - begin_);
      unbroken = found == nullptr;
      begin_ = found != nullptr ? end + 1 : filled_;
      scanned_ = begin_;
      ++number_;
      if (line.find_first_not_of(" \t\r") != std::string_view::npos) return true;
    }
  }
  std::size_t number() const noexcept { return number_; }
  const std::optional<error>& failure() const noexcept { return failure_; }
  /// Bytes read from the reader so far.
  std::size_t bytes_read() const noexcept { return bytes_read_; }

 private:
  static constexpr std::size_t piece = std::size_t{1} << 16;

  // Moves the line being read to the front and reads up to a piece after it.
  bool fill() {
    if (begin_ > 0) {
      std::memmove(buffer_.get(), buffer_.get() + begin_, filled_ - begin_);
      filled_ -= begin_;
      scanned_ -= begin_;
      begin_ = 0;
    }
    if (filled_ > max_line_) return too_long();
    if (capacity_ - filled_ < piece) {
      // Doubling, but never past what the longest line and a piece need;
      // not zero-filled (the pages are touched only as input arrives).
      const std::size_t grown = std::min(std::max(capacity_ * 2, filled_ + piece), max_line_ + 1 + piece);
      auto bigger = std::make_unique_for_overwrite<char[]>(grown);
      if (filled_ > 0) std::memcpy(bigger.get(), buffer_.get(), filled_);
      buffer_ = std::move(bigger);
      capacity_ = grown;
    }
    const std::size_t asked = std::min(piece, capacity_ - filled_);
    auto n = read_(std::span<char>(buffer_.get() + filled_, asked));
    if (!n) {
      failure_ = std::move(n).error();
      return false;
    }
    if (*n > asked) {
      failure_ = make_error(errc::invalid_argument, "the import's reader returned " + std::to_string(*n) +
                                                        " bytes for a buffer of " + std::to_string(asked));
      return false;
    }
    if (*n == 0) at_end_ = true;
    filled_ += *n;
    bytes_read_ += *n;
    return true;
  }

  bool too_long() {
    failure_ = make_error(errc::invalid_argument, "line " + std::to_string(number_ + 1) + ": longer than " +
                                                      std::to_string(max_line_) +
                                                      " bytes, more than any line of an export holds");
    return false;
  }

  const import_reader& read_;
  std::size_t max_line_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;    // where the line being read starts
  std::size_t scanned_ = 0;  // searched for '\n' up to here
  std::size_t filled_ = 0;
  std::size_t number_ = 0;
  std::size_t bytes_read_ = 0;
  bool at_end_ = false;
  std::optional<error> failure_;
};

// The lines of an export, parsed one by one as the import reads them from
// `Lines` (text_lines or stream_lines); the first line may be read ahead
// (first(), to tell an export from bare wire objects) and is then given
// again by next().
template <class Lines>
class export_lines {
 public:
  export_lines(Lines& lines, json::canonicalizer& canonicalizer) noexcept : lines_(lines), canonicalizer_(canonicalizer) {}

  /// The first line, read ahead (null when the input has none).
  const export_line* first() {
    if (!ahead_) {
      ahead_.emplace();
      if (!read(*ahead_)) ahead_->number = no_line;
    }
    return ahead_->number == no_line ? nullptr : &*ahead_;
  }

  bool next(export_line& out) {
    if (ahead_) {
      const bool had = ahead_->number != no_line;
      if (had) out = std::move(*ahead_);
      ahead_.reset();
      return had;
    }
    return read(out);
  }

 private:
  static constexpr std::size_t no_line = static_cast<std::size_t>(-1);

  bool read(export_line& out) {
    std::string_view line;
    bool unbroken = false;
    const bool more = lines_.next(line, unbroken);
    out = export_line{};
    if (!more) {
      if (!lines_.failure() || failed_) return false;
      failed_ = true;
      out.number = lines_.number() + 1;
      out.failed = lines_.failure();
      return true;
    }
    out.number = lines_.number();
    auto parsed = canonicalizer_.parse(line);
    if (parsed) {
      out.object = std::move(*parsed);
    } else {
      out.not_json = not_json(parsed.error());
      out.cut = unbroken;
    }
    return true;
  }

  Lines& lines_;
  json::canonicalizer& canonicalizer_;
  std::optional<export_line> ahead_;
  bool failed_ = false;  // the failed line was given: there is no other
};

// Whether the import is sure to refuse `l`, whatever the store holds: a
// line that is not JSON (but a last one cut short, which --partial leaves
// out) or that cannot be read, and, by what the lines before it were, a line
// that is no line of an export (`wire` false; `first`: the first line;
// `ended`: an end line came before it), or no wire object (`wire` true).
inline bool surely_refused(const export_line& l, bool wire, bool first, bool ended) {
  if (l.failed) return true;
  if (!l.object) return !l.cut;
  if (wire) return is_export_line(*l.object) || wire_rank(*l.object) < 0;
  if (ended) return true;
  const std::string* kind = string_member(*l.object, "kind");
  return kind == nullptr || (*kind == "relay-export") != first || !is_export_kind(*kind);
}

// The input read_import_input() stopped reading at its read-ahead limits:
// read on, line by line, by the import itself.
struct unread_input {
  unread_input(const import_reader& read, std::size_t max_line) : source(read, max_line), lines(source, canonicalizer) {}
  stream_lines source;
  json::canonicalizer canonicalizer;
  export_lines<stream_lines> lines;
};

// Lines parsed ahead of the import (read_import_input()), given to it in
// order, then those of the input left unread, if any.
class held_lines {
 public:
  held_lines(std::vector<export_line> lines, std::unique_ptr<unread_input> rest) noexcept
      : lines_(std::move(lines)), rest_(std::move(rest)) {}

  const export_line* first() {
    if (!lines_.empty()) return &lines_.front();
    return rest_ != nullptr ? rest_->lines.first() : nullptr;  // none read ahead (a first line past the limits)
  }
  bool next(export_line& out) {
    if (at_ == lines_.size()) return rest_ != nullptr && rest_->lines.next(out);
    out = std::move(lines_[at_++]);
    return true;
  }

 private:
  std::vector<export_line> lines_;
  std::unique_ptr<unread_input> rest_;
  std::size_t at_ = 0;
};

// Bare wire objects as the lines of the export import_ndjson() reads: its
// header, the objects in the export's order (projects, sessions, packages
// with the hashes they have, facts; the file's order within a kind), its
// end line. Each line has the number of the input's line it is from (0: the
// header and the end line; a project made for an id only referenced: the
// first line naming it; the lines a package held in the store becomes: its
// line). `held_lines` counts the store's lines beyond one per file line
// that packages held in the store became (the import counts them as
// skipped: the report says one line each).
struct wire_export {
  std::vector<export_line> lines;
  std::size_t cut_line = 0;
  std::size_t held_lines = 0;
};

template <class ExportLines>
result<wire_export> export_of_wire_objects(const store& s, ExportLines& lines, bool allow_cut,
                                           json::canonicalizer& canonicalizer) {
  struct item {
    int rank;
    std::vector<export_line> lines;
  };
  std::vector<item> items;
  std::set<std::string> project_lines;
  std::map<std::string, std::size_t> referenced;  // project id -> the first line naming it
  std::vector<std::string> referenced_order;
  wire_export out;
  json::value::array_type project_ids;
  export_counts counts;
  const auto line_of = [](std::size_t number, json::value object) {
    export_line l;
    l.number = number;
    l.object = std::move(object);
    return l;
  };
  export_line in;
  while (lines.next(in)) {
    const std::string where = "line " + std::to_string(in.number) + ": ";
    if (in.failed) return unexpected(std::move(*in.failed));
    if (!in.object) {
      if (in.cut) {
        if (allow_cut) {
          out.cut_line = in.number;
          break;
        }
        return fail(errc::invalid_argument, where + cut_short(in.not_json));
      }
      return fail(errc::invalid_argument, where + in.not_json);
    }
    json::value& parsed = *in.object;
    if (is_export_line(parsed)) {
      return fail(errc::invalid_argument,
                  where + "a line of a Relay export among bare wire objects (the file's first line is a wire object)");
    }
    const int rank = wire_rank(parsed);
    if (rank < 0) {
      return fail(errc::invalid_argument, where + "not a Relay wire object: a package has relay_version, a fact "
                                                  "fact_id, a session session_id, a project project_id");
    }
    static constexpr const char* kinds[] = {"project", "session", "package", "fact"};
    json::value line_object = json::value::object_type{{"kind", kinds[rank]}};
    if (const json::value* id = parsed.find("project_id"); id != nullptr && id->is_string()) {
      if (rank == 0) {
        project_lines.insert(id->as_string());
        project_ids.push_back(*id);
      } else if (!id->as_string().empty() && referenced.emplace(id->as_string(), in.number).second) {
        referenced_order.push_back(id->as_string());
      }
    }
    counts.projects += rank == 0;
    counts.sessions += rank == 1;
    counts.facts += rank == 3;
    if (rank == 2) {
      ++counts.packages;
      auto hash = content_hash(parsed, canonicalizer);
      if (!hash) return fail(errc::invalid_argument, where + hash.error().message);
      auto held = held_state_lines(s, parsed, *hash, canonicalizer);
      if (!held) return fail(held.error().code, where + held.error().message);
      if (!held->empty()) {
        counts.status_changes += held->size() - 1;
        out.held_lines += held->size() - 1;
        item i{rank, {}};
        for (json::value& v : *held) i.lines.push_back(line_of(in.number, std::move(v)));
        items.push_back(std::move(i));
        continue;
      }
      line_object.set("hash", std::move(*hash));
    }
    line_object.set(kinds[rank], std::move(parsed));
    items.push_back({rank, {}});
    items.back().lines.push_back(line_of(in.number, std::move(line_object)));
  }
  if (items.empty()) return fail(errc::invalid_argument, "the input holds no wire object");
  // A project neither the file nor the store holds is created as a deposit
  // creates one: its id, created now.
  // Its errors name the first line that names it.
  for (const std::string& id : referenced_order) {
    if (project_lines.count(id) != 0 || s.find_project(id) != nullptr) continue;
    json::value wire = json::value::object_type{{"project_id", id}, {"created_at", s.now_text()}};
    items.push_back({0, {}});
    items.back().lines.push_back(
        line_of(referenced[id], json::value::object_type{{"kind", "project"}, {"project", std::move(wire)}}));
    project_ids.emplace_back(id);
    ++counts.projects;
  }
  std::stable_sort(items.begin(), items.end(), [](const item& a, const item& b) { return a.rank < b.rank; });
  out.lines.push_back(line_of(0, json::value::object_type{{"kind", "relay-export"},
                                                          {"protocol_version", std::string(protocol_version)},
                                                          {"exported_at", s.now_text()},
                                                          {"projects", std::move(project_ids)}}));
  for (item& i : items) {
    for (export_line& l : i.lines) out.lines.push_back(std::move(l));
  }
  json::value end = json::value::object_type{{"kind", std::string(export_end_kind)}};
  for (const export_count_member& m : export_count_members) end.set(std::string(m.name), static_cast<double>(counts.*m.field));
  out.lines.push_back(line_of(0, std::move(end)));
  return out;
}

// The import of an export's lines, which `next(export_line&)` gives one by
// one (false at the end): import_ndjson().
template <class Next>
result<import_report> import_export_lines(store& s, Next&& next, import_options options,
                                          json::canonicalizer& canonicalizer) {
  std::vector<detail::planned_record> plan;
  import_report report;
  std::set<std::string> new_projects;
  // Projects the store holds exactly as the export has them: an archived
  // one is the export's own (an import of it that stopped part-way), and
  // the import restores what it holds as it would into a new one.
  std::set<std::string> held_as_exported;
  std::set<std::string> project_lines;  // ids of the project lines read
  std::set<std::string> session_lines;  // ids of the session lines read
  std::vector<std::string> header_projects;
  // package key -> (status changes the store holds, changes planned so far), to skip held changes
  std::map<std::pair<std::string, std::string>, std::pair<std::size_t, std::size_t>> held_changes;
  // package key -> its state as planned: the wire of a package the store
  // holds, or of one with a status change planned; else (none) the one in
  // the plan at `in_plan`, copied from there by its first status change.
  struct planned_package {
    std::optional<json::value> wire;
    std::size_t in_plan = 0;
  };
  std::map<std::pair<std::string, std::string>, planned_package> planned_wire;
  std::set<std::string> fact_line_ids;
  // The fact lines to write (held ones that the export ends otherwise, and
  // new ones), weighed together once every line is read.
  std::vector<detail::fact_line> fact_lines;

  export_line in;
  bool header_seen = false;
  std::optional<std::size_t> end_line;  // the end line's number, once seen
  export_counts seen;         // lines of each kind before it
  while (next(in)) {
    const std::size_t line_number = in.number;
    const std::string where = line_number == 0 ? std::string() : "line " + std::to_string(line_number) + ": ";
    const auto bad = [&](const std::string& why) { return fail(errc::invalid_argument, where + why); };
    // A session, package or fact of a project the store does not hold and
    // no line before has given.
    const auto unknown_project = [&](const char* what, const std::string& project_id) {
      const bool listed = std::find(header_projects.begin(), header_projects.end(), project_id) != header_projects.end();
      return bad(std::string(what) + " of project " + quote_for_message(project_id) +
                 (listed ? ", whose line has not come before it (the header lists the project: its line comes "
                           "before its sessions, packages and facts)"
                         : ", which neither the input nor the store holds"));
    };
    if (in.failed) return unexpected(std::move(*in.failed));
    if (end_line) {
      return bad("a line after the export's end line (line " + std::to_string(*end_line) +
                 "): two exports joined, or something appended");
    }
    // A line that would write into a project the store holds archived is
    // refused, as deposit and assert_fact are (an archived project the
    // import itself creates is restored as exported, and so is one the
    // store holds exactly as exported: this import, stopped part-way).
    const auto writable = [&](const std::string& project_id) -> result<void> {
      const project* held = s.find_project(project_id);
      if (held == nullptr || !held->archived() || held_as_exported.count(project_id) != 0) return {};
      error e = project_archived(project_id);
      e.message = where + e.message;
      return unexpected(std::move(e));
    };
    if (!in.object) {
      if (in.cut && header_seen) {
        if (options.allow_incomplete) {
          report.cut_line = line_number;
          break;
        }
        return bad(detail::cut_short(in.not_json));
      }
      return bad(in.not_json);
    }
    json::value& object = *in.object;
    const std::string* kind = detail::string_member(object, "kind");
    if (kind == nullptr) return bad("has no \"kind\"");
    const bool first_line = !header_seen;
    if (first_line && *kind != "relay-export") {
      return bad("not a Relay export: its first line is not the header ({\"kind\":\"relay-export\",...}) but a " +
                 quote_for_message(*kind) + " line");
    }
    header_seen = true;

    if (*kind == "relay-export") {
      if (!first_line) return bad("a second header line: two exports joined");
      const std::string* version = detail::string_member(object, "protocol_version");
      if (version == nullptr || *version != protocol_version) return bad("an export of another protocol version");
      const json::value* listed = object.find("projects");
      if (listed == nullptr || !listed->is_array()) return bad("the header has no \"projects\" list");
      for (const json::value& id : listed->as_array()) {
        if (!id.is_string()) return bad("the header's \"projects\" list holds something other than project ids");
        header_projects.push_back(id.as_string());
      }
    } else if (*kind == export_end_kind) {
      export_counts stated;
      for (const detail::export_count_member& m : detail::export_count_members) {
        const json::value* n = object.find(m.name);
        if (n == nullptr || !n->is_number() || !(n->as_number() >= 0 && n->as_number() <= 1e15) ||
            n->as_number() != static_cast<double>(static_cast<std::uint64_t>(n->as_number()))) {
          return bad("the end line's " + quote_for_message(m.name) + " is not a count");
        }
        stated.*m.field = static_cast<std::size_t>(n->as_number());
      }
      if (stated != seen) {
        return bad("the end line states " + detail::describe_counts(stated) + ", but the file holds " +
                   detail::describe_counts(seen) + ": lines are missing or were added");
      }
      end_line = line_number;
    } else if (*kind == "project") {
      ++seen.projects;
      const json::value* wire = object.find("project");
      if (wire == nullptr) return bad("project line without project");
      auto p = read_project(*wire);
      if (!p) return bad(p.error().message);
      if (!project_lines.insert(p->project_id).second) {
        return bad("project " + quote_for_message(p->project_id) + " appears twice");
      }
      if (const project* held = s.find_project(p->project_id)) {
        // The store's project stays as it is (its name, created_at and
        // archived state are the store's to change).
        if (held->wire == *wire) {
          held_as_exported.insert(p->project_id);
        } else {
          report.differing_projects.push_back(p->project_id);
        }
        ++report.skipped;
        continue;
      }
      new_projects.insert(p->project_id);
      plan.push_back({line_number, json::value::object_type{{"type", "project"}, {"project", *wire}}});
      ++report.projects;
    } else if (*kind == "session") {
      ++seen.sessions;
      const json::value* wire = object.find("session");
      if (wire == nullptr) return bad("session line without session");
      auto ses = read_session(*wire);
      if (!ses) return bad(ses.error().message);
      if (!session_lines.insert(ses->session_id).second) {
        return bad("session " + quote_for_message(ses->session_id) + " appears twice");
      }
      if (s.find_project(ses->project_id) == nullptr && new_projects.count(ses->project_id) == 0) {
        return unknown_project("session", ses->project_id);
      }
      json::value record_wire = *wire;
      if (const session* held = s.find_session(ses->session_id)) {
        // Held identically (packages_deposited aside), or held ended where
        // the export has it open (the store's is later): skipped. Held open
        // where the export has it ended (the export's is later): the end
        // is imported. Anything else, an end at another time included, is
        // the same id with other content.
        json::value mine = held->wire;
        json::value theirs = *wire;
        theirs.erase("packages_deposited");
        const bool identical = mine == theirs;
        mine.erase("ended_at");
        theirs.erase("ended_at");
        const bool same_but_the_end = mine == theirs;
        if (identical || (same_but_the_end && !ses->ended_at)) {
          ++report.skipped;
          continue;
        }
        if (!same_but_the_end || held->ended_at) {  // other content, or ended at another time
          return fail(errc::already_exists, where + "session " + quote_for_message(ses->session_id) +
                                                " exists in the store with other content");
        }
        // The session's list: the export's, then what only the store lists.
        json::value::array_type ids;
        std::set<std::string> listed(ses->packages_deposited.begin(), ses->packages_deposited.end());
        for (const std::string& id : ses->packages_deposited) ids.emplace_back(id);
        const json::value store_list = s.session_wire(*held);
        if (const json::value* list = store_list.find("packages_deposited")) {
          for (const json::value& id : list->as_array()) {
            if (listed.insert(id.as_string()).second) ids.push_back(id);
          }
        }
        record_wire.set("packages_deposited", std::move(ids));
      }
      AGENTCTX_TRY(writable(ses->project_id));
      // packages_deposited travels in the record: the exporting store's
      // list, in its order, is the session's (store.hpp apply_session).
      plan.push_back({line_number, json::value::object_type{{"type", "session"}, {"session", std::move(record_wire)}}});
      ++report.sessions;
    } else if (*kind == "package") {
      ++seen.packages;
      const std::string* hash = detail::string_member(object, "hash");
      json::value* wire = object.find("package");
      if (hash == nullptr || wire == nullptr) return bad("package line without hash or package");
      // The record it becomes, read and hashed once. The line is not needed
      // after: its package is moved (an initializer list would copy it).
      json::value::object_type record;
      record.reserve(3);
      record.emplace_back("type", "package");
      record.emplace_back("hash", *hash);
      record.emplace_back("package", std::move(*wire));
      auto prepared = s.prepare_package_record(std::move(record));
      if (!prepared) return bad(prepared.error().message);
      const package* p = &prepared->read();
      if (prepared->computed_hash() != *hash) {
        return bad("package " + quote_for_message(p->package_id) + " hashes to " + prepared->computed_hash() + ", not " +
                   *hash);
      }
      if (s.find_project(p->project_id) == nullptr && new_projects.count(p->project_id) == 0) {
        return unknown_project("package", p->project_id);
      }
      const auto key = std::make_pair(p->project_id, p->package_id);
      if (planned_wire.count(key) != 0) return bad("package " + quote_for_message(p->package_id) + " appears twice");
      auto held = s.find_package(p->package_id, p->project_id);
      if (held) {
        // The store's copy no longer matches its hash: it is neither what the
        // export holds nor other content, and cannot be mended by an import
        // (a package id is deposited once): refused as deposit refuses it.
        if ((*held)->quarantined) {
          return fail(errc::corrupt, where + "package " + quote_for_message(p->package_id) +
                                         " is quarantined in the store: " + s.quarantine_reason(**held) +
                                         " ('relay verify' lists it)");
        }
        if ((*held)->deposited_hash != *hash) {
          return fail(errc::already_exists, where + "package " + quote_for_message(p->package_id) +
                                                " exists in the store with other content (duplicate_package_id)");
        }
        held_changes[key] = {(*held)->changes.size(), 0};
        planned_wire[key] = {(*held)->deposited_wire(), 0};
        ++report.skipped;
        continue;
      }
      AGENTCTX_TRY(writable(p->project_id));
      held_changes[key] = {0, 0};
      planned_wire[key] = {std::nullopt, plan.size()};
      plan.push_back({line_number, std::move(*prepared)});
      ++report.packages;
    } else if (*kind == "status") {
      ++seen.status_changes;
      const std::string* project_id = detail::string_member(object, "project_id");
      const std::string* package_id = detail::string_member(object, "package_id");
      const std::string* status = detail::string_member(object, "status");
      const std::string* review = detail::string_member(object, "review_type");
      const std::string* at = detail::string_member(object, "at");
      const std::string* hash = detail::string_member(object, "hash");
      if (!project_id || !package_id || !status || !review || !at || !hash) return bad("status line lacks a member");
      const std::string* note = nullptr;
      if (!detail::optional_string_member(object, "note", note)) return bad("status line's note is not a string");
      const auto key = std::make_pair(*project_id, *package_id);
      auto planned = planned_wire.find(key);
      if (planned == planned_wire.end()) return bad("status change of a package the export has not shown before");
      if (!planned->second.wire) planned->second.wire = *plan[planned->second.in_plan].package->record().find("package");
      json::value& wire = *planned->second.wire;
      auto from = read_package(wire);
      const auto to = parse_package_status(*status);
      if (!from || !to || !parse_review_type(*review) || !is_recordable_status_change(from->status, *to)) {
        return bad("status change the protocol does not allow");
      }
      // Any offset (written as the line has it: two stores' review
      // histories are compared as written), and awaiting_review with
      // review_type none as replay reads it (review wrote such changes
      // before 2026-11-26, and their exports must import).
      if (!parse_rfc3339_utc_instant(*at)) return bad("\"at\" is not an RFC 3339 timestamp");
      wire.set("status", *status);
      wire.set("review_type", *review);
      auto computed = content_hash(wire, canonicalizer);
      if (!computed || *computed != *hash) {
        return bad("status change of " + quote_for_message(*package_id) + " does not hash to " + *hash);
      }
      auto& [held, seen] = held_changes[key];
      if (++seen <= held) {
        // The store holds this package's change number `seen` already: the
        // same one, or the two stores' review histories went apart.
        const status_change& mine = (*s.find_package(*package_id, *project_id))->changes[seen - 1];
        if (mine.hash != *hash || mine.at != *at || to_string(mine.review) != *review ||
            mine.note != (note != nullptr ? std::optional<std::string>(*note) : std::nullopt)) {
          return fail(errc::already_exists, where + "status change " + std::to_string(seen) + " of package " +
                                                quote_for_message(*package_id) +
                                                " differs from the one the store holds (their review histories went "
                                                "apart): to " + *status + " (" + *review + ") at " + *at +
                                                ", where the store has " + std::string(to_string(mine.status)) + " (" +
                                                std::string(to_string(mine.review)) + ") at " + mine.at);
        }
        ++report.skipped;
        continue;
      }
      AGENTCTX_TRY(writable(*project_id));
      // The record is built of the members a status change has, as the
      // store writes one (store.hpp), whatever else the line holds.
      json::value record = json::value::object_type{{"type", "status"},  {"project_id", *project_id},
                                                    {"package_id", *package_id}, {"status", *status},
                                                    {"review_type", *review}, {"at", *at},
                                                    {"hash", *hash}};
      if (note != nullptr) record.set("note", *note);
      plan.push_back({line_number, std::move(record)});
      ++report.status_changes;
    } else if (*kind == "fact") {
      ++seen.facts;
      const json::value* wire = object.find("fact");
      if (wire == nullptr) return bad("fact line without fact");
      auto f = read_fact(*wire);
      if (!f) return bad(f.error().message);
      if (s.find_project(f->project_id) == nullptr && new_projects.count(f->project_id) == 0) {
        return unknown_project("fact", f->project_id);
      }
      if (!fact_line_ids.insert(f->fact_id).second) return bad("fact " + quote_for_message(f->fact_id) + " appears twice");
      const fact* held = s.find_fact(f->fact_id);
      if (held != nullptr) {
        // Held identically, or held ended where the export has it current
        // or ending later (the store's is later), or never held in both
        // (whatever its valid_to: an invalidation before 2026-11-29 spelled
        // it anew): skipped. Held with another end (the export's is later:
        // superseded or invalidated since): weighed with the key's other
        // lines below. Anything else is the same id with other content.
        json::value mine = held->wire;
        json::value theirs = *wire;
        mine.erase("valid_to");
        theirs.erase("valid_to");
        const bool same_but_the_end = mine == theirs;
        const bool store_later = !held->is_current() && (f->is_current() || held->valid_to_at < f->valid_to_at);
        const bool never_held = held->never_held() && f->never_held();
        if (held->wire == *wire || (same_but_the_end && (store_later || never_held))) {
          ++report.skipped;
          continue;
        }
        if (!same_but_the_end || f->is_current() || (!held->is_current() && !(f->valid_to_at < held->valid_to_at))) {
          return fail(errc::already_exists, where + "fact " + quote_for_message(f->fact_id) + " exists with other content");
        }
      }
      AGENTCTX_TRY(writable(f->project_id));
      f->wire = *wire;
      fact_lines.push_back({line_number, std::move(*f), held != nullptr});
    } else {
      return bad("unknown kind " + quote_for_message(*kind));
    }
  }
  if (!header_seen) {
    return fail(errc::invalid_argument,
                "not a Relay export: the input is empty (an export starts with its header line, "
                "{\"kind\":\"relay-export\",...})");
  }
  if (!end_line && !options.allow_incomplete) {
    return fail(errc::invalid_argument,
                "the export is incomplete: it ends without its end line ({\"kind\":\"relay-export-end\",...}) after " +
                    detail::describe_counts(seen) +
                    ": the file was cut short (or written before exports had end lines, 2026-11-26)");
  }
  report.incomplete = !end_line;
  {
    // The header lists the projects the export holds: all of them, or,
    // when it was cut short, the ones whose lines are there.
    std::set<std::string> listed(header_projects.begin(), header_projects.end());
    const bool listed_all = std::includes(listed.begin(), listed.end(), project_lines.begin(), project_lines.end());
    if (!listed_all || listed.size() != header_projects.size() ||
        (end_line && listed.size() != project_lines.size())) {
      return fail(errc::invalid_argument,
                  "line 1: the header lists the projects " + detail::joined_ids(header_projects) +
                      ", but the export's project lines are of " +
                      detail::joined_ids(std::vector<std::string>(project_lines.begin(), project_lines.end())));
    }
  }
  AGENTCTX_TRY(detail::plan_fact_lines(s, fact_lines, plan, report));
  // Every refusal before the first write: a record too large for the log
  // too (a package that fits a line may not fit a record).
  const auto at_line = [](error e, std::size_t line) {
    e.message = "line " + std::to_string(line) + ": " + e.message;
    return unexpected(std::move(e));
  };
  for (const detail::planned_record& p : plan) {
    if (auto text = store::record_text(canonicalizer, p.to_write()); !text) return at_line(std::move(text).error(), p.line);
  }

  for (detail::planned_record& p : plan) {
    auto written = p.package ? s.append_record(std::move(*p.package)) : s.append_record(std::move(p.record));
    if (!written) return at_line(std::move(written).error(), p.line);
  }
  return report;
}

// import_ndjson() of export lines: first() (the first line, or null) and
// next() (export_lines, held_lines).
template <class ExportLines>
result<import_report> import_lines(store& s, ExportLines& lines, import_options options,
                                   json::canonicalizer& canonicalizer);

}  // namespace detail

/// Imports an export (see the file comment) into `s`, which must be open
/// for writing. A project the store already holds keeps the store's
/// content (import_report::differing_projects lists those that differ).
/// Errors: invalid_argument naming the line ("line 7: ...") for anything
/// malformed or a hash mismatch, and for input that does not start with the
/// header line (empty input included), and for input without the end line
/// (unless options.allow_incomplete), with a line after it, or with counts
/// of lines other than it states; already_exists for a package id, fact id
/// or session id held with other content, and for a status change other
/// than the one the store holds at its place in the package's history;
/// archived (403 project_archived) for a line that would write into a
/// project the store holds archived; the store's write errors.
///
/// Input whose first line is a bare wire object rather than the header (a
/// package, fact, session or project object of sections 5 to 7, one per
/// line, in any order: another implementation's backup) is imported as the
/// export of those objects would be, with the same checks: a package's
/// hash is computed (its current state is the state deposited: such a file
/// holds no status history), a project neither the file nor the store holds
/// is created as deposit creates one (its id, created now), a package the
/// store holds in a state the file's is, or leads to, is the store's
/// (held_state_lines), and errors name the input's lines. The report counts
/// the file's lines: such a package is one line skipped, or one status
/// change. Such a file has no end line, so only a last line cut in the
/// middle shows that it was cut short (options.allow_incomplete leaves that
/// line out, as for an export).
inline result<import_report> import_ndjson(store& s, std::string_view text, import_options options = {}) {
  json::canonicalizer canonicalizer;
  detail::text_lines source(text);
  detail::export_lines<detail::text_lines> lines(source, canonicalizer);
  return detail::import_lines(s, lines, options, canonicalizer);
}

/// How much read_import_input() reads ahead of the store: input of up to
/// `bytes` and `lines` (the parsed lines of a small input, or of one refused
/// early, are held at once; the rest of a larger one is read by the import
/// itself, the store open), and lines of up to `max_line` bytes.
struct read_ahead_limits {
  std::size_t bytes = std::size_t{64} << 20;
  std::size_t lines = 100'000;
  std::size_t max_line = max_import_line;
};

/// An import's input read and parsed before the store is opened
/// (read_import_input()), for import_ndjson().
class import_input {
 public:
  /// The input's lines read ahead.
  std::size_t lines() const noexcept { return lines_.size(); }
  /// Whether the input was read to its end or to a line the import is sure
  /// to refuse (else the import reads on).
  bool read_whole() const noexcept { return rest_ == nullptr; }
  /// Why reading stopped short (its reader's error, a line too long), or
  /// null; the import fails with it at that line.
  const error* failure() const noexcept {
    return lines_.empty() || !lines_.back().failed ? nullptr : &*lines_.back().failed;
  }

 private:
  friend import_input read_import_input(const import_reader& read, read_ahead_limits limits);
  friend result<import_report> import_ndjson(store& s, import_input input, import_options options);
  std::vector<detail::export_line> lines_;
  std::unique_ptr<detail::unread_input> rest_;  // the input past the read-ahead limits
};

/// Reads an import's input piece by piece with `read` (a pipe, a socket, a
/// file) and parses its lines, before any store is opened or locked: the
/// text is never held whole, only the lines' parsed objects. Reading stops
/// after the first line the import is sure to refuse whatever the store
/// holds (not JSON; no line of an export, or after its end line; in a file
/// of bare wire objects, no wire object), so endless input that is no export
/// is refused at once; import_ndjson() then refuses that line, or a line
/// before it, as it would the whole text. A read error, or a line longer
/// than `limits.max_line` bytes, stops it too, and the import fails with it.
/// Past `limits.bytes` or `limits.lines` it stops, and import_ndjson() reads
/// the rest as its plan comes to each line (the store open: so input whose
/// lines look right but are not is refused at the first such line with the
/// memory of the lines before it). `read` must outlive the import_input.
/// Never fails itself.
inline import_input read_import_input(const import_reader& read, read_ahead_limits limits = {}) {
  import_input out;
  auto rest = std::make_unique<detail::unread_input>(read, limits.max_line);
  detail::export_lines<detail::stream_lines>& lines = rest->lines;
  const detail::export_line* first = lines.first();
  const bool wire = first != nullptr && detail::is_wire_object_line(first->object);
  bool ended = false;
  detail::export_line l;
  for (;;) {
    if (out.lines_.size() >= limits.lines || rest->source.bytes_read() > limits.bytes) {
      out.rest_ = std::move(rest);  // the import reads on
      break;
    }
    if (!lines.next(l)) break;
    const bool refused = detail::surely_refused(l, wire, out.lines_.empty(), ended);
    if (!wire && l.object) {
      const std::string* kind = detail::string_member(*l.object, "kind");
      ended = ended || (kind != nullptr && *kind == export_end_kind);
    }
    out.lines_.push_back(std::move(l));
    if (refused) break;
  }
  return out;
}

/// import_ndjson() of input read ahead by read_import_input(): the same
/// checks, results and errors as of the whole text, and those of reading it.
inline result<import_report> import_ndjson(store& s, import_input input, import_options options = {}) {
  json::canonicalizer canonicalizer;
  detail::held_lines lines(std::move(input.lines_), std::move(input.rest_));
  return detail::import_lines(s, lines, options, canonicalizer);
}

/// import_ndjson() of input that `read` gives piece by piece:
/// read_import_input(), then the import of what it read.
inline result<import_report> import_ndjson(store& s, const import_reader& read, import_options options = {}) {
  return import_ndjson(s, read_import_input(read), options);
}

namespace detail {

template <class ExportLines>
result<import_report> import_lines(store& s, ExportLines& lines, import_options options,
                                   json::canonicalizer& canonicalizer) {
  const export_line* first = lines.first();
  if (first == nullptr || !is_wire_object_line(first->object)) {
    return import_export_lines(s, [&](export_line& l) { return lines.next(l); }, options, canonicalizer);
  }
  auto converted = export_of_wire_objects(s, lines, options.allow_incomplete, canonicalizer);
  if (!converted) return unexpected(std::move(converted).error());
  std::size_t i = 0;
  const auto next = [&](detail::export_line& l) {
    if (i == converted->lines.size()) return false;
    l = std::move(converted->lines[i++]);
    return true;
  };
  auto report = import_export_lines(s, next, import_options{}, canonicalizer);
  if (!report) return report;
  report->wire_objects = true;
  report->cut_line = converted->cut_line;
  report->skipped -= std::min(report->skipped, converted->held_lines);
  return report;
}

}  // namespace detail

}  // namespace agentctx::relay
