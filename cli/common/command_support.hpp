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
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "agentctx/core/error.hpp"
#include "agentctx/core/quote.hpp"

namespace agentctx_cli {

/// Exit codes shared by every subcommand of every tool (documented in
/// docs/cli/agentsdb.md and docs/cli/ctxstore.md).
enum exit_code : int {
  exit_ok = 0,       ///< success; for validate: every file is valid
  exit_failure = 1,  ///< the data is invalid or damaged, or what was asked for does not exist
  exit_usage = 2,    ///< bad arguments, or an I/O error (missing file, permission)
};

/// Accepts a whole number from `min` to `max` (a count or a size), written
/// in decimal, with a message that says so: CLI::PositiveNumber would accept
/// 0.5 and, on 0, quote the largest double; a value beyond the option's type
/// would be only "Could not convert"; and CLI11 reads an integer the way
/// strtoull does with base 0, so "010" would be 8 and "0x10" 16.
inline CLI::Validator count_between(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), value);
        const bool whole = end == text.data() + text.size() && text.find_first_not_of("0123456789") == std::string::npos;
        const std::string shown = "'" + text + "'";
        if (whole && text.size() > 1 && text[0] == '0') return "must be written without leading zeros, not " + shown;
        if (whole && !text.empty() && (problem == std::errc::result_out_of_range || value > max)) {
          return "must be at most " + std::to_string(max) + ", not " + shown;
        }
        if (problem != std::errc{} || !whole || value < min) {
          return (min == 0 ? std::string("must be a whole number") : "must be a whole number of at least " + std::to_string(min)) +
                 ", not " + shown;
        }
        return {};
      },
      min == 0 ? "COUNT" : "POSITIVE", "count");
}

/// Refuses an empty argument (a FILE named "" names no file).
inline const CLI::Validator non_empty(
    [](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); }, "", "non_empty");

/// count_between(1, max).
inline CLI::Validator positive_count_at_most(std::uint64_t max) { return count_between(1, max); }

/// The most threads a --threads option takes (more than any machine's cores:
/// a larger number is a mistake, and would not fit the option's type).
inline constexpr std::uint64_t max_threads = 1024;

/// Accepts a whole number of at least 1 that fits in 64 bits.
inline const CLI::Validator positive_count = positive_count_at_most(UINT64_MAX);

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

/// Text from a file or a store, or a name the user typed, safe to print on a
/// terminal in the text output: escaped as in messages (agentctx::escape_for_message, never cut),
/// so control characters (ESC, CR, a newline inside a field), DEL, bytes that
/// are not UTF-8 and the characters that reorder or hide text show as escapes
/// instead of acting on the terminal, and '"' and '\\' as \" and \\. The JSON
/// output needs none of this: the writer escapes what JSON requires.
inline std::string shown(std::string_view text) { return agentctx::escape_for_message(text, SIZE_MAX); }

/// Multi-line text (a package's content) for the text output: each line as
/// shown() makes it after `indent`, the line breaks kept.
inline std::string shown_lines(std::string_view text, std::string_view indent) {
  std::string out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    out += indent;
    out += shown(text.substr(0, end));
    out += '\n';
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return out;
}

/// An error as one line to print: agentctx::describe_for_message (the path
/// escaped as a message quotes text), then printable_line.
inline std::string printable_error(const agentctx::error& e) {
  return agentctx::printable_line(agentctx::describe_for_message(e));
}

/// Prints "<program>: <error>" on stderr and returns the exit code for it:
/// exit_failure for damaged data and for what does not exist, exit_usage for
/// caller and environment errors (a missing file among them).
inline int report_error(std::string_view program, const agentctx::error& e) {
  std::cerr << program << ": " << printable_error(e) << '\n';
  const bool data_problem = agentctx::is_data_error(e.code) || e.code == agentctx::errc::not_found;
  const bool missing_file = e.code == agentctx::errc::not_found && e.sys_errno != 0;
  return data_problem && !missing_file ? exit_failure : exit_usage;
}

/// The subcommands the command line named, outermost first, as far as the
/// parse got (empty when it named none).
inline std::vector<const CLI::App*> named_commands(const CLI::App& app) {
  std::vector<const CLI::App*> chain;
  for (const CLI::App* at = &app;;) {
    const std::vector<const CLI::App*> named = at->get_subcommands([](const CLI::App* sub) { return sub->parsed(); });
    if (named.empty()) return chain;
    at = named.front();
    chain.push_back(at);
  }
}

/// "agentsdb", or "relay project show": the program and the subcommands the
/// command line named, as far as the parse got.
inline std::string command_path(const CLI::App& app, std::string_view program) {
  std::string path(program);
  for (const CLI::App* sub : named_commands(app)) path += " " + sub->get_name();
  return path;
}

/// The subcommand the command line named last (`app` itself when it named none).
inline const CLI::App& named_command(const CLI::App& app) {
  const std::vector<const CLI::App*> chain = named_commands(app);
  return chain.empty() ? app : *chain.back();
}

/// " (run 'relay project show --help' for usage)": what ends every usage
/// error, for the command `path` (command_path).
inline std::string usage_hint(std::string_view path) { return " (run '" + std::string(path) + " --help' for usage)"; }

/// The usage hint of the command run_command_line is running ("" before the
/// parse succeeds): usage errors found by the command itself, after the
/// parse, end with it too. One command runs per process; the variable is
/// set before each one.
inline std::string& running_usage_hint() {
  static std::string hint;
  return hint;
}

/// Prints "<program>: <message> (run '<program> <command> --help' for
/// usage)" on stderr and returns exit_usage: an argument that is wrong or
/// missing, or that does not fit the others.
inline int usage_error(std::string_view program, const std::string& message) {
  std::cerr << program << ": " << agentctx::printable_line(message) << running_usage_hint() << '\n';
  return exit_usage;
}

/// Prints "<program>: cannot write to standard output" and returns
/// exit_usage (an I/O error: a full disk, a closed pipe, /dev/full).
inline int output_failure(std::string_view program) {
  std::cerr << program << ": cannot write to standard output\n";
  return exit_usage;
}

/// Flushes standard output after a command: output that could not be written
/// (a full disk, a closed pipe's reader gone, /dev/full) turns a success into
/// "<program>: cannot write to standard output" and exit_usage (an I/O
/// error); a failure keeps its own code and message.
inline int finish_output(int code, std::string_view program) {
  std::cout.flush();
  const bool written = static_cast<bool>(std::cout) && std::fflush(stdout) == 0;
  if (written || code != exit_ok) return code;
  return output_failure(program);
}

/// CLI11's parse errors said plainly, naming the option and what it takes:
///   "At Most 1 required but received 2" -> "given 2 times, but it takes one value"
///                                          (ID,--project: "ID (or --project ID) given 2 times, ...")
///   "--x: 1 required TEXT missing"      -> "--x needs a value"
///   "Could not convert: --json = abc"   -> "--json is a flag: it takes no value, not 'abc'"
///                                          (an option: "--x: 'abc' is not a value it takes")
///   "A subcommand is required"          -> "a command is required: one of a, b, c"
///   "--project is required" (ID,--project) -> "ID is required (or --project ID)"
/// Other messages are returned as they are.
inline std::string plain_parse_message(const CLI::App& app, std::string message) {
  constexpr std::string_view at_most_one = "At Most 1 required but received ";
  if (const std::size_t at = message.find(at_most_one); at != std::string::npos) {
    const std::string times = message.substr(at + at_most_one.size());
    // An argument given as a positional or an option ("p1 --project p2"):
    // named both ways, since either may have been given.
    if (constexpr std::string_view colon = ": "; message.substr(0, at).ends_with(colon)) {
      const std::string name = message.substr(0, at - colon.size());
      const CLI::Option* option = named_command(app).get_option_no_throw(name);
      if (option != nullptr && option->get_positional() && name.starts_with("--")) {
        const std::string positional = option->get_name(true);
        return positional + " (or " + name + " " + positional + ") given " + times + " times, but it takes one value";
      }
    }
    return message.substr(0, at) + "given " + times + " times, but it takes one value";
  }
  if (const std::size_t colon = message.find(": "); colon != std::string::npos && message.starts_with("-") &&
                                                    message.ends_with(" missing") &&
                                                    message.find(" required ", colon) != std::string::npos) {
    return message.substr(0, colon) + " needs a value";
  }
  constexpr std::string_view not_converted = "Could not convert: ";
  if (message.starts_with(not_converted)) {
    const std::string rest = message.substr(not_converted.size());
    const std::size_t equals = rest.find(" = ");
    if (equals != std::string::npos) {
      const std::string name = rest.substr(0, equals);
      const std::string value = rest.substr(equals + 3);
      const CLI::Option* option = named_command(app).get_option_no_throw(name);
      if (option != nullptr && option->get_expected_max() == 0) {
        return name + " is a flag: it takes no value, not '" + value + "'";
      }
      return name + ": '" + value + "' is not a value it takes";
    }
  }
  // An argument given as a positional or an option: named both ways.
  if (constexpr std::string_view required = " is required"; message.ends_with(required)) {
    const std::string name = message.substr(0, message.size() - required.size());
    const CLI::Option* option = named_command(app).get_option_no_throw(name);
    if (option != nullptr && option->get_positional() && name.starts_with("--")) {
      const std::string positional = option->get_name(true);
      return positional + " is required (or " + name + " " + positional + ")";
    }
  }
  if (message == "A subcommand is required") {
    std::string names;
    for (const CLI::App* sub : named_command(app).get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name().empty()) continue;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    return names.empty() ? "a command is required" : "a command is required: one of " + names;
  }
  return message;
}

/// Reports an argument error: given its one-line message, prints it (and
/// whatever else the tool prints for it) and returns the exit code.
using usage_reporter = std::function<int(const std::string& message)>;

/// Parses the command line and runs the subcommand it names. Argument errors
/// become one line, "<program>: MESSAGE (run '<program> <command> --help' for
/// usage)", and exit_usage (or whatever `report_usage`, when given, makes of
/// that line's message); --help and --version print and return 0.
inline int run_command_line(CLI::App& app, const command_table& table, int argc, char** argv,
                            std::string_view program, const usage_reporter& report_usage = {}) {
  running_usage_hint().clear();
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
    message = plain_parse_message(app, message);
    message = agentctx::printable_line(message) + usage_hint(command_path(app, program));
    if (report_usage) return report_usage(message);
    std::cerr << program << ": " << message << '\n';
    return exit_usage;
  }
  running_usage_hint() = usage_hint(command_path(app, program));
  for (const auto& [sub, run] : table.entries) {
    if (!sub->parsed()) continue;
    try {
      return finish_output(run(), program);
    } catch (const std::bad_alloc&) {
      // One line, not the runtime's "terminate called after ..." and abort.
      std::cerr << program << ": out of memory\n";
      return exit_usage;
    }
  }
  return exit_usage;
}

}  // namespace agentctx_cli
