// Helpers for the end-to-end tests of the command-line tools: run the real
// binary without a shell (arguments reach it verbatim), capture its standard
// output, standard error and exit code separately, and read and write files.
#pragma once

#include "support/disk_files.hpp"
#include "support/fixture_paths.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <simdjson.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cli_test {

/// What a finished process left behind. `exit_code` is 128 + N when the
/// process was killed by signal N (as a shell reports it).
struct run_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

namespace detail {

// Reads both pipes until both reach end of file; polling them together keeps
// a child that fills one pipe while the parent waits on the other from
// deadlocking.
inline void drain(int out_fd, int err_fd, run_result& result) {
  std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      FAIL("poll failed");
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      } else {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      }
    }
  }
}

}  // namespace detail

/// Runs `program` with `arguments` in `working_directory` (the current one
/// when empty), with standard input from `input_file` (default /dev/null),
/// and waits for it.
inline run_result run(const std::string& program, const std::vector<std::string>& arguments,
                      const std::string& working_directory = {}, const std::string& input_file = "/dev/null") {
  // Everything the child needs is built before fork(): after it, the child
  // may only make async-signal-safe calls.
  std::vector<std::string> storage;
  storage.reserve(arguments.size() + 1);
  storage.push_back(program);
  storage.insert(storage.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  int err_pipe[2];
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int input_fd = ::open(input_file.c_str(), O_RDONLY);
    if (input_fd < 0 || ::dup2(input_fd, STDIN_FILENO) < 0 || ::dup2(out_pipe[1], STDOUT_FILENO) < 0 ||
        ::dup2(err_pipe[1], STDERR_FILENO) < 0) {
      ::_exit(126);
    }
    if (!working_directory.empty() && ::chdir(working_directory.c_str()) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  run_result result;
  detail::drain(out_pipe[0], err_pipe[0], result);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    REQUIRE(errno == EINTR);
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

#ifdef AGENTSDB_BIN
/// Runs the agentsdb binary this test suite was built with (tests/CMakeLists.txt
/// defines AGENTSDB_BIN when the CLI is part of the build).
inline run_result agentsdb(const std::vector<std::string>& arguments, const std::string& working_directory = {},
                           const std::string& input_file = "/dev/null") {
  return run(AGENTSDB_BIN, arguments, working_directory, input_file);
}
#endif

#ifdef CTXSTORE_BIN
/// Runs the ctxstore binary this test suite was built with (tests/CMakeLists.txt
/// defines CTXSTORE_BIN when the CLI is part of the build).
inline run_result ctxstore(const std::vector<std::string>& arguments, const std::string& working_directory = {},
                           const std::string& input_file = "/dev/null") {
  return run(CTXSTORE_BIN, arguments, working_directory, input_file);
}
#endif

using test_support::read_file;
using test_support::write_file;

/// The names of the entries directly in `directory`, sorted.
inline std::vector<std::string> list_directory(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// The path of a shared AGDB fixture, or nullopt (saying so) when the fixtures
/// are absent. $AGENTCTX_AGDB_FIXTURES overrides the configured folder.
inline std::optional<std::string> agdb_fixture(std::string_view name) {
  const std::string folder = test_support::agdb_fixture_dir();
  std::string path = folder + "/" + std::string(name);
  if (!std::filesystem::is_regular_file(path)) {
    MESSAGE("skipping: AGDB fixture not found at " << path);
    return std::nullopt;
  }
  return path;
}

// ---------------------------------------------------------------------------
// Output checks.

inline std::size_t line_count(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// The command failed with `exit_code`, printed nothing on stdout and exactly
/// one "<program>: ..." line on stderr that mentions `fragment`.
inline void check_error(const run_result& r, int exit_code, std::string_view fragment,
                        std::string_view program = "agentsdb") {
  INFO("stdout: " << r.out);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == exit_code);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(std::string(program) + ": ", 0) == 0);
  CHECK(line_count(r.err) == 1);
  CHECK(contains(r.err, fragment));
}

/// The arguments joined by spaces, for test messages.
inline std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

/// The command succeeded with nothing on stderr.
inline void check_clean_success(const run_result& r) {
  INFO("stdout: " << r.out);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
}

// ---------------------------------------------------------------------------
// JSON access (the parser owns the document: keep it alive while reading).

/// `text` parsed into `parser`; fails the test when it is not JSON.
inline simdjson::dom::element parse_json(simdjson::dom::parser& parser, const std::string& text) {
  simdjson::dom::element root;
  const simdjson::error_code error = parser.parse(text).get(root);
  INFO("output: " << text);
  REQUIRE_MESSAGE(error == simdjson::SUCCESS, simdjson::error_message(error));
  return root;
}

/// The JSON a successful command printed on stdout.
inline simdjson::dom::element parse_output(simdjson::dom::parser& parser, const run_result& r) {
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return parse_json(parser, r.out);
}

inline std::string text_of(simdjson::dom::element e, std::string_view key) {
  return std::string(e[key].get_string().value());
}
inline std::uint64_t number_of(simdjson::dom::element e, std::string_view key) { return e[key].get_uint64().value(); }
inline double real_of(simdjson::dom::element e, std::string_view key) { return e[key].get_double().value(); }
/// The array member `key` of `e`. Range-for over it through this named value:
/// iterating `e[key].get_array().value()` directly trips GCC 12's
/// -Wdangling-pointer inside simdjson.
inline simdjson::dom::array array_of(simdjson::dom::element e, std::string_view key) {
  simdjson::dom::array array;
  REQUIRE_MESSAGE(e[key].get(array) == simdjson::SUCCESS, "no array member " << key);
  return array;
}

}  // namespace cli_test
