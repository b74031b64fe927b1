// agentctx/memory/agent_memory.hpp: the operations of agent memory (seed
// 004) on one agent's memory in one repository.
//
//   auto repo = memory::open_repository("/home/me/project");       // the root, held open
//   auto memory = memory::agent_memory::open(**repo, "aristotle");
//   memory->start_session("2025-01-20");
//   memory->append_entry("Decisions", "- Ship the parser first", "2025-01-20");
//   auto summary = memory->read_summary();                          // text and its hash
//   memory->update_summary("Decisions", "- Parser first", memory::summary_mode::append, summary->hash);
//   auto sessions = memory->list_sessions(10);                      // newest first
//
// The files, relative to the repository root (docs/memory/agent-memory.md):
//   .github/agent-memory/<agent>/_schema.md        the schema (the seed's v1 when created here)
//   .github/agent-memory/<agent>/_summary.md       the curated summary
//   .github/agent-memory/<agent>/logs/YYYY-MM-DD.md one session log per day
//   .github/agent-memory/<agent>/.lock             the writers' lock (empty)
// Folders and _schema.md are created when missing; no file is ever deleted
// and _schema.md is never overwritten.
//
// Guarantees:
// - Every argument is checked before anything is written: a refused call
//   leaves the repository as it was.
// - Every file is reached through the io::file_system given, which for a
//   real repository is an io::confined_file_system: a symlink anywhere
//   below the root, "..", or an absolute path is PathOutsideRepository.
// - Writers take the agent's lock (waiting for it unless told not to), read
//   the file, splice the change into its bytes and replace the file with a
//   temporary file and a rename: concurrent writers in any number of
//   processes lose nothing, a crash leaves the old or the new file, and the
//   bytes outside the change (human edits, CRLF line ends) stay as they were.
// - An entry is added after the last line of its section, so a section
//   reads in the order entries were appended. Content is checked by
//   check_entry_content (markdown_sections.hpp): it can never create, end or
//   hide a section, and content over the limit is refused, never cut.
// - The default date is the current UTC day.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/error.hpp"
#include "agentctx/core/lines.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/safe_name.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/confined_file_system.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/memory/errors.hpp"
#include "agentctx/memory/markdown_sections.hpp"

namespace agentctx::memory {

struct memory_options {
  /// The largest content append_entry and update_summary take, in bytes.
  std::size_t max_content_bytes = 64 * 1024;
  /// The largest a memory file may be read or grow to, in bytes.
  std::uint64_t max_file_bytes = 16 * 1024 * 1024;
  /// Wait for another writer's lock (true) or fail at once with Locked.
  bool wait_for_lock = true;
  /// The current time in Unix milliseconds, for the default date; empty:
  /// the system clock.
  std::function<std::uint64_t()> clock;
};

enum class summary_mode { append, replace };

constexpr std::string_view to_string(summary_mode mode) noexcept {
  return mode == summary_mode::append ? "append" : "replace";
}

/// "append" or "replace"; anything else is InvalidMode.
inline outcome<summary_mode> parse_summary_mode(std::string_view text) {
  if (text == "append") return summary_mode::append;
  if (text == "replace") return summary_mode::replace;
  return failure(error_code::invalid_mode, "mode " + quote_for_message(text, 40) + " is neither \"append\" nor \"replace\"");
}

/// The folder all agents' memory lives in, relative to the repository root.
inline constexpr std::string_view memory_folder = ".github/agent-memory";

/// The paths of one agent's files, relative to the repository root.
struct memory_layout {
  std::string agent_dir;
  std::string logs_dir;
  std::string schema_file;
  std::string summary_file;
  std::string lock_file;

  explicit memory_layout(std::string_view agent_name)
      : agent_dir(std::string(memory_folder) + "/" + std::string(agent_name)),
        logs_dir(agent_dir + "/logs"),
        schema_file(agent_dir + "/_schema.md"),
        summary_file(agent_dir + "/_summary.md"),
        lock_file(agent_dir + "/.lock") {}

  /// "logs/YYYY-MM-DD.md" below the agent's folder.
  std::string log_file(std::string_view date) const { return logs_dir + "/" + std::string(date) + ".md"; }
};

/// The schema in force: _schema.md, or the default v1 when there is none yet.
struct loaded_schema {
  schema value;
  bool from_file = false;
  std::vector<warning> warnings;
};

struct session_opened {
  std::string session_file;  ///< relative to the repository root
  bool created = false;
  std::vector<warning> warnings;
};

struct entry_appended {
  std::string session_file;
  std::string section;
  bool created = false;  ///< the log did not exist and was started for this entry
  std::vector<warning> warnings;
};

struct summary_read {
  std::string summary_file;
  std::string summary;  ///< the markdown, byte for byte
  std::string hash;     ///< "sha256:<hex>" of those bytes: the base_hash of a later update
  bool initialized = false;  ///< the file was missing and was created from the template
  std::vector<warning> warnings;
};

struct summary_updated {
  std::string summary_file;
  std::string section;
  summary_mode mode = summary_mode::append;
  std::string previous_hash;
  std::string hash;
  bool section_added = false;  ///< the summary lacked the schema's section; it was added at the end
  std::vector<warning> warnings;
};

struct session_list {
  std::vector<std::string> sessions;  ///< "YYYY-MM-DD.md", newest first
  std::size_t total = 0;              ///< session logs in all
  std::optional<std::string> next_before;  ///< pass as `before` for the next page; unset on the last
  std::vector<std::string> ignored;   ///< entries of logs/ that are not session logs
};

/// Opens the repository at `repo_root` for agent memory: an absolute,
/// canonical path (no symlink, ".", ".." or "//") of an existing directory
/// other than "/". When `allowed_roots` is not empty, the root must be one
/// of them, compared as whole paths (a sibling "/repo_evil" is not "/repo").
/// Errors: InvalidRepoRoot.
inline outcome<std::unique_ptr<io::confined_file_system>> open_repository(
    std::string_view repo_root, std::span<const std::string> allowed_roots = {}) {
  const auto bad = [&](std::string why) {
    return failure(error_code::invalid_repo_root, "repo_root " + quote_for_message(repo_root, 200) + " " + why);
  };
  if (repo_root.empty() || repo_root.front() != '/') return bad("is not an absolute path");
  if (repo_root.find('\0') != std::string_view::npos) return bad("contains a NUL byte");
  std::string root(repo_root);
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root == "/") return bad("is the root of the file system, not a repository");
  if (!allowed_roots.empty()) {
    bool allowed = false;
    for (const std::string& candidate : allowed_roots) {
      std::string trimmed = candidate;
      while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
      allowed = allowed || trimmed == root;
    }
    if (!allowed) return bad("is not one of the repositories this server may use");
  }
  auto fs = io::confined_file_system::open(root);
  if (!fs) {
    const error& e = fs.error();
    if (e.code == errc::outside_root) return bad("must be the canonical path of the repository (no symlink, \".\", \"..\")");
    if (e.code == errc::not_found) return bad("does not exist");
    if (e.sys_errno == ENOTDIR) return bad("is not a directory");
    return bad("cannot be opened: " + e.message);
  }
  return std::move(*fs);
}


/// One agent's memory in one repository (see the file comment). Cheap to
/// open: it holds the file system (the caller's, which must outlive it),
/// the name and the options; every operation reads the files afresh.
class agent_memory {
 public:
  /// Errors: InvalidAgentName when `agent_name` is not a safe name
  /// (core/safe_name.hpp).
  static outcome<agent_memory> open(io::file_system& repo, std::string_view agent_name, memory_options options = {}) {
    if (auto checked = check_safe_name(agent_name, "agent name"); !checked) {
      return failure(error_code::invalid_agent_name, checked.error().message);
    }
    return agent_memory(repo, agent_name, std::move(options));
  }

  const std::string& agent_name() const noexcept { return agent_; }
  const memory_layout& layout() const noexcept { return layout_; }

  /// The schema in force, with a SchemaVersionMismatch warning when it
  /// declares another version than supported_schema_version. Reads only.
  /// Errors: InvalidSchema, PathOutsideRepository, IoError.
  outcome<loaded_schema> read_schema() const {
    auto text = read_file(layout_.schema_file, error_code::invalid_schema);
    if (!text) return std::move(text).error();
    loaded_schema out;
    out.from_file = text->has_value();
    auto parsed = parse_schema(out.from_file ? std::string_view(**text) : default_schema_v1);
    if (!parsed) return failure(error_code::invalid_schema, layout_.schema_file + ": " + parsed.error().message);
    out.value = std::move(*parsed);
    if (out.value.version != supported_schema_version) {
      out.warnings.push_back({error_code::schema_version_mismatch,
                              layout_.schema_file + " declares schema version " + std::to_string(out.value.version) +
                                  "; this tool implements version " + std::to_string(supported_schema_version) +
                                  " (the sections are taken from the file)"});
    }
    return out;
  }

  /// Creates the session log of `date` (default: today, UTC) with the
  /// schema's sections and a filled-in Header, unless it exists; an
  /// existing log is checked, never changed. Errors: InvalidDate,
  /// InvalidSchema, MalformedLog (an existing log that is not a document of
  /// sections), PathOutsideRepository, Locked, IoError.
  outcome<session_opened> start_session(std::optional<std::string_view> date = std::nullopt) {
    auto day = resolve_date(date);
    if (!day) return std::move(day).error();
    auto checked = read_schema();  // an invalid schema fails before anything is written
    if (!checked) return std::move(checked).error();
    auto lock = lock_for_writing(true);
    if (!lock) return std::move(lock).error();
    auto opened = open_log(*day);
    if (!opened) return std::move(opened).error();
    return session_opened{opened->path, opened->created, std::move(opened->warnings)};
  }

  /// Appends `content` at the end of `section` of the session log of `date`
  /// (default: today, UTC), starting the log first when it does not exist.
  /// Errors: InvalidDate, InvalidSection (not an entry section of the
  /// schema: "Header" is written by start_session), InvalidContent,
  /// ContentTooLarge, InvalidSchema, MalformedLog (the log lacks the section
  /// or is not a document of sections), PathOutsideRepository, Locked,
  /// IoError.
  outcome<entry_appended> append_entry(std::string_view section, std::string_view content,
                                       std::optional<std::string_view> date = std::nullopt) {
    auto day = resolve_date(date);
    if (!day) return std::move(day).error();
    if (auto bad = check_content(content)) return std::move(*bad);
    auto checked = read_schema();
    if (!checked) return std::move(checked).error();
    if (auto bad = check_entry_section(checked->value, section)) return std::move(*bad);

    auto lock = lock_for_writing(true);
    if (!lock) return std::move(lock).error();
    auto opened = open_log(*day);
    if (!opened) return std::move(opened).error();
    if (auto bad = check_entry_section(opened->log_schema, section)) return std::move(*bad);  // changed meanwhile
    const auto where = find_section_extent(opened->text, section);
    if (!where) {
      return failure(error_code::malformed_log,
                     opened->path + " has no section \"## " + std::string(section) + "\" (was it started with another schema?)");
    }
    std::string updated = with_entry_appended(opened->text, *where, trimmed_entry(content));
    if (auto written = replace_file(opened->path, updated, error_code::malformed_log); !written) {
      return std::move(written).error();
    }
    return entry_appended{opened->path, std::string(section), opened->created, std::move(opened->warnings)};
  }

  /// The summary, byte for byte, with its hash. A missing summary is
  /// created from the template (the schema's sections but Header, empty).
  /// A summary that is not a document of sections is returned as it is,
  /// with a MalformedSummary warning. Errors: InvalidSchema,
  /// MalformedSummary (a directory, or larger than max_file_bytes),
  /// PathOutsideRepository, Locked, IoError.
  outcome<summary_read> read_summary() {
    auto existing = read_file(layout_.summary_file, error_code::malformed_summary);
    if (!existing) return std::move(existing).error();
    summary_read out;
    out.summary_file = layout_.summary_file;
    if (existing->has_value()) {
      out.summary = std::move(**existing);
    } else {
      auto lock = lock_for_writing(false);  // another writer may create it first
      if (!lock) return std::move(lock).error();
      auto created = read_summary_locked();
      if (!created) return std::move(created).error();
      out.summary = std::move(created->text);
      out.initialized = created->created;
    }
    out.hash = sha256_text(out.summary);
    if (auto parsed = parse_sections(out.summary); !parsed) {
      out.warnings.push_back({error_code::malformed_summary, layout_.summary_file + ": " + parsed.error().message});
    }
    return out;
  }

  /// Appends `content` to, or replaces with it, the body of one section of
  /// the summary (creating the summary from the template first when it is
  /// missing); nothing else in the file changes. A section of the schema the
  /// summary lacks is added at its end. When `base_hash` is given (the hash
  /// read_summary returned), the update fails with Conflict if the summary
  /// changed since. Errors: InvalidSection (not an entry section of the
  /// schema), InvalidContent, ContentTooLarge, InvalidArgument (a base_hash
  /// that is not "sha256:<64 hex>"), Conflict, InvalidSchema,
  /// MalformedSummary, PathOutsideRepository, Locked, IoError.
  outcome<summary_updated> update_summary(std::string_view section, std::string_view content, summary_mode mode,
                                          std::optional<std::string_view> base_hash = std::nullopt) {
    if (auto bad = check_content(content)) return std::move(*bad);
    if (base_hash && !is_sha256_text(*base_hash)) {
      return failure(error_code::invalid_argument, "base_hash must be \"sha256:\" and 64 lowercase hex digits");
    }
    auto checked = read_schema();
    if (!checked) return std::move(checked).error();
    if (auto bad = check_entry_section(checked->value, section)) return std::move(*bad);

    auto lock = lock_for_writing(false);
    if (!lock) return std::move(lock).error();
    auto current = read_summary_locked();
    if (!current) return std::move(current).error();
    const std::string& text = current->text;
    if (auto bad = check_entry_section(current->schema.value, section)) return std::move(*bad);
    summary_updated out;
    out.summary_file = layout_.summary_file;
    out.section = std::string(section);
    out.mode = mode;
    out.previous_hash = sha256_text(text);
    out.warnings = std::move(current->schema.warnings);
    if (base_hash && *base_hash != out.previous_hash) {
      return failure(error_code::conflict, layout_.summary_file + " changed since the version the update was based on (" +
                                               std::string(base_hash->substr(0, 19)) + "...; it is now " +
                                               out.previous_hash.substr(0, 19) + "...): read it again");
    }
    if (auto parsed = parse_sections(text); !parsed) {
      return failure(error_code::malformed_summary, layout_.summary_file + ": " + parsed.error().message);
    }
    const std::string_view entry = trimmed_entry(content);
    std::string updated;
    if (const auto where = find_section_extent(text, section)) {
      updated = mode == summary_mode::append ? with_entry_appended(text, *where, entry)
                                             : with_section_replaced(text, *where, entry);
    } else {
      updated = with_section_added(text, section, entry);
      out.section_added = true;
    }
    if (auto written = replace_file(layout_.summary_file, updated, error_code::malformed_summary); !written) {
      return std::move(written).error();
    }
    out.hash = sha256_text(updated);
    return out;
  }

  /// The session logs, newest first: at most `limit` (0: all) of those
  /// dated before `before` (a YYYY-MM-DD; absent: all). Reads only.
  /// Errors: InvalidDate (`before`), PathOutsideRepository, IoError.
  outcome<session_list> list_sessions(std::size_t limit = 0, std::optional<std::string_view> before = std::nullopt) const {
    if (before) {
      if (auto parsed = parse_calendar_date(*before); !parsed) {
        return failure(error_code::invalid_date, "before: " + parsed.error().message);
      }
    }
    session_list out;
    auto names = repo_->list_dir(layout_.logs_dir);
    if (!names) {
      if (names.error().code == errc::not_found) return out;
      return from_io(names.error(), error_code::io_error);
    }
    std::vector<std::string> sessions;
    for (std::string& name : *names) {
      if (name.starts_with('.')) continue;  // temporary files of writers in flight, and the like
      const bool dated = name.size() == 13 && name.ends_with(".md") && parse_calendar_date(name.substr(0, 10));
      (dated ? sessions : out.ignored).push_back(std::move(name));
    }
    std::sort(sessions.begin(), sessions.end(), std::greater<>());
    out.total = sessions.size();
    for (std::string& name : sessions) {
      if (before && std::string_view(name).substr(0, 10) >= *before) continue;
      if (limit != 0 && out.sessions.size() == limit) {
        out.next_before = out.sessions.back().substr(0, 10);
        break;
      }
      out.sessions.push_back(std::move(name));
    }
    return out;
  }

 private:
  agent_memory(io::file_system& repo, std::string_view agent_name, memory_options options)
      : repo_(&repo), agent_(agent_name), layout_(agent_name), options_(std::move(options)) {}

  /// A session log read under the lock (created when it was missing).
  struct open_log_result {
    std::string path;
    std::string text;
    bool created = false;
    memory::schema log_schema;
    std::vector<warning> warnings;
  };

  outcome<std::string> resolve_date(std::optional<std::string_view> date) const {
    if (!date) return format_calendar_date(options_.clock ? options_.clock() : now_unix_ms());
    auto parsed = parse_calendar_date(*date);
    if (!parsed) return failure(error_code::invalid_date, parsed.error().message);
    return std::string(*date);
  }

  std::optional<memory_error> check_content(std::string_view content) const {
    const content_problem problem = check_entry_content(content, options_.max_content_bytes);
    if (problem.what == content_problem::kind::none) return std::nullopt;
    return failure(problem.what == content_problem::kind::too_large ? error_code::content_too_large
                                                                    : error_code::invalid_content,
                   problem.message);
  }

  static std::optional<memory_error> check_entry_section(const schema& s, std::string_view section) {
    std::string known;
    for (const std::string& name : s.entry_sections()) {
      if (name == section) return std::nullopt;
      known += known.empty() ? "" : ", ";
      known += name;
    }
    return failure(error_code::invalid_section,
                   "Section '" + escape_for_message(section, 80) + "' is not defined in schema" +
                       (section == "Header" ? std::string(" as an entry section (Header is written by start_session)") : "") +
                       " (sections: " + known + ")");
  }

  /// The bytes of `path`, or nullopt when it does not exist. A directory in
  /// its place, or a file over max_file_bytes, is a `data_code` error.
  outcome<std::optional<std::string>> read_file(const std::string& path, error_code data_code) const {
    auto size = repo_->file_size(path);
    if (!size) {
      const error& e = size.error();
      if (e.code == errc::not_found) return std::optional<std::string>{};
      if (e.sys_errno == EISDIR) return failure(data_code, path + " is a directory, not a file");
      return from_io(e, data_code);
    }
    if (*size > options_.max_file_bytes) {
      return failure(data_code, path + " is " + std::to_string(*size) + " bytes, more than the " +
                                    std::to_string(options_.max_file_bytes) + " bytes a memory file may have");
    }
    auto mapped = repo_->map(path);
    if (!mapped) {
      if (mapped.error().code == errc::not_found) return std::optional<std::string>{};
      return from_io(mapped.error(), data_code);
    }
    const auto bytes = mapped->bytes();
    return std::optional<std::string>(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

  /// Replaces `path` with `text` (temporary file, sync, rename, sync of the folder).
  outcome<bool> replace_file(const std::string& path, std::string_view text, error_code data_code) {
    if (text.size() > options_.max_file_bytes) {
      return failure(error_code::content_too_large, path + " would grow to " + std::to_string(text.size()) +
                                                        " bytes, past the " + std::to_string(options_.max_file_bytes) +
                                                        " bytes a memory file may have");
    }
    auto written = io::write_file_atomically(*repo_, path, std::as_bytes(std::span(text.data(), text.size())));
    if (!written) {
      if (written.error().sys_errno == EISDIR) return failure(data_code, path + " is a directory, not a file");
      return from_io(written.error(), data_code);
    }
    return true;
  }

  /// Creates the folder `path` when it is missing, and makes its entry
  /// durable either way: a writer killed after creating it (the machine
  /// living on) may have left it in the page cache only, and what is written
  /// into it now must not vanish with it at a power failure.
  /// (Once per folder and object: a long-running server does not sync the
  /// same parents at every write.)
  outcome<bool> ensure_folder(const std::string& path) {
    auto there = repo_->exists(path);
    if (!there) return from_io(there.error(), error_code::io_error);
    // On an existing path this refuses a file (or anything else) where the
    // folder belongs.
    if (auto made = repo_->create_dir(path); !made) return from_io(made.error(), error_code::io_error);
    if (*there && durable_folders_.count(path) != 0) return false;
    if (auto synced = repo_->sync_dir(io::parent_directory(path)); !synced) {
      return from_io(synced.error(), error_code::io_error);
    }
    durable_folders_.insert(path);
    return !*there;
  }

  /// Creates the agent's folders (and logs/ when `with_logs`), takes the
  /// lock, and creates _schema.md when it is missing.
  outcome<std::unique_ptr<io::file_lock>> lock_for_writing(bool with_logs) {
    const std::string github(memory_folder.substr(0, memory_folder.find('/')));
    for (const std::string& folder : {github, std::string(memory_folder), layout_.agent_dir}) {
      if (auto made = ensure_folder(folder); !made) return std::move(made).error();
    }
    if (with_logs) {
      if (auto made = ensure_folder(layout_.logs_dir); !made) return std::move(made).error();
    }
    auto lock = repo_->lock(layout_.lock_file, io::lock_mode::exclusive, options_.wait_for_lock);
    if (!lock) {
      if (lock.error().code == errc::locked) {
        return failure(error_code::locked, "the memory of agent " + agent_ + " is being written by another process");
      }
      return from_io(lock.error(), error_code::io_error);
    }
    auto there = repo_->exists(layout_.schema_file);
    if (!there) return from_io(there.error(), error_code::invalid_schema);
    if (!*there) {
      if (auto written = replace_file(layout_.schema_file, default_schema_v1, error_code::invalid_schema); !written) {
        return std::move(written).error();
      }
    }
    return std::move(*lock);
  }

  /// Under the lock: the log of `day`, created from the schema when missing.
  outcome<open_log_result> open_log(const std::string& day) {
    auto loaded = read_schema();
    if (!loaded) return std::move(loaded).error();
    open_log_result out;
    out.path = layout_.log_file(day);
    out.warnings = std::move(loaded->warnings);
    auto existing = read_file(out.path, error_code::malformed_log);
    if (!existing) return std::move(existing).error();
    if (existing->has_value()) {
      out.text = std::move(**existing);
      if (auto parsed = parse_sections(out.text); !parsed) {
        return failure(error_code::malformed_log, out.path + ": " + parsed.error().message);
      }
      // Found, it may be what a killed writer left unsynced (its bytes, or
      // its name in logs/): made durable before it is answered as there.
      if (auto synced = io::sync_file_and_directory(*repo_, out.path); !synced) {
        return from_io(synced.error(), error_code::io_error);
      }
    } else {
      out.text = new_log(loaded->value, day);
      if (auto written = replace_file(out.path, out.text, error_code::malformed_log); !written) {
        return std::move(written).error();
      }
      out.created = true;
    }
    out.log_schema = std::move(loaded->value);
    return out;
  }

  /// The text of a new session log: a title, then the schema's sections in
  /// its order, Header filled in (Agent Name, Date, Session ID; other
  /// Header items left for the agent), the others empty.
  std::string new_log(const schema& s, const std::string& day) const {
    std::string out = "# Agent Memory Session Log: " + day + "\n";
    for (const section& sec : s.document.sections) {
      out += "\n## " + sec.name + "\n";
      if (sec.name != "Header") continue;
      for (const std::string& item : sec.body) {
        if (!item.starts_with("- ")) continue;
        std::string label = item.substr(2);
        if (const std::size_t paren = label.find(" ("); paren != std::string::npos) label.resize(paren);
        std::string value;
        if (label == "Agent Name") value = agent_;
        if (label == "Date") value = day;
        if (label == "Session ID") value = agent_ + "-" + day;
        out += "- " + label + ":" + (value.empty() ? "" : " " + value) + "\n";
      }
    }
    return out;
  }

  /// The summary template: a title and the schema's entry sections, empty.
  std::string summary_template(const schema& s) const {
    std::string out = "# Agent Memory Summary: " + agent_ + "\n";
    for (const std::string& name : s.entry_sections()) out += "\n## " + name + "\n";
    return out;
  }

  /// The summary's text under the lock, and the schema read with it.
  struct locked_summary {
    std::string text;
    loaded_schema schema;
    bool created = false;  ///< it was missing and was created from the template
  };

  /// Under the lock: the summary, created from the template when missing.
  outcome<locked_summary> read_summary_locked() {
    auto loaded = read_schema();
    if (!loaded) return std::move(loaded).error();
    auto existing = read_file(layout_.summary_file, error_code::malformed_summary);
    if (!existing) return std::move(existing).error();
    if (existing->has_value()) return locked_summary{std::move(**existing), std::move(*loaded), false};
    std::string text = summary_template(loaded->value);
    if (auto written = replace_file(layout_.summary_file, text, error_code::malformed_summary); !written) {
      return std::move(written).error();
    }
    return locked_summary{std::move(text), std::move(*loaded), true};
  }

  io::file_system* repo_;
  std::string agent_;
  memory_layout layout_;
  memory_options options_;
  std::set<std::string> durable_folders_;  // folders whose entries this object has synced
};

}  // namespace agentctx::memory
