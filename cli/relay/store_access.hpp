// Opening the store named by --store: read-only for the commands that only
// read (they take no lock, so they work while a writer such as `relay serve`
// runs), as its writer for the others (the folder and an empty log are
// created by the first write); and reading a FILE argument, "-" being
// standard input.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include "agentctx/core/result.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/relay/store.hpp"
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

/// Opens the store read-only and returns what `body` returns for it, or the
/// exit code of the failed open (reported).
template <class Body>
int with_reader(const common_options& o, Body&& body) {
  relay::store_options options;
  options.read_only = true;
  auto store = relay::store::open(agentctx::io::default_file_system(), o.store, options);
  if (!store) return report_open_error(o, store.error());
  return body(*store);
}

/// Opens (creating it when missing) the store as its writer, waiting for the
/// lock with --wait, and returns what `body` returns for it, or the exit code
/// of the failed open (reported).
template <class Body>
int with_writer(const writer_options& o, Body&& body) {
  relay::store_options options;
  options.wait_for_lock = o.wait;
  auto store = relay::store::open(agentctx::io::default_file_system(), o.store, options);
  if (!store) return report_open_error(o, store.error());
  return body(*store);
}

/// The project `project_id` of `s`. Errors: not_found ("project ... does
/// not exist", which protocol_error_of calls project_not_found).
inline agentctx::result<const relay::project*> existing_project(const relay::store& s, const std::string& project_id) {
  if (const relay::project* p = s.find_project(project_id)) return p;
  return agentctx::fail(agentctx::errc::not_found, "project \"" + project_id + "\" does not exist");
}

/// The whole of `path`, or of standard input when it is "-". Errors: those
/// of file_system::map (a missing file: not_found with its errno); io_error
/// when standard input cannot be read.
inline agentctx::result<std::string> read_input(const std::string& path) {
  std::string text;
  if (path == "-") {
    char buffer[65536];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) text.append(buffer, n);
    if (std::ferror(stdin)) return agentctx::fail(agentctx::errc::io_error, "cannot read standard input");
    return text;
  }
  auto mapped = agentctx::io::default_file_system().map(path);
  if (!mapped) return agentctx::unexpected(std::move(mapped).error());
  const auto bytes = mapped->bytes();
  text.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return text;
}

/// The name of an input in messages: the path, or "standard input".
inline std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

/// A parse error of the JSON in input `path` as the invalid_schema error it
/// is to the protocol (exit 3), naming the input: "pkg.json: not JSON: ...".
inline agentctx::error invalid_json(const std::string& path, const agentctx::error& e) {
  return agentctx::make_error(agentctx::errc::invalid_argument, e.message, input_name(path));
}

}  // namespace relay_cli
