// agentctx/relay/store.hpp: an on-disk Agentic Protocol store (seed 001
// sections 8, 10 and 11, conformance level L3), embedded in the caller's
// process.
//
//   io::posix_file_system fs;
//   auto store = relay::store::open(fs, ".relay");          // created if missing
//   auto deposited = store->deposit_json(R"({"project_id":"demo", ...})");
//   (*deposited).package->hash;                              // "sha256:..."
//   auto recent = store->latest("demo", 5);
//
// Layout (docs/format/relay-store.md): a directory holding relay.log, an
// append-only log of CRC-framed JSON records (log_format.hpp), and
// store.lock. Every operation that changes state appends exactly one record
// and syncs it before it returns, so each is atomic: a deposit with the
// project it creates, an assert_fact with the supersession it implies, a
// status change with the package's new hash. The state in memory is the log
// replayed; opening replays it.
//
// Concurrency: one writer per store across processes (io/writer_lock.hpp:
// errc::locked "store is locked by pid N", or wait with wait_for_lock); any
// number of readers (read_only) in other processes, which take no lock, see
// the log up to its last complete record and catch up with refresh() (they
// read the log, never map it: a writer may cut a torn tail under them). One
// store object must not be used from two threads at once.
//
// Crashes: at open, a writer cuts an incomplete last record (a crash during
// an append: that operation was never acknowledged), keeping its bytes in
// relay.log.torn-<unix ms> (tail_cut() says so; one holding the same bytes
// already, left by a crash before the cut, is named instead). A record that fails its
// checksum with records after it, or that does not apply to the state before
// it, is damage: open fails with errc::corrupt naming the offset, and nothing
// is cut; store::repair() salvages such a log (keeping the damaged one). A failed append or sync poisons the writer: every later write fails
// until the store is reopened (the log's tail is then re-examined).
//
// Hashes: each package's content hash (hash.hpp) is stored in its record and
// recomputed when the log is replayed; a package whose bytes no longer match
// is quarantined: listed by quarantined() and verify(), never returned by
// pull, orient or search.
//
// Errors map to the protocol's codes (errors.hpp): invalid_argument = 400
// invalid_schema, invalid_transition = 400 invalid_transition, already_exists
// = 409 duplicate_package_id, archived = 403 project_archived, not_found =
// 404 package_not_found (or project_not_found).
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/io/writer_lock.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/hash.hpp"
#include "agentctx/relay/log_format.hpp"
#include "agentctx/relay/model.hpp"

namespace agentctx::relay {

inline constexpr std::string_view log_file_name = "relay.log";
inline constexpr std::string_view lock_file_name = "store.lock";

struct store_options {
  /// Open as a reader: no lock, no writes, nothing created or repaired.
  bool read_only = false;
  /// A writer waits for the lock instead of failing with errc::locked.
  bool wait_for_lock = false;
  /// A writer creates the directory and an empty log when there is none.
  bool create_if_missing = true;
  /// Wall clock in Unix ms (created_at, valid_from, status changes); default: now.
  std::function<std::uint64_t()> clock;
  /// Random source for generated ids and callsigns; default: random_device.
  std::function<std::uint64_t()> random;
  /// Threads that read the log when the store opens (and when a reader
  /// catches up): they parse records, and read and hash their packages,
  /// while the calling thread applies them in log order. 1 (the default)
  /// reads on the calling thread alone; the relay CLIs pass the machine's
  /// cores. The state is the same whatever the count.
  unsigned open_threads = 1;
};

/// One status change of a package (flag_for_review or review).
struct status_change {
  package_status status = package_status::complete;
  review_type review = review_type::none;
  std::string at;
  std::optional<std::string> note;
  std::string hash;  ///< content hash of the package in its new state
};

/// A package as the store holds it.
struct stored_package {
  relay::package package;        ///< its current state (status and review_type as last changed)
  std::string hash;              ///< content hash of the current state
  std::string deposited_hash;    ///< content hash as deposited
  package_status deposited_status = package_status::complete;
  review_type deposited_review = review_type::none;
  std::vector<status_change> changes;  ///< in order
  std::uint64_t sequence = 0;          ///< deposit order in the store, from 0
  bool quarantined = false;            ///< its stored hash does not match its bytes

  /// The package object as deposited (its status and review_type put back).
  json::value deposited_wire() const {
    json::value wire = package.wire;
    wire.set("status", std::string(to_string(deposited_status)));
    wire.set("review_type", std::string(to_string(deposited_review)));
    return wire;
  }
};

/// The order of pull latest, orient's recent packages and orchestrate's
/// digest: newest created_at first, the whole instant compared (fraction
/// digits past milliseconds too); equal times: the later deposit first.
inline bool newer_first(const stored_package* a, const stored_package* b) noexcept {
  if (a->package.created_at_instant != b->package.created_at_instant) {
    return a->package.created_at_instant > b->package.created_at_instant;
  }
  return a->sequence > b->sequence;
}

/// Deposit order, the earlier first: the order of ties in relevance.
inline bool deposited_earlier(const stored_package* a, const stored_package* b) noexcept {
  return a->sequence < b->sequence;
}

struct deposit_outcome {
  const stored_package* package = nullptr;  ///< valid until the next write or refresh
  bool created = false;                     ///< false: the identical package was already there
};

/// The inputs of assert_fact (section 8.6).
struct fact_assertion {
  std::string project_id;
  std::string subject;
  std::string predicate;
  std::string value;
  std::optional<std::string> source_package_id;
  std::optional<double> confidence;
  std::optional<actor> asserted_by;  ///< default: the source package's created_by
  std::vector<std::string> tags;
  std::optional<std::string> valid_from;  ///< RFC 3339 UTC; default: now
  /// Extension members of the fact (section 12.1), each name starting "x-",
  /// written and kept as given.
  json::value::object_type extensions;
  /// Extension members of asserted_by (only with asserted_by).
  json::value::object_type asserted_by_extensions;
};

struct assert_outcome {
  const fact* asserted = nullptr;          ///< the current fact (new, or the unchanged one)
  bool changed = false;                    ///< false: the identical value was already current
  std::optional<std::string> superseded;   ///< fact_id whose valid_to was set
};

/// The torn tail a writer's open cut from the log (store::tail_cut).
struct cut_tail {
  std::uint64_t offset = 0;  ///< where the log now ends
  std::uint64_t bytes = 0;   ///< how many bytes were cut
  std::string kept_as;       ///< the file beside the log that holds them; empty when they could not be kept
  std::string problem;       ///< what was wrong with the record at `offset`
  std::string not_kept;      ///< when kept_as is empty: why (the write's error, described)
};

/// What verify() found.
struct verify_report {
  std::size_t packages = 0;
  std::size_t status_changes = 0;
  std::size_t facts = 0;
  std::vector<std::string> quarantined;  ///< "project_id/package_id: why"
  /// The log ends in an incomplete record: the torn tail of an append a
  /// crash interrupted (never acknowledged; the next writer cuts it, keeping
  /// its bytes beside the log), or an append a writer is making now: where
  /// it starts and how long it is. Not damage.
  std::optional<std::uint64_t> torn_tail_offset;
  std::uint64_t torn_tail_bytes = 0;
  bool ok() const noexcept { return quarantined.empty(); }
};

/// Something store::repair() could not keep.
struct repair_loss {
  std::uint64_t offset = 0;  ///< in the damaged log
  std::uint64_t bytes = 0;
  std::string what;          ///< "damaged bytes: record checksum mismatch", "record does not apply: ..."
};

/// A project store::repair() recreated: the record that created it was
/// lost, and a later record writes to it.
struct repair_recreation {
  std::uint64_t offset = 0;  ///< in the damaged log: the first kept record that writes to the project
  std::string project_id;
  std::string created_at;    ///< that record's time (its created_at, or a session's started_at)
};

/// A fact store::repair() kept although what its record relied on is lost,
/// made to supersede what the key holds instead:
/// - it superseded a fact whose record was lost: it supersedes the key's
///   current fact instead (whose validity then runs on to this fact's
///   valid_from, over the lost fact's time), or nothing when there is none;
/// - it superseded nothing, the key's current fact having been ended by an
///   invalidation whose record was lost: it supersedes that fact (which then
///   stays valid until this fact's valid_from).
struct repair_relink {
  std::uint64_t offset = 0;                 ///< in the damaged log: the fact's record
  std::string fact_id;
  std::optional<std::string> lost_fact_id;  ///< the lost fact its record superseded; none: it superseded nothing
  std::optional<std::string> supersedes;    ///< what it supersedes now; none when the key had no current fact
};

/// What store::repair() found and did.
struct repair_report {
  std::uint64_t log_bytes = 0;        ///< of the log as found
  std::size_t records_kept = 0;       ///< records of the log as found that were kept
  std::vector<repair_loss> lost;      ///< in log order
  /// Projects whose creation was lost, recreated as {project_id, created_at}
  /// (their name and description, unless a later project record restates
  /// them, are lost) in a record written before the first kept record that
  /// writes to them.
  std::vector<repair_recreation> recreated;
  /// Facts whose record superseded what the kept records do not match (a
  /// lost fact, or nothing while a fact whose invalidation was lost is
  /// current), kept superseding what the key held instead.
  std::vector<repair_relink> relinked;
  bool header_rewritten = false;      ///< the header's fixed fields were damaged
  bool rewritten = false;             ///< relay.log was replaced (false: nothing to repair, or a dry run)
  std::string backup;                 ///< where the log as found was kept, when it was replaced
  /// The log as found does not open: the header is damaged, or records are
  /// lost, or kept only with a project recreated or a fact relinked.
  bool needed() const noexcept { return header_rewritten || !lost.empty() || !recreated.empty() || !relinked.empty(); }
};

struct repair_options {
  /// Report what would be kept and lost; change nothing.
  bool dry_run = false;
  /// Wait for the writer's lock instead of failing with errc::locked.
  bool wait_for_lock = false;
  /// Wall clock in Unix ms, for the backup's name; default: now.
  std::function<std::uint64_t()> clock;
};

namespace detail {

/// An id or value given to an operation, `name` its field: text that is not
/// UTF-8 is refused (invalid_utf8_input, 400).
inline result<void> check_utf8_input(std::string_view name, std::string_view text) {
  if (is_valid_utf8(text)) return {};
  return unexpected(invalid_utf8_input(name));
}

inline std::uint64_t default_random() {
  static std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// Extension members given to an operation (`where` prefixes their names in
// messages): each name must start with "x-" (section 12.1), once.
inline result<void> check_extension_names(const json::value::object_type& members, std::string_view where) {
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string& name = members[i].first;
    if (!name.starts_with("x-")) {
      return fail(errc::invalid_argument, std::string(where) + quote_for_message(name) +
                                              " is not an extension member: their names start with x-");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (members[j].first == name) {
        return fail(errc::invalid_argument, std::string(where) + quote_for_message(name) + " is given twice");
      }
    }
  }
  return {};
}

inline json::value actor_wire(const actor& a) {
  json::value out = json::value::object_type{};
  out.set("id", a.id);
  out.set("type", std::string(to_string(a.type)));
  if (a.session_id) out.set("session_id", *a.session_id);
  return out;
}

inline const std::string* string_member(const json::value& object, std::string_view name) {
  const json::value* v = object.find(name);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

// An optional string member of a record or line: null when absent or null,
// false when of another type.
inline bool optional_string_member(const json::value& object, std::string_view name, const std::string*& out) {
  const json::value* v = object.find(name);
  out = v != nullptr && v->is_string() ? &v->as_string() : nullptr;
  return v == nullptr || v->is_null() || v->is_string();
}

// The log record that invalidates the current fact `f` at `valid_to`.
inline json::value invalidation_record(const fact& f, std::string valid_to) {
  return json::value::object_type{{"type", "invalidate"},
                                  {"project_id", f.project_id},
                                  {"fact_ids", json::value::array_type{f.fact_id}},
                                  {"valid_to", std::move(valid_to)}};
}

}  // namespace detail

class store {
 public:
  store(store&&) noexcept = default;
  store& operator=(store&&) noexcept = default;
  store(const store&) = delete;
  store& operator=(const store&) = delete;

  /// Opens (a writer creates, unless create_if_missing is false) the store
  /// in `dir`. Errors: not_found (no store, reader or !create_if_missing),
  /// locked, bad_magic / unsupported_version / corrupt (with the offset),
  /// I/O errors.
  static result<store> open(io::file_system& fs, std::string dir, store_options options = {}) {
    store s(fs, std::move(dir), std::move(options));
    AGENTCTX_TRY(s.open_log());
    return s;
  }

  /// Closes `s`, and removes it again when its writer created it and wrote
  /// nothing to it: relay.log was not there when the writer took the lock,
  /// and no record has been appended since (a first deposit that was
  /// refused, say). Then relay.log, store.lock and, when this open made the
  /// folder and nothing else is left in it, the folder are removed, all
  /// while the lock is held, and the lock is let go last. A writer that was
  /// waiting for the lock then finds no store and creates one afresh (the
  /// lock it gets is on the file at the lock's path: io::file_system::lock).
  /// Any other store, and a reader, is only closed. Returns whether the
  /// store was removed. Errors: those of removing (the store is closed all
  /// the same; a relay.log that could not be removed stays, an empty store;
  /// what was removed before a removal failed is synced).
  static result<bool> discard_if_unused(store&& s) {
    store closing = std::move(s);
    if (closing.options_.read_only || !closing.created_log_ || closing.record_count_ != 0 || !closing.lock_) {
      return false;
    }
    io::file_system& fs = *closing.fs_;
    closing.log_.reset();
    AGENTCTX_TRY(fs.remove(closing.path_of(log_file_name)));  // nothing removed yet, nothing to sync
    result<void> lock_file = fs.remove(closing.path_of(lock_file_name));
    std::string synced = closing.dir_;
    result<void> folder;
    if (lock_file && closing.made_dir_) {
      // Something else in the folder (a store another writer has begun since
      // store.lock went, a cache beside the store) keeps it.
      folder = fs.remove_dir(closing.dir_);
      if (folder) {
        synced = io::parent_directory(closing.dir_);
      } else if (folder.error().sys_errno == ENOTEMPTY || folder.error().sys_errno == EEXIST) {
        folder = {};
      }
    }
    // What was removed is made durable even when a later removal failed.
    AGENTCTX_TRY(fs.sync_dir(synced));
    AGENTCTX_TRY(lock_file);
    AGENTCTX_TRY(folder);
    return true;
  }  // the lock is let go here, after the removals

  const std::string& directory() const noexcept { return dir_; }
  bool read_only() const noexcept { return options_.read_only; }
  /// The format version of relay.log's header (log_format.hpp): 1 until a
  /// writer of this build appends to a version 1 log, else 2.
  std::uint32_t format_version() const noexcept { return log_version_; }

  /// Reads records appended by another process since the last look
  /// (readers); a no-op for the writer. When relay.log was replaced since
  /// (store::repair), the store is read anew. A record that does not apply
  /// fails the refresh, and every later one, at that record; the records
  /// before it are read.
  result<void> refresh() {
    if (!options_.read_only) return {};
    // One open of the log for the check and the read: a log that repair
    // renames in between is read whole next time, not mixed up now.
    auto file = fs_->open(path_of(log_file_name), io::read_only);
    if (!file) return unexpected(std::move(file).error());
    auto same = same_log_as_loaded(**file);
    if (!same) return unexpected(std::move(same).error());
    if (!*same) {
      auto fresh = store::open(*fs_, dir_, options_);
      if (!fresh) return unexpected(std::move(fresh).error());
      *this = std::move(*fresh);
      return {};
    }
    // A writer writes a later format version into the header in place
    // before its first record (upgrade_log_version): records after it are
    // read only in a version this build reads.
    std::array<std::byte, log_header_size> header{};
    auto got = (*file)->read_at(0, header);
    if (!got) return unexpected(std::move(got).error());
    AGENTCTX_TRY(read_header(std::span<const std::byte>(header.data(), *got)));
    return load_from(loaded_end_, file->get());
  }

  // --- projects --------------------------------------------------------------------

  /// Creates a project. Errors: already_exists when it exists; the schema
  /// errors of read_project (an empty project_id).
  result<const project*> create_project(std::string project_id, std::optional<std::string> name = {},
                                        std::optional<std::string> description = {}) {
    if (projects_.count(project_id) != 0) {
      return fail(errc::already_exists, "project " + quote_for_message(project_id) + " already exists");
    }
    json::value wire = new_project_wire(project_id);
    if (name) wire.set("name", *name);
    if (description) wire.set("description", *description);
    if (auto checked = read_project(wire); !checked) return unexpected(std::move(checked).error());
    json::value record = json::value::object_type{{"type", "project"}, {"project", std::move(wire)}};
    AGENTCTX_TRY(commit(record));
    return &projects_.at(project_id).info;
  }

  /// Archives (soft delete, section 5.2) or restores a project.
  /// Errors: not_found, invalid_argument (an id that is not UTF-8:
  /// project_not_found says so).
  result<const project*> set_archived(const std::string& project_id, bool archived) {
    auto* state = find_project_state(project_id);
    if (state == nullptr) return no_project(project_id);
    if (state->info.archived() == archived) return &state->info;
    json::value wire = state->info.wire;
    if (archived) {
      wire.set("archived_at", now_text());
    } else {
      wire.erase("archived_at");
    }
    json::value record = json::value::object_type{{"type", "project"}, {"project", std::move(wire)}};
    AGENTCTX_TRY(commit(record));
    return &projects_.at(project_id).info;
  }

  const project* find_project(const std::string& project_id) const {
    auto it = projects_.find(project_id);
    return it == projects_.end() ? nullptr : &it->second.info;
  }

  /// Every project, by id.
  std::vector<const project*> projects() const {
    std::vector<const project*> out;
    for (const auto& [id, state] : projects_) out.push_back(&state.info);
    return out;
  }

  // --- deposit and pull --------------------------------------------------------------

  /// Deposits a package (section 8.1): validates it, generates package_id
  /// when absent, hashes it, appends it. The identical package again returns
  /// the stored one (created = false). Errors: invalid_argument (schema),
  /// already_exists (same id, other content: 409), archived (403), corrupt
  /// (the id's stored package is quarantined).
  result<deposit_outcome> deposit(json::value wire) {
    AGENTCTX_TRY(check_writable());
    if (!wire.is_object()) return detail::schema_error("the package", "must be a JSON object");
    if (wire.find("package_id") == nullptr || wire.find("package_id")->is_null()) {
      wire.set("package_id", generate_id("pkg_", random_));
    }
    auto checked = read_package(wire);
    if (!checked) return unexpected(std::move(checked).error());
    auto hash = content_hash(wire, canonicalizer_);
    if (!hash) {
      // A tree the caller built that has no canonical form (text it read
      // was checked as it was parsed): its input is invalid.
      if (hash.error().code == errc::invalid_utf8) return fail(errc::invalid_argument, invalid_utf8_message(wire, false));
      return fail(errc::invalid_argument, "the package has no canonical form: " + hash.error().message);
    }
    if (const stored_package* existing = find_in_project(checked->project_id, checked->package_id)) {
      // A quarantined package's stored bytes no longer match its hash: it is
      // neither returned as the identical package nor compared with.
      if (existing->quarantined) {
        return fail(errc::corrupt, "package " + quote_for_message(checked->package_id) + " is quarantined: " +
                                       quarantine_reason(*existing));
      }
      if (existing->deposited_hash == *hash) return deposit_outcome{existing, false};
      return fail(errc::already_exists, "package " + quote_for_message(checked->package_id) +
                                            " already exists in project " + quote_for_message(checked->project_id) +
                                            " with other content (duplicate_package_id)");
    }
    json::value record = json::value::object_type{{"type", "package"}, {"hash", *hash}, {"package", std::move(wire)}};
    AGENTCTX_TRY(add_project_if_new(record, checked->project_id));
    // Applied after the append, the package is the one read and hashed above.
    prepared_record prepared;
    prepared.read = std::move(checked);
    prepared.hash = std::move(hash);
    AGENTCTX_TRY(commit(record, &prepared));
    return deposit_outcome{&packages_.back(), true};
  }

  /// deposit() of JSON text (one object).
  result<deposit_outcome> deposit_json(std::string_view text) {
    auto wire = canonicalizer_.parse(text);
    if (!wire) {
      // "at byte 7: the package is not JSON: expected ..."
      error e = make_error(errc::invalid_argument, json::refusal_of("the package", wire.error()));
      e.offset = wire.error().offset;
      return unexpected(std::move(e));
    }
    return deposit(std::move(*wire));
  }

  /// The package `package_id`; with an empty project_id, in whichever
  /// project holds it. Errors: not_found (404 package_not_found);
  /// invalid_argument when the id exists in several projects and none is
  /// named, or when an id is not UTF-8 (no package's is).
  result<const stored_package*> find_package(const std::string& package_id, const std::string& project_id = {}) const {
    AGENTCTX_TRY(detail::check_utf8_input("package_id", package_id));
    AGENTCTX_TRY(detail::check_utf8_input("project_id", project_id));
    if (!project_id.empty()) {
      if (const stored_package* p = find_in_project(project_id, package_id)) return p;
      return fail(errc::not_found, "package " + quote_for_message(package_id) + " does not exist in project " +
                                       quote_for_message(project_id));
    }
    auto it = by_package_id_.find(package_id);
    if (it == by_package_id_.end()) return fail(errc::not_found, "package " + quote_for_message(package_id) + " does not exist");
    if (it->second.size() > 1) {
      return fail(errc::invalid_argument, "package id " + quote_for_message(package_id) + " exists in " +
                                              std::to_string(it->second.size()) + " projects: name the project");
    }
    return &packages_[it->second.front()];
  }

  /// pull mode=specific (section 8.2): find_package(), but a quarantined
  /// package is refused (errc::corrupt naming why) instead of returned.
  result<const stored_package*> pull_specific(const std::string& package_id, const std::string& project_id = {}) const {
    auto found = find_package(package_id, project_id);
    if (!found) return found;
    if ((*found)->quarantined) {
      return fail(errc::corrupt, "package " + quote_for_message(package_id) + " is quarantined: " +
                                     quarantine_reason(**found));
    }
    return found;
  }

  /// The `limit` most recent packages of a project, newest first
  /// (newer_first), quarantined ones left out.
  /// Errors: not_found for an unknown project.
  result<std::vector<const stored_package*>> latest(const std::string& project_id, std::size_t limit = 5) const {
    const auto* state = find_project_state(project_id);
    if (state == nullptr) return no_project(project_id);
    std::vector<const stored_package*> all;
    for (std::size_t index : state->packages) {
      if (!packages_[index].quarantined) all.push_back(&packages_[index]);
    }
    const std::size_t n = std::min(limit, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), newer_first);
    all.resize(n);
    return all;
  }

  /// Every package of a project in deposit order (quarantined ones included).
  result<std::vector<const stored_package*>> packages_of(const std::string& project_id) const {
    const auto* state = find_project_state(project_id);
    if (state == nullptr) return no_project(project_id);
    std::vector<const stored_package*> out;
    for (std::size_t index : state->packages) out.push_back(&packages_[index]);
    return out;
  }

  /// Packages whose hash did not match their bytes when the log was read.
  std::vector<const stored_package*> quarantined() const {
    std::vector<const stored_package*> out;
    for (const stored_package& p : packages_) {
      if (p.quarantined) out.push_back(&p);
    }
    return out;
  }

  // --- review (L3) -------------------------------------------------------------------

  /// flag_for_review (section 8.5): status awaiting_review with `type`,
  /// human or agent, from any status but complete. A package already
  /// awaiting review is flagged again: a status change that sets `type` and
  /// records `note` (it keeps its place among those awaiting review);
  /// flagged again with its own review_type and no note, it is returned as
  /// it is and nothing is written. An empty note is no note, here and in
  /// review(). Errors: not_found; invalid_argument (400
  /// invalid_schema) for review_type none; invalid_transition from complete.
  result<const stored_package*> flag_for_review(const std::string& package_id, review_type type,
                                                std::optional<std::string> note = {},
                                                const std::string& project_id = {}) {
    return change_status(package_id, project_id, package_status::awaiting_review, type, std::move(note), true);
  }

  /// A reviewer's decision or an author's resubmission: moves the package to
  /// `to` along the allowed transitions (is_allowed_transition). `type` sets
  /// the review_type and is taken only with `to` awaiting_review; without it
  /// the package keeps its review_type. A package enters awaiting_review
  /// only with a reviewer, human or agent (section 8.5): a draft whose
  /// review_type is none needs `type`. Errors: not_found; invalid_transition;
  /// invalid_argument (400 invalid_schema) when awaiting_review would have
  /// review_type none, or `type` comes with another status.
  result<const stored_package*> review(const std::string& package_id, package_status to,
                                       std::optional<std::string> note = {}, const std::string& project_id = {},
                                       std::optional<review_type> type = {}) {
    if (type && to != package_status::awaiting_review) {
      return detail::schema_error("review_type", "is set only when the package enters awaiting_review (got status " +
                                                     std::string(to_string(to)) + ")");
    }
    return change_status(package_id, project_id, to, type, std::move(note));
  }

  /// Packages of a project in awaiting_review, oldest first: by when each
  /// entered it (the status change that moved it there from another status,
  /// or its created_at when deposited awaiting review; flagging it again
  /// does not move it), then in deposit order.
  result<std::vector<const stored_package*>> awaiting_review(const std::string& project_id) const {
    const auto* state = find_project_state(project_id);
    if (state == nullptr) return no_project(project_id);
    std::vector<std::pair<utc_instant, const stored_package*>> waiting;
    for (std::size_t index : state->packages) {
      const stored_package& p = packages_[index];
      if (p.quarantined || p.package.status != package_status::awaiting_review) continue;
      const std::string* entered = nullptr;  // null: deposited awaiting review
      package_status before = p.deposited_status;
      for (const status_change& change : p.changes) {
        if (change.status == package_status::awaiting_review && before != package_status::awaiting_review) {
          entered = &change.at;
        }
        before = change.status;
      }
      utc_instant since = entered == nullptr ? p.package.created_at_instant
                                             : parse_rfc3339_utc_instant(*entered).value_or(utc_instant{});
      waiting.emplace_back(std::move(since), &p);
    }
    std::stable_sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<const stored_package*> out;
    for (const auto& [since, p] : waiting) out.push_back(p);
    return out;
  }

  // --- facts (L2) ----------------------------------------------------------------------

  /// assert_fact (section 8.6, 7.3): supersedes the current fact of (project,
  /// subject, predicate) in the same record. The current value again is a
  /// no-op (changed = false) unless the assertion gives a source_package_id,
  /// confidence, asserted_by or tags other than the current fact's: then it
  /// supersedes like a new value (valid_from aside, what is not given is not
  /// compared; of the extensions, those given). asserted_by defaults to a copy
  /// of the source package's created_by (x-* members kept). Errors: invalid_argument (a field, or a valid_from
  /// earlier than the current fact's), not_found (404 package_not_found:
  /// source_package_id is not a package of the project), corrupt (the source
  /// package is quarantined: its created_by is not to be trusted), archived.
  result<assert_outcome> assert_fact(const fact_assertion& input) {
    AGENTCTX_TRY(check_writable());
    const std::string now = now_text();
    json::value wire = json::value::object_type{};
    wire.set("fact_id", generate_id("fact_", random_));
    wire.set("project_id", input.project_id);
    wire.set("subject", input.subject);
    wire.set("predicate", input.predicate);
    wire.set("value", input.value);
    wire.set("valid_from", input.valid_from.value_or(now));
    wire.set("created_at", now);
    if (input.source_package_id) wire.set("source_package_id", *input.source_package_id);
    if (input.confidence) wire.set("confidence", *input.confidence);
    const stored_package* source = nullptr;
    if (input.source_package_id) {
      // The package the fact was asserted via (section 7.2): one of this project's.
      auto found = pull_specific(*input.source_package_id, input.project_id);
      if (!found) return unexpected(std::move(found).error());
      source = *found;
    }
    AGENTCTX_TRY(detail::check_extension_names(input.extensions, ""));
    AGENTCTX_TRY(detail::check_extension_names(input.asserted_by_extensions, "asserted_by."));
    if (!input.asserted_by_extensions.empty() && !input.asserted_by) {
      return fail(errc::invalid_argument, "asserted_by's extension members need asserted_by");
    }
    if (input.asserted_by) {
      json::value by = detail::actor_wire(*input.asserted_by);
      for (const auto& [name, value] : input.asserted_by_extensions) by.set(name, value);
      wire.set("asserted_by", std::move(by));
    } else if (source != nullptr) {
      // A copy of the source package's created_by, unknown and x-* members
      // included (section 12.1).
      if (const json::value* by = source->package.wire.find("created_by")) wire.set("asserted_by", *by);
    }
    if (!input.tags.empty()) {
      json::value::array_type tags(input.tags.begin(), input.tags.end());
      wire.set("tags", std::move(tags));
    }
    for (const auto& [name, value] : input.extensions) wire.set(name, value);
    auto checked = read_fact(wire);
    if (!checked) return unexpected(std::move(checked).error());

    std::optional<std::string> supersedes;
    if (const fact* current = current_fact(input.project_id, input.subject, input.predicate)) {
      if (same_assertion(*current, input, *checked)) return assert_outcome{current, false, std::nullopt};
      if (checked->valid_from_at < current->valid_from_at) {
        return fail(errc::invalid_argument, "valid_from " + quote_for_message(checked->valid_from) +
                                                " is earlier than the current fact's valid_from " +
                                                quote_for_message(current->valid_from));
      }
      supersedes = current->fact_id;
    } else if (const fact* last = latest_ended_fact(input.project_id, input.subject, input.predicate);
               last != nullptr && checked->valid_from_at < last->valid_to_at) {
      // No current fact (the last was invalidated): the new fact must not
      // start while an earlier one held, or a time would have two facts.
      return fail(errc::invalid_argument, "valid_from " + quote_for_message(checked->valid_from) +
                                              " is earlier than the valid_to " + quote_for_message(*last->valid_to) +
                                              " of the key's last fact");
    }
    json::value record = json::value::object_type{{"type", "fact"}, {"fact", std::move(wire)}};
    if (supersedes) record.set("supersedes", *supersedes);
    AGENTCTX_TRY(add_project_if_new(record, input.project_id));
    AGENTCTX_TRY(commit(record));
    return assert_outcome{&facts_.back(), true, supersedes};
  }

  /// invalidate_fact (section 8.7): ends the current fact of the key (only
  /// when its value is `value`, if given) without a replacement. Returns the
  /// count invalidated (0 or 1 in v0.1). Errors: not_found (404
  /// project_not_found) for an unknown project, archived.
  result<std::size_t> invalidate_fact(const std::string& project_id, const std::string& subject,
                                      const std::string& predicate, std::optional<std::string> value = {}) {
    AGENTCTX_TRY(check_writable());
    // (A project id that is not UTF-8 is refused by project_not_found.)
    AGENTCTX_TRY(detail::check_utf8_input("subject", subject));
    AGENTCTX_TRY(detail::check_utf8_input("predicate", predicate));
    if (value) AGENTCTX_TRY(detail::check_utf8_input("value", *value));
    const auto* state = find_project_state(project_id);
    if (state == nullptr) return no_project(project_id);
    if (state->info.archived()) {
      return unexpected(project_archived(project_id));
    }
    const fact* current = current_fact(project_id, subject, predicate);
    if (current == nullptr || (value && current->value != *value)) return std::size_t{0};
    // From now on no fact of the key holds: one that starts later ends where
    // it starts (it never held), and so the one it was to supersede ends
    // now (apply_invalidate).
    AGENTCTX_TRY(commit(detail::invalidation_record(*current, format_rfc3339_utc_ms(clock_()))));
    return std::size_t{1};
  }

  /// Whether `input` (read as the fact `asserted`) says again what the
  /// current fact `current` says: the same value, and of the source,
  /// confidence, attribution (as written, x-* members included; a source's
  /// created_by when it is the default) and tags, those it gives the same.
  /// Asserting it then changes nothing.
  static bool same_assertion(const fact& current, const fact_assertion& input, const fact& asserted) {
    if (current.value != asserted.value) return false;
    if (input.source_package_id && current.source_package_id != asserted.source_package_id) return false;
    if (input.confidence && current.confidence != asserted.confidence) return false;
    if (!input.tags.empty() && current.tags != asserted.tags) return false;
    if (input.asserted_by || input.source_package_id) {
      const json::value* was = current.wire.find("asserted_by");
      const json::value* is = asserted.wire.find("asserted_by");
      if (was == nullptr || is == nullptr ? was != is : !(*was == *is)) return false;
    }
    for (const auto& [name, value] : input.extensions) {
      const json::value* was = current.wire.find(name);
      if (was == nullptr || !(*was == value)) return false;
    }
    return true;
  }

  /// The current fact of a key, or null.
  const fact* current_fact(const std::string& project_id, const std::string& subject,
                           const std::string& predicate) const {
    const auto* history = fact_history(project_id, subject, predicate);
    if (history == nullptr || history->empty()) return nullptr;
    const fact& last = facts_[history->back()];
    return last.is_current() ? &last : nullptr;
  }

  /// The ended fact of a key that ends last, or null (when the key has none).
  /// A fact that never held (invalidated before it started: valid_to ==
  /// valid_from) does not count.
  const fact* latest_ended_fact(const std::string& project_id, const std::string& subject,
                                const std::string& predicate) const {
    const auto* history = fact_history(project_id, subject, predicate);
    if (history == nullptr) return nullptr;
    const fact* latest = nullptr;
    for (std::size_t index : *history) {
      const fact& f = facts_[index];
      if (f.is_current() || f.never_held()) continue;
      if (latest == nullptr || f.valid_to_at > latest->valid_to_at) latest = &f;
    }
    return latest;
  }

  /// The fact of a key that held at `t` (valid_from <= t < valid_to), or null.
  const fact* fact_at(const std::string& project_id, const std::string& subject, const std::string& predicate,
                      const utc_instant& t) const {
    const auto* history = fact_history(project_id, subject, predicate);
    if (history == nullptr) return nullptr;
    for (auto it = history->rbegin(); it != history->rend(); ++it) {
      if (facts_[*it].holds_at(t)) return &facts_[*it];
    }
    return nullptr;
  }

  /// Every fact of a key, oldest first.
  std::vector<const fact*> history(const std::string& project_id, const std::string& subject,
                                   const std::string& predicate) const {
    std::vector<const fact*> out;
    if (const auto* h = fact_history(project_id, subject, predicate)) {
      for (std::size_t index : *h) out.push_back(&facts_[index]);
    }
    return out;
  }

  /// Every fact of the keys of a project with `subject` and `predicate`
  /// (either absent: any), current and ended: by subject, then predicate,
  /// each key's facts oldest first, as history() lists them.
  std::vector<const fact*> histories(const std::string& project_id, const std::optional<std::string>& subject,
                                     const std::optional<std::string>& predicate) const {
    std::vector<const fact*> out;
    const auto* state = find_project_state(project_id);
    if (state == nullptr) return out;
    for (const auto& [key, indexes] : state->facts) {
      if ((subject && key.first != *subject) || (predicate && key.second != *predicate)) continue;
      for (std::size_t index : indexes) out.push_back(&facts_[index]);
    }
    return out;
  }

  /// The current facts of a project (by subject, then predicate); at `t`
  /// when given (parse_rfc3339_utc_instant), the facts that held then.
  std::vector<const fact*> facts(const std::string& project_id, const std::optional<utc_instant>& t = {}) const {
    std::vector<const fact*> out;
    const auto* state = find_project_state(project_id);
    if (state == nullptr) return out;
    for (const auto& [key, indexes] : state->facts) {
      const fact* f = t ? fact_at(project_id, key.first, key.second, *t)
                           : current_fact(project_id, key.first, key.second);
      if (f != nullptr) out.push_back(f);
    }
    return out;
  }

  /// Every fact of a project, current and ended, in the order recorded.
  std::vector<const fact*> all_facts(const std::string& project_id) const {
    std::vector<const fact*> out;
    for (const fact& f : facts_) {
      if (f.project_id == project_id) out.push_back(&f);
    }
    return out;
  }

  const fact* find_fact(const std::string& fact_id) const {
    auto it = fact_by_id_.find(fact_id);
    return it == fact_by_id_.end() ? nullptr : &facts_[it->second];
  }

  // --- sessions ------------------------------------------------------------------------

  /// Starts a session (section 5.5) with a generated id and callsign.
  result<const session*> start_session(const std::string& project_id, const std::string& actor_id, actor_type type) {
    AGENTCTX_TRY(check_writable());
    json::value wire = json::value::object_type{};
    wire.set("session_id", generate_id("sess_", random_));
    wire.set("project_id", project_id);
    wire.set("actor_id", actor_id);
    wire.set("actor_type", std::string(to_string(type)));
    wire.set("callsign", generate_callsign(random_()));
    wire.set("started_at", now_text());
    auto checked = read_session(wire);
    if (!checked) return unexpected(std::move(checked).error());
    const std::string id = checked->session_id;
    json::value record = json::value::object_type{{"type", "session"}, {"session", std::move(wire)}};
    AGENTCTX_TRY(add_project_if_new(record, project_id));
    AGENTCTX_TRY(commit(record));
    return &sessions_.at(id);
  }

  /// Ends a session (sets ended_at). Errors: not_found; invalid_argument when
  /// already ended; archived (403 project_archived) when its project is.
  result<const session*> end_session(const std::string& session_id) {
    AGENTCTX_TRY(check_writable());
    AGENTCTX_TRY(detail::check_utf8_input("session_id", session_id));
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) return fail(errc::not_found, "session " + quote_for_message(session_id) + " does not exist");
    if (it->second.ended_at) return fail(errc::invalid_argument, "session " + quote_for_message(session_id) + " has already ended");
    if (find_project(it->second.project_id)->archived()) {
      return unexpected(project_archived(it->second.project_id));
    }
    json::value wire = it->second.wire;
    // Never before its start, should the clock have stepped back since.
    wire.set("ended_at", static_cast<std::int64_t>(clock_()) <= it->second.started_at_ms ? it->second.started_at : now_text());
    json::value record = json::value::object_type{{"type", "session"}, {"session", std::move(wire)}};
    AGENTCTX_TRY(commit(record));
    return &sessions_.at(session_id);
  }

  const session* find_session(const std::string& session_id) const {
    auto it = sessions_.find(session_id);
    return it == sessions_.end() ? nullptr : &it->second;
  }

  /// Sessions of a project (every project when empty), by id.
  std::vector<const session*> sessions(const std::string& project_id = {}) const {
    std::vector<const session*> out;
    for (const auto& [id, s] : sessions_) {
      if (project_id.empty() || s.project_id == project_id) out.push_back(&s);
    }
    return out;
  }

  /// The session's wire object with ended_at null while it is open (section
  /// 5.5: "null while active"; the log's record leaves it out) and
  /// packages_deposited filled in: the packages of the session's project
  /// whose created_by.session_id names it and that were deposited while it
  /// was open, in deposit order (for an imported session: the exporting
  /// store's list, then any deposited here).
  json::value session_wire(const session& s) const {
    json::value wire = s.wire;
    if (wire.find("ended_at") == nullptr) wire.set("ended_at", nullptr);
    json::value::array_type ids;
    auto it = session_packages_.find(s.session_id);
    if (it != session_packages_.end()) {
      for (const std::string& id : it->second.ids) {
        if (find_in_project(s.project_id, id) != nullptr) ids.emplace_back(id);
      }
    }
    wire.set("packages_deposited", std::move(ids));
    return wire;
  }

  // --- verification ----------------------------------------------------------------------

  /// Re-reads the log from disk and recomputes every package hash (as
  /// deposited and after each status change). Errors: I/O errors and damage
  /// that makes the log unreadable.
  result<verify_report> verify() {
    auto fresh = store::open(*fs_, dir_, reader_options());
    if (!fresh) return unexpected(std::move(fresh).error());
    verify_report report;
    report.packages = fresh->packages_.size();
    report.facts = fresh->facts_.size();
    if (fresh->torn_tail_bytes_ != 0) {
      report.torn_tail_offset = fresh->loaded_end_;
      report.torn_tail_bytes = fresh->torn_tail_bytes_;
    }
    for (const stored_package& p : fresh->packages_) {
      report.status_changes += p.changes.size();
      if (p.quarantined) report.quarantined.push_back(p.package.project_id + "/" + p.package.package_id + ": " + fresh->quarantine_reasons_.at(p.sequence));
    }
    return report;
  }

  /// Salvages a damaged store (one open() refuses with errc::corrupt): every
  /// record whose frame and checksum survive and that still applies to the
  /// records kept before it is kept, in order; damaged bytes, records that
  /// are not JSON and records that no longer apply (a status change of a
  /// package whose deposit was lost) are listed as lost. A project whose
  /// creation was lost (the deposit that created it, say) is recreated as
  /// {project_id, created_at} just before the first kept package, fact or
  /// session record that writes to it, created_at being that record's
  /// time; report.recreated lists these, so the records of the project
  /// survive the loss of its first one. A fact whose record superseded a
  /// lost fact, or nothing while the key still has a current fact (the
  /// invalidation that ended it was lost), is kept superseding the key's
  /// current fact, or nothing (report.relinked), so a key's later facts
  /// survive the loss of one. Unless nothing is lost or amended (and the
  /// header is sound), or it is a dry run, the log as found is first kept whole as
  /// relay.log.damaged-<unix ms> (with -1, -2, ... when that name is taken;
  /// written and synced), then relay.log is
  /// replaced atomically; a crash leaves the old or the new log. Takes the
  /// writer's lock. Errors: not_found (no relay.log), locked, bad_magic and
  /// unsupported_version (not a log this build can salvage), I/O errors.
  static result<repair_report> repair(io::file_system& fs, std::string dir, repair_options options = {}) {
    const std::string log_path = io::join_path(dir, log_file_name);
    auto exists = fs.exists(log_path);
    if (!exists) return unexpected(std::move(exists).error());
    if (!*exists) return no_store(dir);
    auto lock = io::acquire_writer_lock(fs, io::join_path(dir, lock_file_name), options.wait_for_lock);
    if (!lock && lock.error().code == errc::not_found) return no_store(dir);  // the folder went meanwhile
    if (!lock) return unexpected(std::move(lock).error());
    // Looked at again under the lock: the writer that held it may have
    // removed the store it had made (discard_if_unused).
    auto still = fs.exists(log_path);
    if (!still) return unexpected(std::move(still).error());
    if (!*still) return no_store_after_lock(fs, dir, *lock);
    auto mapped = fs.map(log_path);
    if (!mapped) return unexpected(std::move(mapped).error());
    const auto bytes = mapped->bytes();

    repair_report report;
    report.log_bytes = bytes.size();
    switch (check_log_header(bytes)) {
      case header_check::ok: break;
      case header_check::bad_magic:
      case header_check::unsupported_version: return unexpected(foreign_log_error(bytes, log_path));
      case header_check::incomplete: report.lost.push_back({0, bytes.size(), "incomplete header"}); break;
      case header_check::damaged:
        if (bytes.size() < log_header_size) {
          report.lost.push_back({0, bytes.size(), "incomplete header"});
        } else {
          report.header_rewritten = true;
        }
        break;
    }
    store_options replay_options;
    replay_options.read_only = true;
    store replay(fs, dir, replay_options);
    std::string rebuilt = encode_log_header();
    if (bytes.size() >= log_header_size) {
      const salvage_scan salvage = salvage_records(bytes, log_header_size);
      std::size_t next_skip = 0;
      const auto lose = [&](std::uint64_t offset, std::uint64_t length, std::string what) {
        report.lost.push_back({offset, length, std::move(what)});
      };
      // The torn tail of an append a crash interrupted, or damage.
      const auto lose_skipped = [&](const skipped_bytes& k) {
        lose(k.offset, k.length, (k.torn ? "torn tail: " : "damaged bytes: ") + k.problem);
      };
      for (const scanned_record& r : salvage.records) {
        while (next_skip < salvage.skipped.size() && salvage.skipped[next_skip].offset < r.offset) {
          lose_skipped(salvage.skipped[next_skip++]);
        }
        const std::uint64_t size = record_header_size + r.payload.size();
        auto record = replay.canonicalizer_.parse(r.payload);
        if (!record) {
          lose(r.offset, size, "record is not valid JSON: " + record.error().message);
          continue;
        }
        std::string_view payload = r.payload;
        std::string amended_text;
        if (auto applies = replay.apply(*record, true); !applies) {
          // A record that only fails for what was lost before it is kept,
          // amended: a fact whose supersedes does not match what was kept
          // (a lost fact, a lost invalidation) supersedes what its key holds
          // instead, and a record that writes to a project whose creation
          // was lost follows a record recreating the project from what the
          // record implies.
          json::value amended = *record;
          std::optional<repair_relink> relink = replay.relink_lost_supersedes(amended);
          std::optional<json::value> implied = replay.implied_project(amended);
          json::value check = amended;
          if (implied) check.set("project", *implied);
          if (!relink && !implied) {
            lose(r.offset, size, "record does not apply: " + applies.error().message);
            continue;
          }
          if (auto amended_applies = replay.apply(check, true); !amended_applies) {
            lose(r.offset, size, "record does not apply: " + amended_applies.error().message);
            continue;
          }
          if (relink) {
            auto text = replay.canonicalizer_.serialize(amended, json::canonical_form::jcs);
            if (!text) return unexpected(std::move(text).error());
            if (text->size() > max_record_payload) {
              lose(r.offset, size, "record does not apply: " + applies.error().message + " (and amended it is " +
                                       std::to_string(text->size()) + " bytes, more than a record may hold)");
              continue;
            }
            amended_text = std::move(*text);
            payload = amended_text;
          }
          if (implied) {
            json::value project_record = json::value::object_type{{"type", "project"}, {"project", *implied}};
            auto text = replay.canonicalizer_.serialize(project_record, json::canonical_form::jcs);
            if (!text) return unexpected(std::move(text).error());
            if (auto applied = replay.apply(project_record, false); !applied) return unexpected(std::move(applied).error());
            relay::append_record(rebuilt, *text);
            report.recreated.push_back({r.offset, *detail::string_member(*implied, "project_id"),
                                        *detail::string_member(*implied, "created_at")});
          }
          if (relink) {
            relink->offset = r.offset;
            report.relinked.push_back(std::move(*relink));
          }
          *record = std::move(amended);
        }
        if (auto applied = replay.apply(*record, false); !applied) return unexpected(std::move(applied).error());
        relay::append_record(rebuilt, payload);
        ++report.records_kept;
      }
      for (; next_skip < salvage.skipped.size(); ++next_skip) lose_skipped(salvage.skipped[next_skip]);
    }
    if (options.dry_run) return report;
    if (!report.needed()) {
      // Nothing to mend. The log may still be the one a repair that was
      // killed after its rename left, not yet durable (its name in the
      // folder, or its bytes): made durable now, so that what a writer
      // appends to it after this answer cannot be lost to the damaged log.
      AGENTCTX_TRY(io::sync_file_and_directory(fs, log_path));
      return report;
    }

    auto backup = keep_beside(fs, log_path, ".damaged-", options.clock ? options.clock() : now_unix_ms(), bytes);
    if (!backup) return unexpected(std::move(backup).error());
    report.backup = std::move(*backup);
    AGENTCTX_TRY(io::write_file_atomically(fs, log_path, std::as_bytes(std::span(rebuilt.data(), rebuilt.size()))));
    report.rewritten = true;
    return report;
  }

  /// What this writer's open cut from the end of the log: the torn tail of
  /// an append a crash interrupted (never acknowledged), kept first in a
  /// file beside the log. Empty when it cut nothing (and for readers).
  const std::optional<cut_tail>& tail_cut() const noexcept { return tail_cut_; }

  /// Why a quarantined package was quarantined.
  std::string quarantine_reason(const stored_package& p) const {
    auto it = quarantine_reasons_.find(p.sequence);
    return it == quarantine_reasons_.end() ? std::string() : it->second;
  }

  /// Total records applied and the log's size in bytes.
  std::size_t record_count() const noexcept { return record_count_; }
  std::uint64_t log_size() const noexcept { return loaded_end_; }

  /// Appends a record another store exported (export.hpp uses this); the
  /// record must be a complete record object as written to the log.
  result<void> append_record(json::value record) {
    AGENTCTX_TRY(check_writable());
    return commit(record);
  }

  class prepared_package;

  /// Reads and hashes the package of `record`, a package record as written
  /// to the log ({"type": "package", "hash": ..., "package": {...}}), for
  /// a caller that checks many records before it writes any (import): the
  /// append_record() of what this returns reads and hashes the package no
  /// more. The record's hash is not compared: prepared_package says what
  /// the package hashes to. Errors: invalid_argument for a record that is
  /// not a package record, and those of read_package and content_hash.
  result<prepared_package> prepare_package_record(json::value record);

  /// append_record() of a prepared package record. It takes the record:
  /// `prepared` is left empty whether the append succeeds or not (its
  /// record() null; read() and computed_hash() may not be called).
  result<void> append_record(prepared_package&& prepared);

  /// The payload `record` has in the log (RFC 8785), or the refusal an
  /// append of it gets: invalid_argument for a record with no canonical
  /// form (text that is not UTF-8, a NaN, or an object as deep as input may
  /// be, which its record holds one level deeper than the log takes) or
  /// larger than max_record_payload. Import checks its records with it
  /// before its first write. The text is valid until `canonicalizer` is
  /// used again.
  static result<std::string_view> record_text(json::canonicalizer& canonicalizer, const json::value& record) {
    auto text = canonicalizer.serialize(record, json::canonical_form::jcs);
    if (!text) {
      // What the store holds is UTF-8, so text that is not came with the
      // call (an id or a value): the caller's input is invalid.
      if (text.error().code == errc::invalid_utf8) return fail(errc::invalid_argument, invalid_utf8_message(record));
      if (text.error().message == json::too_deep_message) {
        // The object given (a package, a fact's x- member) is one level
        // shallower than its record.
        return fail(errc::invalid_argument, "cannot be stored as a log record: " + text.error().message +
                                                " (the record holds the object given one level deeper: it may "
                                                "nest " +
                                                std::to_string(json::max_nesting_depth - 1) + " levels at most)");
      }
      return fail(errc::invalid_argument, "cannot be stored as a log record: " + text.error().message);
    }
    if (text->size() > max_record_payload) {
      return fail(errc::invalid_argument, "the record would be " + std::to_string(text->size()) +
                                              " bytes; the log takes at most " + std::to_string(max_record_payload));
    }
    return text;
  }

  /// The current time as the store writes it.
  std::string now_text() const { return format_rfc3339_utc_ms(clock_()); }

 private:
  // The package ids of one session's packages_deposited, in order.
  struct session_package_list {
    std::vector<std::string> ids;
    std::set<std::string> listed;
  };

  struct project_state {
    relay::project info;
    std::vector<std::size_t> packages;  // indexes into packages_, deposit order
    std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> facts;  // key -> indexes, oldest first
  };

  store(io::file_system& fs, std::string dir, store_options options)
      : fs_(&fs), dir_(std::move(dir)), options_(std::move(options)) {
    random_ = options_.random ? options_.random : detail::default_random;
    clock_ = options_.clock ? options_.clock : now_unix_ms;
  }

  store_options reader_options() const {
    store_options o;
    o.read_only = true;
    o.clock = clock_;
    o.random = random_;
    o.open_threads = options_.open_threads;
    return o;
  }

  static unexpected no_project(const std::string& project_id) { return unexpected(project_not_found(project_id)); }

  std::string path_of(std::string_view name) const { return io::join_path(dir_, name); }

  project_state* find_project_state(const std::string& project_id) {
    auto it = projects_.find(project_id);
    return it == projects_.end() ? nullptr : &it->second;
  }
  const project_state* find_project_state(const std::string& project_id) const {
    auto it = projects_.find(project_id);
    return it == projects_.end() ? nullptr : &it->second;
  }

  const stored_package* find_in_project(const std::string& project_id, const std::string& package_id) const {
    auto it = by_package_id_.find(package_id);
    if (it == by_package_id_.end()) return nullptr;
    for (std::size_t index : it->second) {
      if (packages_[index].package.project_id == project_id) return &packages_[index];
    }
    return nullptr;
  }

  const std::vector<std::size_t>* fact_history(const std::string& project_id, const std::string& subject,
                                               const std::string& predicate) const {
    const auto* state = find_project_state(project_id);
    if (state == nullptr) return nullptr;
    auto it = state->facts.find({subject, predicate});
    return it == state->facts.end() ? nullptr : &it->second;
  }

  json::value new_project_wire(const std::string& project_id) const {
    json::value wire = json::value::object_type{};
    wire.set("project_id", project_id);
    wire.set("created_at", now_text());
    return wire;
  }

  // Writes to a project: it must not be archived; a new one is created in the
  // same record (the record gains a "project" member).
  result<void> add_project_if_new(json::value& record, const std::string& project_id) const {
    if (project_id.empty()) return detail::schema_error("project_id", "must not be empty");
    const auto* state = find_project_state(project_id);
    if (state == nullptr) {
      record.set("project", new_project_wire(project_id));
      return {};
    }
    if (state->info.archived()) {
      return unexpected(project_archived(project_id));
    }
    return {};
  }

  result<void> check_writable() const {
    if (options_.read_only) return fail(errc::unsupported, "the store is open read-only", dir_);
    if (poisoned_) {
      return fail(errc::io_error, "an earlier write to the log failed; reopen the store before writing again", dir_);
    }
    return {};
  }

  result<const stored_package*> change_status(const std::string& package_id, const std::string& project_id,
                                              package_status to, std::optional<review_type> type,
                                              std::optional<std::string> note, bool flag = false) {
    AGENTCTX_TRY(check_writable());
    if (note && note->empty()) note.reset();  // an empty note is no note
    auto found = find_package(package_id, project_id);
    if (!found) return unexpected(std::move(found).error());
    const stored_package& p = **found;
    if (p.quarantined) return fail(errc::corrupt, "package " + quote_for_message(package_id) + " is quarantined");
    if (flag ? !may_flag_for_review(p.package.status) : !is_allowed_transition(p.package.status, to)) {
      return fail(errc::invalid_transition, "package " + quote_for_message(package_id) + " cannot go from " +
                                                std::string(to_string(p.package.status)) + " to " +
                                                std::string(to_string(to)) + " (invalid_transition)");
    }
    const project_state* state = find_project_state(p.package.project_id);
    if (state != nullptr && state->info.archived()) {
      return unexpected(project_archived(p.package.project_id));
    }
    const review_type new_review = type.value_or(p.package.review);
    if (to == package_status::awaiting_review && new_review == review_type::none) {
      // Section 8.5: awaiting_review is blocked on a reviewer, human or agent.
      return detail::schema_error("review_type", "must be human or agent for a package awaiting review (package " +
                                                     quote_for_message(package_id) + " has none)");
    }
    if (p.package.status == to && new_review == p.package.review && !note) return &p;  // flagged again, as it is
    json::value next = p.package.wire;
    next.set("status", std::string(to_string(to)));
    next.set("review_type", std::string(to_string(new_review)));
    auto hash = content_hash(next, canonicalizer_);
    if (!hash) return unexpected(std::move(hash).error());
    json::value record = json::value::object_type{{"type", "status"},
                                                  {"project_id", p.package.project_id},
                                                  {"package_id", p.package.package_id},
                                                  {"status", std::string(to_string(to))},
                                                  {"review_type", std::string(to_string(new_review))},
                                                  {"at", now_text()},
                                                  {"hash", *hash}};
    if (note) record.set("note", *note);
    const std::size_t index = static_cast<std::size_t>(&p - packages_.data());
    AGENTCTX_TRY(commit(record));
    return &packages_[index];
  }

  // --- the log -------------------------------------------------------------------------

  // Whether `path` exists (not_found is false; other errors are errors).
  result<bool> path_exists(const std::string& path) {
    auto exists = fs_->exists(path);
    if (!exists && exists.error().code != errc::not_found) return unexpected(std::move(exists).error());
    return exists && *exists;
  }

  // The error of a store opened (or repaired) where there is none.
  static unexpected no_store(const std::string& dir) {
    return fail(errc::not_found, "no Relay store here (relay.log is missing)", dir);
  }

  // no_store for an open that took the lock and then found no relay.log:
  // the store was removed (discard_if_unused) while it waited, and the lock
  // file its lock made in the folder that stays is removed again (best
  // effort) before `lock` is let go.
  static unexpected no_store_after_lock(io::file_system& fs, const std::string& dir,
                                        std::unique_ptr<io::file_lock>& lock) {
    (void)fs.remove(io::join_path(dir, lock_file_name));
    lock.reset();
    return no_store(dir);
  }

  result<void> open_log() {
    const std::string log_path = path_of(log_file_name);
    // A writer that waited for the lock while the writer before it removed
    // the store it had made (discard_if_unused) finds the folder gone when it
    // gets the lock (not_found), and starts again: it makes the folder
    // afresh. Bounded, in case something else keeps removing it.
    for (int attempt = 1;; ++attempt) {
      made_dir_ = false;
      auto present = path_exists(log_path);
      if (!present) return unexpected(std::move(present).error());
      if (!*present && (options_.read_only || !options_.create_if_missing)) {
        return no_store(dir_);
      }
      if (options_.read_only) break;
      if (!*present) {
        auto folder = path_exists(dir_);
        if (!folder) return unexpected(std::move(folder).error());
        made_dir_ = !*folder;
        AGENTCTX_TRY(fs_->create_dir(dir_));
        AGENTCTX_TRY(fs_->sync_dir(io::parent_directory(dir_)));
      }
      auto lock = io::acquire_writer_lock(*fs_, path_of(lock_file_name), options_.wait_for_lock);
      if (!lock && lock.error().code == errc::not_found && attempt < 100) continue;
      if (!lock) return unexpected(std::move(lock).error());
      lock_ = std::move(*lock);
      // Looked at again under the lock: another writer may have made the log
      // since the look above.
      auto there = path_exists(log_path);
      if (!there) return unexpected(std::move(there).error());
      created_log_ = !*there;
      if (created_log_ && !options_.create_if_missing) {
        // The store was removed (discard_if_unused) while this writer waited
        // for its lock, and the folder it was in stays: the lock file this
        // open made goes again, and there is no store to open.
        return no_store_after_lock(*fs_, dir_, lock_);
      }
      auto file = fs_->open(log_path, io::create_or_open);
      if (!file) return unexpected(std::move(file).error());
      log_ = std::move(*file);
      auto size = log_->size();
      if (!size) return unexpected(std::move(size).error());
      if (*size <= log_header_size) {
        // A new log, or one whose creation a crash interrupted before any
        // record could be written (a prefix of the header, or zeros): (re)write the
        // header. Any other short file is someone else's, which load_from()
        // refuses below; it is never overwritten.
        std::string head(static_cast<std::size_t>(*size), '\0');
        auto got = log_->read_at(0, std::as_writable_bytes(std::span(head.data(), head.size())));
        if (!got) return unexpected(std::move(got).error());
        head.resize(*got);
        const bool torn_creation =
            *got == *size && check_log_header(std::as_bytes(std::span(head.data(), head.size()))) == header_check::incomplete;
        if (torn_creation) {
          AGENTCTX_TRY(log_->truncate(0));
          const std::string header = encode_log_header();
          AGENTCTX_TRY(log_->append(std::as_bytes(std::span(header.data(), header.size()))));
        }
      }
      break;
    }
    AGENTCTX_TRY(load_from(0));
    if (!options_.read_only) {
      // Before this writer acknowledges anything, what the log holds is made
      // durable, its name in the folder too: a writer before it that was
      // killed (the machine living on) may have left records, a header or a
      // whole new log in the page cache only, and an answer built on them (a
      // deposit found already there, an import found done) must not be lost
      // to a power failure after it. Cheap when there is nothing to write.
      AGENTCTX_TRY(log_->sync());
      AGENTCTX_TRY(fs_->sync_dir(dir_));
    }
    return {};
  }

  // The error for a log whose header check says bad_magic (not a Relay log)
  // or unsupported_version (a format this build does not read).
  static error foreign_log_error(std::span<const std::byte> bytes, const std::string& path) {
    if (check_log_header(bytes) == header_check::bad_magic) {
      return make_error(errc::bad_magic, "not a Relay store log", path, 0);
    }
    return make_error(errc::unsupported_version, "relay.log format version " + std::to_string(load_u32(bytes.data() + 8)) +
                                                     " is not supported (this build reads " +
                                                     std::to_string(oldest_log_format_version) + " to " +
                                                     std::to_string(log_format_version) + ")",
                      path, 8);
  }

  // A record of the log read ahead of applying it: parsed and, for a
  // package record, its package read (the tree moved out of the record) and
  // hashed. None of this depends on the state, so several threads prepare
  // records while the calling thread applies them in log order, with the
  // same checks and errors as when apply() reads and hashes them itself.
  struct prepared_record {
    result<json::value> record = json::value();
    std::optional<result<package>> read;       // a package record's package
    std::optional<result<std::string>> hash;   // content_hash of read's wire, when read succeeded
  };

 public:
  /// A package record read and hashed by prepare_package_record(), to
  /// append with append_record(), which takes it. Only the store makes one.
  class prepared_package {
   public:
    /// The record.
    const json::value& record() const noexcept { return *prepared_.record; }
    /// The record's package, as read_package() reads it.
    const relay::package& read() const noexcept { return **prepared_.read; }
    /// The content hash its package has (content_hash), which may differ
    /// from the record's "hash".
    const std::string& computed_hash() const noexcept { return **prepared_.hash; }

   private:
    friend class store;
    prepared_package() = default;
    prepared_record prepared_;
  };

 private:
  // Records held prepared at most: the log is replayed in windows of this
  // many, which bounds the memory held ahead of applying.
  static constexpr std::size_t replay_window = 4096;
  // Records a thread prepares at a time.
  static constexpr std::size_t replay_chunk = 32;

  static void prepare_record(const scanned_record& r, json::canonicalizer& canonicalizer, prepared_record& out) {
    out.record = canonicalizer.parse(r.payload);
    if (!out.record) return;
    const std::string* type = detail::string_member(*out.record, "type");
    json::value* wire = out.record->find("package");
    if (type == nullptr || *type != "package" || wire == nullptr || detail::string_member(*out.record, "hash") == nullptr) {
      return;
    }
    out.read = read_package(std::move(*wire));
    if (*out.read) out.hash = content_hash((*out.read)->wire, canonicalizer);
  }

  // Applies `records` in order. They are prepared (prepare_record) in chunks
  // of replay_chunk, claimed in order by up to options_.open_threads - 1
  // helper threads (each with its own canonicalizer) and by this thread,
  // which applies each chunk once it is ready and, while the next is not,
  // prepares one itself. An exception on a helper (std::bad_alloc) is
  // rethrown here.
  //
  // What apply() leaves of a record (the record's other members, mostly) is
  // freed by the thread that prepared it: a helper frees its chunks once
  // they are applied, before it claims another (what is left when the
  // helpers stop is freed after they have). glibc's malloc locks a thread's
  // arena to free memory allocated from it, and freeing a helper's records
  // here while it allocated made the two wait for each other on every
  // record: two threads opened a 10,000 package store in a new process no
  // faster than one.
  result<void> replay(std::span<const scanned_record> records) {
    std::vector<prepared_record> prepared;
    for (std::size_t first = 0; first < records.size(); first += replay_window) {
      AGENTCTX_TRY(replay_window_of(records.subspan(first, std::min(replay_window, records.size() - first)), prepared));
    }
    return {};
  }

  result<void> replay_window_of(std::span<const scanned_record> records, std::vector<prepared_record>& prepared) {
    prepared.clear();
    prepared.resize(records.size());
    const std::size_t chunks = (records.size() + replay_chunk - 1) / replay_chunk;
    const std::size_t helpers = std::min<std::size_t>(std::max(1u, options_.open_threads), chunks) - 1;
    std::vector<std::atomic<bool>> ready(chunks);
    for (std::atomic<bool>& flag : ready) flag.store(false, std::memory_order_relaxed);
    std::atomic<std::size_t> next_chunk{0};
    std::atomic<bool> stop{false};
    std::atomic<bool> helper_failed{false};
    std::vector<std::exception_ptr> failures(helpers);
    std::vector<char> by_helper(chunks, 0);  // written before the chunk's ready flag, read after it
    std::atomic<std::size_t> applied_chunks{0};  // chunks this thread has applied, in order
    const auto free_chunk = [&](std::size_t chunk) {
      const std::size_t end = std::min(records.size(), (chunk + 1) * replay_chunk);
      for (std::size_t i = chunk * replay_chunk; i < end; ++i) prepared[i] = prepared_record();
    };
    const auto prepare_chunk = [&](std::size_t chunk, json::canonicalizer& canonicalizer, bool helper) {
      const std::size_t end = std::min(records.size(), (chunk + 1) * replay_chunk);
      for (std::size_t i = chunk * replay_chunk; i < end; ++i) prepare_record(records[i], canonicalizer, prepared[i]);
      by_helper[chunk] = helper ? 1 : 0;
      ready[chunk].store(true, std::memory_order_release);
    };
    if (helpers_.size() < helpers) helpers_.resize(helpers);
    std::vector<std::thread> workers;
    // Stops and joins the helpers on every way out of this function.
    struct join_on_exit {
      std::atomic<bool>& stop;
      std::vector<std::thread>& workers;
      ~join_on_exit() {
        stop.store(true);
        for (std::thread& worker : workers) worker.join();
      }
    } joiner{stop, workers};
    const auto help = [&](std::size_t h) {
      try {
        std::vector<std::size_t> unfreed;  // chunks this helper prepared and has not freed
        unfreed.reserve(chunks);  // no allocation fails once a chunk is claimed
        while (!stop.load(std::memory_order_relaxed)) {
          const std::size_t applied = applied_chunks.load(std::memory_order_acquire);
          std::erase_if(unfreed, [&](std::size_t chunk) {
            if (chunk >= applied) return false;
            free_chunk(chunk);
            return true;
          });
          const std::size_t chunk = next_chunk.fetch_add(1);
          if (chunk >= chunks) return;
          prepare_chunk(chunk, helpers_[h], true);
          unfreed.push_back(chunk);
        }
      } catch (...) {
        failures[h] = std::current_exception();
        helper_failed.store(true);
      }
    };
    workers.reserve(helpers);
    for (std::size_t h = 0; h < helpers; ++h) {
      try {
        workers.emplace_back(help, h);
      } catch (const std::system_error&) {
        break;  // a thread the system refuses leaves its share to the others and to this thread
      }
    }
    const auto rethrow_helper_failure = [&] {
      stop.store(true);
      for (std::thread& worker : workers) worker.join();
      workers.clear();
      for (const std::exception_ptr& failure : failures) {
        if (failure) std::rethrow_exception(failure);
      }
    };
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
      while (!ready[chunk].load(std::memory_order_acquire)) {
        if (helper_failed.load()) rethrow_helper_failure();
        const std::size_t claimed = next_chunk.fetch_add(1);
        if (claimed < chunks) {
          prepare_chunk(claimed, canonicalizer_, false);
        } else {
          std::this_thread::yield();  // a helper is preparing it
        }
      }
      const std::size_t end = std::min(records.size(), (chunk + 1) * replay_chunk);
      for (std::size_t i = chunk * replay_chunk; i < end; ++i) {
        prepared_record& p = prepared[i];
        if (!p.record) {
          return fail(errc::corrupt, "record is not valid JSON: " + p.record.error().message, path_of(log_file_name),
                      records[i].offset);
        }
        // The record is not needed after: its package tree is moved, not copied.
        if (auto applied = apply(*p.record, false, p.record->find("package"), &p); !applied) {
          return fail(errc::corrupt, "record does not apply: " + applied.error().message, path_of(log_file_name),
                      records[i].offset);
        }
        // Where a reader resumes, also when a later record fails to apply.
        loaded_end_ = records[i].offset + record_header_size + records[i].payload.size();
        last_record_offset_ = records[i].offset;
        std::memcpy(last_record_header_.data(), records[i].payload.data() - record_header_size, record_header_size);
      }
      if (by_helper[chunk] == 0) free_chunk(chunk);  // a helper's: freed by the helper (see replay())
      applied_chunks.store(chunk + 1, std::memory_order_release);
    }
    return {};
  }

  // Whether `log` (relay.log, open) still holds, where it was, the last
  // record this store read; false when the log is shorter than what was
  // read or holds another record there (store::repair replaced it).
  result<bool> same_log_as_loaded(io::file& log) {
    if (last_record_offset_ == 0) return true;  // no record read: reading on from the header is right for any log
    auto size = log.size();
    if (!size) return unexpected(std::move(size).error());
    if (*size < loaded_end_) return false;
    std::array<std::byte, record_header_size> header{};
    auto got = log.read_at(last_record_offset_, header);
    if (!got) return unexpected(std::move(got).error());
    return *got == header.size() && header == last_record_header_;
  }

  // Keeps `bytes` beside the log, as `log_path` + `suffix` + `now` (then
  // -1, -2, ... when that name is taken: an earlier file is never
  // replaced), written atomically and synced; returns the path. A crash
  // before the caller's next step (the cut of a torn tail, repair's rename)
  // makes it keep the same bytes again: a kept file holding them already is
  // returned instead of a second copy, and temporaries that an earlier
  // crashed copy left are removed (best effort).
  static result<std::string> keep_beside(io::file_system& fs, const std::string& log_path, std::string_view suffix,
                                         std::uint64_t now, std::span<const std::byte> bytes) {
    const std::string dir = io::parent_directory(log_path);
    const std::string kept_prefix = io::file_name(log_path) + std::string(suffix);
    (void)io::remove_stale_temporary_files_in(
        fs, dir, [&](std::string_view target) { return target.starts_with(kept_prefix); });
    if (auto entries = fs.list_dir(dir)) {
      std::sort(entries->begin(), entries->end());
      for (const std::string& entry : *entries) {
        if (!entry.starts_with(kept_prefix)) continue;
        const std::string path = io::join_path(dir, entry);
        auto size = fs.file_size(path);
        if (!size || *size != bytes.size()) continue;
        auto kept = fs.map(path);
        if (kept && std::ranges::equal(kept->bytes(), bytes)) {
          // Kept by a writer killed before the copy's name was made durable
          // (its bytes were synced before the rename): synced now, before the
          // caller cuts what the copy holds.
          AGENTCTX_TRY(io::sync_file_and_directory(fs, path));
          return path;
        }
      }
    }
    const std::string stem = log_path + std::string(suffix) + std::to_string(now);
    std::string path = stem;
    for (int n = 1;; ++n) {
      auto taken = fs.exists(path);
      if (!taken) return unexpected(std::move(taken).error());
      if (!*taken) break;
      path = stem + "-" + std::to_string(n);
    }
    if (auto written = io::write_file_atomically(fs, path, bytes); !written) {
      error e = std::move(written).error();
      e.path = path;  // not the temporary file beside it
      return unexpected(std::move(e));
    }
    return path;
  }

  // The bytes of relay.log from `offset` to its end. The writer maps the
  // log: it holds the lock, so nothing changes the file under it. A reader
  // reads a copy (pread): a writer that opens after a crash cuts the torn
  // tail of the log in place, and a reader touching a mapped page past the
  // new end would be killed by SIGBUS. `opened`, when not null, is the
  // log open already, read instead of opening it again.
  result<io::mapped_bytes> log_bytes_from(std::uint64_t offset, io::file* opened = nullptr) {
    if (!options_.read_only) return fs_->map(path_of(log_file_name));
    std::unique_ptr<io::file> own;
    if (opened == nullptr) {
      auto file = fs_->open(path_of(log_file_name), io::read_only);
      if (!file) return unexpected(std::move(file).error());
      own = std::move(*file);
      opened = own.get();
    }
    auto size = opened->size();
    if (!size) return unexpected(std::move(size).error());
    auto copy = std::make_shared<std::vector<std::byte>>(*size > offset ? static_cast<std::size_t>(*size - offset) : 0);
    auto got = opened->read_at(offset, *copy);
    if (!got) return unexpected(std::move(got).error());
    copy->resize(*got);  // shorter when the writer cut a torn tail meanwhile
    return io::mapped_bytes::share(std::move(copy));
  }

  // Checks the log's header (`bytes`, the log's first bytes) and takes its
  // format version; errors for a log this build does not read.
  result<void> read_header(std::span<const std::byte> bytes) {
    switch (check_log_header(bytes)) {
      case header_check::ok: log_version_ = load_u32(bytes.data() + 8); return {};
      case header_check::bad_magic:
      case header_check::unsupported_version: return unexpected(foreign_log_error(bytes, path_of(log_file_name)));
      case header_check::incomplete:
        // Only a reader gets here: a writer has just written the header.
        return fail(errc::not_found, "no Relay store here (relay.log is being created)", dir_);
      case header_check::damaged: break;
    }
    return fail(errc::corrupt, "relay.log header is damaged", path_of(log_file_name), 0);
  }

  // Reads the log from `offset` (0: from the start, header included) and
  // applies its records. `opened`: as for log_bytes_from.
  result<void> load_from(std::uint64_t offset, io::file* opened = nullptr) {
    auto mapped = log_bytes_from(offset, opened);
    if (!mapped) return unexpected(std::move(mapped).error());
    // Where mapped's first byte is in the log.
    const std::uint64_t base = options_.read_only ? offset : 0;
    const std::uint64_t from = offset;
    std::span<const std::byte> bytes = mapped->bytes();
    if (offset == 0) {
      AGENTCTX_TRY(read_header(bytes));
      offset = log_header_size;
    }
    log_scan scan = scan_records(bytes, offset, base);
    if (scan.tail == log_tail::damaged && options_.read_only) {
      // A reader can copy a torn tail part before and part after a writer
      // cuts it and appends: what looks damaged is read once more.
      mapped = log_bytes_from(from, opened);
      if (!mapped) return unexpected(std::move(mapped).error());
      bytes = mapped->bytes();
      scan = scan_records(bytes, offset, base);
    }
    AGENTCTX_TRY(replay(scan.records));
    if (scan.tail == log_tail::damaged) {
      return fail(errc::corrupt, "relay.log is damaged: " + scan.problem, path_of(log_file_name), scan.valid_end);
    }
    torn_tail_bytes_ = scan.tail == log_tail::torn ? base + bytes.size() - scan.valid_end : 0;
    if (scan.tail == log_tail::torn && !options_.read_only) {
      // An append a crash interrupted: never acknowledged, so cut it, but
      // keep its bytes beside the log first (should damage ever look torn).
      // A full disk (or a folder not writable) leaves a torn tail too: the
      // bytes, never acknowledged, are cut then without a copy, as the
      // writer did before it kept one, and the cut says why.
      const auto cut = bytes.subspan(static_cast<std::size_t>(scan.valid_end - base));
      auto kept = keep_beside(*fs_, path_of(log_file_name), ".torn-", clock_(), cut);
      tail_cut_ = cut_tail{scan.valid_end, cut.size(), kept ? std::move(*kept) : std::string(), scan.problem,
                           kept ? std::string() : kept.error().describe()};
      AGENTCTX_TRY(log_->truncate(scan.valid_end));
      AGENTCTX_TRY(log_->sync());
    }
    loaded_end_ = scan.valid_end;
    return {};
  }

  // "subject is not valid UTF-8": the field of `value` that holds text that
  // is not UTF-8 (of a record, `is_record`, without its wrapper, such as
  // "fact."); "a member's name in x-ext is not valid UTF-8" for a name.
  static std::string invalid_utf8_message(const json::value& value, bool is_record = true) {
    std::string where = json::invalid_utf8_path(value).value_or(std::string());
    if (const std::string* type = is_record ? detail::string_member(value, "type") : nullptr) {
      if (where.starts_with(*type + ".")) where.erase(0, type->size() + 1);
      if (where == *type) where.clear();
      if (where.starts_with(*type + " ")) where.erase(0, type->size());
    }
    constexpr std::string_view name_marker = " (a member's name)";
    if (where.ends_with(name_marker)) {
      where.erase(where.size() - name_marker.size());
      return where.empty() ? "a member's name is not valid UTF-8" : "a member's name in " + where + " is not valid UTF-8";
    }
    if (where.empty()) return "a string is not valid UTF-8";
    return where + " is not valid UTF-8";
  }

  // Writes this build's format version into the header of a log of an
  // older one, durably, before the first record this build appends to it: a
  // reader of the older version then refuses the log as a version it does
  // not read, never a record of this one as damage (log_format.hpp). The
  // field is 4 bytes within the first sector, so a crash leaves the old
  // version or the new one.
  // A failed write or sync poisons the writer, as a failed append does.
  [[gnu::noinline]] result<void> upgrade_log_version() {
    char version[4];
    store_u32(version, log_format_version);
    auto written = log_->write_at(8, std::as_bytes(std::span(version, sizeof version)));
    if (written) written = log_->sync();
    if (!written) {
      poisoned_ = true;
      return written;
    }
    log_version_ = log_format_version;
    return {};
  }

  // Appends `record`, syncs it, then applies it. The record is checked
  // against the state first (a dry run of apply), so the log never holds a
  // record that does not apply. `prepared`, when not null, holds what the
  // caller read and hashed of a package record already: the dry run checks
  // that package where it is and the application takes it.
  result<void> commit(const json::value& record, prepared_record* prepared = nullptr) {
    AGENTCTX_TRY(apply(record, true, nullptr, prepared));
    auto text = record_text(canonicalizer_, record);
    if (!text) return unexpected(std::move(text).error());
    if (log_version_ < log_format_version) AGENTCTX_TRY(upgrade_log_version());
    frame_.clear();
    relay::append_record(frame_, *text);
    if (auto written = log_->append(std::as_bytes(std::span(frame_.data(), frame_.size()))); !written) {
      withdraw_failed_append();
      return written;
    }
    if (auto synced = log_->sync(); !synced) {
      withdraw_failed_append();
      return synced;
    }
    loaded_end_ += frame_.size();
    if (auto applied = apply(record, false, nullptr, prepared); !applied) {
      poisoned_ = true;  // unreachable after the dry run; refuse further writes if it happens
      return applied;
    }
    return {};
  }

  /// After an append or its sync failed (a full disk, an I/O error): the
  /// record was not acknowledged, so the part of it that reached the log is
  /// cut again, as far as the file lets us, rather than left for the next
  /// open to take for the torn tail of a crash. The store refuses further
  /// writes until it is reopened either way: after a failed sync what the
  /// disk holds is not known.
  void withdraw_failed_append() {
    poisoned_ = true;
    if (log_->truncate(loaded_end_)) (void)log_->sync();
  }

  // --- applying records (replay and live writes share this) ----------------------------
  //
  // Each apply_* checks everything first and changes the state only at its
  // end, so a dry run (dry = true) answers whether the record applies
  // without touching anything. A record may carry a "project" member that
  // creates its project (deposit, assert_fact, session start); `pending` is
  // that project during a dry run. `movable_package`: the record's "package"
  // member, when the caller gives the record up (replay), so that applying
  // moves the package's tree instead of copying it.

  result<void> apply(const json::value& record, bool dry, json::value* movable_package = nullptr,
                     prepared_record* prepared = nullptr) {
    const std::string* type = detail::string_member(record, "type");
    if (type == nullptr) return fail(errc::corrupt, "record has no type");
    if (*type == "project") {
      const json::value* p = record.find("project");
      if (p == nullptr) return fail(errc::corrupt, "project record without project");
      AGENTCTX_TRY(apply_project(*p, false, dry));
      if (!dry) ++record_count_;
      return {};
    }
    std::optional<std::string> pending;
    if (const json::value* p = record.find("project")) {
      if (p->is_object()) {
        if (const std::string* id = detail::string_member(*p, "project_id")) pending = *id;
      }
      AGENTCTX_TRY(apply_project(*p, true, true));
    }
    result<void> outcome;
    std::optional<package> checked;  // a package record's package, read once
    result<package>* prepared_read = prepared != nullptr && prepared->read ? &*prepared->read : nullptr;
    if (*type == "package" && dry && prepared_read != nullptr && prepared_read->has_value()) {
      // A dry run checks a prepared package where it is (the application takes it).
      outcome = check_package_place(**prepared_read, pending);
    } else if (*type == "package") {
      auto read = check_package(record, pending, dry ? nullptr : movable_package, prepared_read);
      if (read) {
        checked = std::move(*read);
      } else {
        outcome = unexpected(std::move(read).error());
      }
    } else if (*type == "status") {
      outcome = apply_status(record, true);
    } else if (*type == "fact") {
      outcome = apply_fact(record, pending, true);
    } else if (*type == "invalidate") {
      outcome = apply_invalidate(record, true);
    } else if (*type == "session") {
      outcome = apply_session(record, pending, true);
    } else {
      return fail(errc::corrupt, "unknown record type " + quote_for_message(*type));
    }
    if (!outcome || dry) return outcome;
    // Checked: now change the state.
    if (const json::value* p = record.find("project")) AGENTCTX_TRY(apply_project(*p, true, false));
    if (*type == "package") {
      add_package(std::move(*checked), *detail::string_member(record, "hash"),
                  prepared != nullptr && prepared->hash ? &*prepared->hash : nullptr);
    } else if (*type == "status") {
      AGENTCTX_TRY(apply_status(record, false));
    } else if (*type == "fact") {
      AGENTCTX_TRY(apply_fact(record, pending, false));
    } else if (*type == "invalidate") {
      AGENTCTX_TRY(apply_invalidate(record, false));
    } else {
      AGENTCTX_TRY(apply_session(record, pending, false));
    }
    ++record_count_;
    return {};
  }

  // For repair: the project a package, fact or session record writes to,
  // when the state does not hold it and the record does not create it, as
  // {project_id, created_at} with the record's own time; otherwise nothing.
  std::optional<json::value> implied_project(const json::value& record) const {
    const std::string* type = detail::string_member(record, "type");
    if (type == nullptr || record.find("project") != nullptr) return std::nullopt;
    const char* member = nullptr;
    const char* time = nullptr;
    if (*type == "package" || *type == "fact") {
      member = *type == "package" ? "package" : "fact";
      time = "created_at";
    } else if (*type == "session") {
      member = "session";
      time = "started_at";
    } else {
      return std::nullopt;
    }
    const json::value* object = record.find(member);
    if (object == nullptr || !object->is_object()) return std::nullopt;
    const std::string* project_id = detail::string_member(*object, "project_id");
    const std::string* at = detail::string_member(*object, time);
    if (project_id == nullptr || at == nullptr || projects_.count(*project_id) != 0) return std::nullopt;
    return json::value(json::value::object_type{{"project_id", *project_id}, {"created_at", *at}});
  }

  // For repair: when `record` asserts a current fact and what it superseded
  // does not match the key for what was lost before it (see repair_relink),
  // makes it supersede the key's current fact, or nothing when the key has
  // none, and says so; otherwise leaves it alone and returns nothing.
  std::optional<repair_relink> relink_lost_supersedes(json::value& record) const {
    const std::string* type = detail::string_member(record, "type");
    const json::value* wire = record.find("fact");
    if (type == nullptr || *type != "fact" || wire == nullptr || !wire->is_object()) return std::nullopt;
    const std::string* fact_id = detail::string_member(*wire, "fact_id");
    const std::string* project_id = detail::string_member(*wire, "project_id");
    const std::string* subject = detail::string_member(*wire, "subject");
    const std::string* predicate = detail::string_member(*wire, "predicate");
    const json::value* valid_to = wire->find("valid_to");
    if (!fact_id || !project_id || !subject || !predicate || (valid_to != nullptr && !valid_to->is_null())) {
      return std::nullopt;
    }
    const std::vector<std::size_t>* history = fact_history(*project_id, *subject, *predicate);
    const fact* current =
        history != nullptr && !history->empty() && facts_[history->back()].is_current() ? &facts_[history->back()] : nullptr;
    const std::string* supersedes = nullptr;
    if (!detail::optional_string_member(record, "supersedes", supersedes)) return std::nullopt;  // damage: dropped
    repair_relink relink;
    relink.fact_id = *fact_id;
    if (supersedes != nullptr && fact_by_id_.count(*supersedes) == 0) {
      relink.lost_fact_id = *supersedes;
    } else if (supersedes != nullptr || current == nullptr) {
      return std::nullopt;
    }
    if (current != nullptr) {
      relink.supersedes = current->fact_id;
      record.set("supersedes", current->fact_id);
    } else {
      record.erase("supersedes");
    }
    return relink;
  }

  bool project_known(const std::string& project_id, const std::optional<std::string>& pending) const {
    return projects_.count(project_id) != 0 || (pending && *pending == project_id);
  }

  result<void> apply_project(const json::value& wire, bool must_be_new, bool dry) {
    auto p = read_project(wire);
    if (!p) return fail(errc::corrupt, "project fails validation: " + p.error().message);
    auto it = projects_.find(p->project_id);
    if (it != projects_.end() && must_be_new) {
      return fail(errc::corrupt, "record creates project " + quote_for_message(p->project_id) + " twice");
    }
    if (dry) return {};
    if (it == projects_.end()) {
      std::string id = p->project_id;
      projects_.emplace(std::move(id), project_state{std::move(*p), {}, {}});
    } else {
      it->second.info = std::move(*p);
    }
    return {};
  }

  // A package record's package, when the record applies to the state (the
  // record's hash is a string: add_package takes it). `movable`, when not
  // null, is the record's "package" member, which the caller gives up: it is
  // moved into the package instead of copied. `read`, when not null, is what
  // read_package returned for that member (prepare_record), taken instead of
  // reading it again.
  result<package> check_package(const json::value& record, const std::optional<std::string>& pending,
                                json::value* movable = nullptr, result<package>* read = nullptr) const {
    const std::string* hash = detail::string_member(record, "hash");
    const json::value* wire = record.find("package");
    if (hash == nullptr || wire == nullptr) return fail(errc::corrupt, "package record without hash or package");
    auto p = read != nullptr ? std::move(*read) : movable == wire ? read_package(std::move(*movable)) : read_package(*wire);
    if (!p) return fail(errc::corrupt, "package record fails validation: " + p.error().message);
    AGENTCTX_TRY(check_package_place(*p, pending));
    return p;
  }

  // Whether package `p`, read from a package record, has a place in the
  // state: its project is known and it is not there yet.
  result<void> check_package_place(const package& p, const std::optional<std::string>& pending) const {
    if (!project_known(p.project_id, pending)) {
      return fail(errc::corrupt, "package record for unknown project " + quote_for_message(p.project_id));
    }
    if (find_in_project(p.project_id, p.package_id) != nullptr) {
      return fail(errc::corrupt, "package " + quote_for_message(p.package_id) + " deposited twice");
    }
    return {};
  }

  // Adds a package check_package() returned, recorded with `hash`;
  // quarantined when its bytes do not hash to that. `computed_hash`, when
  // not null, is content_hash of its wire computed already.
  void add_package(package p, const std::string& hash, result<std::string>* computed_hash = nullptr) {
    stored_package stored;
    stored.deposited_hash = hash;
    stored.hash = hash;
    auto computed = computed_hash != nullptr ? std::move(*computed_hash) : content_hash(p.wire, canonicalizer_);
    std::string reason;
    if (!computed) {
      reason = "its bytes do not canonicalize: " + computed.error().message;
    } else if (*computed != hash) {
      reason = "stored hash " + hash + " but the bytes hash to " + *computed;
    }
    stored.deposited_status = p.status;
    stored.deposited_review = p.review;
    stored.package = std::move(p);
    stored.sequence = packages_.size();
    if (!reason.empty()) {
      stored.quarantined = true;
      quarantine_reasons_[stored.sequence] = reason;
    }
    const std::size_t index = packages_.size();
    by_package_id_[stored.package.package_id].push_back(index);
    projects_.at(stored.package.project_id).packages.push_back(index);
    if (const auto& session_id = stored.package.created_by.session_id) {
      // Section 5.5: a session's packages are those its actor (the
      // session's actor_id and actor_type are the package's created_by id
      // and type, section 5.4) deposited in its project while it was open.
      // A session imported already ended by an earlier version, without its
      // list, lists its packages as that version did: whatever names it.
      auto open = sessions_.find(*session_id);
      if (open != sessions_.end() && open->second.project_id == stored.package.project_id &&
          ((!open->second.ended_at && open->second.is_actor(stored.package.created_by)) ||
           listless_imports_.count(*session_id) != 0)) {
        session_package_list& list = session_packages_[*session_id];
        if (list.listed.insert(stored.package.package_id).second) list.ids.push_back(stored.package.package_id);
      }
    }
    packages_.push_back(std::move(stored));
  }

  result<void> apply_status(const json::value& record, bool dry) {
    const std::string* project_id = detail::string_member(record, "project_id");
    const std::string* package_id = detail::string_member(record, "package_id");
    const std::string* status_text = detail::string_member(record, "status");
    const std::string* review_text = detail::string_member(record, "review_type");
    const std::string* at = detail::string_member(record, "at");
    const std::string* hash = detail::string_member(record, "hash");
    if (!project_id || !package_id || !status_text || !review_text || !at || !hash) {
      return fail(errc::corrupt, "status record lacks a member");
    }
    // A note of another type is read as none: imports before 2026-11-27
    // copied an export line's note into the record as it was.
    const std::string* note = detail::string_member(record, "note");
    // Any offset, as import reads a status line's time.
    if (!parse_rfc3339_utc_instant(*at)) return fail(errc::corrupt, "status record's at is not an RFC 3339 timestamp");
    const auto status = parse_package_status(*status_text);
    const auto review = parse_review_type(*review_text);
    if (!status || !review) return fail(errc::corrupt, "status record holds an unknown status or review type");
    const stored_package* found = find_in_project(*project_id, *package_id);
    if (found == nullptr) return fail(errc::corrupt, "status record for unknown package " + quote_for_message(*package_id));
    if (!is_recordable_status_change(found->package.status, *status)) {
      return fail(errc::corrupt, "status record makes a transition the protocol forbids");
    }
    json::value next = found->package.wire;
    next.set("status", *status_text);
    next.set("review_type", *review_text);
    auto reread = read_package(std::move(next));
    if (!reread) return fail(errc::corrupt, "status change makes the package invalid: " + reread.error().message);
    if (dry) return {};
    stored_package& p = packages_[static_cast<std::size_t>(found - packages_.data())];
    // A package quarantined already keeps its first reason (bytes that no
    // longer match as deposited mismatch every later status's hash too), and
    // is not hashed again.
    if (!p.quarantined) {
      auto computed = content_hash(reread->wire, canonicalizer_);
      if (!computed || *computed != *hash) {
        p.quarantined = true;
        quarantine_reasons_[p.sequence] = "status change to " + *status_text + " records hash " + *hash +
                                           " but the package then hashes to " + (computed ? *computed : "nothing");
      }
    }
    p.package = std::move(*reread);
    p.hash = *hash;
    status_change change;
    change.status = *status;
    change.review = *review;
    change.at = *at;
    if (note != nullptr) change.note = *note;
    change.hash = *hash;
    p.changes.push_back(std::move(change));
    return {};
  }

  result<void> apply_fact(const json::value& record, const std::optional<std::string>& pending, bool dry) {
    const json::value* wire = record.find("fact");
    if (wire == nullptr) return fail(errc::corrupt, "fact record without fact");
    auto f = read_fact(*wire);
    if (!f) return fail(errc::corrupt, "fact record fails validation: " + f.error().message);
    if (!project_known(f->project_id, pending)) {
      return fail(errc::corrupt, "fact record for unknown project " + quote_for_message(f->project_id));
    }
    if (fact_by_id_.count(f->fact_id) != 0) {
      return fail(errc::corrupt, "fact " + quote_for_message(f->fact_id) + " recorded twice");
    }
    const std::vector<std::size_t>* existing = fact_history(f->project_id, f->subject, f->predicate);
    const fact* current = existing != nullptr && !existing->empty() && facts_[existing->back()].is_current()
                              ? &facts_[existing->back()]
                              : nullptr;
    const std::string* supersedes = nullptr;
    if (!detail::optional_string_member(record, "supersedes", supersedes)) {
      return fail(errc::corrupt, "fact record's supersedes is not a string");
    }
    if (f->is_current()) {
      // Exactly the current fact of the key is superseded: never two current.
      if ((current != nullptr) != (supersedes != nullptr)) {
        return fail(errc::corrupt, "fact record's supersedes does not match the key's current fact");
      }
      if (supersedes != nullptr && current->fact_id != *supersedes) {
        return fail(errc::corrupt, "fact record supersedes the wrong fact");
      }
      // To the millisecond, as versions before exact instants checked: a
      // record of theirs may supersede a fact a fraction of a millisecond
      // after the new one begins (that fact then never held).
      if (supersedes != nullptr && f->valid_from_at.ms < current->valid_from_at.ms) {
        return fail(errc::corrupt, "fact record starts before the fact it supersedes");
      }
    } else if (supersedes != nullptr) {
      return fail(errc::corrupt, "an ended fact cannot supersede another");
    }
    if (dry) return {};
    auto& history = projects_.at(f->project_id).facts[{f->subject, f->predicate}];
    if (supersedes != nullptr) {
      end_fact(facts_[history.back()], f->valid_from, f->valid_from_at);
      place_ended_fact(history);
    }
    const std::size_t index = facts_.size();
    fact_by_id_[f->fact_id] = index;
    // History is in valid_from order with the current fact last; an ended
    // fact (imported history) goes before the first later or current one.
    auto at = history.end();
    if (!f->is_current()) {
      at = std::find_if(history.begin(), history.end(), [&](std::size_t i) {
        return facts_[i].is_current() || facts_[i].valid_from_at > f->valid_from_at;
      });
    }
    history.insert(at, index);
    f->sequence = index;
    facts_.push_back(std::move(*f));
    return {};
  }

  static void end_fact(fact& f, const std::string& at, const utc_instant& at_instant) {
    f.valid_to = at;
    f.valid_to_at = at_instant;
    f.wire.set("valid_to", at);
  }

  // Keeps a key's history in valid_from order, equal ones in the log's
  // order, once its current fact (the last) has ended: it moves before the
  // first fact that starts later, or as late and was recorded later (facts
  // that never held, recorded or imported while it was current), so the
  // history reads as an import of the same facts builds it.
  void place_ended_fact(std::vector<std::size_t>& history) const {
    const std::size_t ended = history.back();  // facts_ is in the log's order
    const utc_instant& from = facts_[ended].valid_from_at;
    const auto at = std::find_if(history.begin(), history.end() - 1, [&](std::size_t i) {
      return facts_[i].valid_from_at > from || (facts_[i].valid_from_at == from && i > ended);
    });
    std::rotate(at, history.end() - 1, history.end());
  }

  result<void> apply_invalidate(const json::value& record, bool dry) {
    const std::string* project_id = detail::string_member(record, "project_id");
    const json::value* ids = record.find("fact_ids");
    const std::string* valid_to = detail::string_member(record, "valid_to");
    if (project_id == nullptr || ids == nullptr || !ids->is_array() || valid_to == nullptr) {
      return fail(errc::corrupt, "invalidate record lacks a member");
    }
    if (projects_.count(*project_id) == 0) {
      return fail(errc::corrupt, "invalidate record for unknown project " + quote_for_message(*project_id));
    }
    auto at = parse_rfc3339_utc_instant(*valid_to);
    if (!at) return fail(errc::corrupt, "invalidate record's valid_to is not a timestamp");
    std::vector<std::size_t> targets;
    for (const json::value& id : ids->as_array()) {
      if (!id.is_string()) return fail(errc::corrupt, "invalidate record names a fact with a non-string");
      auto it = fact_by_id_.find(id.as_string());
      if (it == fact_by_id_.end() || !facts_[it->second].is_current() ||
          std::find(targets.begin(), targets.end(), it->second) != targets.end()) {
        return fail(errc::corrupt, "invalidate record names no current fact");
      }
      if (facts_[it->second].project_id != *project_id) {
        return fail(errc::corrupt, "invalidate record names a fact of another project");
      }
      targets.push_back(it->second);
    }
    if (dry) return {};
    // From valid_to on, no fact of a named fact's key holds (invalidation_end).
    for (std::size_t index : targets) {
      const fact& named = facts_[index];  // ending it changes only its valid_to
      auto& history = projects_.at(named.project_id).facts[{named.subject, named.predicate}];
      for (std::size_t other : history) {
        if (auto end = invalidation_end(named, facts_[other], *valid_to, *at)) {
          end_fact(facts_[other], end->first, end->second);
        }
      }
      place_ended_fact(history);  // the named fact, current until now, is the last
    }
    return {};
  }

  result<void> apply_session(const json::value& record, const std::optional<std::string>& pending, bool dry) {
    const json::value* wire = record.find("session");
    if (wire == nullptr) return fail(errc::corrupt, "session record without session");
    auto s = read_session(*wire);
    if (!s) return fail(errc::corrupt, "session record fails validation: " + s.error().message);
    if (!project_known(s->project_id, pending)) return fail(errc::corrupt, "session of unknown project");
    if (dry) return {};
    // packages_deposited is derived from the deposits (add_package); a
    // record carries it only when it was imported, with the list (in its
    // order) of the store that exported it.
    if (s->ended_at && wire->find("packages_deposited") == nullptr && sessions_.count(s->session_id) == 0) {
      // Created already ended: an import. Without packages_deposited it was
      // written by an earlier version's import (which left the list out and
      // wrote the session before its packages).
      // Or the end of a session whose start record store::repair lost: its
      // packages, its actor's that name it, come before this record, and
      // none after (it has ended).
      session_package_list before;
      if (auto project = projects_.find(s->project_id); project != projects_.end()) {
        for (std::size_t index : project->second.packages) {
          const package& p = packages_[index].package;
          if (p.created_by.session_id == s->session_id && s->is_actor(p.created_by) &&
              before.listed.insert(p.package_id).second) {
            before.ids.push_back(p.package_id);
          }
        }
      }
      if (before.ids.empty()) {
        listless_imports_.insert(s->session_id);
      } else {
        session_packages_[s->session_id] = std::move(before);
      }
    }
    if (wire->find("packages_deposited") != nullptr) {
      session_package_list& list = session_packages_[s->session_id];
      list = {};
      for (std::string& id : s->packages_deposited) {
        if (list.listed.insert(id).second) list.ids.push_back(std::move(id));
      }
    }
    s->packages_deposited.clear();
    s->wire.erase("packages_deposited");
    std::string id = s->session_id;
    sessions_[std::move(id)] = std::move(*s);
    return {};
  }

  io::file_system* fs_;
  std::string dir_;
  store_options options_;
  std::function<std::uint64_t()> random_;
  std::function<std::uint64_t()> clock_;
  std::unique_ptr<io::file_lock> lock_;
  std::unique_ptr<io::file> log_;
  // The format version of the log's header (log_format.hpp).
  std::uint32_t log_version_ = log_format_version;
  bool made_dir_ = false;     // this writer's open made the folder
  bool created_log_ = false;  // no relay.log was there when this writer took the lock
  std::uint64_t loaded_end_ = 0;
  // The last record a replay applied: its offset and its header (length and
  // checksum), by which refresh() tells that relay.log was replaced.
  std::uint64_t last_record_offset_ = 0;
  std::array<std::byte, record_header_size> last_record_header_{};
  std::optional<cut_tail> tail_cut_;  // what this writer's open cut
  std::uint64_t torn_tail_bytes_ = 0;  // a reader's: the torn tail after loaded_end_ when it last read
  std::size_t record_count_ = 0;
  bool poisoned_ = false;
  json::canonicalizer canonicalizer_;
  std::vector<json::canonicalizer> helpers_;  // the helper threads' (replay)
  std::string frame_;

  std::map<std::string, project_state> projects_;
  std::vector<stored_package> packages_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_package_id_;
  std::map<std::uint64_t, std::string> quarantine_reasons_;
  std::unordered_map<std::string, session_package_list> session_packages_;
  std::set<std::string> listless_imports_;  // sessions an earlier version imported (apply_session)
  std::vector<fact> facts_;
  std::unordered_map<std::string, std::size_t> fact_by_id_;
  std::map<std::string, session> sessions_;
};

inline result<store::prepared_package> store::prepare_package_record(json::value record) {
  const std::string* type = detail::string_member(record, "type");
  const json::value* wire = record.find("package");
  if (type == nullptr || *type != "package" || wire == nullptr || detail::string_member(record, "hash") == nullptr) {
    return fail(errc::invalid_argument, "not a package record: it needs type \"package\", hash and package");
  }
  auto read = read_package(*wire);
  if (!read) return unexpected(std::move(read).error());
  auto hash = content_hash(*wire, canonicalizer_);
  if (!hash) return unexpected(std::move(hash).error());
  prepared_package out;
  out.prepared_.read = std::move(read);
  out.prepared_.hash = std::move(hash);
  out.prepared_.record = std::move(record);
  return out;
}

inline result<void> store::append_record(prepared_package&& prepared) {
  prepared_record taken = std::exchange(prepared.prepared_, prepared_record());
  AGENTCTX_TRY(check_writable());
  return commit(*taken.record, &taken);
}

}  // namespace agentctx::relay
