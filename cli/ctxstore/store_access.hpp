// Opening the store named by --store: read-only for the commands that only
// read (they take no lock and work while a writer runs), as its writer for
// the others; and the one-line account of what recovery cut.
#pragma once

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/turns/turn_store.hpp"
#include "ctxstore/command.hpp"

namespace ctxstore {

/// What recovery cut or rebuilt, as one clause per finding joined by "; "
/// ("cut 7 bytes from the end of blobs.pack; ..."), ending with the first
/// damage found; "would cut", "would drop", ... when `applied` is false (a
/// reader only computes recovery). Empty when the report is clean.
inline std::string describe_recovery(const turns::recovery_report& r, bool applied) {
  const std::string would = applied ? "" : "would ";
  std::vector<std::string> parts;
  if (r.pack_cut_bytes > 0) parts.push_back(would + "cut " + count_of(r.pack_cut_bytes, "byte") + " from the end of blobs.pack");
  if (r.turns_dropped > 0) parts.push_back(would + "drop " + count_of(r.turns_dropped, "turn"));
  if (r.log_cut_bytes > 0) parts.push_back(would + "cut " + count_of(r.log_cut_bytes, "byte") + " from the end of turns.log");
  if (r.head_records_dropped > 0) {
    parts.push_back(would + "drop " + count_of(r.head_records_dropped, "head record") + " naming lost turns");
  }
  if (r.head_log_cut_bytes > 0) {
    parts.push_back(would + "cut " + count_of(r.head_log_cut_bytes, "byte") + " from the end of heads.log");
  }
  if (r.index_rebuilt) parts.push_back(would + "rebuild the blob index (" + r.index_problem + ")");
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "; ") + part;
  if (!out.empty() && !r.first_problem.empty()) out += "; first damage: " + r.first_problem;
  // Its problems name the store's files, whose folder may be named anything.
  return agentctx::printable_line(out);
}

/// Opens the store read-only. Errors: those of turn_store::open.
inline agentctx::result<std::unique_ptr<turns::turn_store>> open_reader(const common_options& o) {
  turns::store_options options;
  options.read_only = true;
  return turns::turn_store::open(agentctx::io::default_file_system(), o.store, options);
}

/// Opens the store as its writer (waiting for the lock with --wait), and
/// says on stderr, in one line, what recovery repaired, if anything.
inline agentctx::result<std::unique_ptr<turns::turn_store>> open_writer(const writer_options& o) {
  turns::store_options options;
  options.wait_for_lock = o.wait;
  auto store = turns::turn_store::open(agentctx::io::default_file_system(), o.store, options);
  if (store && !(*store)->recovery().clean()) {
    std::cerr << program_name << ": " << agentctx::escape_for_message(o.store, SIZE_MAX) << ": recovery "
              << describe_recovery((*store)->recovery(), true) << '\n';
  }
  return store;
}

/// Reports a failed open. A folder that holds no store is a usage error
/// (exit 2, like a missing file), not a missing record (exit 1).
inline int report_open_error(const agentctx::error& e) {
  const int code = report_error(e);
  return e.code == agentctx::errc::not_found ? exit_usage : code;
}

/// Opens the store read-only and returns what `body` returns for it, or the
/// exit code of the failed open (reported).
template <class Body>
int with_reader(const common_options& o, Body&& body) {
  auto store = open_reader(o);
  if (!store) return report_open_error(store.error());
  return body(**store);
}

/// Opens the store as its writer and returns what `body` returns for it, or
/// the exit code of the failed open (reported).
template <class Body>
int with_writer(const writer_options& o, Body&& body) {
  auto store = open_writer(o);
  if (!store) return report_open_error(store.error());
  return body(**store);
}

}  // namespace ctxstore
