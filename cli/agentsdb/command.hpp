// Shared pieces of the agentsdb subcommands: exit codes, error reporting and
// the registration functions each subcommand file defines.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "agentctx/core/error.hpp"

namespace agentsdb {

/// Exit codes shared by every subcommand (documented in docs/cli/agentsdb.md).
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

/// A parsed subcommand ready to run; returns its exit code.
using command = std::function<int()>;

/// Collects the subcommands registered on the application.
struct command_table {
  std::vector<std::pair<CLI::App*, command>> entries;
  void add(CLI::App* sub, command run) { entries.emplace_back(sub, std::move(run)); }
};

/// Prints "agentsdb: <error>" on stderr and returns the exit code for it.
inline int report_error(const agentctx::error& e) {
  std::cerr << "agentsdb: " << e.describe() << '\n';
  const bool data_problem = agentctx::is_data_error(e.code) || e.code == agentctx::errc::not_found;
  const bool missing_file = e.code == agentctx::errc::not_found && e.sys_errno != 0;
  return data_problem && !missing_file ? exit_failure : exit_usage;
}

/// Prints "agentsdb: <message>" on stderr and returns exit_usage.
inline int usage_error(const std::string& message) {
  std::cerr << "agentsdb: " << message << '\n';
  return exit_usage;
}

void register_inspect(CLI::App& app, command_table& table);
void register_validate(CLI::App& app, command_table& table);
void register_compile(CLI::App& app, command_table& table);
void register_search(CLI::App& app, command_table& table);
void register_write(CLI::App& app, command_table& table);
void register_proposals(CLI::App& app, command_table& table);
void register_promote(CLI::App& app, command_table& table);
void register_propose(CLI::App& app, command_table& table);
void register_diff(CLI::App& app, command_table& table);
void register_compact(CLI::App& app, command_table& table);
void register_serve(CLI::App& app, command_table& table);
void register_keygen(CLI::App& app, command_table& table);
void register_sign(CLI::App& app, command_table& table);
void register_verify(CLI::App& app, command_table& table);
void register_export(CLI::App& app, command_table& table);
void register_import(CLI::App& app, command_table& table);

}  // namespace agentsdb
