// Shared pieces of the agent-memory subcommands: the options every one takes
// (--repo-root, --agent, --json), the exit codes of the memory error codes,
// one-line error reporting (with --json also the seed's error object on
// stdout), and opening the agent's memory for a subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/quote.hpp"
#include "agentctx/memory/agent_memory.hpp"
#include "agentctx/memory/errors.hpp"
#include "agentctx/memory/result_json.hpp"
#include "common/command_registration.hpp"
#include "common/command_support.hpp"
#include "common/input.hpp"

namespace memory_cli {

namespace memory = agentctx::memory;

using agentctx_cli::add_command;
using agentctx_cli::command_table;
using agentctx_cli::exit_failure;
using agentctx_cli::exit_ok;
using agentctx_cli::exit_usage;
using agentctx_cli::positive_count;

inline constexpr std::string_view program_name = "agent-memory";

/// The exit codes after the shared 0, 1 and 2 (docs/memory/agent-memory.md).
enum memory_exit_code : int {
  exit_invalid_input = 3,  ///< InvalidAgentName, InvalidRepoRoot, InvalidDate, InvalidSection, InvalidMode,
                           ///< InvalidArgument, InvalidContent, ContentTooLarge
  exit_outside = 4,        ///< PathOutsideRepository
  exit_conflict = 5,       ///< Conflict
};

inline constexpr std::string_view exit_codes_help =
    "Exit codes: 0 success; 1 a damaged memory file (MalformedLog, MalformedSummary, InvalidSchema);\n"
    "2 usage error, I/O error, lock held (Locked, IoError); 3 invalid input (InvalidAgentName,\n"
    "InvalidRepoRoot, InvalidDate, InvalidSection, InvalidMode, InvalidArgument, InvalidContent,\n"
    "ContentTooLarge); 4 PathOutsideRepository (a symlink below the repository); 5 Conflict.";

inline int exit_code_of(memory::error_code code) {
  using memory::error_code;
  switch (code) {
    case error_code::malformed_log:
    case error_code::malformed_summary:
    case error_code::invalid_schema: return exit_failure;
    case error_code::locked:
    case error_code::io_error:
    case error_code::schema_version_mismatch: return exit_usage;
    case error_code::path_outside_repository: return exit_outside;
    case error_code::conflict: return exit_conflict;
    default: return exit_invalid_input;
  }
}

/// The options every subcommand takes.
struct common_options {
  std::string repo_root;  ///< empty: the current directory
  std::string agent;
  bool json = false;
  bool no_wait = false;
};

inline void add_common_options(CLI::App& sub, common_options& o, bool writes) {
  sub.footer(std::string(exit_codes_help));
  sub.add_option("--agent", o.agent, "The agent's name (e.g. aristotle): its memory is .github/agent-memory/NAME")
      ->required();
  sub.add_option("--repo-root", o.repo_root,
                 "The repository's path, absolute or from the current directory; symlinks are refused "
                 "(default: the current directory)");
  sub.add_flag("--json", o.json, "Print the result as one JSON document (errors too, besides the stderr line)");
  if (writes) {
    sub.add_flag("--no-wait", o.no_wait, "Fail with Locked instead of waiting while another process writes");
  }
}

/// Prints "agent-memory: <Code>: <message>" on stderr and, with --json, the
/// seed's error object on stdout; returns the exit code.
inline int report(const common_options& o, const memory::memory_error& e) {
  std::cerr << program_name << ": " << memory::code_name(e.code) << ": " << agentctx::printable_line(e.message) << '\n';
  if (o.json) std::cout << e.json(agentctx::json::layout::pretty) << '\n';
  return exit_code_of(e.code);
}

/// Prints each warning on stderr as "agent-memory: warning: <Code>: <message>".
inline void print_warnings(const std::vector<memory::warning>& warnings) {
  for (const memory::warning& w : warnings) {
    std::cerr << program_name << ": warning: " << memory::code_name(w.code) << ": " << agentctx::printable_line(w.message) << '\n';
  }
}

/// Opens the repository and the agent's memory and calls `run(memory)`,
/// which returns the exit code; failures to open are reported.
template <class Run>
int with_memory(const common_options& o, memory::memory_options options, Run&& run) {
  // A relative --repo-root (".", "../project") is taken from the current
  // directory, as a shell would; the library itself takes absolute paths only.
  std::string root = o.repo_root;
  if (root.empty() || root.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      return report(o, memory::failure(memory::error_code::io_error, "cannot read the current directory"));
    }
    root = root.empty() ? std::string(cwd) : (std::filesystem::path(cwd) / root).lexically_normal().string();
  }
  auto repo = memory::open_repository(root);
  if (!repo) return report(o, repo.error());
  options.wait_for_lock = !o.no_wait;
  auto opened = memory::agent_memory::open(**repo, o.agent, std::move(options));
  if (!opened) return report(o, opened.error());
  return run(*opened);
}

/// Prints a successful result: its JSON with --json, else `human`; warnings
/// go to stderr either way.
template <class Result>
int print_result(const common_options& o, const Result& r, const std::string& human) {
  print_warnings(r.warnings);
  if (o.json) {
    std::cout << memory::to_json(r, agentctx::json::layout::pretty) << '\n';
  } else if (!human.empty()) {
    std::cout << human;
    if (human.back() != '\n') std::cout << '\n';
  }
  return exit_ok;
}

/// The content of append and update-summary: --content TEXT or --file PATH
/// (- for standard input), exactly one of them.
struct content_options {
  std::string content;
  std::string file;
  std::size_t max_content_bytes = memory::memory_options{}.max_content_bytes;
};

inline void add_content_options(CLI::App& sub, content_options& o) {
  auto* text = sub.add_option("--content", o.content, "The markdown to add");
  auto* file = sub.add_option("--file", o.file, "Read the markdown from this file (- for standard input)");
  text->excludes(file);
  file->excludes(text);
  sub.add_option("--max-content-bytes", o.max_content_bytes, "The largest content accepted (larger is refused)")
      ->capture_default_str()
      ->check(positive_count);
}

/// Reads the content given into `out`; an IoError when the file cannot be read.
inline std::optional<memory::memory_error> read_content(const content_options& o, std::string& out) {
  if (o.file.empty()) {
    out = o.content;
    return std::nullopt;
  }
  auto text = agentctx_cli::read_input(o.file);
  if (!text) return memory::failure(memory::error_code::io_error, agentctx::describe_for_message(text.error()));
  out += *text;
  return std::nullopt;
}

/// The memory options of a subcommand that takes content.
inline memory::memory_options content_limits(const content_options& o) {
  memory::memory_options options;
  options.max_content_bytes = o.max_content_bytes;
  return options;
}

/// What each subcommand file defines: adds its subcommand to the application.
using registration = void(CLI::App& app, command_table& table);
registration register_start_session, register_append, register_read_summary, register_update_summary,
    register_list_sessions, register_serve;

}  // namespace memory_cli
