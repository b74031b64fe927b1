// agentctx/context/proposals.hpp: propose and confirm (seed 003, ADR-031).
// An agent proposes a change to taste.md or to an item's notes.md; a human
// (or whoever the caller trusts) confirms or declines it. Proposals persist
// across restarts, confirmation refuses a target that changed since the
// proposal (Conflict), and every decision is logged with actor and time.
//
//   context::proposal_book book(fs, options);                  // the loader's layout
//   auto p = book.propose({.target = "notes", .item_id = "iguana-01", .mode = "append",
//                          .content = "- WB still too cool", .proposed_by = "agent"});
//   book.pending();                                            // oldest first
//   book.confirm(p->id, "jordan");                             // applies it, or errc::conflict
//   book.decline(other_id, "jordan", "not now");
//   book.decisions(20);                                        // the decision log, newest first
//
// Files (layout.proposals and layout.decisions, relative to the root):
//   .read-context/proposals/<id>.json   one proposal, replaced atomically when decided
//   .read-context/decisions.jsonl       one line per decision, appended
//   .read-context/proposals/.lock       writers' lock
//
// A proposal records the target file's hash when it was made ("base_hash":
// the hash of "" for a file that did not exist). confirm() applies it only
// while the file still has that hash; it is idempotent across a crash
// between applying and recording (a target that already holds exactly the
// result completes the confirmation).
#pragma once

#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/context/loader.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/safe_name.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::context {

struct proposal {
  std::string id;
  std::string target;  ///< "taste" or "notes"
  std::string item_id;  ///< for notes
  std::string mode;     ///< "append" or "replace"
  std::string content;
  std::string reason;
  std::string proposed_by;
  std::string proposed_at;  ///< RFC 3339 UTC
  std::string path;         ///< the target file, relative to the root
  std::string base_hash;    ///< the target's hash when proposed
  std::string status = "pending";  ///< pending, confirmed, declined
  std::string decided_by;
  std::string decided_at;
  std::string decision_note;
  std::string result_hash;  ///< the target's hash after a confirmation
};

/// What propose() needs.
struct proposal_request {
  std::string target;
  std::string item_id;
  std::string mode = "append";
  std::string content;
  std::string reason;
  std::string proposed_by = "agent";
};

/// One line of the decision log (proposed, confirmed or declined).
struct decision_record {
  std::string at;  ///< RFC 3339 UTC
  std::string proposal_id;
  std::string decision;  ///< "proposed", "confirmed" or "declined"
  std::string actor;
  std::string target;
  std::string item_id;
  std::string path;
  std::string base_hash;
  std::string result_hash;  ///< after a confirmation
  std::string note;
};

/// The newest decisions of the log.
struct decision_log {
  std::string path;
  bool exists = false;
  std::vector<decision_record> decisions;  ///< newest first
  bool partial_last_line = false;          ///< a line torn by a crash was skipped
  std::size_t skipped_lines = 0;           ///< lines that are not decisions, among those read
};

namespace detail {

inline std::string proposal_json(const proposal& p) {
  std::string out;
  json::writer w(out, json::layout::pretty);
  w.begin_object();
  w.key("id").value(p.id).key("target").value(p.target);
  if (!p.item_id.empty()) w.key("item_id").value(p.item_id);
  w.key("mode").value(p.mode).key("content").value(p.content).key("reason").value(p.reason);
  w.key("proposed_by").value(p.proposed_by).key("proposed_at").value(p.proposed_at);
  w.key("path").value(p.path).key("base_hash").value(p.base_hash).key("status").value(p.status);
  if (p.status != "pending") {
    w.key("decided_by").value(p.decided_by).key("decided_at").value(p.decided_at);
    w.key("decision_note").value(p.decision_note);
    if (!p.result_hash.empty()) w.key("result_hash").value(p.result_hash);
  }
  w.end_object();
  out += '\n';
  return out;
}

inline result<proposal> parse_proposal(std::string_view text, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(text.data(), text.size()).get_object().get(object) != simdjson::SUCCESS) {
    return fail(errc::corrupt, "not a JSON object", path);
  }
  proposal p;
  const auto member = [&](std::string_view key, std::string& into, bool required) {
    std::string_view value;
    if (object.at_key(key).get_string().get(value) == simdjson::SUCCESS) {
      into = std::string(value);
      return true;
    }
    return !required;
  };
  const bool complete = member("id", p.id, true) && member("target", p.target, true) &&
                        member("item_id", p.item_id, false) && member("mode", p.mode, true) &&
                        member("content", p.content, true) && member("reason", p.reason, false) &&
                        member("proposed_by", p.proposed_by, true) && member("proposed_at", p.proposed_at, true) &&
                        member("path", p.path, true) && member("base_hash", p.base_hash, true) &&
                        member("status", p.status, true) && member("decided_by", p.decided_by, false) &&
                        member("decided_at", p.decided_at, false) && member("decision_note", p.decision_note, false) &&
                        member("result_hash", p.result_hash, false);
  if (!complete) return fail(errc::corrupt, "a proposal lacks a required member", path);
  return p;
}

/// The target after applying `p` to `current`.
inline std::string applied(const proposal& p, std::string_view current) {
  std::string body = p.content;
  if (!body.empty() && body.back() != '\n') body += '\n';
  if (p.mode == "replace") return body;
  std::string out(current);
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!out.empty()) out += '\n';
  return out + body;
}

/// True when `current` is exactly what applying `p` to the version with
/// p.base_hash gives (a confirmation whose record a crash cut off).
inline bool already_applied(const proposal& p, std::string_view current) {
  std::string body = p.content;
  if (!body.empty() && body.back() != '\n') body += '\n';
  if (p.mode == "replace") return current == body && sha256_text(current) != p.base_hash;
  if (!current.ends_with(body)) return false;
  const std::string_view before = current.substr(0, current.size() - body.size());
  if (before.empty()) return p.base_hash == sha256_text("");
  // applied() adds a newline to a base without one, then a blank line.
  if (!before.ends_with("\n\n")) return false;
  return sha256_text(before.substr(0, before.size() - 1)) == p.base_hash ||
         sha256_text(before.substr(0, before.size() - 2)) == p.base_hash;
}

}  // namespace detail

class proposal_book {
 public:
  /// `fs` is the root, as for the loader; it must outlive the book.
  proposal_book(io::file_system& fs, loader_options options) : fs_(&fs), options_(std::move(options)) {}

  /// Records a proposal. Errors: invalid_argument (target not taste or
  /// notes, notes without a safe item id, mode not append or replace, empty
  /// content or content that is not UTF-8, an actor that is not a safe name),
  /// outside_root, io_error.
  result<proposal> propose(const proposal_request& request) {
    proposal p;
    p.target = request.target;
    p.mode = request.mode;
    p.content = request.content;
    p.reason = request.reason;
    p.proposed_by = request.proposed_by;
    if (p.target == "taste") {
      p.path = options_.layout.taste;
    } else if (p.target == "notes") {
      AGENTCTX_TRY(check_safe_name(request.item_id, "item id"));
      p.item_id = request.item_id;
      p.path = layout::resolve(options_.layout.notes, p.item_id);
    } else {
      return fail(errc::invalid_argument, "target must be \"taste\" or \"notes\"");
    }
    if (p.mode != "append" && p.mode != "replace") return fail(errc::invalid_argument, "mode must be \"append\" or \"replace\"");
    if (p.content.find_first_not_of(" \t\n") == std::string::npos) return fail(errc::invalid_argument, "content is empty");
    if (!is_valid_utf8(p.content)) return fail(errc::invalid_argument, "content is not valid UTF-8");
    AGENTCTX_TRY(check_safe_name(p.proposed_by, "proposed_by"));
    auto lock = lock_book();
    if (!lock) return unexpected(std::move(lock).error());
    auto current = read_target(p.path);
    if (!current) return unexpected(std::move(current).error());
    p.base_hash = sha256_text(*current);
    const std::uint64_t now = now_ms();
    p.proposed_at = format_rfc3339_utc_ms(now);
    p.id = new_id(p, now);
    AGENTCTX_TRY(write_proposal(p));
    AGENTCTX_TRY(log_decision(p, "proposed", p.proposed_by, p.proposed_at, ""));
    return p;
  }

  /// Every proposal, oldest first; only the pending ones when `pending_only`.
  result<std::vector<proposal>> list(bool pending_only = true) const {
    std::vector<proposal> out;
    auto names = fs_->list_dir(options_.layout.proposals);
    if (!names) {
      if (names.error().code == errc::not_found) return out;
      return unexpected(std::move(names).error());
    }
    for (const std::string& name : *names) {
      if (name.starts_with('.') || !name.ends_with(".json")) continue;
      auto p = read_proposal(name.substr(0, name.size() - 5));
      if (!p) return unexpected(std::move(p).error());
      if (!pending_only || p->status == "pending") out.push_back(std::move(*p));
    }
    std::sort(out.begin(), out.end(), [](const proposal& a, const proposal& b) {
      return a.proposed_at != b.proposed_at ? a.proposed_at < b.proposed_at : a.id < b.id;
    });
    return out;
  }

  /// One proposal. Errors: invalid_argument (not a proposal id), not_found.
  result<proposal> get(std::string_view id) const {
    AGENTCTX_TRY(check_safe_name(id, "proposal id"));
    return read_proposal(std::string(id));
  }

  /// Applies a pending proposal to its target and records the decision.
  /// Errors: not_found, invalid_transition (already decided), conflict (the
  /// target changed since the proposal), outside_root, io_error.
  result<proposal> confirm(std::string_view id, std::string_view actor, std::string_view note = {}) {
    AGENTCTX_TRY(check_safe_name(actor, "actor"));
    auto lock = lock_book();
    if (!lock) return unexpected(std::move(lock).error());
    auto found = pending_proposal(id);
    if (!found) return unexpected(std::move(found).error());
    proposal& p = *found;
    auto current = read_target(p.path);
    if (!current) return unexpected(std::move(current).error());
    const std::string current_hash = sha256_text(*current);
    if (current_hash != p.base_hash) {
      // Applied before a crash cut the confirmation short: only record it.
      if (detail::already_applied(p, *current)) return decide(p, "confirmed", actor, note, current_hash);
      return fail(errc::conflict,
                  p.path + " changed since proposal " + p.id + " was made (it was " + p.base_hash.substr(0, 19) +
                      "..., it is " + current_hash.substr(0, 19) + "...): decline it and propose again");
    }
    const std::string next = detail::applied(p, *current);
    const std::string folder = io::parent_directory(p.path);
    if (folder != ".") AGENTCTX_TRY(ensure_folders(folder));
    AGENTCTX_TRY(io::write_file_atomically(*fs_, p.path, std::as_bytes(std::span(next.data(), next.size()))));
    return decide(p, "confirmed", actor, note, sha256_text(next));
  }

  /// Declines a pending proposal and records the decision.
  /// Errors: not_found, invalid_transition (already decided), io_error.
  result<proposal> decline(std::string_view id, std::string_view actor, std::string_view note = {}) {
    AGENTCTX_TRY(check_safe_name(actor, "actor"));
    auto lock = lock_book();
    if (!lock) return unexpected(std::move(lock).error());
    auto found = pending_proposal(id);
    if (!found) return unexpected(std::move(found).error());
    return decide(*found, "declined", actor, note, "");
  }

  /// The newest `limit` decisions (0: all), read from the end of the log.
  /// A line that is not a decision (hand-edited, damaged) is counted in
  /// skipped_lines, never shown. Errors: outside_root, corrupt (a line over
  /// 1 MiB), io_error.
  result<decision_log> decisions(std::size_t limit = 0) const {
    decision_log out;
    out.path = options_.layout.decisions;
    std::size_t incomplete = 0;
    auto scan = detail::scan_jsonl_from_end(*fs_, out.path, [&](simdjson::dom::object object, std::uint64_t) {
      decision_record d;
      const auto member = [&](std::string_view key, std::string& into) {
        into = json::optional_string(object, key).value_or("");
      };
      member("at", d.at);
      member("proposal_id", d.proposal_id);
      member("decision", d.decision);
      member("actor", d.actor);
      member("target", d.target);
      member("item_id", d.item_id);
      member("path", d.path);
      member("base_hash", d.base_hash);
      member("result_hash", d.result_hash);
      member("note", d.note);
      if (d.at.empty() || d.proposal_id.empty() || d.decision.empty() || d.actor.empty()) {
        ++incomplete;
        return true;
      }
      out.decisions.push_back(std::move(d));
      return limit == 0 || out.decisions.size() < limit;
    });
    if (!scan) return unexpected(std::move(scan).error());
    out.exists = scan->exists;
    out.partial_last_line = scan->partial_last_line;
    out.skipped_lines = scan->skipped_lines + incomplete;
    return out;
  }

 private:
  std::uint64_t now_ms() const { return options_.clock ? options_.clock() : now_unix_ms(); }

  std::string proposal_path(const std::string& id) const { return options_.layout.proposals + "/" + id + ".json"; }

  result<proposal> read_proposal(const std::string& id) const {
    const std::string path = proposal_path(id);
    auto mapped = fs_->map(path);
    if (!mapped) {
      if (mapped.error().code == errc::not_found) return fail(errc::not_found, "no proposal " + id);
      return unexpected(std::move(mapped).error());
    }
    return detail::parse_proposal(
        std::string_view(reinterpret_cast<const char*>(mapped->data()), mapped->size()), path);
  }

  result<proposal> pending_proposal(std::string_view id) const {
    auto p = get(id);
    if (!p) return p;
    if (p->status != "pending") {
      return fail(errc::invalid_transition, "proposal " + p->id + " was already " + p->status + " by " +
                                                p->decided_by + " at " + p->decided_at);
    }
    return p;
  }

  /// The target's bytes; "" when it does not exist.
  result<std::string> read_target(const std::string& path) const {
    auto mapped = fs_->map(path);
    if (!mapped) {
      if (mapped.error().code == errc::not_found) return std::string();
      return unexpected(std::move(mapped).error());
    }
    return std::string(reinterpret_cast<const char*>(mapped->data()), mapped->size());
  }

  result<void> ensure_folders(const std::string& folder) {
    std::string path;
    std::size_t at = 0;
    while (at <= folder.size()) {
      const std::size_t slash = std::min(folder.find('/', at), folder.size());
      path = folder.substr(0, slash);
      auto there = fs_->exists(path);
      if (!there) return unexpected(std::move(there).error());
      AGENTCTX_TRY(fs_->create_dir(path));  // refuses a file where the folder belongs
      if (!*there) AGENTCTX_TRY(fs_->sync_dir(io::parent_directory(path)));  // the new entry survives a crash
      at = slash + 1;
    }
    return {};
  }

  result<std::unique_ptr<io::file_lock>> lock_book() {
    AGENTCTX_TRY(ensure_folders(options_.layout.proposals));
    return fs_->lock(options_.layout.proposals + "/.lock", io::lock_mode::exclusive, true);
  }

  std::string new_id(const proposal& p, std::uint64_t now) const {
    static std::atomic<std::uint64_t> counter{0};
    const std::string seed = p.path + '\n' + p.content + '\n' + std::to_string(now) + '\n' +
                             std::to_string(static_cast<long long>(::getpid())) + '\n' + std::to_string(counter++);
    return "prop_" + sha256_text(seed).substr(sha256_text_prefix.size(), 16);
  }

  result<void> write_proposal(const proposal& p) {
    const std::string text = detail::proposal_json(p);
    return io::write_file_atomically(*fs_, proposal_path(p.id), std::as_bytes(std::span(text.data(), text.size())));
  }

  result<proposal> decide(proposal p, std::string_view status, std::string_view actor, std::string_view note,
                          std::string result_hash) {
    p.status = std::string(status);
    p.decided_by = std::string(actor);
    p.decided_at = format_rfc3339_utc_ms(now_ms());
    p.decision_note = std::string(note);
    p.result_hash = std::move(result_hash);
    AGENTCTX_TRY(write_proposal(p));
    AGENTCTX_TRY(log_decision(p, p.status, p.decided_by, p.decided_at, p.decision_note));
    return p;
  }

  /// Appends one line to the decision log and syncs it.
  result<void> log_decision(const proposal& p, std::string_view decision, std::string_view actor,
                            std::string_view at, std::string_view note) {
    std::string line;
    json::writer w(line);
    w.begin_object().key("at").value(at).key("proposal_id").value(p.id).key("decision").value(decision);
    w.key("actor").value(actor).key("target").value(p.target);
    if (!p.item_id.empty()) w.key("item_id").value(p.item_id);
    w.key("path").value(p.path).key("base_hash").value(p.base_hash);
    if (!p.result_hash.empty()) w.key("result_hash").value(p.result_hash);
    if (!note.empty()) w.key("note").value(note);
    w.end_object();
    line += '\n';
    const std::string& path = options_.layout.decisions;
    const std::string folder = io::parent_directory(path);
    if (folder != ".") AGENTCTX_TRY(ensure_folders(folder));
    auto existed = fs_->exists(path);
    if (!existed) return unexpected(std::move(existed).error());
    auto file = fs_->open(path, io::create_or_open);
    if (!file) return unexpected(std::move(file).error());
    if (!*existed) AGENTCTX_TRY(fs_->sync_dir(folder));
    auto size = (*file)->size();
    if (!size) return unexpected(std::move(size).error());
    if (*size > 0) {  // a line torn by a crash stays alone on its line
      std::byte last{};
      auto read = (*file)->read_at(*size - 1, std::span(&last, 1));
      if (!read) return unexpected(std::move(read).error());
      if (static_cast<char>(last) != '\n') line.insert(line.begin(), '\n');
    }
    AGENTCTX_TRY((*file)->append(std::as_bytes(std::span(line.data(), line.size()))));
    return (*file)->sync();
  }

  io::file_system* fs_;
  loader_options options_;
};

}  // namespace agentctx::context
