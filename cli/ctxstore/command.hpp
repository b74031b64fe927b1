// Shared pieces of the ctxstore subcommands: the common CLI support under
// ctxstore's name, the options every subcommand takes, the parsing of ids and
// numbers, and the registration functions each subcommand file defines.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "agentctx/core/error.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/turns/format.hpp"
#include "common/command_registration.hpp"
#include "common/command_support.hpp"

namespace ctxstore {

using agentctx_cli::add_command;
using agentctx_cli::command;
using agentctx_cli::command_table;
using agentctx_cli::count_of;
using agentctx_cli::exit_code;
using agentctx_cli::exit_failure;
using agentctx_cli::exit_ok;
using agentctx_cli::exit_usage;

namespace turns = agentctx::turns;

inline constexpr std::string_view program_name = "ctxstore";

/// Prints "ctxstore: <error>" on stderr and returns the exit code for it.
inline int report_error(const agentctx::error& e) { return agentctx_cli::report_error(program_name, e); }

/// Prints "ctxstore: <message>" on stderr and returns exit_usage.
inline int usage_error(const std::string& message) { return agentctx_cli::usage_error(program_name, message); }

/// --store and --json, which every subcommand takes.
struct common_options {
  std::string store = ".";
  bool json = false;
};

inline void add_common_options(CLI::App& sub, common_options& o) {
  sub.add_option("--store", o.store, "The store's folder (default: the current directory)");
  sub.add_flag("--json", o.json, "Print the result as JSON");
}

/// The options of a subcommand that writes: the common ones and --wait.
struct writer_options : common_options {
  bool wait = false;
};

inline void add_writer_options(CLI::App& sub, writer_options& o) {
  add_common_options(sub, o);
  sub.add_flag("--wait", o.wait, "Wait for another writer to finish instead of failing when the store is locked");
}

/// A strict unsigned number: decimal digits only, or with `hex` also "0x"
/// and hex digits. No sign, no white space, no octal.
inline std::optional<std::uint64_t> parse_unsigned(std::string_view text, bool hex) {
  int base = 10;
  if (hex && text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t value = 0;
  const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || problem != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// An option transform accepting a whole number from `min` to `max` (decimal,
/// or with `hex` also 0x-hex) and rewriting it as plain decimal, so that
/// CLI11's own conversion (strtoull with base 0, which reads "010" as 8) sees
/// no ambiguity.
inline CLI::Validator whole_number(std::uint64_t min, std::uint64_t max, bool hex = false) {
  std::string expected = min == 1 && max == std::numeric_limits<std::uint64_t>::max()
                             ? std::string("a whole number of at least 1")
                             : "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (hex) expected += " (decimal or 0x-hex)";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto value = parse_unsigned(text, hex);
        if (!value || *value < min || *value > max) return "must be " + expected + ", not '" + text + "'";
        text = std::to_string(*value);
        return {};
      },
      "NUMBER", "whole_number");
}

/// A count (-n): a whole number of at least 1.
inline const CLI::Validator count_number = whole_number(1, std::numeric_limits<std::uint64_t>::max());
/// A TurnID: a whole number of at least 1.
inline const CLI::Validator turn_number = whole_number(1, std::numeric_limits<std::uint64_t>::max());

/// A context id: 1 to 16 hex digits, optionally after 0x, not 0 (printed as
/// 16 lowercase digits); rewritten as decimal for CLI11's conversion.
inline const CLI::Validator context_number(
    [](std::string& text) -> std::string {
      const auto id = turns::parse_hex_id(text);
      if (!id) return "must be a context id (up to 16 hex digits, optionally after 0x, not 0), not '" + text + "'";
      text = std::to_string(*id);
      return {};
    },
    "CONTEXT", "context_number");

/// A blob hash: 64 lowercase hex digits, as ctxstore prints them.
inline const CLI::Validator blob_hash_text(
    [](std::string& text) -> std::string {
      if (!agentctx::parse_hex_digest(text)) {
        return "must be a blob hash (64 lowercase hex digits), not '" + text + "'";
      }
      return {};
    },
    "HASH", "blob_hash_text");

/// What each subcommand file defines: adds its subcommands to the application.
using registration = void(CLI::App& app, command_table& table);
registration register_init, register_create, register_fork, register_append, register_last, register_before,
    register_range, register_replay, register_blob, register_contexts, register_stats, register_fsck;

}  // namespace ctxstore
