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

#endif

}  // namespace cli_relay_refusals_test
