// End-to-end tests through the relay binary of the store's refusals and
// repairs: review into awaiting_review (--review-type), a short foreign
// relay.log, invalidate of an unknown project, a fact's source package, import
// into an archived project, and repair of a store whose first record is
// damaged. Exit codes as in docs/cli/relay.md.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agentctx/core/time.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/relay/log_format.hpp"
#include "agentctx/relay/store.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"
#if defined(RELAY_BIN)
#include "cli/relay_cli_support.hpp"
#endif

namespace cli_relay_refusals_test {

#if !defined(RELAY_BIN)
TEST_CASE("relay review: end-to-end tests") {
  MESSAGE("skipping: RELAY_BIN is not defined (the relay targets are not part of this build)");
}
#else

using cli_test::check_clean_success;
using cli_test::contains;
using cli_test::read_file;
using cli_test::run_result;

using namespace relay_cli_test;

namespace {

/// Deposits a package `id` (titled "Package <id>") in proj_demo.
void deposit(const relay_fixture& f, const std::string& id, const std::string& status = "complete") {
  f.deposit(package_text(id, "Package " + id, "proj_demo", status));
}

}  // namespace

TEST_CASE("relay review --status awaiting_review needs a reviewer: --review-type, or invalid_schema") {
  relay_fixture f;
  deposit(f, "pkg_draft", "draft");
  const run_result refused = f.run({"review", "--package", "pkg_draft", "--status", "awaiting_review"});
  check_failure(refused, exit_invalid_schema, "review_type");
  // --review-type takes human or agent, and only with awaiting_review.
  CHECK(f.run({"review", "--package", "pkg_draft", "--status", "awaiting_review", "--review-type", "none"}).exit_code == 2);
  CHECK(f.run({"review", "--package", "pkg_draft", "--status", "complete", "--review-type", "human"}).exit_code == 2);

  const run_result flagged = f.run({"review", "--package", "pkg_draft", "--status", "awaiting_review", "--review-type",
                                    "agent", "--json"});
  check_clean_success(flagged);
  simdjson::dom::parser parser;
  const auto package = cli_test::parse_json(parser, flagged.out)["package"];
  CHECK(std::string(package["status"].get_string().value()) == "awaiting_review");
  CHECK(std::string(package["review_type"].get_string().value()) == "agent");
}

TEST_CASE("relay refuses a short relay.log that is not a Relay log, and never replaces it") {
  relay_fixture f;
  std::filesystem::create_directories(f.store);
  cli_test::write_file(f.store + "/relay.log", "hello\n");
  const run_result listed = f.run({"project", "list"});
  CHECK(listed.exit_code == exit_not_found);
  CHECK(contains(listed.err, "not a Relay store log"));
  const run_result deposited = f.run({"deposit", f.file("p1.json", package_text("pkg_1", "Package pkg_1"))});
  CHECK(deposited.exit_code == exit_not_found);
  CHECK(read_file(f.store + "/relay.log") == "hello\n");
}

TEST_CASE("relay invalidate of an unknown project and assert with an unknown source package are not found") {
  relay_fixture f;
  deposit(f, "pkg_1");
  const run_result invalidated = f.run({"invalidate", "--project", "proj_nope", "--subject", "a", "--predicate", "b"});
  CHECK(invalidated.exit_code == exit_not_found);
  CHECK(contains(invalidated.err, "proj_nope"));
  const run_result asserted = f.run({"assert", "--project", "proj_demo", "--subject", "a", "--predicate", "b", "--value",
                                     "c", "--source-package", "pkg_missing"});
  CHECK(asserted.exit_code == exit_not_found);
  CHECK(contains(asserted.err, "pkg_missing"));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "a", "--predicate", "b", "--value", "c",
                             "--source-package", "pkg_1"}));
}

TEST_CASE("relay import into a project the store holds archived is project_archived") {
  relay_fixture f;
  deposit(f, "pkg_1");
  const std::string exported = f.dir.path() + "/export.ndjson";
  check_clean_success(f.run({"export", "--out", exported}));
  const std::string second = f.dir.path() + "/second";
  check_clean_success(f.run_at(second, {"project", "create", "proj_demo"}));
  check_clean_success(f.run_at(second, {"project", "archive", "proj_demo"}));
  const run_result imported = f.run_at(second, {"import", exported});
  CHECK(imported.exit_code == exit_archived);
  CHECK(contains(imported.err, "archived"));
  // Restored, the store's project (another created_at than the export's) is
  // kept as it is, and the import says so.
  check_clean_success(f.run_at(second, {"project", "unarchive", "proj_demo"}));
  const run_result restored = f.run_at(second, {"import", exported});
  check_clean_success(restored);
  CHECK(contains(restored.out, "project proj_demo: the store's differs from the export's and was kept as it is"));

  // An export of an archived project, imported part-way (--partial of its
  // first two lines), is completed by importing it again; a duplicated
  // session line is refused (exit 3) before anything is written.
  check_clean_success(f.run({"session", "start", "--project", "proj_demo", "--actor", "jordan", "--actor-type", "human"}));
  check_clean_success(f.run({"project", "archive", "proj_demo"}));
  check_clean_success(f.run({"export", "--out", exported}));
  const std::string whole = cli_test::read_file(exported);
  const std::string two_lines = whole.substr(0, whole.find('\n', whole.find('\n') + 1) + 1);
  const std::string third = f.dir.path() + "/third";
  const run_result partial = f.run_at(third, {"import", "--partial", f.file("two.ndjson", two_lines)});
  CHECK(partial.exit_code == 0);
  CHECK(contains(partial.out, "imported 1 project, 0 sessions, 0 packages"));
  const run_result completed = f.run_at(third, {"import", exported});
  check_clean_success(completed);
  CHECK(contains(completed.out, "imported 0 projects, 1 session, 1 package"));
  const std::size_t session_at = whole.find("{\"kind\":\"session\"");
  REQUIRE(session_at != std::string::npos);
  const std::string session_line = whole.substr(session_at, whole.find('\n', session_at) + 1 - session_at);
  std::string twice = whole;
  twice.insert(session_at, session_line);
  const std::string counted = "\"sessions\":1";
  twice.replace(twice.rfind(counted), counted.size(), "\"sessions\":2");
  check_failure(f.run_at(f.dir.path() + "/fourth", {"import", f.file("twice.ndjson", twice)}), exit_invalid_schema,
                "appears twice");
  CHECK_FALSE(std::filesystem::exists(f.dir.path() + "/fourth/relay.log"));
}

TEST_CASE("relay repair of a store whose first record is damaged keeps the project's later records") {
  relay_fixture f;
  for (int i = 0; i < 8; ++i) deposit(f, "pkg_" + std::to_string(i));
  for (int i = 0; i < 6; ++i) {
    check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "s" + std::to_string(i % 3),
                               "--predicate", "p", "--value", "v" + std::to_string(i)}));
  }
  std::string log = read_file(f.store + "/relay.log");
  log[32 + 40] ^= 0x01;  // inside the first record: pkg_0's deposit, which created the project
  cli_test::write_file(f.store + "/relay.log", log);
  CHECK(f.run({"project", "list"}).exit_code == exit_not_found);  // damaged
  const run_result repaired = f.run({"repair", "--json"});
  check_clean_success(repaired);
  simdjson::dom::parser parser;
  const auto report = cli_test::parse_json(parser, repaired.out);
  CHECK(report["records_kept"].get_uint64().value() == 13);
  CHECK(report["lost"].get_array().value().size() == 1);
  const simdjson::dom::array recreated = report["recreated"].get_array().value();
  REQUIRE(recreated.size() == 1);
  CHECK(std::string_view(recreated.at(0)["project_id"].get_string().value()) == "proj_demo");
  simdjson::dom::parser list_parser;
  const run_result latest = f.run({"pull", "--mode", "latest", "--project", "proj_demo", "--limit", "20", "--json"});
  check_clean_success(latest);
  CHECK(cli_test::parse_json(list_parser, latest.out)["packages"].get_array().value().size() == 7);
}

TEST_CASE("relay repair keeps a key's later facts when the fact they superseded is lost") {
  relay_fixture f;
  deposit(f, "pkg_1");
  for (int i = 0; i < 3; ++i) {
    check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value",
                               "value_" + std::to_string(i), "--valid-from",
                               "2026-04-0" + std::to_string(i + 1) + "T00:00:00Z"}));
  }
  std::string log = read_file(f.store + "/relay.log");
  const std::size_t at = log.find("value_1");
  REQUIRE(at != std::string::npos);
  log[at] = 'V';  // the second fact's record no longer matches its checksum
  cli_test::write_file(f.store + "/relay.log", log);
  const run_result dry = f.run({"repair", "--dry-run"});
  check_clean_success(dry);
  CHECK(contains(dry.out, "(the fact recorded at byte "));
  CHECK(contains(dry.out, ") superseded fact_"));
  CHECK(contains(dry.out, "which is lost: it now supersedes fact_"));
  CHECK(contains(dry.out, "dry run: 3 records kept (1 amended), 1 lost part; nothing was changed"));
  const run_result repaired = f.run({"repair", "--json"});
  check_clean_success(repaired);
  simdjson::dom::parser parser;
  const auto report = cli_test::parse_json(parser, repaired.out);
  const simdjson::dom::array relinked = report["relinked"].get_array().value();
  REQUIRE(relinked.size() == 1);
  CHECK(std::string_view(relinked.at(0)["supersedes"].get_string().value()).starts_with("fact_"));
  const run_result history = f.run({"history", "--project", "proj_demo", "--subject", "s", "--predicate", "p"});
  check_clean_success(history);
  CHECK(contains(history.out, "value_0"));
  CHECK(contains(history.out, "value_2"));
  const run_result current = f.run({"facts", "--project", "proj_demo", "--json"});
  check_clean_success(current);
  CHECK(contains(current.out, "value_2"));
  CHECK_FALSE(contains(current.out, "value_0"));
}

TEST_CASE("relay: a write that fails on a store it would create leaves no store behind") {
  relay_fixture f;
  // The failed deposit and import remove the store they made, and its folder.
  check_failure(f.run({"deposit", f.file("bad.json", R"({"title":"no project"})")}), exit_invalid_schema,
                "is required");
  CHECK_FALSE(std::filesystem::exists(f.store));
  check_failure(f.run({"verify"}), exit_usage, "no Relay store here");
  check_failure(f.run({"import", f.file("junk.ndjson", "not json\n")}), exit_invalid_schema, "line 1");
  CHECK_FALSE(std::filesystem::exists(f.store));
  check_failure(f.run({"pull", "--mode", "latest", "--project", "p"}), exit_usage, "no Relay store here");
  // A folder that was there stays, with what it held.
  std::filesystem::create_directory(f.store);
  cli_test::write_file(f.store + "/README", "the team's store");
  check_failure(f.run({"deposit", f.file("bad.json", R"({"title":"no project"})")}), exit_invalid_schema,
                "is required");
  CHECK(cli_test::list_directory(f.store) == std::vector<std::string>{"README"});
  // The next write that succeeds creates the store there.
  deposit(f, "pkg_first");
  CHECK(f.run({"pull", "--mode", "specific", "--package", "pkg_first"}).exit_code == 0);
  // A store that holds records is never removed, whatever fails.
  deposit(f, "pkg_kept");
  check_failure(f.run({"deposit", f.file("bad.json", R"({"title":"no project"})")}), exit_invalid_schema,
                "is required");
  CHECK(f.run({"pull", "--mode", "specific", "--package", "pkg_kept"}).exit_code == 0);
}

// relay serve makes a new store and fails (its answers go to /dev/full) while
// relay deposit --wait waits for its lock: the deposit then makes the store
// afresh and holds the lock of that store. The script waits, reading
// /proc/locks, until serve holds the lock and then until the deposit waits
// for it (each wait bounded: 30 s).
TEST_CASE("relay deposit --wait while relay serve fails on the store it made: the deposit makes it afresh") {
  relay_fixture f;
  const std::string pkg = f.file("pkg.json", package_text("pkg_waited", "Waited", "proj_demo"));
  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  std::string script = "cd '" + f.dir.path() + "' && mkfifo in && R='" + RELAY_BIN + "' S='" + f.store + "'\n";
  script += "\"$R\" serve --store \"$S\" < in > /dev/full 2> serve.err & serve=$!\n";
  script += "exec 3> in\n";
  // locked MARK PID: whether /proc/locks has a flock on store.lock by PID
  // whose line starts with MARK ("N: FLOCK" held, "N: -> FLOCK" waited for).
  script += "locked() { [ -e \"$S/store.lock\" ] && "
            "grep -q \"^[0-9]*: $1 .* $2 .*:$(stat -c %i \"$S/store.lock\") \" /proc/locks; }\n";
  script += "await() { i=0; until locked \"$1\" \"$2\"; do i=$((i+1)); [ $i -lt 3000 ] || exit 9; sleep 0.01; done; }\n";
  script += "await FLOCK $serve\n";
  script += "\"$R\" deposit --wait --store \"$S\" pkg.json > deposit.out 2> deposit.err & deposit=$!\n";
  script += "await '-> FLOCK' $deposit\n";
  script += "printf '%s\\n' '" + initialize + "' >&3\n";
  script += "exec 3>&-\n";
  script += "wait $serve; echo \"serve $?\"\n";
  script += "wait $deposit; echo \"deposit $?\"\n";
  const run_result r = cli_test::run("/bin/sh", {"-c", script});
  INFO("serve: " << read_file(f.dir.path() + "/serve.err"));
  INFO("deposit: " << read_file(f.dir.path() + "/deposit.err"));
  CHECK(r.out == "serve 2\ndeposit 0\n");
  CHECK(contains(read_file(f.dir.path() + "/deposit.out"), "pkg_waited"));
  const run_result verified = f.run({"verify"});
  check_clean_success(verified);
  CHECK(contains(verified.out, "ok: checked 1 package"));
  CHECK(f.run({"pull", "--mode", "specific", "--package", "pkg_waited"}).exit_code == 0);
  // The store's writer lock is the one at store.lock: a writer is refused
  // while another holds it.
  auto holder = agentctx::relay::store::open(agentctx::io::default_file_system(), f.store);
  REQUIRE(holder.has_value());
  check_failure(f.run({"deposit", pkg}), exit_usage, "store is locked by pid");
}

// relay serve on a store it makes, failing before anything is written (its
// answers go to /dev/full): the folder goes again; the embedding cache is
// made only when a vector is stored, so it does not keep the folder.
TEST_CASE("relay serve that fails on the store it made leaves no folder") {
  relay_fixture f;
  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  const std::string in = f.file("in.jsonl", initialize + "\n");
  const std::string script = "'" + std::string(RELAY_BIN) + "' serve --store '" + f.store + "' < '" + in +
                             "' > /dev/full; echo \"serve $?\"";
  const run_result r = cli_test::run("/bin/sh", {"-c", script});
  CHECK(r.out == "serve 2\n");
  CHECK(contains(r.err, "writing an answer failed"));
  CHECK_FALSE(std::filesystem::exists(f.store));
}

TEST_CASE("relay error messages show control bytes and bytes that are not UTF-8 escaped, on one line") {
  relay_fixture f;
  deposit(f, "pkg_1");
  const std::vector<std::vector<std::string>> commands = {
      {"orient", "--project", "x\x01y"},
      {"pull", "--mode", "latest", "--project", "x\x1b[2Jy"},
      {"review", "--list", "--project", "x\x1by"},
      {"facts", "--project", "proj_demo", "--at", "x\x1by"},
      {"pull", "--mode", "x\x1by"},
      {"pull", "--mode", "\xff"},
      {"deposit", f.file("f\x1b.json", "{")},
  };
  for (const std::vector<std::string>& command : commands) {
    const run_result r = f.run(command);
    CAPTURE(r.err);
    CHECK(r.exit_code != 0);
    CHECK(cli_test::line_count(r.err) == 1);
    CHECK(r.err.find('\x1b') == std::string::npos);
    CHECK(r.err.find('\x01') == std::string::npos);
    CHECK(r.err.find('\xff') == std::string::npos);
    CHECK((contains(r.err, "\\x1b") || contains(r.err, "\\x01") || contains(r.err, "\\xff")));
  }
  // A file name is escaped as messages quote text: one holding the text of
  // an escape, or '"' and '\\', cannot pass for another.
  check_failure(f.run({"deposit", f.dir.path() + "/lit\\x1b.json"}), exit_usage, "/lit\\\\x1b.json: ");
  check_failure(f.run({"deposit", f.dir.path() + "/esc\x1b.json"}), exit_usage, "/esc\\x1b.json: ");
  check_failure(f.run({"deposit", f.dir.path() + "/q\"\\.json"}), exit_usage, "/q\\\"\\\\.json: ");
  // JSON that is not JSON: the byte offset of the problem, said once.
  const run_result broken = f.run({"deposit", f.file("broken.json", "{\"a\":1,}")});
  check_failure(broken, exit_invalid_schema, "broken.json: at byte 7: the package is not JSON: expected a member name");
  CHECK_FALSE(contains(broken.err, "not JSON: not JSON"));
  check_failure(f.run({"deposit", f.file("empty.json", "")}), exit_invalid_schema,
                "empty.json: the package is not JSON: the text is empty");
  // A value that is not UTF-8 is refused naming the field it went to.
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "a\xff", "--predicate", "p", "--value", "1"}),
                exit_invalid_schema, "relay: subject is not valid UTF-8");
  check_failure(f.run({"session", "start", "--project", "proj_demo", "--actor", "\xc3", "--actor-type", "agent"}),
                exit_invalid_schema, "relay: actor_id is not valid UTF-8");
  // And so is a query or focus (it was searched for as U+FFFD, and echoed so).
  check_failure(f.run({"pull", "--mode", "relevant", "--project", "proj_demo", "--query", "retrieval \xff"}),
                exit_invalid_schema, "relay: query is not valid UTF-8");
  check_failure(f.run({"orchestrate", "--project", "proj_demo", "--focus", "x \xff"}), exit_invalid_schema,
                "relay: focus is not valid UTF-8");
}

TEST_CASE("relay refuses options that do not apply to the mode asked for") {
  relay_fixture f;
  deposit(f, "pkg_1");
  check_failure(f.run({"pull", "--mode", "latest", "--project", "proj_demo", "--dim", "16"}), exit_usage,
                "--dim applies to --mode relevant only (the other modes embed nothing) (run 'relay pull --help' for "
                "usage)");
  check_failure(f.run({"pull", "--mode", "latest", "--mode", "specific"}), exit_usage,
                "--mode: given 2 times, but it takes one value (run 'relay pull --help' for usage)");
  check_failure(f.run({"project", "show"}), exit_usage, "(run 'relay project show --help' for usage)");
  check_failure(f.run({"review", "--list"}), exit_usage, "--list needs --project P (run 'relay review --help' for usage)");
  check_failure(f.run({"pull", "--mode", "specific", "--package", "pkg_1", "--embedder", "hash"}), exit_usage,
                "--embedder applies to --mode relevant only");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
      // A limit past what relay serve takes (it was printed as a double from 2^53 on).
      {{"pull", "--mode", "latest", "--project", "proj_demo", "--limit", "1001"},
       "--limit: must be at most 1000, not '1001'"},
      {{"pull", "--mode", "relevant", "--query", "x", "--limit", "9007199254740993"}, "must be at most 1000"},
      {{"orchestrate", "--project", "proj_demo", "--focus", "x", "--snippets", "1001"},
       "--snippets: must be at most 1000"},
      // relay_pull and relay_review (relay serve) refuse the same, in the same words.
      {{"pull", "--mode", "specific", "--package", "pkg_1", "--limit", "3"},
       "--limit does not apply to --mode specific"},
      {{"pull", "--mode", "latest", "--project", "proj_demo", "--package", "pkg_1"},
       "--package applies to --mode specific only"},
      {{"pull", "--mode", "specific", "--package", "pkg_1", "--query", "x"}, "--query applies to --mode relevant only"},
      {{"review", "--package", "pkg_1", "--status", "complete", "--review-type", "human"},
       "--review-type goes with --status awaiting_review"},
      {{"review", "--package", "pkg_nowhere", "--status", "complete", "--review-type", "human"},
       "--review-type goes with --status awaiting_review"},
      {{"orchestrate", "--project", "proj_demo", "--snippets", "3"}, "--snippets needs --focus"},
      {{"orchestrate", "--embedding-cache", "c"}, "--embedding-cache needs --focus"},
  };
  for (const auto& refusal : refusals) check_failure(f.run(refusal.first), exit_usage, refusal.second);
  check_clean_success(f.run({"orchestrate", "--project", "proj_demo", "--focus", "x", "--snippets", "3"}));
  // Commands that use no store check --store as every command does.
  const std::string file = f.file("not-a-folder", "x");
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"canonical", f.file("doc.json", "{}")}, {"hash", f.file("p.json", "{}")},
        {"conformance"}}) {
    check_failure(f.run_at(file, command), exit_usage, "not a directory");
  }
  check_failure(f.run_at(file + "/", {"pull", "--mode", "latest", "--project", "proj_demo"}), exit_usage,
                "not-a-folder/: not a directory");
}

TEST_CASE("relay serve takes no --json, and its refusal leaves standard output, the MCP channel, empty") {
  relay_fixture f;
  const run_result after = f.run({"serve", "--json"});
  check_failure(after, exit_usage, "unexpected argument '--json' (run 'relay serve --help' for usage)");
  CHECK(after.out.empty());
  const run_result before = cli_test::run(RELAY_BIN, {"--json", "serve", "--store", f.store}, f.dir.path());
  check_failure(before, exit_usage, "serve takes no --json: it speaks JSON-RPC on standard output");
  CHECK(before.out.empty());
  // A store folder named serve is not the command: --json still applies.
  const run_result named = cli_test::run(RELAY_BIN, {"--store", "serve", "--json", "pull"}, f.dir.path());
  CHECK(named.exit_code == exit_usage);
  CHECK(contains(named.out, "\"usage_error\""));
  CHECK_FALSE(std::filesystem::exists(f.store));
}

TEST_CASE("relay refuses an empty --project where it is optional, instead of reading it as no project") {
  relay_fixture f;
  deposit(f, "pkg_1");
  // Read as absent, "" would widen these to every project (pull, orchestrate,
  // export) or to any project (flag, review), and list every session.
  const std::vector<std::vector<std::string>> commands = {
      {"pull", "--mode", "relevant", "--query", "archive", "--project", ""},
      {"pull", "--mode", "specific", "--package", "pkg_1", "--project", ""},
      {"orchestrate", "--project", ""},
      {"orchestrate", "--focus", "archive", "--project", ""},
      {"export", "--project", ""},
      {"flag", "--package", "pkg_1", "--review-type", "human", "--project", ""},
      {"review", "--list", "--project", ""},
      {"session", "list", "--project", ""},
  };
  for (const std::vector<std::string>& command : commands) {
    CAPTURE(cli_test::joined(command));
    check_failure(f.run(command), exit_usage, "--project: must not be empty");
  }
}

TEST_CASE("relay reads numbers in decimal, and refuses an empty FILE") {
  relay_fixture f;
  deposit(f, "pkg_1");
  // CLI11 reads integers as strtoull with base 0 does: 010 would be 8.
  const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
      {{"pull", "--mode", "latest", "--project", "proj_demo", "--limit", "010"},
       "--limit: must be written without leading zeros, not '010'"},
      {{"orient", "--project", "proj_demo", "--max-packages", "0x10"},
       "--max-packages: must be a whole number of at least 1, not '0x10'"},
      {{"pull", "--mode", "relevant", "--query", "x", "--dim", "010"},
       "--dim: must be written without leading zeros, not '010'"},
      {{"pull", "--mode", "relevant", "--query", "x", "--dim", "65537"}, "--dim: must be at most 65536, not '65537'"},
  };
  for (const auto& refusal : refusals) check_failure(f.run(refusal.first), exit_usage, refusal.second);
  check_clean_success(f.run({"pull", "--mode", "latest", "--project", "proj_demo", "--limit", "10"}));
  // --confidence: a decimal number, as JSON writes one.
  const auto assert_with_confidence = [&](const std::string& value, const std::string& confidence) {
    return f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", value,
                  "--confidence", confidence});
  };
  for (const std::string bad : {" 0.5", "0.5 ", "0x1p-1", "nan", "inf", ""}) {
    CAPTURE(bad);
    check_failure(assert_with_confidence("v", bad), exit_usage, "--confidence: must be a number from 0.0 to 1.0");
  }
  check_clean_success(assert_with_confidence("v", "0.5"));
  // Beyond a double's range is still a number: past 1, outside 0 to 1 (exit 3); below, 0.
  check_failure(assert_with_confidence("w", "1e999"), exit_invalid_schema,
                "confidence must be a number from 0.0 to 1.0");
  check_clean_success(assert_with_confidence("w", "1e-400"));
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"canonical", ""}, {"hash", ""}, {"deposit", ""}, {"import", ""}}) {
    check_failure(f.run(command), exit_usage, "FILE: must not be empty");
  }
}

TEST_CASE("relay export leaves out a quarantined package (exit 1), and import checks the end line") {
  relay_fixture f;
  std::filesystem::create_directories(f.store);
  std::string log = agentctx::relay::encode_log_header();
  agentctx::relay::append_record(
      log, "{\"type\":\"project\",\"project\":{\"project_id\":\"proj_demo\",\"created_at\":\"2026-04-18T20:00:00Z\"}}");
  agentctx::relay::append_record(log, "{\"type\":\"package\",\"hash\":\"sha256:" + std::string(64, '0') +
                                          "\",\"package\":" + package_text("pkg_q", "Tampered") + "}");
  cli_test::write_file(f.store + "/relay.log", log);
  deposit(f, "pkg_good");

  const std::string backup = f.dir.path() + "/backup.ndjson";
  const run_result exported = f.run({"export", "-o", backup});
  CHECK(exported.exit_code == exit_not_found);
  CHECK(contains(exported.err, "relay: left out quarantined package proj_demo/pkg_q: stored hash sha256:000"));
  CHECK(contains(exported.err, "relay: the export leaves out 1 quarantined package ('relay verify' lists why)"));
  CHECK(exported.out == "exported 1 project, 0 sessions, 1 package, 0 status changes, 0 facts: 4 lines (" +
                            std::to_string(std::filesystem::file_size(backup)) + " bytes) to " + backup + "\n");
  const std::string text = read_file(backup);
  CHECK(text.ends_with(
      "{\"facts\":0,\"kind\":\"relay-export-end\",\"packages\":1,\"projects\":1,\"sessions\":0,\"status_changes\":0}\n"));
  const run_result as_json = f.run({"export", "-o", backup, "--json"});
  CHECK(as_json.exit_code == exit_not_found);
  simdjson::dom::parser parser;
  const auto summary = cli_test::parse_json(parser, as_json.out);
  REQUIRE(cli_test::array_of(summary, "left_out").size() == 1);
  CHECK(std::string_view(cli_test::array_of(summary, "left_out").at(0).get_string().value())
            .starts_with("proj_demo/pkg_q: stored hash sha256:000"));
  CHECK(cli_test::number_of(summary, "packages") == 1);

  // What was written restores into another store, pkg_good with its hash.
  const std::string other = f.dir.path() + "/other";
  check_clean_success(f.run_at(other, {"import", backup}));
  CHECK(f.run_at(other, {"pull", "--mode", "specific", "--package", "pkg_good"}).exit_code == 0);

  // Cut short at a line boundary: refused, unless --partial.
  const std::string cut = f.file("cut.ndjson", text.substr(0, text.rfind('\n', text.size() - 2) + 1));
  const std::string third = f.dir.path() + "/third";
  check_failure(f.run_at(third, {"import", cut}), exit_invalid_schema,
                "cut.ndjson: the export is incomplete: it ends without its end line");
  CHECK_FALSE(std::filesystem::exists(third + "/relay.log"));
  const run_result partial = f.run_at(third, {"import", cut, "--partial"});
  CHECK(partial.exit_code == 0);
  CHECK(partial.err == "relay: warning: the export has no end line, so it may be missing lines at its end: imported what "
                       "it holds\n");
  CHECK(contains(partial.out, "imported 1 project, 0 sessions, 1 package"));
  // A line missing in the middle, and two exports joined, are refused.
  std::string holed = text;  // without its third line, the package
  const std::size_t third_line = holed.find('\n', holed.find('\n') + 1) + 1;
  holed.erase(third_line, holed.find('\n', third_line) + 1 - third_line);
  check_failure(f.run_at(third + "4", {"import", f.file("holed.ndjson", holed)}), exit_invalid_schema,
                "line 3: the end line states 1 project, 0 sessions, 1 package, 0 status changes, 0 facts, but the file "
                "holds 1 project, 0 sessions, 0 packages, 0 status changes, 0 facts: lines are missing or were added");
  check_failure(f.run_at(third + "5", {"import", f.file("joined.ndjson", text + text)}), exit_invalid_schema,
                "line 5: a line after the export's end line (line 4)");
  // Cut in the middle of its last line: refused, or the line left out with --partial, and said.
  const std::string torn = f.file("torn.ndjson", text.substr(0, text.size() - 20));
  check_failure(f.run_at(third + "6", {"import", torn}), exit_invalid_schema,
                "line 4: the last line is cut short (no line break after it, and not JSON: ");
  check_failure(f.run_at(third + "6", {"import", torn}), exit_invalid_schema,
                "): the file was cut short (--partial imports the lines before it)");
  const run_result torn_partial = f.run_at(third + "6", {"import", torn, "--partial", "--json"});
  CHECK(torn_partial.exit_code == 0);
  CHECK(contains(torn_partial.err, "relay: warning: line 4 is cut short (no line break after it, and not JSON): left out\n"));
  CHECK(contains(torn_partial.err, "relay: warning: the export has no end line"));
  const auto torn_report = cli_test::parse_json(parser, torn_partial.out);
  CHECK(cli_test::number_of(torn_report, "packages") == 1);
  CHECK(cli_test::number_of(torn_report, "cut_line") == 4);
  CHECK(torn_report["incomplete"].get_bool().value());
}

#endif

}  // namespace cli_relay_refusals_test
