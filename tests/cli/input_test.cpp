// Tests of cli/common/input.hpp: the one reader of a FILE argument ("-"
// being standard input) that every tool uses.
#include <doctest/doctest.h>

#include <string>

#include "agentctx/core/error.hpp"
#include "cli/cli_test_support.hpp"
#include "common/input.hpp"
#include "io/io_test_support.hpp"

namespace cli_input_test {

using agentctx::errc;

TEST_CASE("read_input reads a file, a character device and nothing else") {
  io_test::temporary_directory dir;
  const std::string file = dir.path() + "/note.md";
  cli_test::write_file(file, "two\nlines\n");
  auto text = agentctx_cli::read_input(file);
  REQUIRE(text.has_value());
  CHECK(*text == "two\nlines\n");

  auto empty = agentctx_cli::read_input("/dev/null");
  REQUIRE(empty.has_value());
  CHECK(empty->empty());

  auto missing = agentctx_cli::read_input(dir.path() + "/missing.md");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().describe() == dir.path() + "/missing.md: open failed: No such file or directory");

  auto folder = agentctx_cli::read_input(dir.path());
  REQUIRE_FALSE(folder.has_value());
  CHECK(folder.error().code == errc::io_error);
  CHECK(folder.error().describe() == dir.path() + ": read failed: Is a directory");

  CHECK(agentctx_cli::input_name("-") == "standard input");
  CHECK(agentctx_cli::input_name(file) == file);
}

TEST_CASE("read_input stops past its limit, so an endless input ends") {
  auto endless = agentctx_cli::read_input("/dev/zero", 100'000);
  REQUIRE_FALSE(endless.has_value());
  CHECK(endless.error().code == errc::invalid_argument);
  CHECK(endless.error().describe() == "/dev/zero: larger than 100000 bytes, the most it may hold");

  io_test::temporary_directory dir;
  const std::string file = dir.path() + "/exact";
  cli_test::write_file(file, std::string(100, 'x'));
  CHECK(agentctx_cli::read_input(file, 100).value() == std::string(100, 'x'));
  CHECK(agentctx_cli::read_input(file, 99).error().code == errc::invalid_argument);
}

}  // namespace cli_input_test
