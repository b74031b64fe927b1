// Shared pieces of the read-context subcommands: --root and the layout and
// policy options, --json, the exit codes of the loader's errors, one-line
// error reporting (with --json also the error envelope on stdout), and
// opening the root.
#pragma once

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include "agentctx/core/quote.hpp"
#include "agentctx/context/loader.hpp"
#include "agentctx/context/result_json.hpp"
#include "agentctx/io/confined_file_system.hpp"
#include "common/command_registration.hpp"
#include "common/command_support.hpp"

namespace context_cli {

namespace context = agentctx::context;
namespace io = agentctx::io;

using agentctx_cli::add_command;
using agentctx_cli::command_table;
using agentctx_cli::exit_failure;
using agentctx_cli::exit_ok;
using agentctx_cli::exit_usage;
using agentctx_cli::count_between;
using agentctx_cli::positive_count;
using agentctx_cli::shown;

inline constexpr std::string_view program_name = "read-context";

/// The exit codes after the shared 0, 1 and 2 (docs/context/read-context.md).
enum context_exit_code : int {
  exit_invalid = 3,   ///< invalid_argument: a bad item id, target, mode, actor
  exit_outside = 4,   ///< path_outside_root: a symlink below the root
  exit_conflict = 5,  ///< conflict: the target changed since the proposal
  exit_decided = 6,   ///< already_decided
};

inline constexpr std::string_view exit_codes_help =
    "Exit codes: 0 success; 1 not found or a damaged file; 2 usage or I/O error; 3 invalid argument;\n"
    "4 a symlink below the root (path_outside_root); 5 conflict (the file changed since the proposal);\n"
    "6 the proposal was already decided.";

inline int exit_code_of(const agentctx::error& e) {
  const std::string_view code = context::error_code_of(e);
  if (code == "invalid_argument") return exit_invalid;
  if (code == "path_outside_root") return exit_outside;
  if (code == "conflict") return exit_conflict;
  if (code == "already_decided") return exit_decided;
  if (code == "not_found" || code == "damaged_file") return exit_failure;
  return exit_usage;
}

/// --root, the layout, the policies and --json (not for serve, whose output
/// is the protocol).
struct common_options {
  std::string root;  ///< empty: the current directory
  bool json = false;
  context::loader_options loader;
  double recent_hours = 24;
};

inline void add_common_options(CLI::App& sub, common_options& o, bool json_output = true) {
  sub.footer(std::string(exit_codes_help));
  sub.add_option("--root", o.root, "The folder holding the files (default: the current directory)");
  if (json_output) {
    sub.add_flag("--json", o.json, "Print the result as one JSON document (errors too, besides the stderr line)");
  }
  auto& l = o.loader.layout;
  sub.add_option("--taste", l.taste, "The taste file")->capture_default_str()->group("Layout ({item} is the item id)");
  sub.add_option("--brief", l.brief, "An item's brief")->capture_default_str()->group("Layout ({item} is the item id)");
  sub.add_option("--notes", l.notes, "An item's notes")->capture_default_str()->group("Layout ({item} is the item id)");
  sub.add_option("--log", l.log, "An item's JSONL log")->capture_default_str()->group("Layout ({item} is the item id)");
  sub.add_option("--gaps", l.gaps, "An item's JSONL vocabulary gaps")
      ->capture_default_str()
      ->group("Layout ({item} is the item id)");
  sub.add_option("--proposals", l.proposals, "The proposals folder")->capture_default_str()->group("Layout ({item} is the item id)");
  sub.add_option("--decisions", l.decisions, "The decision log")->capture_default_str()->group("Layout ({item} is the item id)");
}

/// Prints "read-context: <error>" on stderr and, with --json, the error
/// envelope on stdout; returns the exit code.
inline int report(const common_options& o, const agentctx::error& e) {
  std::cerr << program_name << ": " << agentctx_cli::printable_error(e) << '\n';
  if (o.json) std::cout << context::error_json(e, agentctx::json::layout::pretty) << '\n';
  return exit_code_of(e);
}

/// Opens the root (its canonical path; symlinks below it are never
/// followed) and calls run(fs).
template <class Run>
int with_root(const common_options& o, Run&& run) {
  const std::string given = o.root.empty() ? "." : o.root;
  char resolved[PATH_MAX];
  if (::realpath(given.c_str(), resolved) == nullptr) {
    return report(o, agentctx::make_error(agentctx::errc::not_found, "cannot open the root " + given));
  }
  auto fs = io::confined_file_system::open(resolved);
  if (!fs) return report(o, fs.error());
  return run(**fs);
}

/// Prints `json` with --json, else `human` (nothing when it is empty) made
/// printable (agentctx::printable_text: a control character read from a
/// file shows as an escape), ending with a newline; returns exit_ok.
inline int print(const common_options& o, const std::string& json, const std::string& human) {
  const std::string text = o.json ? json : agentctx::printable_text(human);
  std::cout << text;
  if (!text.empty() && !text.ends_with('\n')) std::cout << '\n';
  return exit_ok;
}

using registration = void(CLI::App& app, command_table& table);
registration register_show, register_notes, register_propose, register_proposals, register_confirm, register_decline,
    register_log, register_serve;

}  // namespace context_cli
