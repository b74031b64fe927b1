// agentctx/relay/model.hpp: the Agentic Protocol's data types (seed 001
// sections 5 to 7) and their validation.
//
// Every type is kept two ways: `wire`, the JSON object exactly as it was
// received or built (unknown members and every x-* member included, so they
// round-trip, section 12.1), and typed fields read from it for the store's
// indexes and for C++ callers. The typed fields are a read-only view: change
// `wire` and read the object again to change a value.
//
// read_package(), read_fact(), read_project() and read_session() check every
// constraint of the spec and return errc::invalid_argument (the protocol's
// 400 invalid_schema) with a one-line message that starts with the member's
// path: "created_by.type must be one of human, agent, script (got \"robot\")".
// A member whose value is null is treated as absent (Appendix A leaves null
// members out of the canonical form, so they cannot carry meaning).
//
// Timestamps are RFC 3339 in UTC ("Z", or an offset of +00:00 / -00:00) and
// are compared at millisecond precision.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::relay {

/// The protocol version this library implements (relay_version, protocol_version).
inline constexpr std::string_view protocol_version = "0.1";

enum class package_status : std::uint8_t { draft, complete, awaiting_review, revision_requested };
enum class review_type : std::uint8_t { none, human, agent };
enum class actor_type : std::uint8_t { human, agent, script };

constexpr std::string_view to_string(package_status s) noexcept {
  switch (s) {
    case package_status::draft: return "draft";
    case package_status::complete: return "complete";
    case package_status::awaiting_review: return "awaiting_review";
    case package_status::revision_requested: return "revision_requested";
  }
  return "complete";
}
constexpr std::string_view to_string(review_type r) noexcept {
  switch (r) {
    case review_type::none: return "none";
    case review_type::human: return "human";
    case review_type::agent: return "agent";
  }
  return "none";
}
constexpr std::string_view to_string(actor_type a) noexcept {
  switch (a) {
    case actor_type::human: return "human";
    case actor_type::agent: return "agent";
    case actor_type::script: return "script";
  }
  return "human";
}

inline std::optional<package_status> parse_package_status(std::string_view text) noexcept {
  for (auto s : {package_status::draft, package_status::complete, package_status::awaiting_review,
                 package_status::revision_requested}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}
inline std::optional<review_type> parse_review_type(std::string_view text) noexcept {
  for (auto r : {review_type::none, review_type::human, review_type::agent}) {
    if (text == to_string(r)) return r;
  }
  return std::nullopt;
}
inline std::optional<actor_type> parse_actor_type(std::string_view text) noexcept {
  for (auto a : {actor_type::human, actor_type::agent, actor_type::script}) {
    if (text == to_string(a)) return a;
  }
  return std::nullopt;
}

/// The package types of section 6.3; x-* types are also valid (section 12.2).
inline constexpr std::string_view standard_package_types[] = {
    "standard", "milestone", "decision", "handoff", "auto_deposit", "analysis", "question", "orchestrator_report"};

/// True for a standard package type or one in the x-* namespace.
inline bool is_valid_package_type(std::string_view type) noexcept {
  if (type.starts_with("x-") && type.size() > 2) return true;
  for (std::string_view standard : standard_package_types) {
    if (type == standard) return true;
  }
  return false;
}

/// True when a package may move from `from` to `to` (section 5.3 and the L3
/// transitions): draft -> complete | awaiting_review; awaiting_review ->
/// complete | revision_requested; revision_requested -> awaiting_review |
/// complete; complete is terminal.
constexpr bool is_allowed_transition(package_status from, package_status to) noexcept {
  switch (from) {
    case package_status::draft: return to == package_status::complete || to == package_status::awaiting_review;
    case package_status::awaiting_review:
      return to == package_status::complete || to == package_status::revision_requested;
    case package_status::revision_requested:
      return to == package_status::awaiting_review || to == package_status::complete;
    case package_status::complete: return false;
  }
  return false;
}

/// True when flag_for_review may move a package in status `from` to
/// awaiting_review: section 8.5 refuses only a complete package, so a package
/// already awaiting review may be flagged again (for another reviewer, or
/// with a note), which the transition table alone does not allow.
constexpr bool may_flag_for_review(package_status from) noexcept { return from != package_status::complete; }

/// True when a log or an export may record a status change from `from` to
/// `to`: a transition of the table, or flag_for_review again of a package
/// awaiting review.
constexpr bool is_recordable_status_change(package_status from, package_status to) noexcept {
  return is_allowed_transition(from, to) ||
         (from == package_status::awaiting_review && to == package_status::awaiting_review);
}

/// An actor attribution (created_by, asserted_by: section 6.2).
struct actor {
  std::string id;
  actor_type type = actor_type::human;
  std::optional<std::string> session_id;
};

/// A deliverable (section 6.5).
struct deliverable {
  std::string path;
  std::string type;
  std::optional<std::string> hash;  ///< "<algo>:<hex>"
  std::optional<std::uint64_t> size_bytes;
};

/// A Context Package (section 6).
struct package {
  json::value wire;  ///< the object as deposited (see the file comment)

  std::string package_id;
  std::string project_id;
  std::string title;
  package_status status = package_status::complete;
  std::string package_type;
  review_type review = review_type::none;
  std::string created_at;  ///< as written
  utc_instant created_at_instant;  ///< created_at read exactly (fraction digits past milliseconds too)
  actor created_by;
  // Optional members, with their defaults (section 6.4) when absent.
  std::string description;
  std::vector<std::string> tags;
  std::vector<std::string> decisions_made;
  std::vector<std::string> open_questions;
  std::string handoff_note;
  std::optional<actor_type> estimated_next_actor;  ///< human or agent
  std::vector<deliverable> deliverables;
  std::optional<std::string> parent_package_id;
  int significance = 5;
  std::string content_md;
  std::optional<std::string> topic;
  std::optional<std::string> artifact_type;
  std::optional<std::string> storage_path;
};

/// A Fact (section 7).
struct fact {
  json::value wire;

  std::string fact_id;
  std::string project_id;
  std::string subject;
  std::string predicate;
  std::string value;
  std::string valid_from;
  /// The instant valid_from names, exactly (fraction digits past
  /// milliseconds included): facts of a key are ordered by these.
  utc_instant valid_from_at;
  std::string created_at;
  std::int64_t created_at_ms = 0;  ///< negative before 1970
  std::optional<std::string> valid_to;  ///< absent while current
  utc_instant valid_to_at;              ///< meaningful when valid_to is set
  std::optional<std::string> source_package_id;
  double confidence = 1.0;
  std::optional<actor> asserted_by;
  std::vector<std::string> tags;
  std::uint64_t sequence = 0;  ///< its record's order among a store's facts, from 0 (set by the store)

  bool is_current() const noexcept { return !valid_to.has_value(); }
  /// valid_from <= t < valid_to (an absent valid_to is +infinity).
  bool holds_at(const utc_instant& t) const noexcept { return valid_from_at <= t && (!valid_to || t < valid_to_at); }
  /// Whether [valid_from, valid_to) holds no time (it never held).
  bool never_held() const noexcept { return valid_to && valid_to_at <= valid_from_at; }
  /// Whether the spans of this fact and `other` share a time.
  bool overlaps(const fact& other) const noexcept {
    if (never_held() || other.never_held()) return false;
    return (!other.valid_to || valid_from_at < other.valid_to_at) && (!valid_to || other.valid_from_at < valid_to_at);
  }
};

/// What an invalidation of `named` (a key's current fact) at `at` (its
/// text `at_text`) does to `f`, a fact of the same key: from `at` on no fact
/// of the key holds, so `named`, and any other fact still holding after
/// `at` (one `named` was to supersede later), ends at `at`, or where it
/// starts if that is later (it never held). A fact that never held is left
/// as it is: its `valid_to` stays as written (one a fraction of a
/// millisecond before its `valid_from`, read as never held, too). Returns
/// the end `f` gets as {text, instant}, or nothing when the invalidation
/// leaves it as it is.
inline std::optional<std::pair<std::string, utc_instant>> invalidation_end(const fact& named, const fact& f,
                                                                           const std::string& at_text,
                                                                           const utc_instant& at) {
  const bool ends = f.fact_id == named.fact_id ||
                    (at < named.valid_from_at && f.valid_to && at < f.valid_to_at && !f.never_held());
  if (!ends) return std::nullopt;
  if (at < f.valid_from_at) return std::pair<std::string, utc_instant>(f.valid_from, f.valid_from_at);
  return std::pair<std::string, utc_instant>(at_text, at);
}

/// A Project (section 5.2): the unit of scope, archival and export. The spec
/// leaves its schema open; this library requires project_id and created_at
/// and reads name, description and archived_at.
struct project {
  json::value wire;

  std::string project_id;
  std::string name;  ///< defaults to project_id
  std::string description;
  std::string created_at;
  std::int64_t created_at_ms = 0;  ///< negative before 1970
  std::optional<std::string> archived_at;

  bool archived() const noexcept { return archived_at.has_value(); }
};

/// A Session (section 5.5).
struct session {
  json::value wire;

  std::string session_id;
  std::string project_id;
  std::string actor_id;
  actor_type type = actor_type::agent;
  std::optional<std::string> callsign;
  std::string started_at;
  std::int64_t started_at_ms = 0;  ///< negative before 1970
  std::optional<std::string> ended_at;
  std::vector<std::string> packages_deposited;

  /// Whether `by` (a package's created_by) is this session's actor: the same
  /// (id, type), which identifies an actor (section 5.4).
  bool is_actor(const actor& by) const noexcept { return by.id == actor_id && by.type == type; }
};

namespace detail {

inline unexpected schema_error(std::string_view where, std::string_view problem) {
  std::string message(where);
  message += ' ';
  message += problem;
  return fail(errc::invalid_argument, std::move(message));
}

// Number of Unicode characters (code points) of valid UTF-8 text.
inline std::size_t character_count(std::string_view text) noexcept {
  std::size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// Reads the members of one object, naming them "prefix.member" in errors.
class member_reader {
 public:
  member_reader(const json::value& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}

  std::string where(std::string_view name) const {
    return prefix_.empty() ? std::string(name) : prefix_ + "." + std::string(name);
  }

  /// The member, or null when absent or null.
  const json::value* get(std::string_view name) const {
    const json::value* v = object_.find(name);
    return v == nullptr || v->is_null() ? nullptr : v;
  }

  result<std::string> required_string(std::string_view name, bool allow_empty = false) const {
    const json::value* v = get(name);
    if (v == nullptr) return schema_error(where(name), "is required");
    if (!v->is_string()) return schema_error(where(name), "must be a string");
    if (!allow_empty && v->as_string().empty()) return schema_error(where(name), "must not be empty");
    return v->as_string();
  }

  result<std::optional<std::string>> optional_string(std::string_view name) const {
    const json::value* v = get(name);
    if (v == nullptr) return std::optional<std::string>();
    if (!v->is_string()) return schema_error(where(name), "must be a string or null");
    return std::optional<std::string>(v->as_string());
  }

  result<std::string> string_or_default(std::string_view name) const {
    auto v = optional_string(name);
    if (!v) return unexpected(std::move(v).error());
    return v->value_or(std::string());
  }

  result<std::vector<std::string>> string_array(std::string_view name) const {
    std::vector<std::string> out;
    const json::value* v = get(name);
    if (v == nullptr) return out;
    if (!v->is_array()) return schema_error(where(name), "must be an array of strings");
    const auto& items = v->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) {
        return schema_error(where(name) + "[" + std::to_string(i) + "]", "must be a string");
      }
      out.push_back(items[i].as_string());
    }
    return out;
  }

  /// A required RFC 3339 UTC timestamp: its text and the instant it names.
  result<std::pair<std::string, utc_instant>> required_time(std::string_view name) const {
    auto text = required_string(name);
    if (!text) return unexpected(std::move(text).error());
    auto at = parse_utc_time(where(name), *text);
    if (!at) return unexpected(std::move(at).error());
    return std::pair<std::string, utc_instant>(std::move(*text), std::move(*at));
  }

  result<std::optional<std::pair<std::string, utc_instant>>> optional_time(std::string_view name) const {
    using out_type = std::optional<std::pair<std::string, utc_instant>>;
    const json::value* v = get(name);
    if (v == nullptr) return out_type();
    auto t = required_time(name);
    if (!t) return unexpected(std::move(t).error());
    return out_type(std::move(*t));
  }

  static result<utc_instant> parse_utc_time(const std::string& where, std::string_view text) {
    auto at = parse_rfc3339_utc_instant(text);
    if (!at) {
      return schema_error(where, "must be an RFC 3339 UTC timestamp (got " + quote_for_message(text) + ")");
    }
    const bool utc = text.ends_with('Z') || text.ends_with('z') || text.ends_with("+00:00") || text.ends_with("-00:00");
    if (!utc) {
      return schema_error(where, "must be in UTC, ending in Z, +00:00 or -00:00 (got " + quote_for_message(text) + ")");
    }
    return at;
  }

  result<actor> required_actor(std::string_view name) const {
    const json::value* v = get(name);
    if (v == nullptr) return schema_error(where(name), "is required");
    return read_actor(*v, where(name));
  }

  static result<actor> read_actor(const json::value& v, const std::string& where) {
    if (!v.is_object()) return schema_error(where, "must be an object {id, type, session_id?}");
    member_reader in(v, where);
    actor a;
    auto id = in.required_string("id");
    if (!id) return unexpected(std::move(id).error());
    a.id = std::move(*id);
    auto type = in.required_string("type");
    if (!type) return unexpected(std::move(type).error());
    auto parsed = parse_actor_type(*type);
    if (!parsed) return schema_error(in.where("type"), "must be one of human, agent, script (got " + quote_for_message(*type) + ")");
    a.type = *parsed;
    auto session = in.optional_string("session_id");
    if (!session) return unexpected(std::move(session).error());
    a.session_id = std::move(*session);
    return a;
  }

 private:
  const json::value& object_;
  std::string prefix_;
};

inline bool is_hex(std::string_view text) noexcept {
  if (text.empty()) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

// "<algo>:<hex>": algo of lowercase letters, digits and '-', then hex digits.
inline bool is_content_hash(std::string_view text) noexcept {
  const std::size_t colon = text.find(':');
  if (colon == 0 || colon == std::string_view::npos) return false;
  for (char c : text.substr(0, colon)) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return is_hex(text.substr(colon + 1));
}

#define AGENTCTX_RELAY_READ(target, expr)                                     \
  do {                                                                        \
    auto agentctx_relay_value_ = (expr);                                      \
    if (!agentctx_relay_value_) return unexpected(std::move(agentctx_relay_value_).error()); \
    target = std::move(*agentctx_relay_value_);                               \
  } while (0)

}  // namespace detail

/// Checks a Context Package (section 6) and reads its fields. `wire` must be
/// an object; its package_id must be present (deposit generates one first).
inline result<package> read_package(json::value wire) {
  if (!wire.is_object()) return detail::schema_error("the package", "must be a JSON object");
  package p;
  {
    detail::member_reader in(wire, "");
    AGENTCTX_RELAY_READ(p.package_id, in.required_string("package_id"));
    AGENTCTX_RELAY_READ(p.project_id, in.required_string("project_id"));
    std::string version;
    AGENTCTX_RELAY_READ(version, in.required_string("relay_version"));
    if (version != protocol_version) {
      return detail::schema_error("relay_version", "must be \"0.1\" (got " + quote_for_message(version) + ")");
    }
    AGENTCTX_RELAY_READ(p.title, in.required_string("title"));
    const std::size_t title_length = detail::character_count(p.title);
    if (title_length > 200) {
      return detail::schema_error("title", "must be 1 to 200 characters (it has " + std::to_string(title_length) + ")");
    }
    std::string text;
    AGENTCTX_RELAY_READ(text, in.required_string("status"));
    const auto status = parse_package_status(text);
    if (!status) {
      return detail::schema_error(
          "status", "must be one of draft, complete, awaiting_review, revision_requested (got " + quote_for_message(text) + ")");
    }
    p.status = *status;
    AGENTCTX_RELAY_READ(p.package_type, in.required_string("package_type"));
    if (!is_valid_package_type(p.package_type)) {
      return detail::schema_error("package_type",
                                  "must be one of standard, milestone, decision, handoff, auto_deposit, analysis, "
                                  "question, orchestrator_report, or an x-* type (got " +
                                      quote_for_message(p.package_type) + ")");
    }
    AGENTCTX_RELAY_READ(text, in.required_string("review_type"));
    const auto review = parse_review_type(text);
    if (!review) return detail::schema_error("review_type", "must be one of none, human, agent (got " + quote_for_message(text) + ")");
    p.review = *review;
    std::pair<std::string, utc_instant> created;
    AGENTCTX_RELAY_READ(created, in.required_time("created_at"));
    p.created_at = std::move(created.first);
    p.created_at_instant = std::move(created.second);
    AGENTCTX_RELAY_READ(p.created_by, in.required_actor("created_by"));

    AGENTCTX_RELAY_READ(p.description, in.string_or_default("description"));
    AGENTCTX_RELAY_READ(p.tags, in.string_array("tags"));
    AGENTCTX_RELAY_READ(p.decisions_made, in.string_array("decisions_made"));
    AGENTCTX_RELAY_READ(p.open_questions, in.string_array("open_questions"));
    AGENTCTX_RELAY_READ(p.handoff_note, in.string_or_default("handoff_note"));
    std::optional<std::string> next;
    AGENTCTX_RELAY_READ(next, in.optional_string("estimated_next_actor"));
    if (next) {
      if (*next != "human" && *next != "agent") {
        return detail::schema_error("estimated_next_actor", "must be human, agent or null (got " + quote_for_message(*next) + ")");
      }
      p.estimated_next_actor = *parse_actor_type(*next);
    }
    AGENTCTX_RELAY_READ(p.parent_package_id, in.optional_string("parent_package_id"));
    if (const json::value* s = in.get("significance")) {
      if (!s->is_number() || s->as_number() != std::trunc(s->as_number()) || s->as_number() < 1 || s->as_number() > 10) {
        return detail::schema_error("significance", "must be an integer from 1 to 10");
      }
      p.significance = static_cast<int>(s->as_number());
    }
    AGENTCTX_RELAY_READ(p.content_md, in.string_or_default("content_md"));
    AGENTCTX_RELAY_READ(p.topic, in.optional_string("topic"));
    AGENTCTX_RELAY_READ(p.artifact_type, in.optional_string("artifact_type"));
    AGENTCTX_RELAY_READ(p.storage_path, in.optional_string("storage_path"));
    if (const json::value* list = in.get("deliverables")) {
      if (!list->is_array()) return detail::schema_error("deliverables", "must be an array of objects");
      const auto& items = list->as_array();
      for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string where = "deliverables[" + std::to_string(i) + "]";
        if (!items[i].is_object()) return detail::schema_error(where, "must be an object {path, type, hash?, size_bytes?}");
        detail::member_reader d(items[i], where);
        deliverable out;
        AGENTCTX_RELAY_READ(out.path, d.required_string("path"));
        AGENTCTX_RELAY_READ(out.type, d.required_string("type", true));
        AGENTCTX_RELAY_READ(out.hash, d.optional_string("hash"));
        if (out.hash && !detail::is_content_hash(*out.hash)) {
          return detail::schema_error(d.where("hash"),
                                      "must be <algo>:<hex>, e.g. sha256:9f86d0... (got " + quote_for_message(*out.hash) + ")");
        }
        if (const json::value* size = d.get("size_bytes")) {
          if (!size->is_number() || size->as_number() < 0 || size->as_number() != std::trunc(size->as_number()) ||
              size->as_number() > 0x1p53) {
            return detail::schema_error(d.where("size_bytes"), "must be a non-negative integer");
          }
          out.size_bytes = static_cast<std::uint64_t>(size->as_number());
        }
        p.deliverables.push_back(std::move(out));
      }
    }
  }
  p.wire = std::move(wire);
  return p;
}

/// Checks a Fact (section 7) and reads its fields.
inline result<fact> read_fact(json::value wire) {
  if (!wire.is_object()) return detail::schema_error("the fact", "must be a JSON object");
  fact f;
  {
    detail::member_reader in(wire, "");
    AGENTCTX_RELAY_READ(f.fact_id, in.required_string("fact_id"));
    AGENTCTX_RELAY_READ(f.project_id, in.required_string("project_id"));
    AGENTCTX_RELAY_READ(f.subject, in.required_string("subject"));
    AGENTCTX_RELAY_READ(f.predicate, in.required_string("predicate"));
    const json::value* value = in.get("value");
    if (value == nullptr) return detail::schema_error("value", "is required");
    if (!value->is_string()) {
      return detail::schema_error("value", "must be a string (numbers are written as strings, e.g. \"97.0\")");
    }
    f.value = value->as_string();
    std::pair<std::string, utc_instant> t;
    AGENTCTX_RELAY_READ(t, in.required_time("valid_from"));
    f.valid_from = std::move(t.first);
    f.valid_from_at = std::move(t.second);
    AGENTCTX_RELAY_READ(t, in.required_time("created_at"));
    f.created_at = std::move(t.first);
    f.created_at_ms = t.second.ms;
    std::optional<std::pair<std::string, utc_instant>> until;
    AGENTCTX_RELAY_READ(until, in.optional_time("valid_to"));
    if (until) {
      // Checked to the millisecond: versions before exact instants wrote
      // facts ended a fraction of a millisecond before they began (they
      // compared milliseconds); such a fact reads as one that never held.
      // New facts are checked exactly where they are made (assert_fact).
      if (until->second.ms < f.valid_from_at.ms) return detail::schema_error("valid_to", "must not be before valid_from");
      f.valid_to = std::move(until->first);
      f.valid_to_at = std::move(until->second);
    }
    AGENTCTX_RELAY_READ(f.source_package_id, in.optional_string("source_package_id"));
    if (const json::value* c = in.get("confidence")) {
      if (!c->is_number() || !(c->as_number() >= 0.0 && c->as_number() <= 1.0)) {
        return detail::schema_error("confidence", "must be a number from 0.0 to 1.0");
      }
      f.confidence = c->as_number();
    }
    if (const json::value* by = in.get("asserted_by")) {
      AGENTCTX_RELAY_READ(f.asserted_by, detail::member_reader::read_actor(*by, "asserted_by"));
    }
    AGENTCTX_RELAY_READ(f.tags, in.string_array("tags"));
  }
  f.wire = std::move(wire);
  return f;
}

/// Checks a Project and reads its fields.
inline result<project> read_project(json::value wire) {
  if (!wire.is_object()) return detail::schema_error("the project", "must be a JSON object");
  project p;
  {
    detail::member_reader in(wire, "");
    AGENTCTX_RELAY_READ(p.project_id, in.required_string("project_id"));
    std::optional<std::string> name;
    AGENTCTX_RELAY_READ(name, in.optional_string("name"));
    p.name = name.value_or(p.project_id);
    AGENTCTX_RELAY_READ(p.description, in.string_or_default("description"));
    std::pair<std::string, utc_instant> created;
    AGENTCTX_RELAY_READ(created, in.required_time("created_at"));
    p.created_at = std::move(created.first);
    p.created_at_ms = created.second.ms;
    std::optional<std::pair<std::string, utc_instant>> archived;
    AGENTCTX_RELAY_READ(archived, in.optional_time("archived_at"));
    if (archived) p.archived_at = std::move(archived->first);
  }
  p.wire = std::move(wire);
  return p;
}

/// Checks a Session (section 5.5) and reads its fields.
inline result<session> read_session(json::value wire) {
  if (!wire.is_object()) return detail::schema_error("the session", "must be a JSON object");
  session s;
  {
    detail::member_reader in(wire, "");
    AGENTCTX_RELAY_READ(s.session_id, in.required_string("session_id"));
    AGENTCTX_RELAY_READ(s.project_id, in.required_string("project_id"));
    AGENTCTX_RELAY_READ(s.actor_id, in.required_string("actor_id"));
    std::string type;
    AGENTCTX_RELAY_READ(type, in.required_string("actor_type"));
    const auto parsed = parse_actor_type(type);
    if (!parsed) return detail::schema_error("actor_type", "must be one of human, agent, script (got " + quote_for_message(type) + ")");
    s.type = *parsed;
    AGENTCTX_RELAY_READ(s.callsign, in.optional_string("callsign"));
    std::pair<std::string, utc_instant> started;
    AGENTCTX_RELAY_READ(started, in.required_time("started_at"));
    s.started_at = std::move(started.first);
    s.started_at_ms = started.second.ms;
    std::optional<std::pair<std::string, utc_instant>> ended;
    AGENTCTX_RELAY_READ(ended, in.optional_time("ended_at"));
    if (ended) s.ended_at = std::move(ended->first);
    AGENTCTX_RELAY_READ(s.packages_deposited, in.string_array("packages_deposited"));
  }
  s.wire = std::move(wire);
  return s;
}

#undef AGENTCTX_RELAY_READ

}  // namespace agentctx::relay
