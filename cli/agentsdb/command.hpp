// Shared pieces of the agentsdb subcommands: the common CLI support under
// agentsdb's name, and the registration functions each subcommand file defines.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "agentctx/core/error.hpp"
#include "common/command_support.hpp"

namespace agentsdb {

using agentctx_cli::command;
using agentctx_cli::command_table;
using agentctx_cli::exit_code;
using agentctx_cli::exit_failure;
using agentctx_cli::exit_ok;
using agentctx_cli::exit_usage;
using agentctx_cli::positive_count;
using agentctx_cli::shown;

inline constexpr std::string_view program_name = "agentsdb";

/// Prints "agentsdb: <error>" on stderr and returns the exit code for it.
inline int report_error(const agentctx::error& e) { return agentctx_cli::report_error(program_name, e); }

/// Prints "agentsdb: <message>" on stderr and returns exit_usage.
inline int usage_error(const std::string& message) { return agentctx_cli::usage_error(program_name, message); }

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
