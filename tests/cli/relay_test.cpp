// End-to-end tests of relay and relay-deposit through the real binaries:
// every subcommand in text and JSON (the JSON parsed back), the protocol's
// operations in a temporary store, export into a second store with every
// hash preserved, canonical JSON and content hashes of sample input, and
// every refused input as one line with its documented exit code (1 not
// found or damaged, 2 usage, 3 invalid_schema, 4 invalid_transition,
// 5 duplicate_package_id, 6 project_archived).
#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/relay/log_format.hpp"
#include "agentctx/relay/store.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"
#include "support/hash_layer.hpp"
#if defined(RELAY_BIN)
#include "cli/relay_cli_support.hpp"
#endif

namespace cli_relay_test {

#if !defined(RELAY_BIN) || !defined(RELAY_DEPOSIT_BIN)
TEST_CASE("relay: end-to-end tests") {
  MESSAGE("skipping: RELAY_BIN is not defined (the relay targets are not part of this build)");
}
#else

using cli_test::array_of;
using cli_test::check_clean_success;
using cli_test::contains;
using cli_test::number_of;
using cli_test::run_result;
using cli_test::text_of;
using namespace relay_cli_test;

namespace {

/// The command, run with --json, failed with `exit_code`: one line on stderr
/// and {"error": {"code", "status", "message"}} on stdout.
void check_json_failure(const run_result& r, int exit_code, std::string_view code, int status) {
  INFO("stdout: " << r.out);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == exit_code);
  CHECK(cli_test::line_count(r.err) == 1);
  simdjson::dom::parser parser;
  const auto error = cli_test::parse_json(parser, r.out)["error"];
  CHECK(std::string(error["code"].get_string().value()) == code);
  CHECK(error["status"].get_int64().value() == status);
  CHECK(contains(r.err, std::string(error["message"].get_string().value())));
}

}  // namespace

TEST_CASE("relay deposit, pull latest and pull specific, in text and JSON") {
  relay_fixture f;
  const std::string first = f.file("first.json", package_text("pkg_first", "Shipped archive", "proj_demo", "complete",
                                                              ",\"tags\":[\"archive\",\"cli\"],\"decisions_made\":"
                                                              "[\"Soft archive via archived_at\"],\"x-team\":\"core\""));
  const run_result deposited = f.run({"deposit", first});
  check_clean_success(deposited);
  CHECK(deposited.out.starts_with("pkg_first  sha256:"));
  CHECK(deposited.out.ends_with("  created\n"));
  CHECK(std::filesystem::exists(f.store + "/relay.log"));

  // The identical package again is "already present", with the same hash.
  const run_result again = f.run({"deposit", first});
  check_clean_success(again);
  CHECK(again.out == deposited.out.substr(0, deposited.out.size() - std::string("created\n").size()) +
                         "already present\n");

  simdjson::dom::parser parser;
  auto second = f.json(parser, {"deposit", f.file("second.json", package_text("", "Wired the dashboard"))});
  const std::string second_id = text_of(second, "package_id");
  CHECK(second_id.starts_with("pkg_"));
  CHECK(second_id.size() == 36);
  CHECK(second["created"].get_bool().value());
  CHECK(text_of(second, "project_id") == "proj_demo");
  CHECK(text_of(second["package"].value(), "title") == "Wired the dashboard");

  // From standard input, through "-".
  const std::string third = f.file("third.json", package_text("pkg_third", "Measured recall"));
  check_clean_success(f.run({"deposit", "-"}, third));

  const run_result latest = f.run({"pull", "--mode", "latest", "--project", "proj_demo", "--limit", "2"});
  check_clean_success(latest);
  CHECK(cli_test::line_count(latest.out) == 2);
  CHECK(latest.out.starts_with("pkg_third  "));
  CHECK(contains(latest.out, "milestone, complete  Measured recall"));

  auto listed = f.json(parser, {"pull", "--mode", "latest", "--project", "proj_demo"});
  CHECK(text_of(listed, "mode") == "latest");
  CHECK(number_of(listed, "limit") == 5);
  std::vector<std::string> ids;
  for (auto entry : array_of(listed, "packages")) {
    CHECK(agentctx::relay::is_sha256_content_hash(text_of(entry, "hash")));
    ids.push_back(text_of(entry["package"].value(), "package_id"));
  }
  CHECK(ids == std::vector<std::string>{"pkg_third", second_id, "pkg_first"});

  const run_result specific = f.run({"pull", "--mode", "specific", "--package", "pkg_first"});
  check_clean_success(specific);
  CHECK(specific.out.starts_with("pkg_first in project proj_demo\n"));
  CHECK(contains(specific.out, "  title         Shipped archive\n"));
  CHECK(contains(specific.out, "  tags          archive, cli\n"));
  CHECK(contains(specific.out, "    - Soft archive via archived_at\n"));
  auto pulled = f.json(parser, {"pull", "--mode", "specific", "--package", "pkg_first", "--project", "proj_demo"});
  CHECK(text_of(pulled, "mode") == "specific");
  CHECK(text_of(pulled, "project_id") == "proj_demo");
  REQUIRE(array_of(pulled, "packages").size() == 1);
  const simdjson::dom::element one = pulled["packages"].at(0).value();
  CHECK(text_of(one, "hash") == text_of(one, "deposited_hash"));
  CHECK(deposited.out.substr(11, 71) == text_of(one, "hash"));
  CHECK(text_of(one["package"].value(), "x-team") == "core");  // unknown members round-trip
  CHECK(array_of(one, "status_changes").size() == 0);
}

TEST_CASE("relay-deposit deposits like relay deposit, with the same output and exit codes") {
  relay_fixture f;
  const std::string path = f.file("p.json", package_text("pkg_card", "From the design card"));
  const run_result r = cli_test::run(RELAY_DEPOSIT_BIN, {"--store", f.store, path}, f.dir.path());
  check_clean_success(r);
  CHECK(r.out.starts_with("pkg_card  sha256:"));
  CHECK(r.out.ends_with("  created\n"));
  // The same package through relay is already there, with the same hash.
  const run_result through_relay = f.run({"deposit", path});
  check_clean_success(through_relay);
  CHECK(through_relay.out.substr(0, 81) == r.out.substr(0, 81));
  CHECK(through_relay.out.ends_with("already present\n"));

  simdjson::dom::parser parser;
  const run_result as_json = cli_test::run(RELAY_DEPOSIT_BIN, {"--json", "--store", f.store, "-"}, f.dir.path(), path);
  check_clean_success(as_json);
  CHECK_FALSE(cli_test::parse_json(parser, as_json.out)["created"].get_bool().value());

  const run_result bad = cli_test::run(RELAY_DEPOSIT_BIN, {"--store", f.store, f.file("bad.json", "{\"title\":1}")},
                                       f.dir.path());
  cli_test::check_error(bad, exit_invalid_schema, "project_id", "relay-deposit");
  const run_result missing = cli_test::run(RELAY_DEPOSIT_BIN, {"--store", f.store, "nowhere.json"}, f.dir.path());
  cli_test::check_error(missing, exit_usage, "nowhere.json", "relay-deposit");
  const run_result no_file = cli_test::run(RELAY_DEPOSIT_BIN, {"--store", f.store}, f.dir.path());
  cli_test::check_error(no_file, exit_usage, "FILE", "relay-deposit");
  // relay-deposit has no serve command: a FILE named serve is a file, and
  // an argument error with --json is still the usage_error document.
  const run_result named_serve =
      cli_test::run(RELAY_DEPOSIT_BIN, {"--json", "--store", f.store, "serve", "--bogus"}, f.dir.path());
  CHECK(named_serve.exit_code == exit_usage);
  CHECK(contains(named_serve.out, "\"usage_error\""));
  const run_result help = cli_test::run(RELAY_DEPOSIT_BIN, {"--help"}, f.dir.path());
  check_clean_success(help);
  CHECK(contains(help.out, "Exit codes: 0 success (deposited, or already present); 1 a damaged store, or one of a format"));
  CHECK_FALSE(contains(help.out, "invalid_transition"));
}

TEST_CASE("relay deposit refuses bad input with the protocol's exit codes") {
  relay_fixture f;
  check_failure(f.run({"deposit", "missing.json"}), exit_usage, "missing.json");
  check_failure(f.run({"deposit", f.file("broken.json", "{\"title\": ")}), exit_invalid_schema,
                "broken.json: at byte 10: the package is not JSON: the text ends where a value should be");
  // A schema error names the member.
  std::string robot = package_text("pkg_robot", "Robot");
  robot.replace(robot.find("\"human\""), 7, "\"robot\"");
  check_failure(f.run({"deposit", f.file("robot.json", robot)}), exit_invalid_schema,
                "created_by.type must be one of human, agent, script (got \"robot\")");
  std::string no_title = package_text("pkg_untitled", "x");
  no_title.replace(no_title.find("\"title\":\"x\","), 12, "");
  check_failure(f.run({"deposit", f.file("untitled.json", no_title)}), exit_invalid_schema, "title is required");
  // As deep as JSON may nest here, and its record one level deeper still.
  std::string deep = "1";
  for (int i = 0; i < 1023; ++i) deep = "[" + deep + "]";
  const std::string deep_file = f.file("deep.json", package_text("pkg_deep", "Deep", "proj_demo", "complete", ",\"x-deep\":" + deep));
  check_failure(f.run({"deposit", deep_file}), exit_invalid_schema,
                "deep.json: cannot be stored as a log record: arrays and objects nest deeper than 1024 levels "
                "(the record holds the object given one level deeper: it may nest 1023 levels at most)");
  check_json_failure(f.run({"deposit", deep_file, "--json"}), exit_invalid_schema, "invalid_schema", 400);
  check_failure(f.run({"import", deep_file}), exit_invalid_schema,
                "line 1: cannot be stored as a log record: arrays and objects nest deeper than 1024 levels "
                "(the record holds the object given one level deeper: it may nest 1023 levels at most)");

  // The same id with other content is 409 duplicate_package_id.
  f.deposit(package_text("pkg_dup", "First version"));
  check_failure(f.run({"deposit", f.file("dup.json", package_text("pkg_dup", "Second version"))}), exit_duplicate,
                "duplicate_package_id");
  check_json_failure(f.run({"deposit", f.file("dup.json", package_text("pkg_dup", "Second version")), "--json"}),
                     exit_duplicate, "duplicate_package_id", 409);
  check_json_failure(f.run({"deposit", f.file("robot.json", robot), "--json"}), exit_invalid_schema, "invalid_schema",
                     400);

  // An archived project refuses deposits (403 project_archived) until it is unarchived.
  check_clean_success(f.run({"project", "archive", "proj_demo"}));
  const std::string later = f.file("later.json", package_text("pkg_later", "Too late"));
  check_failure(f.run({"deposit", later}), exit_archived, "project_archived");
  check_json_failure(f.run({"deposit", later, "--json"}), exit_archived, "project_archived", 403);
  check_clean_success(f.run({"project", "unarchive", "proj_demo"}));
  check_clean_success(f.run({"deposit", later}));
}

TEST_CASE("relay flag and review move packages along the allowed transitions") {
  relay_fixture f;
  f.deposit(package_text("pkg_done", "Finished"));
  f.deposit(package_text("pkg_draft", "Work in progress", "proj_demo", "draft"));

  // complete is terminal: 400 invalid_transition.
  check_failure(f.run({"flag", "--package", "pkg_done", "--review-type", "human"}), exit_invalid_transition,
                "invalid_transition");
  check_json_failure(f.run({"flag", "--package", "pkg_done", "--review-type", "human", "--json"}),
                     exit_invalid_transition, "invalid_transition", 400);
  check_failure(f.run({"flag", "--package", "pkg_nowhere", "--review-type", "agent"}), exit_not_found,
                "does not exist");
  check_json_failure(f.run({"flag", "--package", "pkg_nowhere", "--review-type", "agent", "--json"}), exit_not_found,
                     "package_not_found", 404);
  check_failure(f.run({"flag", "--package", "pkg_draft", "--review-type", "robot"}), exit_usage, "--review-type");

  const run_result flagged = f.run({"flag", "--package", "pkg_draft", "--review-type", "human", "--note", "check it"});
  check_clean_success(flagged);
  CHECK(flagged.out.starts_with("pkg_draft  now awaiting_review (human)  sha256:"));

  simdjson::dom::parser parser;
  auto awaiting = f.json(parser, {"review", "--list", "--project", "proj_demo"});
  REQUIRE(array_of(awaiting, "packages").size() == 1);
  CHECK(text_of(array_of(awaiting, "packages").at(0).value()["package"].value(), "package_id") == "pkg_draft");
  const run_result listing = f.run({"review", "--list", "--project", "proj_demo"});
  check_clean_success(listing);
  CHECK(listing.out.starts_with("pkg_draft  "));
  CHECK(contains(listing.out, "awaiting_review (human)"));
  // Flagged again: for another reviewer, and back; the same reviewer without
  // a note changes nothing.
  const run_result to_agent = f.run({"flag", "--package", "pkg_draft", "--review-type", "agent", "--note", "agent first"});
  check_clean_success(to_agent);
  CHECK(to_agent.out.starts_with("pkg_draft  now awaiting_review (agent)  sha256:"));
  CHECK(contains(f.run({"review", "--list", "--project", "proj_demo"}).out, "awaiting_review (agent)"));
  auto back = f.json(parser, {"flag", "--package", "pkg_draft", "--review-type", "human"});
  CHECK(text_of(back, "review_type") == "human");
  CHECK(contains(flagged.out, text_of(back, "hash")));
  const auto log_size = std::filesystem::file_size(f.store + "/relay.log");
  auto unchanged = f.json(parser, {"flag", "--package", "pkg_draft", "--review-type", "human"});
  CHECK(text_of(unchanged, "hash") == text_of(back, "hash"));
  // An empty note is no note: nothing is written.
  check_clean_success(f.run({"flag", "--package", "pkg_draft", "--review-type", "human", "--note", ""}));
  CHECK(std::filesystem::file_size(f.store + "/relay.log") == log_size);

  auto revised = f.json(parser, {"review", "--package", "pkg_draft", "--status", "revision_requested", "--note",
                                 "split it"});
  CHECK(text_of(revised, "status") == "revision_requested");
  CHECK(text_of(revised, "review_type") == "human");
  check_clean_success(f.run({"review", "--package", "pkg_draft", "--status", "awaiting_review"}));
  const run_result done = f.run({"review", "--package", "pkg_draft", "--status", "complete", "--note", "good"});
  check_clean_success(done);
  CHECK(done.out.starts_with("pkg_draft  now complete (human)  sha256:"));
  check_failure(f.run({"review", "--package", "pkg_draft", "--status", "revision_requested"}),
                exit_invalid_transition, "cannot go from complete to revision_requested");
  CHECK(f.run({"review", "--list", "--project", "proj_demo"}).out == "no packages awaiting review in project proj_demo\n");

  // The detail view lists the changes; the JSON carries each change's hash.
  auto pulled = f.json(parser, {"pull", "--mode", "specific", "--package", "pkg_draft"});
  CHECK(pulled["project_id"].is_null());
  const simdjson::dom::element detail = pulled["packages"].at(0).value();
  CHECK(array_of(detail, "status_changes").size() == 6);  // flag, flag again twice, revision, resubmission, complete
  CHECK(text_of(array_of(detail, "status_changes").at(1).value(), "note") == "agent first");
  CHECK(text_of(detail, "hash") != text_of(detail, "deposited_hash"));
  CHECK(text_of(detail["package"].value(), "status") == "complete");

  check_failure(f.run({"review", "--list"}), exit_usage, "--list needs --project");
  check_failure(f.run({"review", "--package", "pkg_draft"}), exit_usage, "--status");
  check_failure(f.run({"review", "--list", "--project", "proj_nowhere"}), exit_not_found, "does not exist");
}

TEST_CASE("relay assert, facts, history and invalidate keep the facts' timeline") {
  relay_fixture f;
  simdjson::dom::parser parser;
  auto first = f.json(parser, {"assert", "--project", "proj_demo", "--subject", "longmemeval_s", "--predicate",
                               "recall_any_at_5", "--value", "97.0", "--valid-from", "2026-04-10T12:00:00Z", "--tag",
                               "benchmark", "--confidence", "0.9"});
  CHECK(first["changed"].get_bool().value());
  CHECK(first["superseded"].is_null());
  const std::string first_id = text_of(first["fact"].value(), "fact_id");
  CHECK(first["fact"]["confidence"].get_double().value() == 0.9);

  const run_result same = f.run({"assert", "--project", "proj_demo", "--subject", "longmemeval_s", "--predicate",
                                 "recall_any_at_5", "--value", "97.0"});
  check_clean_success(same);
  CHECK(same.out.starts_with("unchanged (already current) longmemeval_s recall_any_at_5 = 97.0"));

  const run_result second = f.run({"assert", "--project", "proj_demo", "--subject", "longmemeval_s", "--predicate",
                                   "recall_any_at_5", "--value", "98.5", "--valid-from", "2026-04-15T00:00:00Z",
                                   "--asserted-by", "bench-bot", "--asserted-by-type", "script"});
  check_clean_success(second);
  CHECK(second.out.starts_with("asserted longmemeval_s recall_any_at_5 = 98.5  (from 2026-04-15T00:00:00Z)  fact_"));
  CHECK(second.out.ends_with(", superseding " + first_id + "\n"));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "dashboard", "--predicate", "status",
                             "--value", "live"}));

  auto current = f.json(parser, {"facts", "--project", "proj_demo"});
  CHECK(current["at"].is_null());
  REQUIRE(array_of(current, "facts").size() == 2);
  CHECK(text_of(array_of(current, "facts").at(1).value(), "value") == "98.5");
  CHECK(text_of(array_of(current, "facts").at(1).value()["asserted_by"].value(), "type") == "script");
  auto then = f.json(parser, {"facts", "--project", "proj_demo", "--at", "2026-04-12T00:00:00Z"});
  REQUIRE(array_of(then, "facts").size() == 1);
  CHECK(text_of(array_of(then, "facts").at(0).value(), "value") == "97.0");
  const run_result text = f.run({"facts", "--project", "proj_demo"});
  check_clean_success(text);
  CHECK(cli_test::line_count(text.out) == 2);
  CHECK(text.out.starts_with("dashboard status = live  (from "));
  CHECK(f.run({"facts", "--project", "proj_demo", "--at", "2020-01-01T00:00:00Z"}).out == "no facts held then\n");
  // An offset is converted to UTC (relay_query_facts reads `at` the same way):
  // 2026-04-15T01:30:00+02:00 is 23:30Z the day before, when 97.0 held.
  simdjson::dom::parser offset_parser;
  auto offset = f.json(offset_parser, {"facts", "--project", "proj_demo", "--at", "2026-04-15T01:30:00+02:00"});
  CHECK(text_of(offset, "at") == "2026-04-15T01:30:00+02:00");
  REQUIRE(array_of(offset, "facts").size() == 1);
  CHECK(text_of(array_of(offset, "facts").at(0).value(), "value") == "97.0");
  check_failure(f.run({"facts", "--project", "proj_demo", "--at", "now"}), exit_usage,
                "--at: invalid RFC 3339 timestamp \"now\"");

  auto history = f.json(parser, {"history", "--project", "proj_demo", "--subject", "longmemeval_s", "--predicate",
                                 "recall_any_at_5"});
  REQUIRE(array_of(history, "facts").size() == 2);
  CHECK(text_of(array_of(history, "facts").at(0).value(), "valid_to") == "2026-04-15T00:00:00Z");
  const run_result history_text = f.run({"history", "--project", "proj_demo", "--subject", "longmemeval_s",
                                         "--predicate", "recall_any_at_5"});
  check_clean_success(history_text);
  CHECK(contains(history_text.out, "(from 2026-04-10T12:00:00Z to 2026-04-15T00:00:00Z)  " + first_id + "\n"));
  CHECK(contains(history_text.out, "  (current)\n"));

  // invalidate: only while the value matches, then without one; the count each time.
  auto kept = f.json(parser, {"invalidate", "--project", "proj_demo", "--subject", "dashboard", "--predicate", "status",
                              "--value", "down"});
  CHECK(number_of(kept, "invalidated") == 0);
  const run_result ended = f.run({"invalidate", "--project", "proj_demo", "--subject", "dashboard", "--predicate",
                                  "status"});
  check_clean_success(ended);
  CHECK(ended.out == "invalidated 1 fact\n");
  CHECK(f.run({"invalidate", "--project", "proj_demo", "--subject", "dashboard", "--predicate", "status"}).out ==
        "invalidated 0 facts\n");
  CHECK(array_of(f.json(parser, {"facts", "--project", "proj_demo"}), "facts").size() == 1);
  // The invalidated key's next fact may not start while the ended one held.
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "dashboard", "--predicate", "status",
                       "--value", "back", "--valid-from", "2020-01-01T00:00:00Z"}),
                exit_invalid_schema, "of the key's last fact");

  // Extension members (section 12.1): --extension NAME=JSON, kept in the fact.
  simdjson::dom::parser extended_parser;
  auto extended = f.json(extended_parser, {"assert", "--project", "proj_demo", "--subject", "model", "--predicate",
                                           "name", "--value", "m1", "--extension", "x-trust=0.9", "--extension",
                                           R"(x-origin={"tool":"bench"})"});
  CHECK(extended["fact"]["x-trust"].get_double().value() == 0.9);
  CHECK(text_of(extended["fact"]["x-origin"].value(), "tool") == "bench");
  auto listed = f.json(parser, {"history", "--project", "proj_demo", "--subject", "model", "--predicate", "name"});
  CHECK(array_of(listed, "facts").at(0).value()["x-trust"].get_double().value() == 0.9);
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "model", "--predicate", "name", "--value",
                       "m2", "--extension", "x-trust"}),
                exit_usage, "--extension: must be NAME=JSON, not 'x-trust'");
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "model", "--predicate", "name", "--value",
                       "m2", "--extension", "x-trust=high"}),
                exit_invalid_schema, "--extension x-trust: the value is not JSON");
  for (const std::string bad : {"x-trust=", "x-trust=[1", "x-trust={\"a\":1,\"a\":2}"}) {
    const run_result refused = f.run({"assert", "--project", "proj_demo", "--subject", "model", "--predicate", "name",
                                      "--value", "m2", "--extension", bad});
    check_failure(refused, exit_invalid_schema, "--extension x-trust: the value is not");
    CHECK_FALSE(contains(refused.err, "not JSON: not JSON"));
  }
  // Where in the value the problem is, when it is at a place.
  for (const auto& bad : {std::pair<std::string, std::string>{"x-trust=[1,2", "an array is not closed (at byte 4 of "
                                                                             "the value)"},
                          {"x-trust={\"a\":1,\"a\":2}", "duplicate member name \"a\" (at byte 7 of the value)"},
                          {"x-trust=1 2", "more text after the value (at byte 2 of the value)"}}) {
    CAPTURE(bad.first);
    const run_result refused = f.run({"assert", "--project", "proj_demo", "--subject", "model", "--predicate", "name",
                                      "--value", "m2", "--extension", bad.first});
    CHECK(refused.err.ends_with(bad.second + "\n"));
  }
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "model", "--predicate", "name", "--value",
                       "m2", "--extension", "trust=1"}),
                exit_invalid_schema, "\"trust\" is not an extension member: their names start with x-");

  // A fact that starts in the future, invalidated, ends where it starts; the
  // project's export imports into another store.
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "launch", "--predicate", "date",
                             "--value", "planned", "--valid-from", "2099-01-01T00:00:00Z"}));
  check_clean_success(f.run({"invalidate", "--project", "proj_demo", "--subject", "launch", "--predicate", "date"}));
  auto launch = f.json(parser, {"history", "--project", "proj_demo", "--subject", "launch", "--predicate", "date"});
  REQUIRE(array_of(launch, "facts").size() == 1);
  CHECK(text_of(array_of(launch, "facts").at(0).value(), "valid_to") == "2099-01-01T00:00:00Z");
  const std::string backup = f.dir.path() + "/facts.ndjson";
  check_clean_success(f.run({"export", "--project", "proj_demo", "-o", backup}));
  relay_fixture restored;
  check_clean_success(restored.run({"import", backup}));
  CHECK(array_of(restored.json(parser, {"history", "--project", "proj_demo", "--subject", "launch", "--predicate",
                                        "date"}),
                 "facts")
            .size() == 1);

  // Refused input.
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "v",
                       "--valid-from", "yesterday"}),
                exit_invalid_schema, "valid_from must be an RFC 3339 UTC timestamp");
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "longmemeval_s", "--predicate",
                       "recall_any_at_5", "--value", "99", "--valid-from", "2026-04-01T00:00:00Z"}),
                exit_invalid_schema, "earlier than the current fact's valid_from");
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "v",
                       "--confidence", "1.5"}),
                exit_invalid_schema, "confidence");
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "v",
                       "--asserted-by", "someone"}),
                exit_usage, "--asserted-by-type");
  check_failure(f.run({"facts", "--project", "proj_demo", "--at", "tomorrow"}), exit_usage, "--at");
  check_failure(f.run({"facts", "--project", "proj_nowhere"}), exit_not_found, "project \"proj_nowhere\" does not exist");
  check_json_failure(f.run({"facts", "--project", "proj_nowhere", "--json"}), exit_not_found, "project_not_found", 404);
  check_failure(f.run({"history", "--project", "proj_nowhere", "--subject", "s", "--predicate", "p"}), exit_not_found,
                "does not exist");
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "s"}), exit_usage, "--predicate");

  check_clean_success(f.run({"project", "archive", "proj_demo"}));
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "v"}),
                exit_archived, "archived");
  check_failure(f.run({"invalidate", "--project", "proj_demo", "--subject", "longmemeval_s", "--predicate",
                       "recall_any_at_5"}),
                exit_archived, "archived");
}

TEST_CASE("relay orient prints a briefing, or the OrientationBundle exactly with --json") {
  relay_fixture f;
  f.deposit(package_text("pkg_one", "Shipped archive", "proj_demo", "complete",
                         ",\"open_questions\":[\"Who owns the dashboard?\"],\"handoff_note\":\"Migration applied\","
                         "\"estimated_next_actor\":\"agent\",\"significance\":8"));
  f.deposit(package_text("pkg_two", "Measured recall", "proj_demo", "complete",
                         ",\"open_questions\":[\"Who owns the dashboard?\",\"Ship v2?\"],\"significance\":2"));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "dashboard", "--predicate", "status",
                             "--value", "live"}));

  const run_result briefing = f.run({"orient", "--project", "proj_demo"});
  check_clean_success(briefing);
  CHECK(briefing.out.starts_with("# Orientation: proj_demo\nGenerated "));  // no name: the id once
  CHECK(contains(briefing.out, " for the last 14 days.\n"));
  CHECK(contains(briefing.out, "\n## Recent packages (2)\n- pkg_two  "));
  CHECK(contains(briefing.out, "  Handoff (next: agent): Migration applied\n"));
  CHECK(contains(briefing.out, "\n## Active facts (1)\n- dashboard status = live  (from "));
  CHECK(contains(briefing.out, "\n## Open questions (2)\n- Who owns the dashboard?\n- Ship v2?\n"));
  CHECK_FALSE(contains(briefing.out, "Budget"));

  simdjson::dom::parser parser;
  auto bundle = f.json(parser, {"orient", "--project", "proj_demo", "--window-days", "7"});
  std::vector<std::string> keys;
  simdjson::dom::object members;
  REQUIRE(bundle.get(members) == simdjson::SUCCESS);
  for (auto [key, value] : members) keys.emplace_back(key);
  CHECK(keys == std::vector<std::string>{"project", "recent_packages", "active_facts", "open_questions", "window_days",
                                         "generated_at"});
  CHECK(number_of(bundle, "window_days") == 7);
  CHECK(text_of(bundle["project"].value(), "project_id") == "proj_demo");
  CHECK(array_of(bundle, "recent_packages").size() == 2);
  CHECK(array_of(bundle, "active_facts").size() == 1);

  // A budget drops the least significant items first and says so.
  auto small = f.json(parser, {"orient", "--project", "proj_demo", "--max-bytes", "900"});
  simdjson::dom::element budget;
  REQUIRE(small["x-agentctx-budget"].get(budget) == simdjson::SUCCESS);
  CHECK(number_of(budget, "bytes") <= 900);
  REQUIRE(array_of(budget, "omitted_packages").size() >= 1);
  CHECK(std::string(array_of(budget, "omitted_packages").at(0).get_string().value()) == "pkg_two");
  const run_result budgeted = f.run({"orient", "--project", "proj_demo", "--max-tokens", "225"});
  check_clean_success(budgeted);
  CHECK(contains(budgeted.out, "\nBudget: "));
  CHECK(contains(budgeted.out, " of at most 900 bytes; left out "));
  CHECK_FALSE(contains(budgeted.out, "OVER BUDGET"));
  CHECK(small["x-agentctx-budget"]["over_budget"].error() == simdjson::NO_SUCH_FIELD);

  // --max-packages keeps the newest; the bundle and the briefing say how many were left out.
  auto one = f.json(parser, {"orient", "--project", "proj_demo", "--max-packages", "1"});
  REQUIRE(array_of(one, "recent_packages").size() == 1);
  CHECK(number_of(one["x-agentctx-limit"].value(), "max_packages") == 1);
  CHECK(number_of(one["x-agentctx-limit"].value(), "packages_left_out") == 1);
  const run_result limited = f.run({"orient", "--project", "proj_demo", "--max-packages", "1"});
  check_clean_success(limited);
  CHECK(contains(limited.out, "\n## Recent packages (1)\n(the newest 1 of the window; 1 older package left out: see "
                              "--max-packages)\n- pkg_two  "));
  CHECK(f.json(parser, {"orient", "--project", "proj_demo", "--max-packages", "2"})["x-agentctx-limit"].error() ==
        simdjson::NO_SUCH_FIELD);
  check_failure(f.run({"orient", "--project", "proj_demo", "--max-packages", "0"}), exit_usage, "--max-packages");
  check_failure(f.run({"orient", "--project", "proj_demo", "--max-packages", "10001"}), exit_usage, "--max-packages");

  check_failure(f.run({"orient", "--project", "proj_nowhere"}), exit_not_found, "does not exist");
  check_failure(f.run({"orient", "--project", "proj_demo", "--window-days", "0"}), exit_usage, "--window-days");
  check_failure(f.run({"orient"}), exit_usage, "--project");
}

TEST_CASE("relay pull --mode relevant and orchestrate rank by the hybrid search, caching embeddings in the store") {
  relay_fixture f;
  f.deposit(package_text("pkg_archive", "Archive and restore projects", "proj_demo", "complete",
                         ",\"description\":\"Soft archive via archived_at; restore clears it\""));
  f.deposit(package_text("pkg_recall", "Retrieval benchmark results", "proj_demo", "complete",
                         ",\"description\":\"recall_any_at_5 reached 97 on longmemeval\","
                         "\"decisions_made\":[\"Keep BM25 in the fusion\"]"));
  f.deposit(package_text("pkg_other", "Dashboard colours", "proj_other"));

  simdjson::dom::parser parser;
  auto hits = f.json(parser, {"pull", "--mode", "relevant", "--project", "proj_demo", "--query",
                              "retrieval benchmark recall", "--limit", "1"});
  CHECK(text_of(hits, "mode") == "relevant");
  REQUIRE(array_of(hits, "packages").size() == 1);
  auto best = array_of(hits, "packages").at(0).value();
  CHECK(text_of(best["package"].value(), "package_id") == "pkg_recall");
  CHECK(best["score"].get_double().value() > 0);
  CHECK(best["lexical_score"].get_double().value() > 0);
  CHECK(std::filesystem::is_directory(f.store + "/embeddings"));

  // Without --project every project is searched.
  const run_result everywhere = f.run({"pull", "--mode", "relevant", "--query", "dashboard colours"});
  check_clean_success(everywhere);
  CHECK(everywhere.out.starts_with("1. "));
  CHECK(contains(everywhere.out.substr(0, everywhere.out.find('\n')), "pkg_other"));
  CHECK(cli_test::line_count(everywhere.out) == 1);  // the others share no word with the query
  simdjson::dom::parser unrelated_parser;
  auto unrelated = f.json(unrelated_parser, {"pull", "--mode", "relevant", "--query", "zzzqqq nonsense"});
  CHECK(array_of(unrelated, "packages").size() == 0);

  // An explicit cache folder, and the embedder flags agentsdb takes.
  const std::string cache = f.dir.path() + "/cache";
  check_clean_success(f.run({"pull", "--mode", "relevant", "--project", "proj_demo", "--query", "archive",
                             "--embedding-cache", cache, "--dim", "64"}));
  CHECK(std::filesystem::is_directory(cache));
  check_failure(f.run({"pull", "--mode", "relevant", "--project", "proj_demo", "--query", "x", "--embedder", "command"}),
                exit_usage, "--embed-command");
  check_failure(f.run({"pull", "--mode", "relevant", "--project", "proj_demo"}), exit_usage, "--query");
  check_failure(f.run({"pull", "--mode", "latest"}), exit_usage, "--project");
  check_failure(f.run({"pull", "--mode", "specific"}), exit_usage, "--package");
  check_failure(f.run({"pull", "--mode", "latest", "--project", "proj_demo", "--query", "x"}), exit_usage,
                "--query applies to --mode relevant only");
  check_failure(f.run({"pull", "--mode", "sideways", "--project", "proj_demo"}), exit_usage, "--mode");
  check_failure(f.run({"pull", "--mode", "latest", "--project", "proj_demo", "--limit", "0"}), exit_usage, "--limit");
  check_failure(f.run({"pull", "--mode", "latest", "--project", "proj_nowhere"}), exit_not_found, "does not exist");
  check_failure(f.run({"pull", "--mode", "specific", "--package", "pkg_nowhere"}), exit_not_found, "does not exist");
  check_json_failure(f.run({"pull", "--mode", "specific", "--package", "pkg_nowhere", "--json"}), exit_not_found,
                     "package_not_found", 404);

  // orchestrate: a project digest with snippets, and the global digest.
  auto digest = f.json(parser, {"orchestrate", "--project", "proj_demo", "--focus", "benchmark recall", "--snippets",
                                "1"});
  CHECK(text_of(digest, "scope") == "project");
  CHECK(text_of(digest, "focus") == "benchmark recall");
  REQUIRE(array_of(digest, "snippets").size() == 1);
  CHECK(text_of(array_of(digest, "snippets").at(0).value(), "package_id") == "pkg_recall");
  CHECK(number_of(digest["summary"].value(), "packages") == 2);
  auto global = f.json(parser, {"orchestrate"});
  CHECK(text_of(global, "scope") == "global");
  CHECK(array_of(global, "projects").size() == 2);
  CHECK(array_of(global, "snippets").size() == 0);
  const run_result text = f.run({"orchestrate", "--project", "proj_demo", "--focus", "archive"});
  check_clean_success(text);
  CHECK(text.out.starts_with("# Digest: project proj_demo\nGenerated "));
  CHECK(contains(text.out, "; focus: archive\n"));
  CHECK(contains(text.out, "\n## Summary\n2 packages: 2 milestone; 2 complete\n"));
  CHECK(contains(text.out, "\n## Decisions (1)\n- Keep BM25 in the fusion [pkg_recall]\n"));
  CHECK(contains(text.out, "\n## Snippets (1)\n- "));  // only pkg_archive is related to "archive"
  const run_result global_text = f.run({"orchestrate"});
  check_clean_success(global_text);
  CHECK(global_text.out.starts_with("# Digest: every active project\n"));
  CHECK(contains(global_text.out, "\n## Projects (2)\n- proj_demo: 2 packages, 0 active facts, 0 open questions, "
                                  "0 awaiting review\n"));
  // A word the query shares with a package relates it whatever its cosine:
  // here BM25 reads "東京　大阪" as one word, and the other word of the title
  // cancels "大阪" in the hash embedder's vector.
  const std::string osaka = "\xE5\xA4\xA7\xE9\x98\xAA";
  f.deposit(package_text("pkg_osaka", "\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x80\x80" + osaka + " " +
                                          test_support::cancelling_word(osaka),
                         "proj_cjk"));
  simdjson::dom::parser cjk_parser;
  auto cjk = f.json(cjk_parser, {"pull", "--mode", "relevant", "--project", "proj_cjk", "--query", osaka});
  REQUIRE(array_of(cjk, "packages").size() == 1);
  CHECK(text_of(array_of(cjk, "packages").at(0).value()["package"].value(), "package_id") == "pkg_osaka");
  CHECK(array_of(cjk, "packages").at(0).value()["vector_score"].get_double().value() <= 0.0);
  check_failure(f.run({"orchestrate", "--project", "proj_nowhere"}), exit_not_found, "does not exist");
}

TEST_CASE("relay export then import into a second store preserves every hash; verify agrees") {
  relay_fixture f;
  f.deposit(package_text("pkg_a", "First", "proj_demo", "complete", ",\"x-custom\":{\"k\":[1,null,\"v\"]}"));
  f.deposit(package_text("pkg_b", "Second", "proj_demo", "draft"));
  check_clean_success(f.run({"flag", "--package", "pkg_b", "--review-type", "agent", "--note", "look"}));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "1"}));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "2"}));
  check_clean_success(f.run({"session", "start", "--project", "proj_demo", "--actor", "claude", "--actor-type", "agent"}));
  f.deposit(package_text("pkg_c", "Elsewhere", "proj_other"));

  const run_result to_stdout = f.run({"export", "--project", "proj_demo"});
  check_clean_success(to_stdout);
  CHECK(to_stdout.out.starts_with("{\"exported_at\":"));
  CHECK(cli_test::line_count(to_stdout.out) == 9);  // header, project, session, 2 packages, 1 status, 2 facts, end
  const std::string backup = f.dir.path() + "/backup.ndjson";
  const run_result to_file = f.run({"export", "-o", backup});
  check_clean_success(to_file);
  CHECK(to_file.out == "exported 2 projects, 1 session, 3 packages, 1 status change, 2 facts: 11 lines (" +
                           std::to_string(std::filesystem::file_size(backup)) + " bytes) to " + backup + "\n");
  simdjson::dom::parser parser;
  auto written = f.json(parser, {"export", "--project", "proj_demo", "--out", backup});
  CHECK(number_of(written, "lines") == 9);
  CHECK(number_of(written, "packages") == 2);
  CHECK(number_of(written, "status_changes") == 1);
  CHECK(array_of(written, "left_out").size() == 0);
  // The same export but for the header's exported_at.
  const std::string file_text = cli_test::read_file(backup);
  CHECK(after_header(file_text) == after_header(to_stdout.out));
  check_clean_success(f.run({"export", "-o", backup}));

  relay_fixture second;
  const run_result imported = second.run({"import", backup});
  check_clean_success(imported);
  CHECK(imported.out == "imported 2 projects, 1 session, 3 packages, 1 status change, 2 facts; skipped 0 lines the "
                        "store already held\n");
  auto again = second.json(parser, {"import", "-"}, backup);
  CHECK(number_of(again, "packages") == 0);
  CHECK(number_of(again, "skipped") == 9);

  for (const std::string id : {"pkg_a", "pkg_b"}) {
    simdjson::dom::parser p1, p2;
    auto original = f.json(p1, {"pull", "--mode", "specific", "--package", id})["packages"].at(0).value();
    auto restored = second.json(p2, {"pull", "--mode", "specific", "--package", id})["packages"].at(0).value();
    CHECK(text_of(original, "hash") == text_of(restored, "hash"));
    CHECK(text_of(original, "deposited_hash") == text_of(restored, "deposited_hash"));
  }
  for (const relay_fixture* store : {&f, &second}) {
    const run_result verified = store->run({"verify"});
    check_clean_success(verified);
    CHECK(verified.out == "ok: checked 3 packages, 1 status change and 2 facts\n");
  }
  auto verified = second.json(parser, {"verify"});
  CHECK(verified["ok"].get_bool().value());
  CHECK(array_of(verified, "quarantined").size() == 0);

  // A later export brings the copy up to date: a new review step, a fact superseded, the session ended.
  check_clean_success(f.run({"review", "--package", "pkg_b", "--status", "complete"}));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "3"}));
  auto sessions = f.json(parser, {"session", "list"});
  check_clean_success(
      f.run({"session", "end", std::string(array_of(sessions, "sessions").at(0)["session_id"].get_string().value())}));
  const std::string newer = f.dir.path() + "/newer.ndjson";
  check_clean_success(f.run({"export", "-o", newer}));
  const run_result updated = second.run({"import", newer});
  check_clean_success(updated);
  CHECK(updated.out == "imported 0 projects, 1 session, 0 packages, 1 status change, 2 facts; skipped 7 lines the "
                       "store already held\n");
  const run_result copy = second.run({"export"});
  CHECK(after_header(copy.out) == after_header(cli_test::read_file(newer)));
  // Into a copy that reviewed the package otherwise, the newer export is a conflict (exit 5).
  relay_fixture apart;
  check_clean_success(apart.run({"import", backup}));
  check_clean_success(apart.run({"review", "--package", "pkg_b", "--status", "revision_requested"}));
  check_failure(apart.run({"import", newer}), exit_duplicate, "differs from the one the store holds");

  // A line that does not hash to its hash is refused, naming the line; nothing is written.
  std::string text = cli_test::read_file(backup);
  const std::size_t title = text.find("\"title\":\"First\"");
  REQUIRE(title != std::string::npos);
  text.replace(title, 15, "\"title\":\"Fir5t\"");
  relay_fixture third;
  check_failure(third.run({"import", third.file("tampered.ndjson", text)}), exit_invalid_schema, "line ");
  check_failure(third.run({"import", third.file("junk.ndjson", "not json\n")}), exit_invalid_schema, "line 1");
  check_failure(third.run({"import", "nowhere.ndjson"}), exit_usage, "nowhere.ndjson");
  check_failure(f.run({"export", "--project", "proj_nowhere"}), exit_not_found, "does not exist");
}

TEST_CASE("relay export -o replaces only a regular file, keeping its mode and a symbolic link; input has a bound") {
  relay_fixture f;
  f.deposit(package_text("pkg_a", "Shipped archive"));
  const std::string dir = f.dir.path();
  // A regular file: replaced, its permission bits kept.
  const std::string backup = dir + "/backup.ndjson";
  cli_test::write_file(backup, "old\n");
  std::filesystem::permissions(backup, std::filesystem::perms(0640));
  check_clean_success(f.run({"export", "-o", backup}));
  CHECK(cli_test::read_file(backup).starts_with("{\"exported_at\":"));
  CHECK(std::filesystem::status(backup).permissions() == std::filesystem::perms(0640));
  // A symbolic link: written through; the link stays.
  const std::string link = dir + "/latest.ndjson";
  std::filesystem::create_symlink(backup, link);
  cli_test::write_file(backup, "old\n");
  check_clean_success(f.run({"export", "-o", link}));
  CHECK(std::filesystem::is_symlink(link));
  CHECK(cli_test::read_file(backup).starts_with("{\"exported_at\":"));
  // A link to no file yet, through a second such link (relative): the
  // target is created and both links stay.
  std::filesystem::create_directory(dir + "/sub");
  std::filesystem::create_symlink("sub/hop.ndjson", dir + "/dangling.ndjson");
  std::filesystem::create_symlink("new.ndjson", dir + "/sub/hop.ndjson");
  check_clean_success(f.run({"export", "-o", dir + "/dangling.ndjson"}));
  CHECK(std::filesystem::is_symlink(dir + "/dangling.ndjson"));
  CHECK(std::filesystem::is_symlink(dir + "/sub/hop.ndjson"));
  CHECK(cli_test::read_file(dir + "/sub/new.ndjson").starts_with("{\"exported_at\":"));
  // A loop of links is refused, and a dangling link into the store's folder.
  std::filesystem::create_symlink("loop_b", dir + "/loop_a");
  std::filesystem::create_symlink("loop_a", dir + "/loop_b");
  check_failure(f.run({"export", "-o", dir + "/loop_a"}), exit_usage, "too many levels of symbolic links");
  std::filesystem::create_symlink(f.store + "/mine.ndjson", dir + "/into_store");
  check_failure(f.run({"export", "-o", dir + "/into_store"}), exit_usage, "inside the store's folder");
  CHECK_FALSE(std::filesystem::exists(f.store + "/mine.ndjson"));
  // Refused, as usage errors, with nothing replaced.
  REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);
  check_failure(f.run({"export", "-o", "/dev/null"}), exit_usage, "not a regular file");
  check_failure(f.run({"export", "-o", dir + "/fifo"}), exit_usage, "not a regular file");
  CHECK(std::filesystem::is_fifo(dir + "/fifo"));
  check_failure(f.run({"export", "-o", dir}), exit_usage, "is a folder");
  check_failure(f.run({"export", "-o", dir + "/"}), exit_usage, "names a folder");
  check_failure(f.run({"export", "-o", ""}), exit_usage, "-o: the file must be named");
  check_failure(f.run({"export", "-o", f.store + "/relay.log"}), exit_usage, "inside the store's folder");
  check_clean_success(f.run({"verify"}));

  // An endless input is refused at its bound instead of exhausting memory.
  check_failure(f.run({"hash", "/dev/zero"}), exit_invalid_schema, "larger than 67108864 bytes");
  check_failure(f.run({"deposit", "-"}, "/dev/zero"), exit_invalid_schema, "larger than 67108864 bytes");
}

TEST_CASE("relay reads a version 1 log as it is, makes it version 2 before its first record, and names a version it does not read") {
  relay_fixture f;
  const std::string first = f.file("a.json", package_text("pkg_a", "First", "proj_v"));
  check_clean_success(f.run({"deposit", first}));
  const std::string log_path = f.store + "/relay.log";
  std::string log = cli_test::read_file(log_path);
  REQUIRE(agentctx::load_u32(log.data() + 8) == 2);
  agentctx::store_u32(log.data() + 8, 1);
  cli_test::write_file(log_path, log);
  // Read, and a command that opens the store for writing and writes nothing
  // (an id held identically): the log stays version 1.
  check_clean_success(f.run({"verify"}));
  simdjson::dom::parser parser;
  CHECK(f.json(parser, {"verify"})["format_version"].get_uint64().value() == 1);
  check_clean_success(f.run({"pull", "--mode", "specific", "--package", "pkg_a"}));
  const run_result again = f.run({"deposit", first});
  check_clean_success(again);
  CHECK(contains(again.out, "already present"));
  CHECK(cli_test::read_file(log_path) == log);
  // The first record this build writes.
  check_clean_success(f.run({"deposit", f.file("b.json", package_text("pkg_b", "Second", "proj_v"))}));
  const std::string now = cli_test::read_file(log_path);
  CHECK(agentctx::load_u32(now.data() + 8) == 2);
  CHECK(now.substr(12, log.size() - 12) == log.substr(12));
  check_clean_success(f.run({"verify"}));
  CHECK(f.json(parser, {"verify"})["format_version"].get_uint64().value() == 2);
  // A version this build does not read: one line naming it, nothing written.
  std::string v3 = now;
  agentctx::store_u32(v3.data() + 8, 3);
  cli_test::write_file(log_path, v3);
  check_failure(f.run({"verify"}), exit_not_found, "relay.log format version 3 is not supported (this build reads 1 to 2)");
  check_failure(f.run({"deposit", f.file("c.json", package_text("pkg_c", "Third", "proj_v"))}), exit_not_found,
                "relay.log format version 3 is not supported");
  CHECK(cli_test::read_file(log_path) == v3);
}

TEST_CASE("relay verify reports quarantined packages (exit 1); pull refuses them; a damaged log is exit 1") {
  relay_fixture f;
  std::filesystem::create_directories(f.store);
  std::string log = agentctx::relay::encode_log_header();
  agentctx::relay::append_record(
      log, "{\"type\":\"project\",\"project\":{\"project_id\":\"proj_q\",\"created_at\":\"2026-04-18T20:00:00Z\"}}");
  std::string package = package_text("pkg_q", "Tampered", "proj_q");
  agentctx::relay::append_record(log, "{\"type\":\"package\",\"hash\":\"sha256:" + std::string(64, '0') +
                                          "\",\"package\":" + package + "}");
  cli_test::write_file(f.store + "/relay.log", log);

  const run_result verified = f.run({"verify"});
  INFO(verified.err);
  CHECK(verified.exit_code == exit_not_found);
  CHECK(verified.out.starts_with("quarantined proj_q/pkg_q: stored hash sha256:000"));
  CHECK(contains(verified.out, "\nDAMAGED: 1 package quarantined; checked 1 package, 0 status changes and 0 facts\n"));
  const run_result as_json = f.run({"verify", "--json"});
  CHECK(as_json.exit_code == exit_not_found);
  simdjson::dom::parser parser;
  auto report = cli_test::parse_json(parser, as_json.out);
  CHECK_FALSE(report["ok"].get_bool().value());
  CHECK(array_of(report, "quarantined").size() == 1);

  check_failure(f.run({"pull", "--mode", "specific", "--package", "pkg_q"}), exit_not_found, "quarantined");
  CHECK(f.run({"pull", "--mode", "latest", "--project", "proj_q"}).out == "no packages in project proj_q\n");
  // project show counts it apart, as no command lists it.
  const run_result shown = f.run({"project", "show", "proj_q"});
  check_clean_success(shown);
  CHECK(contains(shown.out, "  0 packages (0 awaiting review), 0 current facts, 0 sessions\n"));
  CHECK(contains(shown.out, "  1 more quarantined: its bytes no longer match its hash (relay verify)\n"));
  auto counts = f.json(parser, {"project", "show", "proj_q"});
  CHECK(counts["packages"].get_uint64().value() == 0);
  CHECK(counts["quarantined"].get_uint64().value() == 1);
  // Its id deposited again, and its package as a fact's source, are refused
  // (exit 1), and nothing is written.
  const std::string before = cli_test::read_file(f.store + "/relay.log");
  check_failure(f.run({"deposit", f.file("q.json", package)}), exit_not_found, "is quarantined");
  check_json_failure(f.run({"deposit", f.file("q.json", package), "--json"}), exit_not_found, "internal_error", 500);
  check_failure(f.run({"assert", "--project", "proj_q", "--subject", "s", "--predicate", "p", "--value", "v",
                       "--source-package", "pkg_q"}),
                exit_not_found, "is quarantined");
  CHECK(cli_test::read_file(f.store + "/relay.log") == before);

  // A record whose checksum fails, with a record after it: the store is damaged.
  std::string damaged = log;
  damaged[agentctx::relay::log_header_size + 12] ^= 0x01;
  agentctx::relay::append_record(damaged, "{}");
  cli_test::write_file(f.store + "/relay.log", damaged);
  const run_result broken = f.run({"verify"});
  CHECK(broken.exit_code == exit_not_found);
  CHECK(contains(broken.err, "relay.log"));
  check_json_failure(f.run({"pull", "--mode", "latest", "--project", "proj_q", "--json"}), exit_not_found,
                     "internal_error", 500);
}

namespace {

/// Deposits pkg_one, pkg_two and pkg_three; the log, and where its records start.
std::pair<std::string, std::vector<std::uint64_t>> three_deposits(const relay_fixture& f) {
  f.deposit(package_text("pkg_one", "First"));
  f.deposit(package_text("pkg_two", "Second"));
  f.deposit(package_text("pkg_three", "Third"));
  std::string log = cli_test::read_file(f.store + "/relay.log");
  std::vector<std::uint64_t> offsets;
  for (const auto& r :
       agentctx::relay::scan_records(std::as_bytes(std::span(log.data(), log.size())), agentctx::relay::log_header_size)
           .records) {
    offsets.push_back(r.offset);
  }
  REQUIRE(offsets.size() == 3);
  return {std::move(log), std::move(offsets)};
}

}  // namespace

TEST_CASE("relay repair salvages a damaged store and keeps the damaged log; a dry run changes nothing") {
  relay_fixture f;
  const auto [log, offsets] = three_deposits(f);
  std::string damaged = log;
  damaged[offsets[1] + 40] ^= 0x01;  // pkg_two's record
  cli_test::write_file(f.store + "/relay.log", damaged);
  check_failure(f.run({"verify"}), exit_not_found, "damaged");
  check_failure(f.run({"pull", "--mode", "latest", "--project", "proj_demo"}), exit_not_found, "'relay repair' salvages");

  simdjson::dom::parser parser;
  const run_result dry = f.run({"repair", "--dry-run", "--json"});
  check_clean_success(dry);
  auto planned = cli_test::parse_json(parser, dry.out);
  CHECK(planned["needed"].get_bool().value());
  CHECK_FALSE(planned["rewritten"].get_bool().value());
  CHECK(number_of(planned, "records_kept") == 2);
  CHECK(array_of(planned, "lost").size() == 1);
  CHECK(cli_test::read_file(f.store + "/relay.log") == damaged);

  const run_result repaired = f.run({"repair"});
  check_clean_success(repaired);
  CHECK(repaired.out.starts_with("lost at byte " + std::to_string(offsets[1]) + " (" +
                                 std::to_string(offsets[2] - offsets[1]) +
                                 " bytes): damaged bytes: record checksum mismatch\n"));
  CHECK(contains(repaired.out, "repaired: 2 records kept, 1 lost part; the damaged log is kept as "));
  std::vector<std::string> backups;
  for (const auto& entry : std::filesystem::directory_iterator(f.store)) {
    if (entry.path().filename().string().starts_with("relay.log.damaged-")) backups.push_back(entry.path().string());
  }
  REQUIRE(backups.size() == 1);
  CHECK(cli_test::read_file(backups[0]) == damaged);
  check_clean_success(f.run({"verify"}));
  const run_result latest = f.run({"pull", "--mode", "latest", "--project", "proj_demo"});
  CHECK(cli_test::line_count(latest.out) == 2);
  CHECK_FALSE(contains(latest.out, "pkg_two"));
  CHECK(f.run({"repair"}).out == "nothing to repair: 2 records kept, none lost\n");
}

TEST_CASE("relay verify reports a torn tail; the next write cuts it, keeps its bytes beside the log and says so") {
  relay_fixture f;
  const auto [log, offsets] = three_deposits(f);
  const std::string torn = log.substr(0, log.size() - 9);  // the last append lost its last 9 bytes
  cli_test::write_file(f.store + "/relay.log", torn);
  const std::string tail_bytes = std::to_string(torn.size() - offsets[2]);
  const run_result verified = f.run({"verify"});
  check_clean_success(verified);
  CHECK(verified.out == "the log ends in an incomplete record (" + tail_bytes + " bytes at byte " +
                            std::to_string(offsets[2]) +
                            "): an append a writer is making, or one a crash interrupted, never acknowledged, which "
                            "the next writer cuts, keeping its bytes beside the log\n"
                            "ok: checked 2 packages, 0 status changes and 0 facts\n");
  simdjson::dom::parser parser;
  const auto report = f.json(parser, {"verify"});
  CHECK(number_of(report["torn_tail"], "offset") == offsets[2]);
  CHECK(number_of(report["torn_tail"], "bytes") == torn.size() - offsets[2]);

  const run_result deposited = f.run({"deposit", f.file("four.json", package_text("pkg_four", "Fourth"))});
  CHECK(deposited.exit_code == 0);
  CHECK(deposited.err.starts_with("relay: note: the log ended in the torn tail of an append a crash interrupted (" +
                                  tail_bytes + " bytes at byte " + std::to_string(offsets[2]) +
                                  ": incomplete record ("));
  std::vector<std::string> kept;
  for (const auto& entry : std::filesystem::directory_iterator(f.store)) {
    if (entry.path().filename().string().starts_with("relay.log.torn-")) kept.push_back(entry.path().string());
  }
  REQUIRE(kept.size() == 1);
  CHECK(contains(deposited.err, "); cut, and kept as " + kept[0] + "\n"));
  CHECK(cli_test::read_file(kept[0]) == torn.substr(offsets[2]));
  const run_result after = f.run({"verify"});
  check_clean_success(after);
  CHECK(after.out == "ok: checked 3 packages, 0 status changes and 0 facts\n");
}

TEST_CASE("relay refuses damage that runs to the end of the log instead of cutting it; repair keeps the rest") {
  relay_fixture f;
  const auto [log, offsets] = three_deposits(f);
  // Zeros from inside pkg_two's record into pkg_three's header: no good
  // record follows, but pkg_two's header says bytes follow its end, which
  // a torn append does not leave. A writer used to cut both deposits.
  std::string damaged = log;
  std::fill(damaged.begin() + static_cast<std::ptrdiff_t>(offsets[1] + 30),
            damaged.begin() + static_cast<std::ptrdiff_t>(offsets[2] + 4), '\0');
  cli_test::write_file(f.store + "/relay.log", damaged);
  check_failure(f.run({"verify"}), exit_not_found, "damaged");
  check_failure(f.run({"deposit", f.file("four.json", package_text("pkg_four", "Fourth"))}), exit_not_found,
                "'relay repair' salvages");
  CHECK(cli_test::read_file(f.store + "/relay.log") == damaged);
  const run_result repaired = f.run({"repair"});
  check_clean_success(repaired);
  CHECK(repaired.out.starts_with("lost at byte " + std::to_string(offsets[1]) + " (" +
                                 std::to_string(log.size() - offsets[1]) + " bytes): damaged bytes: "));
  const run_result latest = f.run({"pull", "--mode", "latest", "--project", "proj_demo"});
  CHECK(cli_test::line_count(latest.out) == 1);
  CHECK(contains(latest.out, "pkg_one"));

  // A relay.log of 32 zeros (a creation whose bytes a crash lost) is a log
  // being created: a deposit finishes it.
  cli_test::write_file(f.store + "/relay.log", std::string(agentctx::relay::log_header_size, '\0'));
  check_failure(f.run({"verify"}), exit_usage, "being created");
  f.deposit(package_text("pkg_new", "New"));
  check_clean_success(f.run({"verify"}));
}

TEST_CASE("relay project and session commands") {
  relay_fixture f;
  CHECK(f.run({"project", "list"}).exit_code == exit_usage);  // no store yet
  check_failure(f.run({"project", "list"}), exit_usage, "no Relay store");
  check_json_failure(f.run({"project", "list", "--json"}), exit_usage, "store_not_found", 404);

  const run_result created = f.run({"project", "create", "proj_demo", "--name", "Demo", "--description", "The demo"});
  check_clean_success(created);
  CHECK(created.out == "created project proj_demo\n");
  check_failure(f.run({"project", "create", "proj_demo"}), exit_duplicate, "already exists");
  simdjson::dom::parser parser;
  auto made = f.json(parser, {"project", "create", "proj_two"});
  CHECK(text_of(made, "project_id") == "proj_two");

  const run_result listed = f.run({"project", "list"});
  check_clean_success(listed);
  CHECK(listed.out.starts_with("proj_demo  Demo  created "));
  CHECK(cli_test::line_count(listed.out) == 2);
  CHECK(array_of(f.json(parser, {"project", "list"}), "projects").size() == 2);

  const run_result archived = f.run({"project", "archive", "proj_two"});
  check_clean_success(archived);
  CHECK(archived.out.starts_with("archived project proj_two at "));
  auto archived_json = f.json(parser, {"project", "show", "proj_two"});
  CHECK(archived_json["project"]["archived_at"].is_string());
  CHECK(f.run({"project", "unarchive", "proj_two"}).out == "unarchived project proj_two\n");
  check_failure(f.run({"project", "archive", "proj_nowhere"}), exit_not_found, "does not exist");
  // The id may be given as --project, as every other command takes it, but only once.
  CHECK(f.run({"project", "create", "--project", "proj_three", "--name", "Three"}).out == "created project proj_three\n");
  CHECK(f.run({"project", "archive", "--project", "proj_three"}).out.starts_with("archived project proj_three at "));
  CHECK(f.run({"project", "unarchive", "--project", "proj_three"}).out == "unarchived project proj_three\n");
  CHECK(f.run({"project", "show", "--project", "proj_three"}).out.starts_with("proj_three  Three  created "));
  check_failure(f.run({"project", "show", "proj_three", "--project", "proj_two"}), exit_usage,
                "relay: ID (or --project ID) given 2 times, but it takes one value (run 'relay project show --help' "
                "for usage)");
  check_failure(f.run({"project", "archive", "--project", "proj_three", "--project", "proj_two"}), exit_usage,
                "relay: ID (or --project ID) given 2 times, but it takes one value");
  check_failure(f.run({"project", "show"}), exit_usage, "relay: ID is required (or --project ID) (run 'relay project show --help' for usage)");

  // Sessions: a generated id and callsign; packages name their session.
  auto session = f.json(parser, {"session", "start", "--project", "proj_demo", "--actor", "claude", "--actor-type",
                                 "agent"});
  const std::string session_id = text_of(session, "session_id");
  CHECK(session_id.starts_with("sess_"));
  CHECK(session["ended_at"].is_null());  // section 5.5: null while active
  CHECK(text_of(session, "callsign").find('-') != std::string::npos);
  f.deposit(package_text("pkg_s", "Outside a session"));
  std::string in_session = package_text("pkg_in", "Session work");
  in_session.replace(in_session.find("\"session_id\":null"), 17, "\"session_id\":\"" + session_id + "\"");
  // A session's packages are its actor's: one naming it by another actor is not listed.
  f.deposit(in_session.substr(0, in_session.find("pkg_in")) + "pkg_jordan" +
            in_session.substr(in_session.find("pkg_in") + 6));
  const std::string jordan = "\"id\":\"jordan\",\"type\":\"human\"";
  in_session.replace(in_session.find(jordan), jordan.size(), "\"id\":\"claude\",\"type\":\"agent\"");
  f.deposit(in_session);
  const run_result sessions = f.run({"session", "list", "--project", "proj_demo"});
  check_clean_success(sessions);
  CHECK(sessions.out.starts_with(session_id + "  " + text_of(session, "callsign") + "  agent claude in proj_demo"));
  CHECK(sessions.out.ends_with("(active)\n"));
  auto listed_sessions = f.json(parser, {"session", "list"});
  REQUIRE(array_of(listed_sessions, "sessions").size() == 1);
  auto deposited = array_of(array_of(listed_sessions, "sessions").at(0).value(), "packages_deposited");
  REQUIRE(deposited.size() == 1);
  CHECK(std::string(deposited.at(0).get_string().value()) == "pkg_in");

  check_clean_success(f.run({"project", "archive", "proj_demo"}));
  check_failure(f.run({"session", "end", session_id}), exit_archived, "project_archived");
  check_clean_success(f.run({"project", "unarchive", "proj_demo"}));
  const run_result ended = f.run({"session", "end", session_id});
  check_clean_success(ended);
  CHECK(contains(ended.out, "  ended "));
  check_failure(f.run({"session", "end", session_id}), exit_invalid_schema, "already ended");
  check_failure(f.run({"session", "end", "--session", session_id}), exit_invalid_schema, "already ended");
  check_failure(f.run({"session", "end"}), exit_usage, "relay: ID is required (or --session ID) (run 'relay session end --help' for usage)");
  check_failure(f.run({"session", "end", "sess_nowhere"}), exit_not_found, "does not exist");
  check_json_failure(f.run({"session", "end", "sess_nowhere", "--json"}), exit_not_found, "session_not_found", 404);
  check_failure(f.run({"session", "start", "--project", "proj_demo", "--actor", "x", "--actor-type", "robot"}),
                exit_usage, "--actor-type");
  CHECK(f.run({"session", "list", "--project", "proj_two"}).out == "no sessions\n");

  auto shown = f.json(parser, {"project", "show", "proj_demo"});
  CHECK(number_of(shown, "packages") == 3);
  CHECK(number_of(shown, "sessions") == 1);
  const run_result show_text = f.run({"project", "show", "proj_demo"});
  check_clean_success(show_text);
  CHECK(contains(show_text.out, "\n  The demo\n  3 packages (0 awaiting review), 0 current facts, 1 session\n"));
  check_failure(f.run({"project", "show", "proj_nowhere"}), exit_not_found, "does not exist");
  check_failure(f.run({"project"}), exit_usage, "");
}

TEST_CASE("relay canonical and hash: Appendix A and RFC 8785 forms, and the content hash of a package") {
  relay_fixture f;
  // The sample of RFC 8785 section 3.2.2, and its canonical form.
  const std::string sample = f.file(
      "sample.json",
      "{\n  \"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n"
      "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
      "  \"literals\": [null, true, false]\n}\n");
  const std::string expected =
      "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
      "\"string\":\"\xE2\x82\xAC$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
  const run_result jcs = f.run({"canonical", "--rfc8785", sample});
  check_clean_success(jcs);
  CHECK(jcs.out == expected);
  const run_result relay_form = f.run({"canonical", "-"}, sample);
  check_clean_success(relay_form);
  CHECK(relay_form.out == expected);  // its only null is inside an array

  // The forms differ on null members.
  const std::string nulls = f.file("nulls.json", "{\"b\":null,\"a\":1}");
  CHECK(f.run({"canonical", nulls}).out == "{\"a\":1}");
  CHECK(f.run({"canonical", "--rfc8785", nulls}).out == "{\"a\":1,\"b\":null}");
  simdjson::dom::parser parser;
  auto described = f.json(parser, {"canonical", nulls});
  CHECK(text_of(described, "form") == "relay");
  CHECK(text_of(described, "canonical") == "{\"a\":1}");
  CHECK(text_of(described, "sha256") == "sha256:" + agentctx::to_hex(agentctx::sha256("{\"a\":1}")));

  // hash: SHA-256 of the Appendix A form, the hash deposit computes.
  const std::string package = f.file("package.json", package_text("pkg_hash", "Hash me"));
  const run_result hashed = f.run({"hash", package});
  check_clean_success(hashed);
  const std::string canonical = f.run({"canonical", package}).out;
  CHECK(hashed.out == "sha256:" + agentctx::to_hex(agentctx::sha256(canonical)) + "\n");
  const run_result deposited = f.run({"deposit", package});
  check_clean_success(deposited);
  CHECK(contains(deposited.out, hashed.out.substr(0, hashed.out.size() - 1)));
  auto hash_json = f.json(parser, {"hash", "-"}, package);
  CHECK(text_of(hash_json, "package_id") == "pkg_hash");
  CHECK(text_of(hash_json, "hash") + "\n" == hashed.out);

  check_failure(f.run({"hash", f.file("anonymous.json", package_text("", "No id"))}), exit_invalid_schema,
                "deposit generates one");
  std::string bad_status = package_text("pkg_bad", "Bad");
  bad_status.replace(bad_status.find("\"complete\""), 10, "\"finished\"");
  check_failure(f.run({"hash", f.file("bad.json", bad_status)}), exit_invalid_schema, "bad.json: status must be one of");
  check_failure(f.run({"hash", f.file("array.json", "[1,2]")}), exit_invalid_schema, "must be a JSON object");
  check_failure(f.run({"canonical", f.file("dup.json", "{\"a\":1,\"a\":2}")}), exit_invalid_schema,
                "duplicate member name");
  check_failure(f.run({"canonical", f.file("truncated.json", "{\"a\":")}), exit_invalid_schema, "truncated.json");
  check_failure(f.run({"canonical", "nowhere.json"}), exit_usage, "nowhere.json");
}

TEST_CASE("relay conformance, --help of every command, usage errors and a locked store") {
  relay_fixture f;
  const run_result text = f.run({"conformance"});
  check_clean_success(text);
  CHECK(contains(text.out, "conformance level  L3\n"));
  CHECK(contains(text.out, "capabilities       hybrid_search yes, semantic_search no, realtime no, blob_storage no\n"));
  simdjson::dom::parser parser;
  auto descriptor = f.json(parser, {"conformance"});
  CHECK(text_of(descriptor, "protocol_version") == "0.1");
  CHECK(text_of(descriptor, "conformance_level") == "L3");
  CHECK(descriptor["capabilities"]["hybrid_search"].get_bool().value());

  const std::vector<std::vector<std::string>> commands = {
      {"deposit"}, {"pull"}, {"orient"}, {"orchestrate"}, {"flag"}, {"review"}, {"assert"}, {"invalidate"},
      {"facts"}, {"history"}, {"export"}, {"import"}, {"verify"}, {"repair"}, {"conformance"}, {"canonical"}, {"hash"},
      {"project", "create"}, {"project", "archive"}, {"project", "unarchive"}, {"project", "list"},
      {"project", "show"}, {"session", "start"}, {"session", "end"}, {"session", "list"}};
  for (std::vector<std::string> command : commands) {
    command.push_back("--help");
    const run_result help = cli_test::run(RELAY_BIN, command, f.dir.path());
    CAPTURE(cli_test::joined(command));
    check_clean_success(help);
    CHECK(contains(help.out, "--store"));
    CHECK(contains(help.out, "Exit codes: 0 success"));
    // --store says what the command does with the store.
    const std::string name = cli_test::joined(command);
    const bool creates = name.starts_with("deposit") || name.starts_with("assert") || name.starts_with("import") ||
                         name.starts_with("project create") || name.starts_with("session start");
    const bool unused = name.starts_with("conformance") || name.starts_with("canonical") || name.starts_with("hash");
    CHECK(contains(help.out, creates  ? "The store's folder (created by the first write)"
                             : unused ? "Not used: this command reads no store"
                                      : "The store's folder (it must exist)"));
    // A deposit's causes only: it finds nothing missing and makes no transition.
    CHECK(contains(help.out, "4 invalid_transition") == !name.starts_with("deposit"));
  }
  const run_result top = cli_test::run(RELAY_BIN, {"--help"}, f.dir.path());
  check_clean_success(top);
  CHECK(contains(top.out, "6 project_archived"));

  check_failure(cli_test::run(RELAY_BIN, {}, f.dir.path()), exit_usage, "relay --help");
  check_failure(cli_test::run(RELAY_BIN, {"bogus"}, f.dir.path()), exit_usage, "bogus");
  check_failure(f.run({"deposit", "a.json", "--bogus"}), exit_usage, "--bogus");
  check_failure(f.run({"pull", "--mode", "latest", "--project", "proj_demo"}), exit_usage, "no Relay store");
  // Writers that change what a store holds need one that exists: a mistyped
  // --store is said as such (exit 2), not as a missing package, and no store
  // is made there.
  const std::vector<std::vector<std::string>> needing_a_store = {
      {"flag", "--package", "pkg_x", "--review-type", "human"},
      {"review", "--package", "pkg_x", "--status", "complete"},
      {"invalidate", "--project", "proj_demo", "--subject", "s", "--predicate", "p"},
      {"session", "end", "sess_x"},
      {"project", "archive", "proj_demo"},
      {"project", "unarchive", "proj_demo"}};
  for (const std::vector<std::string>& command : needing_a_store) {
    CAPTURE(cli_test::joined(command));
    check_failure(f.run(command), exit_usage, "no Relay store here");
    std::vector<std::string> with_json = command;
    with_json.push_back("--json");
    check_json_failure(f.run(with_json), exit_usage, "store_not_found", 404);
    CHECK_FALSE(std::filesystem::exists(f.store));
  }
  // CLI11's parse errors, said plainly and naming the option.
  struct plain_case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<plain_case> plain = {
      {{"project", "list", "--json=abc"}, "relay: --json is a flag: it takes no value, not 'abc' (run 'relay project list --help' for usage)"},
      {{"repair", "--dry-run=maybe"}, "relay: --dry-run is a flag: it takes no value, not 'maybe' (run 'relay repair --help' for usage)"},
      {{"project"}, "relay: a command is required: one of create, archive, unarchive, show, list (run 'relay project --help' for usage)"},
      {{"session"}, "relay: a command is required: one of start, end, list (run 'relay session --help' for usage)"},
      {{"session", "list", "--project="}, "relay: --project needs a value (run 'relay session list --help' for usage)"},
      {{"facts", "--project"}, "relay: --project needs a value (run 'relay facts --help' for usage)"},
      {{"pull", "--limit"}, "relay: --limit needs a value (run 'relay pull --help' for usage)"},
      {{"--store"}, "relay: --store needs a value (run 'relay --help' for usage)"}};
  for (const plain_case& c : plain) {
    CAPTURE(cli_test::joined(c.args));
    const run_result r = cli_test::run(RELAY_BIN, c.args, f.dir.path());
    CHECK(r.exit_code == exit_usage);
    CHECK(r.out.empty());
    CHECK(r.err == c.message + "\n");
  }

  // The default store is ./.relay.
  check_clean_success(cli_test::run(RELAY_BIN, {"project", "create", "proj_here"}, f.dir.path()));
  CHECK(std::filesystem::exists(f.dir.path() + "/.relay/relay.log"));

  // Another writer holds the store: writes fail with exit 2; reads still work.
  f.deposit(package_text("pkg_one", "One"));
  {
    agentctx::io::posix_file_system fs;
    auto holder = agentctx::relay::store::open(fs, f.store);
    REQUIRE(holder.has_value());
    check_failure(f.run({"deposit", f.file("two.json", package_text("pkg_two", "Two"))}), exit_usage, "locked");
    check_json_failure(f.run({"project", "create", "proj_x", "--json"}), exit_usage, "store_locked", 503);
    check_clean_success(f.run({"pull", "--mode", "latest", "--project", "proj_demo"}));
  }
  check_clean_success(f.run({"deposit", f.file("two.json", package_text("pkg_two", "Two"))}));
}

TEST_CASE("relay text output shows stored control and bidi characters escaped; --json keeps them exact") {
  relay_fixture f;
  const std::string evil_title = "evil \\u001b[31mRED\\u001b[0m \\r overwrite \\u202e";
  simdjson::dom::parser parser;
  const std::string id = f.deposit(package_text("", evil_title, "proj_demo", "complete",
                                                ",\"decisions_made\":[\"line\\nbreak\"],\"content_md\":\"a\\u001b[2Jb\\nnext\""));
  const auto check_safe = [](const run_result& r) {
    INFO("stdout: " << r.out);
    CHECK_FALSE(contains(r.out, "\x1b"));
    CHECK_FALSE(contains(r.out, "\r"));
    CHECK_FALSE(contains(r.out, "\xe2\x80\xae"));  // U+202E RIGHT-TO-LEFT OVERRIDE
  };
  const run_result latest = f.run({"pull", "--mode", "latest", "--project", "proj_demo"});
  check_clean_success(latest);
  check_safe(latest);
  CHECK(contains(latest.out, "  evil \\x1b[31mRED\\x1b[0m \\r overwrite \\u202e\n"));
  CHECK(cli_test::line_count(latest.out) == 1);
  const run_result specific = f.run({"pull", "--mode", "specific", "--package", id});
  check_clean_success(specific);
  check_safe(specific);
  CHECK(contains(specific.out, "  title         evil \\x1b[31mRED\\x1b[0m \\r overwrite \\u202e\n"));
  CHECK(contains(specific.out, "    - line\\nbreak\n"));
  CHECK(contains(specific.out, "  content\n    a\\x1b[2Jb\n    next\n"));  // content keeps its lines
  // JSON is exact: the writer escapes what JSON needs.
  auto pulled = f.json(parser, {"pull", "--mode", "specific", "--package", id});
  CHECK(text_of(pulled["packages"].at(0)["package"].value(), "title") == "evil \x1b[31mRED\x1b[0m \r overwrite \xe2\x80\xae");

  const run_result deposited =
      f.run({"deposit", f.file("esc.json", package_text("pkg\\u001b[2J", "Clears the screen"))});
  check_clean_success(deposited);
  check_safe(deposited);
  CHECK(deposited.out.starts_with("pkg\\x1b[2J  sha256:"));

  check_clean_success(f.run({"project", "create", "bad\nid"}));
  const run_result listed = f.run({"project", "list"});
  check_clean_success(listed);
  CHECK(cli_test::line_count(listed.out) == 2);
  CHECK(contains(listed.out, "bad\\nid  bad\\nid  created "));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "s\x1b[2J", "--predicate", "p",
                             "--value", "v\x07"}));
  const run_result facts = f.run({"facts", "--project", "proj_demo"});
  check_clean_success(facts);
  check_safe(facts);
  CHECK(facts.out.starts_with("s\\x1b[2J p = v\\x07  (from "));
}

TEST_CASE("relay: argument errors with --json print the usage_error document; --store and --json before the command") {
  relay_fixture f;
  check_json_failure(f.run({"pull", "--json", "--mode", "bogus"}), exit_usage, "usage_error", 400);
  check_json_failure(f.run({"pull", "--mode", "latest", "--project", "p", "--json", "--limit", "0"}), exit_usage,
                     "usage_error", 400);
  check_json_failure(f.run({"deposit", "--json"}), exit_usage, "usage_error", 400);
  check_json_failure(cli_test::run(RELAY_DEPOSIT_BIN, {"--json"}, f.dir.path()), exit_usage, "usage_error", 400);
  check_json_failure(f.run({"assert", "--project", "p", "--subject", "s", "--predicate", "p", "--value", "v",
                            "--confidence", "abc", "--json"}),
                     exit_usage, "usage_error", 400);
  // Without --json the same errors stay one line, naming the command's --help.
  check_failure(f.run({"pull", "--mode", "bogus"}), exit_usage, "(run 'relay pull --help' for usage)");
  check_failure(f.run({"project", "show"}), exit_usage, "(run 'relay project show --help' for usage)");
  check_failure(cli_test::run(RELAY_BIN, {"bogus"}, f.dir.path()), exit_usage, "(run 'relay --help' for usage)");
  cli_test::check_error(cli_test::run(RELAY_DEPOSIT_BIN, {}, f.dir.path()), exit_usage,
                        "(run 'relay-deposit --help' for usage)", "relay-deposit");

  // --store and --json before the subcommand apply to it.
  check_clean_success(f.run({"project", "create", "proj_demo"}));
  const run_result listed = cli_test::run(RELAY_BIN, {"--store", f.store, "project", "list"}, f.dir.path());
  check_clean_success(listed);
  CHECK(listed.out.starts_with("proj_demo  proj_demo  created "));
  simdjson::dom::parser parser;
  const run_result as_json = cli_test::run(RELAY_BIN, {"--json", "--store", f.store, "project", "list"}, f.dir.path());
  auto projects = cli_test::parse_output(parser, as_json);
  CHECK(array_of(projects, "projects").size() == 1);
  check_json_failure(cli_test::run(RELAY_BIN, {"--json", "--store", f.store, "project", "show", "proj_nowhere"},
                                   f.dir.path()),
                     exit_not_found, "project_not_found", 404);

  // Out of range and not a number: clear usage errors.
  check_failure(f.run({"orient", "--project", "proj_demo", "--window-days", "100000000000"}), exit_usage,
                "--window-days: must be at most 36500, not '100000000000'");
  // 100 years at the most, as relay serve takes.
  check_failure(f.run({"orient", "--project", "proj_demo", "--window-days", "36501"}), exit_usage,
                "--window-days: must be at most 36500, not '36501'");
  check_clean_success(f.run({"orient", "--project", "proj_demo", "--window-days", "36500"}));
  check_failure(f.run({"orchestrate", "--window-days", "99999999999999999999999"}), exit_usage, "must be at most");
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", "v",
                       "--confidence", "abc"}),
                exit_usage, "--confidence: must be a number from 0.0 to 1.0, not 'abc'");  // 1.5: exit 3, above
}

TEST_CASE("relay: --store that is empty or not a folder, an empty project id, and parse errors with their offset") {
  relay_fixture f;
  const std::string afile = f.file("afile", "x");
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"project", "list"}, std::vector<std::string>{"project", "create", "p"},
        std::vector<std::string>{"verify"}, std::vector<std::string>{"repair"}}) {
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--store", afile});
    CAPTURE(cli_test::joined(args));
    check_failure(cli_test::run(RELAY_BIN, args, f.dir.path()), exit_usage, "--store " + afile + ": not a directory");
    args.back() = "";
    check_failure(cli_test::run(RELAY_BIN, args, f.dir.path()), exit_usage, "--store: the store's folder must be named");
  }
  check_json_failure(cli_test::run(RELAY_BIN, {"project", "list", "--store", "", "--json"}, f.dir.path()), exit_usage,
                     "usage_error", 400);

  // An empty project id is invalid_schema (3) whichever command would create the project.
  check_failure(f.run({"project", "create", ""}), exit_invalid_schema, "project_id must not be empty");
  check_json_failure(f.run({"project", "create", "", "--json"}), exit_invalid_schema, "invalid_schema", 400);
  check_failure(f.run({"session", "start", "--project", "", "--actor", "a", "--actor-type", "agent"}),
                exit_invalid_schema, "project_id");
  check_failure(f.run({"assert", "--project", "", "--subject", "s", "--predicate", "p", "--value", "v"}),
                exit_invalid_schema, "project_id");

  // The parser's byte offset reaches the message.
  check_failure(f.run({"canonical", f.file("bad-utf8.json", "{\"a\":\"\xff\"}")}), exit_invalid_schema,
                "bad-utf8.json: at byte 6: ");
  check_failure(f.run({"canonical", f.file("surrogate.json", "{\"a\":\"\\ud800\"}")}), exit_invalid_schema,
                "surrogate.json: at byte 6: ");
  // Text that is not UTF-8 is named so whatever else is wrong, a byte-order mark too.
  const std::string bom_and_bad = f.file("bom.json", "\xEF\xBB\xBF{\"a\":\"\xff\"}");
  for (const char* command : {"canonical", "hash"}) {
    check_failure(f.run({command, bom_and_bad}), exit_invalid_schema, "bom.json: at byte 9: the text is not valid UTF-8");
  }
}

TEST_CASE("relay orient says when the bundle cannot be brought within its budget; both limits apply") {
  relay_fixture f;
  f.deposit(package_text("pkg_one", "Shipped archive"));
  const run_result over = f.run({"orient", "--project", "proj_demo", "--max-tokens", "10"});
  check_clean_success(over);
  CHECK(contains(over.out, " of at most 40 bytes; left out 1 package, "));
  CHECK(contains(over.out, "\nOVER BUDGET: the bundle could not be brought within 40 bytes"));
  simdjson::dom::parser parser;
  auto bundle = f.json(parser, {"orient", "--project", "proj_demo", "--max-tokens", "10"});
  auto budget = bundle["x-agentctx-budget"].value();
  CHECK(budget["over_budget"].get_bool().value());
  CHECK(number_of(budget, "max_bytes") == 40);
  CHECK(number_of(budget, "bytes") > 40);
  // Both limits: the tighter one is the budget, whichever it is.
  auto tokens_tighter = f.json(parser, {"orient", "--project", "proj_demo", "--max-bytes", "100000", "--max-tokens", "10"});
  CHECK(number_of(tokens_tighter["x-agentctx-budget"].value(), "max_bytes") == 40);
  auto bytes_tighter = f.json(parser, {"orient", "--project", "proj_demo", "--max-bytes", "40", "--max-tokens", "100000"});
  CHECK(number_of(bytes_tighter["x-agentctx-budget"].value(), "max_bytes") == 40);
  auto roomy = f.json(parser, {"orient", "--project", "proj_demo", "--max-bytes", "100000"});
  CHECK(roomy["x-agentctx-budget"]["over_budget"].error() == simdjson::NO_SUCH_FIELD);
  // The largest budgets are taken and reported exactly, as whole numbers;
  // larger ones are refused rather than wrapped around.
  const run_result largest = f.run({"orient", "--project", "proj_demo", "--max-bytes", "1000000000000", "--json"});
  check_clean_success(largest);
  CHECK(contains(largest.out, "\"max_bytes\": 1000000000000"));
  CHECK(contains(f.run({"orient", "--project", "proj_demo", "--max-tokens", "250000000000"}).out,
                 "of at most 1000000000000 bytes"));
  check_failure(f.run({"orient", "--project", "proj_demo", "--max-tokens", "4611686018427387903"}), exit_usage,
                "--max-tokens");
  check_failure(f.run({"orient", "--project", "proj_demo", "--max-bytes", "1000000000001"}), exit_usage, "--max-bytes");
}

TEST_CASE("relay: whole numbers print whole in --json output; text that is not UTF-8 is invalid_schema; output that "
          "cannot be written is an I/O error") {
  relay_fixture f;
  f.deposit(package_text("pkg_one", "Shipped archive"));
  const run_result budget = f.run({"orient", "--project", "proj_demo", "--max-bytes", "100000000", "--json"});
  check_clean_success(budget);
  CHECK(contains(budget.out, "\"max_bytes\": 100000000"));
  CHECK_FALSE(contains(budget.out, "e+"));

  check_failure(f.run({"project", "create", "p\xff"}), exit_invalid_schema, "UTF-8");
  check_json_failure(f.run({"project", "create", "p\xff", "--json"}), exit_invalid_schema, "invalid_schema", 400);

  const auto to_full = [&](const std::string& command) {
    // Appended piece by piece: GCC 12 warns (-Warray-bounds, falsely) on the chain of + here.
    std::string script = RELAY_BIN;
    script.append(" --store ").append(f.store).append(" ").append(command).append(" > /dev/full");
    return cli_test::run("/bin/sh", {"-c", script});
  };
  for (const std::string command : {"project list", "project list --json", "pull --mode latest --project proj_demo"}) {
    CAPTURE(command);
    const run_result r = to_full(command);
    CHECK(r.exit_code == exit_usage);
    CHECK(r.err == "relay: cannot write to standard output\n");
  }
}

TEST_CASE("relay facts lists the current facts by default, also one whose valid_from is ahead; --at the ones then") {
  relay_fixture f;
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "site", "--predicate", "status",
                             "--value", "draft", "--valid-from", "2020-01-01T00:00:00Z"}));
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "site", "--predicate", "status",
                             "--value", "live", "--valid-from", "2030-01-01T00:00:00Z"}));
  const run_result current = f.run({"facts", "--project", "proj_demo"});
  check_clean_success(current);
  CHECK(current.out.starts_with("site status = live  (from 2030-01-01T00:00:00Z)  fact_"));
  const run_result now = f.run({"facts", "--project", "proj_demo", "--at", now_text()});
  check_clean_success(now);
  CHECK(now.out.starts_with("site status = draft  (from 2020-01-01T00:00:00Z to 2030-01-01T00:00:00Z)  fact_"));
  const run_result help = f.run({"facts", "--help"});
  CHECK(contains(help.out, "default: the current facts, those not ended, including one whose valid_from is still"));

  // Times finer than a millisecond count: 0.0001 s is before 0.0009 s.
  check_clean_success(f.run({"assert", "--project", "proj_demo", "--subject", "job", "--predicate", "state", "--value",
                             "queued", "--valid-from", "2026-01-01T00:00:00.0009Z"}));
  check_failure(f.run({"assert", "--project", "proj_demo", "--subject", "job", "--predicate", "state", "--value", "done",
                       "--valid-from", "2026-01-01T00:00:00.0001Z"}),
                exit_invalid_schema, "is earlier than the current fact's valid_from");
  CHECK(f.run({"facts", "--project", "proj_demo", "--at", "2026-01-01T00:00:00.0005Z"}).out.find("job state") ==
        std::string::npos);
  CHECK(contains(f.run({"facts", "--project", "proj_demo", "--at", "2026-01-01T00:00:00.0009Z"}).out,
                 "job state = queued"));
  // Any year of RFC 3339 is a time, before 1970 too: a fact of history
  // holds from its year on, and is superseded by a later one.
  const auto moon_visited = [&f](const char* value, const char* valid_from) {
    return f.run({"assert", "--project", "proj_demo", "--subject", "moon", "--predicate", "visited", "--value", value,
                  "--valid-from", valid_from});
  };
  const auto facts_at = [&f](const char* at) { return f.run({"facts", "--project", "proj_demo", "--at", at}).out; };
  check_clean_success(moon_visited("no", "0001-01-01T00:00:00Z"));
  check_clean_success(moon_visited("yes", "1969-07-20T20:17:40.5Z"));
  CHECK(contains(facts_at("1969-07-20T20:17:40.499Z"), "moon visited = no"));
  CHECK(contains(facts_at("1969-07-20T21:17:40.5+01:00"), "moon visited = yes"));
  CHECK_FALSE(contains(facts_at("0000-12-31T23:59:59.999Z"), "moon"));
  check_failure(moon_visited("maybe", "1969-07-20T20:17:40.4Z"), exit_invalid_schema,
                "is earlier than the current fact's valid_from");
  check_failure(moon_visited("maybe", "-001-01-01T00:00:00Z"), exit_invalid_schema,
                "must be an RFC 3339 UTC timestamp");
}

TEST_CASE("relay export --json needs -o; import reads any readable file and refuses what is no export") {
  relay_fixture f;
  f.deposit(package_text("pkg_one", "One"));
  check_json_failure(f.run({"export", "--json"}), exit_usage, "usage_error", 400);
  CHECK(contains(f.run({"export", "--json"}).err, "--json needs -o FILE"));
  const std::string backup = f.dir.path() + "/backup.ndjson";
  simdjson::dom::parser parser;
  auto summary = f.json(parser, {"export", "-o", backup});
  CHECK(number_of(summary, "lines") >= 3);

  // /dev/null (a character device) and empty standard input are read, and refused as empty.
  check_failure(f.run({"import", "/dev/null"}), exit_invalid_schema, "/dev/null: not a Relay export: the input is empty");
  check_failure(f.run({"import", "-"}), exit_invalid_schema, "standard input: not a Relay export: the input is empty");
  check_failure(f.run({"import", f.file("blank.ndjson", "\n  \n")}), exit_invalid_schema, "the input is empty");
  // The export without its header line.
  const std::string text = cli_test::read_file(backup);
  check_failure(f.run({"import", f.file("headless.ndjson", text.substr(text.find('\n') + 1))}), exit_invalid_schema,
                "not a Relay export: its first line is not the header");
  // The export from standard input (a pipe or file as stdin), and from a file: imported.
  relay_fixture other;
  const run_result imported = other.run({"import", "-"}, backup);
  check_clean_success(imported);
  CHECK(imported.out.starts_with("imported 1 project, 0 sessions, 1 package, "));
  check_failure(f.run({"import", f.dir.path() + "/missing.ndjson"}), exit_usage, "missing.ndjson: open failed");
  // Input is read and parsed line by line: endless input that is no export
  // is refused at its first line, having read no further (it was read whole
  // first, up to 4 GiB), and so is a folder; no store is made.
  relay_fixture third;
  // (Random bytes: line 1 is not JSON but for a chance in hundreds that it
  // is blank or a number; the line named may then be another.)
  check_failure(third.run({"import", "/dev/urandom"}), exit_invalid_schema, "/dev/urandom: line ");
  check_failure(third.run({"import", f.dir.path()}), exit_usage, "read failed: Is a directory");
  CHECK_FALSE(std::filesystem::exists(third.store));
}

TEST_CASE("relay import reads bare wire objects: packages, facts, sessions and projects one per line") {
  relay_fixture f;
  // Another implementation's backup: a fact first, packages after, no project line.
  const std::string fact =
      R"({"fact_id":"fact_w1","project_id":"proj_wire","subject":"api","predicate":"status","value":"live",)"
      R"("valid_from":"2026-01-01T00:00:00Z","created_at":"2026-01-01T00:00:00Z","confidence":1,"tags":[]})";
  const std::string first = package_text("pkg_w1", "Wire one", "proj_wire", "awaiting_review",
                                         R"(,"x-from":{"tool":"other"})");
  const std::string second = package_text("pkg_w2", "Wire two", "proj_wire");
  const std::string wire = f.file("wire.ndjson", fact + "\n" + first + "\n" + second + "\n");
  const run_result imported = f.run({"import", wire});
  check_clean_success(imported);
  CHECK(imported.out ==
        "imported bare wire objects: 1 project, 0 sessions, 2 packages, 0 status changes, 1 fact; skipped 0 lines the "
        "store already held\n");
  // Each package's hash is the one relay hash computes for the object.
  const run_result hashed = f.run({"hash", f.file("first.json", first)});
  check_clean_success(hashed);
  simdjson::dom::parser parser;
  auto pulled = f.json(parser, {"pull", "--mode", "specific", "--package", "pkg_w1"});
  const simdjson::dom::element entry = pulled["packages"].at(0).value();
  CHECK(text_of(entry, "hash") + "\n" == hashed.out);
  CHECK(text_of(entry["package"]["x-from"].value(), "tool") == "other");
  CHECK(text_of(entry["package"].value(), "status") == "awaiting_review");
  CHECK(contains(f.run({"facts", "--project", "proj_wire"}).out, "api status = live"));
  // Again: nothing new, said in JSON too.
  simdjson::dom::parser again_parser;
  auto again = f.json(again_parser, {"import", wire});
  CHECK(again["wire_objects"].get_bool().value());
  CHECK(number_of(again, "packages") == 0);
  CHECK(number_of(again, "skipped") == 3);  // the lines of the file
  CHECK(number_of(again, "projects") == 0);
  // Errors name the file's line; a line cut in the middle, --partial leaves out.
  check_failure(f.run({"import", f.file("bad.ndjson", second + "\n{\"name\":\"x\"}\n")}), exit_invalid_schema,
                "bad.ndjson: line 2: not a Relay wire object");
  const std::string cut = f.file("cut.ndjson", package_text("pkg_w3", "Three", "proj_wire") + "\n{\"title\":");
  check_failure(f.run({"import", cut}), exit_invalid_schema,
                "line 2: the last line is cut short (no line break after it, and not JSON: the text ends where a value "
                "should be): the file was cut short (--partial imports the lines before it)");
  const run_result partial = f.run({"import", cut, "--partial"});
  CHECK(partial.exit_code == 0);
  CHECK(contains(partial.err, "warning: line 2 is cut short"));
  CHECK(partial.out.starts_with("imported bare wire objects: 0 projects, 0 sessions, 1 package, "));
  // A package reviewed since: its current state, pulled and imported again, is held.
  check_clean_success(f.run({"review", "--package", "pkg_w1", "--status", "complete"}));
  simdjson::dom::parser pull_parser;
  auto now_complete = f.json(pull_parser, {"pull", "--mode", "specific", "--package", "pkg_w1"});
  const std::string current = simdjson::to_string(now_complete["packages"].at(0)["package"].value());
  const run_result held = f.run({"import", f.file("current.ndjson", current + "\n")});
  check_clean_success(held);
  CHECK(contains(held.out, "0 packages, 0 status changes, 0 facts; skipped 1 line "));
}

namespace {

/// The package ids of a relevant pull's or a digest's `member` array
/// (its entries' "package" member's id, or their own).
std::vector<std::string> ids_in(simdjson::dom::element result, const char* member) {
  std::vector<std::string> ids;
  for (simdjson::dom::element entry : array_of(result, member)) {
    simdjson::dom::element package;
    ids.push_back(text_of(entry["package"].get(package) == simdjson::SUCCESS ? package : entry, "package_id"));
  }
  return ids;
}

}  // namespace

TEST_CASE("relay import catches a copy up when an invalidation since cut a fact it holds ended, naming a fact it lacks") {
  relay_fixture f;
  // A fact from elsewhere that ends in 2099; its key has no current fact.
  const std::string elsewhere =
      f.file("elsewhere.ndjson",
             R"({"fact_id":"fact_e","project_id":"proj_wire","subject":"api","predicate":"status","value":"E",)"
             R"("valid_from":"2026-01-01T00:00:00Z","valid_to":"2099-01-01T00:00:00Z","created_at":"2026-01-01T00:00:00Z"})"
             "\n");
  check_clean_success(f.run({"import", elsewhere}));
  const std::string first = f.dir.path() + "/first.ndjson";
  check_clean_success(f.run({"export", "-o", first}));
  relay_fixture copy;
  check_clean_success(copy.run({"import", first}));
  // Since: G, to hold from 2099-06, invalidated now; that cuts E now.
  const std::vector<std::string> key = {"--project", "proj_wire", "--subject", "api", "--predicate", "status"};
  std::vector<std::string> assert_g = {"assert", "--value", "G", "--valid-from", "2099-06-01T00:00:00Z"};
  assert_g.insert(assert_g.end(), key.begin(), key.end());
  check_clean_success(f.run(assert_g));
  std::vector<std::string> invalidate = {"invalidate"};
  invalidate.insert(invalidate.end(), key.begin(), key.end());
  check_clean_success(f.run(invalidate));
  const std::string later = f.dir.path() + "/later.ndjson";
  check_clean_success(f.run({"export", "-o", later}));
  const run_result imported = copy.run({"import", later});
  check_clean_success(imported);
  CHECK(imported.out == "imported 0 projects, 0 sessions, 0 packages, 0 status changes, 2 facts; skipped 1 line the "
                        "store already held\n");
  CHECK(after_header(copy.run({"export"}).out) == after_header(cli_test::read_file(later)));
  std::vector<std::string> history = {"history", "--json"};
  history.insert(history.end(), key.begin(), key.end());
  const run_result source_history = f.run(history);
  check_clean_success(source_history);
  CHECK(copy.run(history).out == source_history.out);
  simdjson::dom::parser parser;
  auto facts = array_of(f.json(parser, {"history", "--project", "proj_wire", "--subject", "api", "--predicate", "status"}),
                        "facts");
  REQUIRE(facts.size() == 2);
  CHECK(text_of(facts.at(0).value(), "value") == "E");
  CHECK(text_of(facts.at(0).value(), "valid_to").starts_with("2026-"));  // cut when G was invalidated
  CHECK(text_of(facts.at(1).value(), "valid_to") == "2099-06-01T00:00:00Z");  // G never held
  // Again: nothing to write.
  CHECK(copy.run({"import", later}).out ==
        "imported 0 projects, 0 sessions, 0 packages, 0 status changes, 0 facts; skipped 3 lines the store already held\n");
}

TEST_CASE("relay pull --mode relevant: only packages sharing a word with the query (hash embedder); a global pull "
          "leaves archived projects out, names each package's project and breaks ties by deposit") {
  relay_fixture f;
  // With 128 dimensions "xylophone" and "betaword" collide with words of
  // these titles: their vectors' cosines are positive without a shared word.
  f.deposit(package_text("pkg_ship", "Shipped archive feature"));
  f.deposit(package_text("pkg_f2", "filler number 2"));
  f.deposit(package_text("pkg_f15", "filler number 15"));
  f.deposit(package_text("pkg_beta", "betaword release notes"));
  const run_result unrelated = f.run({"pull", "--mode", "relevant", "--project", "proj_demo", "--query", "xylophone"});
  check_clean_success(unrelated);
  CHECK(unrelated.out == "no packages\n");
  simdjson::dom::parser parser;
  CHECK(ids_in(f.json(parser, {"pull", "--mode", "relevant", "--project", "proj_demo", "--query", "betaword"}),
               "packages") == std::vector<std::string>{"pkg_beta"});

  // Archived projects are left out of a global pull, searched when named.
  f.deposit(package_text("pkg_shelved", "betaword shelved notes", "proj_shelved"));
  check_clean_success(f.run({"project", "archive", "proj_shelved"}));
  const run_result global = f.run({"pull", "--mode", "relevant", "--query", "betaword"});
  check_clean_success(global);
  CHECK(global.out.starts_with("1. "));
  CHECK(contains(global.out, "  proj_demo  pkg_beta  "));  // a global pull names the project
  CHECK(cli_test::line_count(global.out) == 1);
  const run_result named = f.run({"pull", "--mode", "relevant", "--project", "proj_shelved", "--query", "betaword"});
  check_clean_success(named);
  CHECK(contains(named.out, "  pkg_shelved  "));
  CHECK_FALSE(contains(named.out, "proj_shelved"));  // one project named: no project column

  // Identical texts across projects: equal scores, the earlier deposit first.
  f.deposit(package_text("pkg_t1", "tied rollout words", "proj_b"));
  f.deposit(package_text("pkg_t2", "tied rollout words", "proj_a"));
  f.deposit(package_text("pkg_t3", "tied rollout words", "proj_b"));
  const auto tied = f.json(parser, {"pull", "--mode", "relevant", "--query", "rollout words", "--limit", "10"});
  CHECK(ids_in(tied, "packages") == std::vector<std::string>{"pkg_t1", "pkg_t2", "pkg_t3"});
  const double first_score = array_of(tied, "packages").at(0)["score"].get_double().value();
  const simdjson::dom::array tied_hits = array_of(tied, "packages");
  for (simdjson::dom::element hit : tied_hits) CHECK(hit["score"].get_double().value() == first_score);
  simdjson::dom::parser digest_parser;
  CHECK(ids_in(f.json(digest_parser, {"orchestrate", "--focus", "rollout words", "--snippets", "10"}), "snippets") ==
        std::vector<std::string>{"pkg_t1", "pkg_t2", "pkg_t3"});
}

TEST_CASE("relay orchestrate: a global digest names the project of each question and fact; snippets come from every "
          "package of the scope and print no empty excerpt") {
  relay_fixture f;
  f.deposit(package_text("pkg_a", "Planning", "proj_a", "complete", ",\"open_questions\":[\"Ship v2?\"]"));
  f.deposit(package_text("pkg_b", "Weekly notes", "proj_b", "complete",
                         ",\"open_questions\":[\"Ship v2?\"],\"decisions_made\":[\"adopt the reranker\"]"));
  f.deposit(package_text("pkg_bare", "Reranker", "proj_a"));
  f.deposit(package_text("pkg_old", "Reranker study", "proj_a", "complete", ",\"description\":\"first trials\"",
                         "2025-01-01T00:00:00Z"));
  check_clean_success(f.run({"assert", "--project", "proj_a", "--subject", "dashboard", "--predicate", "status",
                             "--value", "live"}));
  simdjson::dom::parser parser;
  const auto digest = f.json(parser, {"orchestrate", "--focus", "reranker"});
  const simdjson::dom::array questions = array_of(digest, "open_questions");
  REQUIRE(questions.size() == 2);  // once per project
  CHECK(text_of(questions.at(0).value(), "question") == "Ship v2?");
  CHECK(text_of(questions.at(0).value(), "project_id") == "proj_b");  // the newer package's first
  CHECK(text_of(questions.at(1).value(), "project_id") == "proj_a");
  std::vector<std::string> snippets = ids_in(digest, "snippets");
  std::sort(snippets.begin(), snippets.end());
  CHECK(snippets == std::vector<std::string>{"pkg_b", "pkg_bare", "pkg_old"});  // pkg_old is outside the window

  const run_result text = f.run({"orchestrate", "--focus", "reranker"});
  check_clean_success(text);
  CHECK(contains(text.out, "\n## Open questions (2)\n- Ship v2? [in proj_b]\n- Ship v2? [in proj_a]\n"));
  CHECK(contains(text.out, "\n## Active facts (1)\n- dashboard status = live  (from "));
  CHECK(contains(text.out, " [in proj_a]\n\n## Open questions"));
  // Matched on its decision: shows its decisions and questions.
  CHECK(contains(text.out, " [pkg_b in proj_b]\n  adopt the reranker; Ship v2?\n"));
  CHECK(contains(text.out, "  Reranker [pkg_bare in proj_a]\n"));         // a bare title: no excerpt line
  CHECK_FALSE(contains(text.out, "\n  \n"));
  // One project: no project tags.
  const run_result one = f.run({"orchestrate", "--project", "proj_a"});
  check_clean_success(one);
  CHECK(contains(one.out, "\n## Open questions (1)\n- Ship v2?\n"));
}

TEST_CASE("relay pull --mode latest and orient order by the whole created_at; orient's budget drops the earlier "
          "deposit of equals first") {
  relay_fixture f;
  // Within one millisecond, the later instant deposited first.
  const std::string now = now_text();  // ...SS.mmmZ
  const std::string base = now.substr(0, now.size() - 1);
  f.deposit(package_text("pkg_later", "later", "proj_demo", "complete", "", base + "9Z"));
  f.deposit(package_text("pkg_earlier", "earlier", "proj_demo", "complete", "", base + "1Z"));
  simdjson::dom::parser parser;
  CHECK(ids_in(f.json(parser, {"pull", "--mode", "latest", "--project", "proj_demo"}), "packages") ==
        std::vector<std::string>{"pkg_later", "pkg_earlier"});
  CHECK(ids_in(f.json(parser, {"orient", "--project", "proj_demo"}), "recent_packages") ==
        std::vector<std::string>{"pkg_later", "pkg_earlier"});

  // Two packages of one created_at and significance: the budget that leaves
  // out one package leaves out the one deposited first.
  relay_fixture g;
  const std::string at = now_text();
  g.deposit(package_text("pkg_first", "equal", "proj_demo", "complete", "", at));
  g.deposit(package_text("pkg_second", "equal", "proj_demo", "complete", "", at));
  const auto omitted = [&](std::size_t budget) {
    simdjson::dom::parser p;
    const auto bundle = g.json(p, {"orient", "--project", "proj_demo", "--max-bytes", std::to_string(budget)});
    std::vector<std::string> ids;
    const simdjson::dom::array listed = bundle["x-agentctx-budget"]["omitted_packages"].get_array().value();
    for (simdjson::dom::element id : listed) {
      ids.emplace_back(id.get_string().value());
    }
    return ids;
  };
  // The largest budget that leaves anything out (fewer bytes leave out more).
  std::size_t fits = 100'000;
  std::size_t short_of = 1;
  REQUIRE(omitted(fits).empty());
  REQUIRE_FALSE(omitted(short_of).empty());
  while (fits - short_of > 1) {
    const std::size_t middle = short_of + (fits - short_of) / 2;
    (omitted(middle).empty() ? fits : short_of) = middle;
  }
  CHECK(omitted(short_of) == std::vector<std::string>{"pkg_first"});
}

#endif


TEST_CASE("relay pull --mode relevant and orchestrate --focus read a store they may not write, without a cache") {
  if (::geteuid() == 0) {
    MESSAGE("skipped: root may write any folder, so a read-only store cannot be made here");
    return;
  }
  relay_fixture f;
  f.deposit(package_text("pkg_a", "Shipped archive"));
  std::filesystem::permissions(f.store, std::filesystem::perms(0555));
  const run_result pulled = f.run({"pull", "--mode", "relevant", "--project", "proj_demo", "--query", "archive"});
  const run_result digest = f.run({"orchestrate", "--project", "proj_demo", "--focus", "archive"});
  std::filesystem::permissions(f.store, std::filesystem::perms(0755));
  check_clean_success(pulled);
  CHECK(contains(pulled.out, "pkg_a"));
  check_clean_success(digest);
  CHECK_FALSE(std::filesystem::exists(f.store + "/embeddings"));
}
TEST_CASE("relay: an id or value that is not UTF-8 is exit 3 (invalid_schema) for every command, found or not") {
  relay_fixture f;
  f.deposit(package_text("pkg_one", "One"));
  check_clean_success(f.run({"session", "start", "--project", "proj_demo", "--actor", "claude", "--actor-type", "agent"}));
  const std::string bad = "x\xff";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"flag", "--package", bad, "--review-type", "human"}, "package_id is not valid UTF-8"},
      {{"review", "--package", bad, "--status", "complete"}, "package_id is not valid UTF-8"},
      {{"pull", "--mode", "specific", "--package", bad}, "package_id is not valid UTF-8"},
      {{"invalidate", "--project", "proj_demo", "--subject", bad, "--predicate", "p"}, "subject is not valid UTF-8"},
      {{"invalidate", "--project", "proj_demo", "--subject", "s", "--predicate", "p", "--value", bad},
       "value is not valid UTF-8"},
      {{"session", "end", bad}, "session_id is not valid UTF-8"},
      {{"project", "archive", bad}, "project_id is not valid UTF-8"},
      {{"project", "show", bad}, "project_id is not valid UTF-8"},
      {{"facts", "--project", bad}, "project_id is not valid UTF-8"},
      {{"history", "--project", bad, "--subject", "s", "--predicate", "p"}, "project_id is not valid UTF-8"},
      {{"history", "--project", "proj_demo", "--subject", bad, "--predicate", "p"}, "subject is not valid UTF-8"},
      {{"history", "--project", "proj_demo", "--subject", "s", "--predicate", bad}, "predicate is not valid UTF-8"},
      {{"orient", "--project", bad}, "project_id is not valid UTF-8"},
      {{"orchestrate", "--project", bad}, "project_id is not valid UTF-8"},
      {{"pull", "--mode", "latest", "--project", bad}, "project_id is not valid UTF-8"},
      {{"pull", "--mode", "relevant", "--project", bad, "--query", "q"}, "project_id is not valid UTF-8"},
      {{"review", "--list", "--project", bad}, "project_id is not valid UTF-8"},
      {{"session", "list", "--project", bad}, "project_id is not valid UTF-8"},
      {{"export", "--project", bad, "-o", "export.ndjson"}, "project_id is not valid UTF-8"}};
  const std::string before = cli_test::read_file(f.store + "/relay.log");
  for (const auto& c : cases) {
    const std::vector<std::string>& args = c.first;
    CAPTURE(cli_test::joined(args));
    check_failure(f.run(args), exit_invalid_schema, c.second);
    std::vector<std::string> with_json = args;
    with_json.push_back("--json");
    check_json_failure(f.run(with_json), exit_invalid_schema, "invalid_schema", 400);
  }
  CHECK(cli_test::read_file(f.store + "/relay.log") == before);
  CHECK_FALSE(std::filesystem::exists(f.dir.path() + "/export.ndjson"));
}

}  // namespace cli_relay_test
