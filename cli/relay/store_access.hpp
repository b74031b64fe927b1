// Opening the store named by --store: read-only for the commands that only
// read (they take no lock, so they work while a writer such as `relay serve`
// runs), as its writer for the others (a command that writes creates the
// folder and the log, and removes them again when it fails before writing
// a record: a failed first deposit leaves no empty store behind); and reading
// a FILE argument, "-" being standard input.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <string>
#include <thread>
#include <utility>

#include "agentctx/core/quote.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/detail/file_system_errors.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/relay/store.hpp"
#include "common/input.hpp"
#include "relay/command.hpp"

namespace relay_cli {

/// Reports a failed open: a folder that holds no store is exit 2
/// (store_not_found), like a missing file; a damaged log says how to salvage
/// it; the rest as report_error says.
inline int report_open_error(const common_options& o, const agentctx::error& e) {
  if (e.code == agentctx::errc::not_found && e.sys_errno == 0) return report(o, e, store_missing_failure);
  if (e.code == agentctx::errc::corrupt) {
    agentctx::error hinted = e;
    hinted.message += " ('relay repair' salvages what survives and keeps the damaged log)";
    return report_error(o, hinted);
  }
  return report_error(o, e);
}

/// Checks the --store argument before a store is opened there: an empty one
/// and one that names something other than a folder are usage errors (exit
/// 2), said as such rather than as whatever opening the log there fails with.
/// Returns 0 when the folder is fine (or does not exist yet), else the exit
/// code of the reported error.
inline int check_store_argument(const common_options& o) {
  if (o.store.empty()) return usage_error(o, "--store: the store's folder must be named (it is empty)");
  struct stat st {};
  const int found = ::stat(o.store.c_str(), &st);
  // ENOTDIR: a part of the path is a file ("pkg.json/").
  if (found == 0 ? !S_ISDIR(st.st_mode) : errno == ENOTDIR) {
    return usage_error(o, "--store " + agentctx::escape_for_message(o.store, 200) + ": not a directory");
  }
  return exit_ok;
}

/// Threads that read the log when a store opens: the machine's cores.
inline unsigned open_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

/// Opens the store read-only and returns what `body` returns for it, or the
/// exit code of the failed open (reported).
template <class Body>
int with_reader(const common_options& o, Body&& body) {
  relay::store_options options;
  options.read_only = true;
  options.open_threads = open_threads();
  if (const int refused = check_store_argument(o)) return refused;
  auto store = relay::store::open(agentctx::io::default_file_system(), o.store, options);
  if (!store) return report_open_error(o, store.error());
  return body(*store);
}

/// Opens the store as its writer (creating it when missing if the command's
/// store_use is `created`; else a missing store is exit 2, store_not_found),
/// waiting for the lock with --wait, and returns what `body` returns for it, or the exit code
/// of the failed open (reported). When `body` fails (a non-zero exit code)
/// on a store this call created before any record was written, the store is
/// removed again (relay::store::discard_if_unused), its folder too when the
/// call made it.
template <class Body>
int with_writer(const writer_options& o, Body&& body) {
  relay::store_options options;
  options.wait_for_lock = o.wait;
  options.create_if_missing = o.use == store_use::created;
  options.open_threads = open_threads();
  if (const int refused = check_store_argument(o)) return refused;
  auto store = relay::store::open(agentctx::io::default_file_system(), o.store, options);
  if (!store) return report_open_error(o, store.error());
  if (const auto& cut = store->tail_cut()) {
    std::cerr << o.program << ": note: the log ended in the torn tail of an append a crash interrupted ("
              << count_of(cut->bytes, "byte") << " at byte " << cut->offset << ": "
              << agentctx::printable_line(cut->problem) << "); cut, and "
              << (cut->kept_as.empty() ? "not kept: " + agentctx::printable_line(cut->not_kept)
                                       : "kept as " + agentctx::escape_for_message(cut->kept_as, 400))
              << '\n';
  }
  const int code = body(*store);
  // The command has reported its own failure; a store that could not be
  // removed stays, empty, and a warning says so.
  if (code != exit_ok) {
    if (auto discarded = relay::store::discard_if_unused(std::move(*store)); !discarded) {
      std::cerr << o.program << ": warning: could not remove all of the empty store it made: "
                << agentctx_cli::printable_error(discarded.error()) << '\n';
    }
  }
  return code;
}

/// The project `project_id` of `s`. Errors: not_found ("project ... does
/// not exist", which protocol_error_of calls project_not_found).
inline agentctx::result<const relay::project*> existing_project(const relay::store& s, const std::string& project_id) {
  if (const relay::project* p = s.find_project(project_id)) return p;
  return agentctx::unexpected(relay::project_not_found(project_id));
}

using agentctx_cli::input_name;
using agentctx_cli::read_input;

/// A parse error of the JSON in input `path` as the invalid_schema error it
/// is to the protocol (exit 3), naming the input and keeping the byte offset
/// the parser found it at: "pkg.json: at byte 12: ...".
inline agentctx::error invalid_json(const std::string& path, const agentctx::error& e) {
  return agentctx::make_error(agentctx::errc::invalid_argument, e.message, input_name(path), e.offset);
}

}  // namespace relay_cli
