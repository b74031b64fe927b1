// What the end-to-end tests of the relay binary share (relay_test.cpp,
// relay_refusals_test.cpp): the exit codes of docs/cli/relay.md, package
// text, and a fixture running relay on a store in a temporary folder.
// Include only when RELAY_BIN is defined.
#pragma once

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/time.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace relay_cli_test {

// The exit codes of docs/cli/relay.md.
inline constexpr int exit_not_found = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_invalid_schema = 3;
inline constexpr int exit_invalid_transition = 4;
inline constexpr int exit_duplicate = 5;
inline constexpr int exit_archived = 6;

inline std::string now_text() { return agentctx::format_rfc3339_utc_ms(agentctx::now_unix_ms()); }

/// A package (section 6) as JSON text, created at `created_at` (default now,
/// so orient's window has it); `extra` members are added as they are
/// (",\"tags\":[...]").
inline std::string package_text(const std::string& id, const std::string& title,
                                const std::string& project = "proj_demo", const std::string& status = "complete",
                                const std::string& extra = "", const std::string& created_at = now_text()) {
  std::string text = "{";
  if (!id.empty()) text += "\"package_id\":\"" + id + "\",";
  text += "\"project_id\":\"" + project + "\",\"relay_version\":\"0.1\",\"title\":\"" + title + "\",\"status\":\"" +
          status + "\",\"package_type\":\"milestone\",\"review_type\":\"none\",\"created_at\":\"" + created_at +
          "\",\"created_by\":{\"id\":\"jordan\",\"type\":\"human\",\"session_id\":null}" + extra + "}";
  return text;
}

/// An export's lines after its header (whose exported_at differs from one
/// export to the next).
inline std::string after_header(const std::string& export_text) {
  return export_text.substr(export_text.find('\n'));
}

/// A temporary folder with a store in its "store" subfolder; run() passes
/// --store to every command and runs it in the temporary folder.
struct relay_fixture {
  io_test::temporary_directory dir;
  std::string store = dir.path() + "/store";

  cli_test::run_result run(std::vector<std::string> args, const std::string& input_file = "/dev/null") const {
    return run_at(store, std::move(args), input_file);
  }

  /// run() on the store in `store_dir` instead.
  cli_test::run_result run_at(const std::string& store_dir, std::vector<std::string> args,
                         const std::string& input_file = "/dev/null") const {
    args.push_back("--store");
    args.push_back(store_dir);
    return cli_test::run(RELAY_BIN, args, dir.path(), input_file);
  }

  /// The JSON a successful `args --json` printed (nothing on stderr).
  simdjson::dom::element json(simdjson::dom::parser& parser, std::vector<std::string> args,
                              const std::string& input_file = "/dev/null") const {
    args.push_back("--json");
    const cli_test::run_result r = run(args, input_file);
    CAPTURE(cli_test::joined(args));
    cli_test::check_clean_success(r);
    return cli_test::parse_json(parser, r.out);
  }

  /// Writes `text` to `name` in the temporary folder; returns its path.
  std::string file(const std::string& name, const std::string& text) const {
    const std::string path = dir.path() + "/" + name;
    cli_test::write_file(path, text);
    return path;
  }

  /// Deposits `text`; returns the package id.
  std::string deposit(const std::string& text) const {
    simdjson::dom::parser parser;
    return cli_test::text_of(json(parser, {"deposit", file("deposit.json", text)}), "package_id");
  }
};

/// The command failed with `exit_code` and one "relay: ..." line naming `fragment`.
inline void check_failure(const cli_test::run_result& r, int exit_code, std::string_view fragment) {
  cli_test::check_error(r, exit_code, fragment, "relay");
}

}  // namespace relay_cli_test
