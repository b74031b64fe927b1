// child_process: pipes to and from a child, no SIGPIPE, no deadlock,
// timeouts, exit codes, and errors that name the program.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include "agentctx/io/subprocess.hpp"
#include "support/result_checks.hpp"

namespace io_subprocess_test {

using agentctx::errc;
using agentctx::result;
using agentctx::io::child_process;
using agentctx::io::spawn_options;

namespace {

child_process spawn_or_fail(std::vector<std::string> argv, spawn_options options = {}) {
  auto child = child_process::spawn(std::move(argv), std::move(options));
  REQUIRE_MESSAGE(child.has_value(), test_support::error_text(child));
  return std::move(*child);
}

// A handler satisfied once `wanted` bytes have arrived.
child_process::output_handler until_size(std::size_t wanted) {
  return [wanted](std::string& received) -> result<bool> { return received.size() >= wanted; };
}

bool sigpipe_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  REQUIRE(sigpending(&pending) == 0);
  return sigismember(&pending, SIGPIPE) == 1;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

TEST_CASE("child_process: text goes through cat and comes back") {
  child_process cat = spawn_or_fail({"cat"});
  CHECK(cat.running());
  CHECK(cat.name() == "cat");
  std::string received;
  REQUIRE(cat.exchange("hello\nworld\n", received, until_size(12)).has_value());
  CHECK(received == "hello\nworld\n");

  // The handler consumes what it uses; the rest stays for the next call.
  received.clear();
  std::vector<std::string> lines;
  const auto take_lines = [&lines](std::string& buffer) -> result<bool> {
    for (std::size_t newline; (newline = buffer.find('\n')) != std::string::npos;) {
      lines.push_back(buffer.substr(0, newline));
      buffer.erase(0, newline + 1);
    }
    return lines.size() == 3;
  };
  REQUIRE(cat.exchange("a\nb\nc\n", received, take_lines).has_value());
  CHECK(lines == std::vector<std::string>{"a", "b", "c"});
  CHECK(received.empty());

  auto status = cat.wait();
  REQUIRE(status.has_value());
  CHECK(*status == 0);
  CHECK_FALSE(cat.running());
}

TEST_CASE("child_process: writing and reading megabytes at once does not deadlock") {
  // cat answers while we are still writing: both pipes fill up unless we
  // read while we write.
  std::string data;
  for (int i = 0; data.size() < (std::size_t{4} << 20); ++i) data += "line " + std::to_string(i) + "\n";
  child_process cat = spawn_or_fail({"cat"}, spawn_options{std::chrono::milliseconds(30000), {}});
  std::string received;
  REQUIRE(cat.exchange(data, received, until_size(data.size())).has_value());
  CHECK(received == data);

  // write_all keeps what the child says meanwhile.
  std::string more;
  REQUIRE(cat.write_all(data, more).has_value());
  auto status = cat.wait();
  REQUIRE(status.has_value());
  CHECK(*status == 0);
}

TEST_CASE("child_process: a child that exits at once is an error, never a SIGPIPE") {
  REQUIRE_FALSE(sigpipe_pending());
  const std::string data(std::size_t{1} << 20, 'x');  // more than a pipe holds
  struct early_exit_case {
    const char* what;
    bool expect_output;
  };
  const early_exit_case cases[] = {{"write_all", false}, {"exchange", true}};
  for (const early_exit_case& c : cases) {
    CAPTURE(c.what);
    child_process child = spawn_or_fail({"sh", "-c", "exit 5"}, spawn_options{{}, "quitter"});
    std::string received;
    auto written = c.expect_output ? child.exchange(data, received, until_size(1)) : child.write_all(data, received);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().code == errc::io_error);
    CHECK(written.error().path == "quitter");
    CHECK(written.error().describe().rfind("quitter: ", 0) == 0);
    CHECK(written.error().message.find("the program exited with status 5 before") != std::string::npos);
    CHECK_FALSE(sigpipe_pending());
  }

  // A small request fits the pipe: the end of the child's output is what
  // fails the exchange, and the error says how the child ended.
  child_process child = spawn_or_fail({"sh", "-c", "read line; exit 5"});
  std::string received;
  auto answered = child.exchange("ping\n", received, until_size(1));
  REQUIRE_FALSE(answered.has_value());
  CHECK(answered.error().message.find("exited with status 5") != std::string::npos);
  CHECK_FALSE(child.running());
}

TEST_CASE("child_process: a child that never reads fails with a timeout naming it") {
  child_process sleeper = spawn_or_fail({"sleep", "30"}, spawn_options{std::chrono::milliseconds(200), {}});
  const pid_t pid = sleeper.pid();
  const std::string data(std::size_t{1} << 20, 'x');
  std::string received;
  auto written = sleeper.write_all(data, received);
  REQUIRE_FALSE(written.has_value());
  CHECK(written.error().code == errc::io_error);
  CHECK(written.error().path == "sleep");
  CHECK(written.error().message.find("timeout") != std::string::npos);
  CHECK(written.error().message.find("200 ms") != std::string::npos);

  // A child that does not exit when its stdin closes is killed by wait().
  auto status = sleeper.wait();
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message.find("killed") != std::string::npos);
  CHECK_FALSE(process_exists(pid));
}

TEST_CASE("child_process: the destructor kills and reaps a running child") {
  pid_t pid = -1;
  {
    child_process sleeper = spawn_or_fail({"sleep", "30"});
    pid = sleeper.pid();
    CHECK(process_exists(pid));
    child_process moved = std::move(sleeper);
    CHECK_FALSE(sleeper.running());  // NOLINT: checking the moved-from state on purpose
    CHECK(moved.pid() == pid);
  }
  CHECK_FALSE(process_exists(pid));
}

TEST_CASE("child_process: programs that cannot be started") {
  struct start_case {
    std::vector<std::string> argv;
    errc code;
    int sys_errno;
  };
  const std::vector<start_case> cases = {
      {{"/nonexistent/agentctx-program"}, errc::io_error, ENOENT},
      {{"agentctx-no-such-program-on-path"}, errc::io_error, ENOENT},
      {{"/"}, errc::io_error, EACCES},
      {{}, errc::invalid_argument, 0},
  };
  for (const start_case& c : cases) {
    CAPTURE(c.argv.empty() ? std::string() : c.argv[0]);
    auto child = child_process::spawn(c.argv);
    REQUIRE_FALSE(child.has_value());
    CHECK(child.error().code == c.code);
    CHECK(child.error().sys_errno == c.sys_errno);
    if (!c.argv.empty()) {
      CHECK(child.error().path == c.argv[0]);
      CHECK(child.error().message.find("cannot start program") != std::string::npos);
    }
  }
}

TEST_CASE("child_process: exit codes as a shell reports them") {
  struct status_case {
    const char* script;
    int exit_code;
  };
  const status_case cases[] = {{"exit 0", 0}, {"exit 7", 7}, {"cat > /dev/null; exit 42", 42}, {"kill -9 $$", 137}};
  for (const status_case& c : cases) {
    CAPTURE(c.script);
    child_process child = spawn_or_fail({"sh", "-c", c.script});
    auto status = child.wait();
    REQUIRE(status.has_value());
    CHECK(*status == c.exit_code);
  }
  CHECK(agentctx::io::describe_exit_code(3) == "exited with status 3");
  CHECK(agentctx::io::describe_exit_code(137) == "was killed by signal 9");
  CHECK(agentctx::io::describe_exit_code(127) == "exited with status 127 (command not found)");
}

TEST_CASE("child_process: a handler's error stops the exchange and is returned") {
  child_process cat = spawn_or_fail({"cat"});
  std::string received;
  auto answered = cat.exchange("oops\n", received, [](std::string& buffer) -> result<bool> {
    if (buffer.find("oops") != std::string::npos) return agentctx::fail(errc::invalid_value, "saw oops");
    return false;
  });
  REQUIRE_FALSE(answered.has_value());
  CHECK(answered.error().code == errc::invalid_value);
  CHECK(answered.error().message == "saw oops");

  // stdin closed: only reading is still possible.
  cat.close_stdin();
  auto refused = cat.exchange("more\n", received, until_size(1));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("stdin is already closed") != std::string::npos);
}

}  // namespace io_subprocess_test
