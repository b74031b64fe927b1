// End-to-end tests of agent-memory through the real binary: every
// subcommand in text and JSON (the JSON parsed back), content from a file
// and from standard input, and every refused input as one line with its
// documented exit code (1 damaged file, 2 usage or I/O, 3 invalid input,
// 4 PathOutsideRepository, 5 Conflict), with --json also as the seed's
// error object on stdout.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <simdjson.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_agent_memory_test {

#ifndef AGENT_MEMORY_BIN
TEST_CASE("agent-memory: end-to-end tests") {
  MESSAGE("skipping: AGENT_MEMORY_BIN is not defined (the CLI targets are not part of this build)");
}
#else

using cli_test::check_clean_success;
using cli_test::contains;
using cli_test::run_result;
using cli_test::text_of;

namespace {

namespace fs = std::filesystem;

constexpr int exit_damaged = 1;
constexpr int exit_usage = 2;
constexpr int exit_invalid = 3;
constexpr int exit_outside = 4;
constexpr int exit_conflict = 5;

struct repository {
  io_test::temporary_directory scratch;
  fs::path root = fs::canonical(scratch.path()) / "repo";
  repository() { fs::create_directories(root); }

  run_result run(std::vector<std::string> args, const std::string& input = "/dev/null") const {
    return cli_test::run(AGENT_MEMORY_BIN, args, root.string(), input);
  }
  fs::path memory(const std::string& file) const { return root / ".github/agent-memory/aristotle" / file; }
};

void check_failure(const run_result& r, int exit_code, std::string_view code) {
  cli_test::check_error(r, exit_code, std::string(code) + ": ", "agent-memory");
}

}  // namespace

TEST_CASE("agent-memory: a session from start to summary, in text and JSON") {
  repository repo;
  auto started = repo.run({"start-session", "--agent", "aristotle", "--date", "2025-01-20"});
  check_clean_success(started);
  CHECK(started.out == "created .github/agent-memory/aristotle/logs/2025-01-20.md\n");
  CHECK(contains(cli_test::read_file(repo.memory("logs/2025-01-20.md")), "- Session ID: aristotle-2025-01-20\n"));
  CHECK(cli_test::read_file(repo.memory("_schema.md")).starts_with("# Agent Memory Schema v1\n"));

  simdjson::dom::parser parser;
  auto again = repo.run({"start-session", "--agent", "aristotle", "--date", "2025-01-20", "--json"});
  check_clean_success(again);
  auto json = cli_test::parse_output(parser, again);
  CHECK(text_of(json, "session_file") == ".github/agent-memory/aristotle/logs/2025-01-20.md");
  CHECK(json["created"].get_bool().value() == false);

  check_clean_success(repo.run({"append", "--agent", "aristotle", "--date", "2025-01-20", "--section", "Decisions",
                                "--content", "- Ship the parser first"}));
  cli_test::write_file(repo.root / "entry.md", "- Then the writer\n");
  check_clean_success(repo.run({"append", "--agent", "aristotle", "--date", "2025-01-20", "--section", "Decisions",
                                "--file", "entry.md"}));
  cli_test::write_file(repo.root.parent_path() / "stdin.md", "Focus: memory\n");
  auto piped = repo.run({"append", "--agent", "aristotle", "--date", "2025-01-20", "--section", "Context", "--file",
                         "-", "--json"},
                        (repo.root.parent_path() / "stdin.md").string());
  check_clean_success(piped);
  CHECK(text_of(cli_test::parse_output(parser, piped), "section") == "Context");
  const std::string log = cli_test::read_file(repo.memory("logs/2025-01-20.md"));
  CHECK(contains(log, "## Context\n\nFocus: memory\n\n## Discussion Summary"));
  CHECK(contains(log, "## Decisions\n\n- Ship the parser first\n\n- Then the writer\n\n## Open Questions"));

  auto read = repo.run({"read-summary", "--agent", "aristotle", "--json"});
  CHECK(read.exit_code == 0);
  CHECK(contains(read.err, "created .github/agent-memory/aristotle/_summary.md"));
  json = cli_test::parse_output(parser, read);
  CHECK(json["initialized"].get_bool().value());
  const std::string hash = text_of(json, "hash");
  CHECK(hash.starts_with("sha256:"));
  auto text = repo.run({"read-summary", "--agent", "aristotle"});
  check_clean_success(text);
  CHECK(text.out == cli_test::read_file(repo.memory("_summary.md")));
  {
    // Control characters in the file are shown escaped; its lines and CRLF
    // line ends as they are; --json carries the text exactly.
    const std::string original = cli_test::read_file(repo.memory("_summary.md"));
    const std::size_t heading = original.find("## Context\n");
    REQUIRE(heading != std::string::npos);
    std::string hostile = original;
    hostile.insert(heading + 11, "hello \x1b[2J\x07 there\r\nnext\tline\r\n\n");
    cli_test::write_file(repo.memory("_summary.md"), hostile);
    auto shown = repo.run({"read-summary", "--agent", "aristotle"});
    check_clean_success(shown);
    CHECK(shown.out.find('\x1b') == std::string::npos);
    CHECK(contains(shown.out, "hello \\x1b[2J\\x07 there\r\nnext\tline\r\n"));
    auto exact = repo.run({"read-summary", "--agent", "aristotle", "--json"});
    CHECK(contains(text_of(cli_test::parse_output(parser, exact), "summary"), "hello \x1b[2J\x07 there\r\n"));
    cli_test::write_file(repo.memory("_summary.md"), original);
  }

  auto updated = repo.run({"update-summary", "--agent", "aristotle", "--section", "Decisions", "--mode", "append",
                           "--content", "- Parser first", "--base-hash", hash, "--json"});
  check_clean_success(updated);
  json = cli_test::parse_output(parser, updated);
  CHECK(text_of(json, "previous_hash") == hash);
  CHECK(text_of(json, "mode") == "append");
  // The same base hash again is stale now.
  check_failure(repo.run({"update-summary", "--agent", "aristotle", "--section", "Decisions", "--mode", "replace",
                          "--content", "- late", "--base-hash", hash}),
                exit_conflict, "Conflict");
  CHECK(contains(cli_test::read_file(repo.memory("_summary.md")), "## Decisions\n\n- Parser first\n"));

  for (const char* day : {"2025-01-15", "2025-01-18"}) {
    check_clean_success(repo.run({"start-session", "--agent", "aristotle", "--date", day}));
  }
  auto listed = repo.run({"list-sessions", "--agent", "aristotle"});
  check_clean_success(listed);
  CHECK(listed.out == "2025-01-20.md\n2025-01-18.md\n2025-01-15.md\n");
  auto page = repo.run({"list-sessions", "--agent", "aristotle", "--limit", "2", "--json"});
  CHECK(page.exit_code == 0);
  json = cli_test::parse_output(parser, page);
  CHECK(text_of(json, "next_before") == "2025-01-18");
  CHECK(cli_test::number_of(json, "total") == 3);
  auto rest = repo.run({"list-sessions", "--agent", "aristotle", "--before", "2025-01-18"});
  CHECK(rest.out == "2025-01-15.md\n");
  // --repo-root names the repository from anywhere.
  auto elsewhere = cli_test::run(AGENT_MEMORY_BIN, {"list-sessions", "--agent", "aristotle", "--repo-root",
                                                    repo.root.string(), "--limit", "1"},
                                 "/", "/dev/null");
  CHECK(elsewhere.out == "2025-01-20.md\n");
  // A relative --repo-root is taken from the current directory, as a shell would.
  auto from_parent = cli_test::run(AGENT_MEMORY_BIN, {"list-sessions", "--agent", "aristotle", "--repo-root",
                                                      repo.root.filename().string(), "--limit", "1"},
                                   repo.root.parent_path().string(), "/dev/null");
  CHECK(from_parent.out == "2025-01-20.md\n");
  CHECK(repo.run({"list-sessions", "--agent", "aristotle", "--repo-root", ".", "--limit", "1"}).out == "2025-01-20.md\n");
}

TEST_CASE("agent-memory: every refused input is one line with its exit code, and nothing is written") {
  repository repo;
  const std::vector<std::string> base = {"--agent", "aristotle", "--date", "2025-01-20"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), base.begin(), base.end());
    return args;
  };
  check_failure(repo.run(with({"append", "--section", "Thoughts", "--content", "x"})), exit_invalid, "InvalidSection");
  check_failure(repo.run(with({"append", "--section", "Decisions", "--content", "a\n## Decisions\nb"})), exit_invalid,
                "InvalidContent");
  check_failure(repo.run(with({"append", "--section", "Decisions", "--content", "a\r\nb"})), exit_invalid,
                "InvalidContent");
  check_failure(repo.run(with({"append", "--section", "Decisions", "--content", std::string(100, 'x'),
                               "--max-content-bytes", "50"})),
                exit_invalid, "ContentTooLarge");
  check_failure(repo.run({"start-session", "--agent", "../x"}), exit_invalid, "InvalidAgentName");
  check_failure(repo.run({"start-session", "--agent", "a b"}), exit_invalid, "InvalidAgentName");
  check_failure(repo.run({"start-session", "--agent", "aristotle", "--date", "2025-02-30"}), exit_invalid,
                "InvalidDate");
  check_failure(repo.run({"list-sessions", "--agent", "aristotle", "--before", "20250105"}), exit_invalid,
                "InvalidDate");
  check_failure(repo.run({"start-session", "--agent", "aristotle", "--repo-root", "relative"}), exit_invalid,
                "InvalidRepoRoot");
  check_failure(repo.run({"start-session", "--agent", "aristotle", "--repo-root", "/"}), exit_invalid,
                "InvalidRepoRoot");
  check_failure(repo.run({"update-summary", "--agent", "aristotle", "--section", "Decisions", "--mode", "overwrite",
                          "--content", "x"}),
                exit_invalid, "InvalidMode");
  check_failure(repo.run({"update-summary", "--agent", "aristotle", "--section", "Decisions", "--mode", "append",
                          "--content", "x", "--base-hash", "abc"}),
                exit_invalid, "InvalidArgument");
  check_failure(repo.run(with({"append", "--section", "Decisions", "--file", "missing.md"})), exit_usage, "IoError");
  // A folder is an I/O error, not empty content.
  const auto folder = repo.run(with({"append", "--section", "Decisions", "--file", "."}));
  check_failure(folder, exit_usage, "IoError");
  CHECK(contains(folder.err, ".: read failed: Is a directory"));
  CHECK_FALSE(fs::exists(repo.root / ".github"));

  // Argument errors are CLI11's, in one line too.
  auto missing_agent = repo.run({"start-session"});
  CHECK(missing_agent.exit_code == exit_usage);
  CHECK(cli_test::line_count(missing_agent.err) == 1);
  auto both = repo.run(with({"append", "--section", "Decisions", "--content", "x", "--file", "y"}));
  CHECK(both.exit_code == exit_usage);

  // --json: the seed's error object on stdout as well.
  auto json_error = repo.run(with({"append", "--section", "Thoughts", "--content", "x", "--json"}));
  CHECK(json_error.exit_code == exit_invalid);
  simdjson::dom::parser parser;
  auto json = cli_test::parse_json(parser, json_error.out);
  CHECK(text_of(json, "error") == "InvalidSection");
  CHECK(text_of(json, "message").starts_with("Section 'Thoughts' is not defined in schema"));
}

TEST_CASE("agent-memory: symlinks, damaged files and a held lock") {
  repository repo;
  fs::create_directories(repo.root.parent_path() / "outside");
  fs::create_directories(repo.root / ".github");
  fs::create_directory_symlink(repo.root.parent_path() / "outside", repo.root / ".github" / "agent-memory");
  check_failure(repo.run({"start-session", "--agent", "aristotle"}), exit_outside, "PathOutsideRepository");
  check_failure(repo.run({"list-sessions", "--agent", "aristotle"}), exit_outside, "PathOutsideRepository");
  CHECK(fs::is_empty(repo.root.parent_path() / "outside"));
  fs::remove(repo.root / ".github" / "agent-memory");

  check_clean_success(repo.run({"start-session", "--agent", "aristotle", "--date", "2025-01-20"}));
  cli_test::write_file(repo.memory("logs/2025-01-20.md"), "# Log\n\n## Decisions\n\n## Decisions\n");
  check_failure(repo.run({"append", "--agent", "aristotle", "--date", "2025-01-20", "--section", "Decisions",
                          "--content", "x"}),
                exit_damaged, "MalformedLog");
  cli_test::write_file(repo.memory("_schema.md"), "# Agent Memory Schema v2\n\n## Header\n\n## Decisions\n");
  auto warned = repo.run({"start-session", "--agent", "aristotle", "--date", "2025-01-21"});
  CHECK(warned.exit_code == 0);
  CHECK(contains(warned.err, "agent-memory: warning: SchemaVersionMismatch: "));
  cli_test::write_file(repo.memory("_schema.md"), "# Not a schema\n");
  check_failure(repo.run({"start-session", "--agent", "aristotle", "--date", "2025-01-22"}), exit_damaged,
                "InvalidSchema");

  // A writer that must not wait fails with Locked while another holds the lock.
  cli_test::write_file(repo.memory("_schema.md"), std::string("# Agent Memory Schema v1\n\n## Header\n\n## Decisions\n"));
  const std::string lock = repo.memory(".lock").string();
  const pid_t holder = ::fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
    ::sleep(30);
    ::_exit(0);
  }
  for (int i = 0; i < 200; ++i) {  // until the child holds it
    const int fd = ::open(lock.c_str(), O_RDWR);
    const bool held = fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (fd >= 0) ::close(fd);
    if (held) break;
    ::usleep(10'000);
  }
  check_failure(repo.run({"append", "--agent", "aristotle", "--date", "2025-01-21", "--section", "Decisions",
                          "--content", "x", "--no-wait"}),
                exit_usage, "Locked");
  ::kill(holder, SIGKILL);
  int status = 0;
  ::waitpid(holder, &status, 0);
  check_clean_success(repo.run({"append", "--agent", "aristotle", "--date", "2025-01-21", "--section", "Decisions",
                                "--content", "x", "--no-wait"}));
}

#endif

}  // namespace cli_agent_memory_test
