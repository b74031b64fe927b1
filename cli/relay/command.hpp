// Shared pieces of the relay subcommands (and of relay-deposit): the options
// every subcommand takes, the exit codes of the protocol's errors, one-line
// error reporting (with --json also as a JSON document on stdout), and the
// registration functions each subcommand file defines.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>

#include "agentctx/core/error.hpp"
#include "agentctx/core/quote.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/log_format.hpp"
#include "common/command_registration.hpp"
#include "common/command_support.hpp"

namespace relay_cli {

namespace relay = agentctx::relay;
namespace json = agentctx::json;

using agentctx_cli::add_command;
using agentctx_cli::command_table;
using agentctx_cli::count_of;
using agentctx_cli::exit_failure;
using agentctx_cli::exit_ok;
using agentctx_cli::exit_usage;
using agentctx_cli::positive_count;

/// The exit codes of the protocol's errors, after the shared 0, 1 and 2
/// (docs/cli/relay.md): 1 is also not found (package_not_found,
/// project_not_found) and a damaged store.
enum relay_exit_code : int {
  exit_invalid_schema = 3,      ///< 400 invalid_schema
  exit_invalid_transition = 4,  ///< 400 invalid_transition
  exit_duplicate = 5,           ///< 409 duplicate_package_id
  exit_archived = 6,            ///< 403 project_archived
};

inline constexpr std::string_view program_name = "relay";

/// The exit-code lines of the --help footers of relay and relay-deposit.
inline constexpr std::string_view exit_codes_help =
    "Exit codes: 0 success; 1 not found (package_not_found, project_not_found, session_not_found), a damaged store\n"
    "or one of a format version this build does not read, verify found quarantined packages, or export left them\n"
    "out; 2 usage error, I/O error, no store, store locked; 3 invalid_schema; 4 invalid_transition;\n"
    "5 duplicate_package_id; 6 project_archived.";

/// The footer of a command group (relay project, relay session): the exit
/// codes, then where a command's options are.
inline std::string group_footer(std::string_view group) {
  return std::string(exit_codes_help) + "\nRun 'relay " + std::string(group) +
         " COMMAND --help' for the options of a command.";
}

/// The exit-code lines of the --help footers of deposit and relay-deposit:
/// the causes a deposit can have.
inline constexpr std::string_view deposit_exit_codes_help =
    "Exit codes: 0 success (deposited, or already present); 1 a damaged store, or one of a format version this build\n"
    "does not read; 2 usage error, I/O error, store locked; 3 invalid_schema; 5 duplicate_package_id; 6 project_archived.";

/// --store and --json, which every subcommand takes, and the name errors are
/// reported under ("relay", or "relay-deposit").
struct common_options {
  std::string store = ".relay";
  bool json = false;
  std::string_view program = program_name;
};

/// Takes --store DIR and --json given before the subcommand ("relay --store
/// D project list"), the options of the application itself (add_global_options),
/// into `o` when the subcommand was not given its own. `json` is null for a
/// subcommand without --json (serve).
inline void inherit_global_options(CLI::App& sub, std::string& store, bool* json) {
  sub.callback([&sub, &store, json] {
    const CLI::App* root = &sub;
    while (root->get_parent() != nullptr) root = root->get_parent();
    if (root == &sub) return;
    const CLI::Option* global_store = root->get_option_no_throw("--store");
    if (global_store != nullptr && global_store->count() > 0 && sub.get_option("--store")->count() == 0) {
      store = global_store->as<std::string>();
    }
    const CLI::Option* global_json = root->get_option_no_throw("--json");
    if (global_json != nullptr && global_json->count() > 0) {
      if (json == nullptr) {
        throw CLI::ValidationError(sub.get_name() + " takes no --json: it speaks JSON-RPC on standard output");
      }
      *json = true;
    }
  });
}

/// --store and --json on the application itself, for every subcommand
/// (inherit_global_options): the values are read from the options.
inline void add_global_options(CLI::App& app) {
  app.add_option("--store")->description("The store's folder, for every command (default ./.relay)");
  app.add_flag("--json")->description("Print the result as one JSON document, for every command but serve");
}

/// What a command does with its store, for the help of --store.
enum class store_use {
  read,     ///< reads (or changes) a store that must exist
  created,  ///< its first write creates the store
  unused,   ///< uses no store (takes --store as every command does)
};

inline const char* store_help(store_use use) {
  switch (use) {
    case store_use::created: return "The store's folder (created by the first write)";
    case store_use::unused: return "Not used: this command reads no store (taken, as by every command)";
    case store_use::read: break;
  }
  return "The store's folder (it must exist)";
}

inline void add_common_options(CLI::App& sub, common_options& o, store_use use = store_use::read) {
  sub.footer(std::string(exit_codes_help));
  sub.add_option("--store", o.store, store_help(use))->capture_default_str();
  sub.add_flag("--json", o.json, "Print the result as one JSON document (errors too, besides the stderr line)");
  inherit_global_options(sub, o.store, &o.json);
}

/// The options of a subcommand that writes: the common ones and --wait.
struct writer_options : common_options {
  bool wait = false;
  /// Whether the command's first write creates the store (store_use::created)
  /// or the store must exist already (store_use::read: a missing one is exit
  /// 2, store_not_found, as for the commands that only read).
  store_use use = store_use::read;
};

inline void add_writer_options(CLI::App& sub, writer_options& o, store_use use = store_use::read) {
  o.use = use;
  add_common_options(sub, o, use);
  sub.add_flag("--wait", o.wait, "Wait for another writer to finish instead of failing when the store is locked");
}

/// The most a command reads from its FILE (or standard input), so that an
/// endless input (/dev/zero) is refused (invalid_schema, exit 3) instead of
/// exhausting memory: a package can be no larger than a log record; a JSON
/// document for `canonical`, 1 GiB; an export for `import`, 4 GiB.
inline constexpr std::size_t max_package_input = relay::max_record_payload;
inline constexpr std::size_t max_document_input = std::size_t{1} << 30;
inline constexpr std::size_t max_export_input = std::size_t{4} << 30;

/// How an error is reported: the protocol's code (or the CLI's own
/// usage_error, io_error, store_not_found), its HTTP status and the exit code.
struct failure_kind {
  std::string_view code;
  int http_status = 500;
  int exit_code = exit_usage;
};

inline constexpr failure_kind usage_failure{"usage_error", 400, exit_usage};
inline constexpr failure_kind store_missing_failure{"store_not_found", 404, exit_usage};

/// The report of a library error, by relay::protocol_error_of. A file that
/// cannot be read (not_found with an errno among them) and other environment
/// errors are io_error, exit 2; damaged data is internal_error, exit 1.
inline failure_kind classify(const agentctx::error& e) {
  if (agentctx::is_data_error(e.code)) return {"internal_error", 500, exit_failure};
  using agentctx::errc;
  const bool system_call = e.sys_errno != 0 && (e.code == errc::not_found || e.code == errc::already_exists);
  if (system_call || e.code == errc::io_error || e.code == errc::permission_denied || e.code == errc::no_space) {
    return {"io_error", 500, exit_usage};
  }
  const relay::protocol_error p = relay::protocol_error_of(e);
  int exit_code = exit_usage;  // store_locked, not_implemented, internal_error
  if (p.code == "invalid_schema") exit_code = exit_invalid_schema;
  if (p.code == "invalid_transition") exit_code = exit_invalid_transition;
  if (p.code == "duplicate_package_id") exit_code = exit_duplicate;
  if (p.code == "project_archived") exit_code = exit_archived;
  if (p.code == "package_not_found" || p.code == "project_not_found" || p.code == "session_not_found") {
    exit_code = exit_failure;
  }
  return {p.code, p.http_status, exit_code};
}

/// Prints "<program>: <error>" on stderr and, with --json,
/// {"error": {"code", "status", "message"}} on stdout; returns the exit code.
inline int report(const common_options& o, const agentctx::error& e, const failure_kind& kind) {
  const std::string message = agentctx_cli::printable_error(e);
  std::cerr << o.program << ": " << message << '\n';
  if (o.json) {
    std::string out;
    json::writer w(out, json::layout::pretty);
    w.begin_object().key("error").begin_object();
    w.key("code").value(kind.code);
    w.key("status").value(kind.http_status);
    w.key("message").value(message);
    w.end_object().end_object();
    std::cout << out << '\n';
  }
  return kind.exit_code;
}

/// Reports a library error (see classify) and returns its exit code.
inline int report_error(const common_options& o, const agentctx::error& e) { return report(o, e, classify(e)); }

/// Reports a usage error (exit 2): an argument that is wrong or missing, or
/// that does not fit the others; the message ends with the help to read
/// (agentctx_cli::running_usage_hint).
inline int usage_error(const common_options& o, const std::string& message) {
  return report(o, agentctx::make_error(agentctx::errc::invalid_argument, message + agentctx_cli::running_usage_hint()),
                usage_failure);
}

/// Reports that standard output could not be written (an I/O error, exit 2).
inline int output_failure(const common_options& o) {
  return report_error(o, agentctx::make_error(agentctx::errc::io_error, "cannot write to standard output"));
}

/// True when the command line asks for --json (before a "--" that ends the
/// options) and its command is not serve, whose standard output is the MCP
/// channel: how an argument error is reported when the parse did not get far
/// enough to say. `has_serve`: the program has a serve command (relay); a
/// program without one (relay-deposit) reads its first argument as no
/// command, so a FILE named serve still takes --json.
inline bool asks_for_json(int argc, char** argv, bool has_serve = true) {
  bool json = false;
  bool command_seen = !has_serve;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (argument == "--") break;
    if (argument == "--json") json = true;
    if (argument == "--store") {
      ++i;  // its value, which may be any name
    } else if (!command_seen && !argument.starts_with("-")) {
      if (argument == "serve") return false;
      command_seen = true;
    }
  }
  return json;
}

/// Parses the command line and runs the command it names (run_command_line);
/// an argument error is a usage error reported as report() does, with --json
/// also as a JSON document on stdout.
inline int run_relay_command_line(CLI::App& app, const command_table& table, int argc, char** argv,
                                  std::string_view program) {
  common_options reporting;
  reporting.program = program;
  const std::function<bool(const CLI::App*)> is_serve = [](const CLI::App* sub) { return sub->get_name() == "serve"; };
  reporting.json = asks_for_json(argc, argv, !std::as_const(app).get_subcommands(is_serve).empty());
  return agentctx_cli::run_command_line(app, table, argc, argv, program, [&](const std::string& message) {
    return usage_error(reporting, message);
  });
}

/// What each subcommand file defines: adds its subcommands to the application.
using registration = void(CLI::App& app, command_table& table);
registration register_deposit, register_pull, register_orient, register_orchestrate, register_flag, register_review,
    register_assert, register_invalidate, register_facts, register_history, register_export, register_import,
    register_verify, register_repair, register_conformance, register_project, register_session, register_canonical,
    register_hash, register_serve;

}  // namespace relay_cli
