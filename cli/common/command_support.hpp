// What every agentctx command-line tool shares: exit codes, one-line error
// reporting under the program's name, the count validator, the table of
// subcommands and the parse-then-dispatch of main(). Each tool wraps the
// reporting functions with its own name (agentsdb/command.hpp,
// ctxstore/command.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agentctx/core/error.hpp"

namespace agentctx_cli {

/// Exit codes shared by every subcommand of every tool (documented in
/// docs/cli/agentsdb.md and docs/cli/ctxstore.md).
enum exit_code : int {
  exit_ok = 0,       ///< success; for validate: every file is valid
  exit_failure = 1,  ///< the data is invalid or damaged, or what was asked for does not exist
  exit_usage = 2,    ///< bad arguments, or an I/O error (missing file, permission)
};

/// Accepts a whole number of at least 1 (a count or a size). CLI::PositiveNumber
/// would accept 0.5 and, on 0, quote the largest double in its message.
inline const CLI::Validator positive_count(
    [](std::string& text) -> std::string {
      std::uint64_t value = 0;
      const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (problem != std::errc{} || end != text.data() + text.size() || value == 0) {
        return "must be a whole number of at least 1, not '" + text + "'";
      }
      return {};
    },
    "POSITIVE", "positive_count");

/// "1 chunk", "3 chunks": a count with its noun, in the plural unless 1.
inline std::string count_of(std::uint64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

/// A parsed subcommand ready to run; returns its exit code.
using command = std::function<int()>;

/// Collects the subcommands registered on the application.
struct command_table {
  std::vector<std::pair<CLI::App*, command>> entries;
  void add(CLI::App* sub, command run) { entries.emplace_back(sub, std::move(run)); }
};

/// Prints "<program>: <error>" on stderr and returns the exit code for it:
/// exit_failure for damaged data and for what does not exist, exit_usage for
/// caller and environment errors (a missing file among them).
inline int report_error(std::string_view program, const agentctx::error& e) {
  std::cerr << program << ": " << e.describe() << '\n';
  const bool data_problem = agentctx::is_data_error(e.code) || e.code == agentctx::errc::not_found;
  const bool missing_file = e.code == agentctx::errc::not_found && e.sys_errno != 0;
  return data_problem && !missing_file ? exit_failure : exit_usage;
}

/// Prints "<program>: <message>" on stderr and returns exit_usage.
inline int usage_error(std::string_view program, const std::string& message) {
  std::cerr << program << ": " << message << '\n';
  return exit_usage;
}

/// Parses the command line and runs the subcommand it names. Argument errors
/// become one line, "<program>: MESSAGE (run '<program> --help' for usage)",
/// and exit_usage; --help and --version print and return 0.
inline int run_command_line(CLI::App& app, const command_table& table, int argc, char** argv,
                            std::string_view program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // CLI11 checks required options before it looks for arguments it does not
    // know, so "agentsdb compile --bogus" would be reported as a missing --out
    // and "agentsdb bogus" as a missing subcommand: name the culprit instead.
    std::string message = e.what();
    if (const std::vector<std::string> unknown = app.remaining(true); !unknown.empty()) {
      message = unknown.size() == 1 ? "unexpected argument" : "unexpected arguments";
      for (const std::string& argument : unknown) message += " '" + argument + "'";
    }
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    std::cerr << program << ": " << message << " (run '" << program << " --help' for usage)\n";
    return exit_usage;
  }
  for (const auto& [sub, run] : table.entries) {
    if (sub->parsed()) return run();
  }
  return exit_usage;
}

}  // namespace agentctx_cli
