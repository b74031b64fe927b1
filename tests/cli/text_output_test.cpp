// Tests of the text-output helpers the CLIs share: agentctx_cli::shown
// (cli/common/command_support.hpp) and agentsdb's column and preview
// helpers (cli/agentsdb/output.hpp).
#include <doctest/doctest.h>

#include <string>

#include "agentctx/core/utf8.hpp"
#include "agentsdb/output.hpp"
#include "common/command_support.hpp"

namespace cli_text_output_test {

TEST_CASE("shown escapes a name whole, never cut") {
  CHECK(agentctx_cli::shown("plain.db") == "plain.db");
  CHECK(agentctx_cli::shown("o\x1b[31m\"q\"\\.db") == "o\\x1b[31m\\\"q\\\"\\\\.db");
  CHECK(agentctx_cli::shown(std::string(200, 'a')).size() == 200);
}

TEST_CASE("fit_column cuts to the width at a character, with the dots inside it") {
  CHECK(agentsdb::fit_column("short", 16) == "short");
  CHECK(agentsdb::fit_column("exactly-16-bytes", 16) == "exactly-16-bytes");
  CHECK(agentsdb::fit_column("seventeen-bytes-x", 16) == "seventeen-byt...");
  // A cut inside a character moves before it: never invalid UTF-8, never wider.
  const std::string accents = "d\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";  // 17 bytes
  for (std::size_t width = 0; width <= 20; ++width) {
    CAPTURE(width);
    const std::string cut = agentsdb::fit_column(accents, width);
    CHECK(cut.size() <= width);
    CHECK(agentctx::is_valid_utf8(cut));
  }
  CHECK(agentsdb::fit_column(accents, 16) == "d\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9...");
  CHECK(agentsdb::fit_column("abcdef", 2) == "ab");  // no room for the dots
}

TEST_CASE("preview is one line: breaks and tabs as spaces, other control characters escaped") {
  CHECK(agentsdb::preview("a\nb\tc\rd\x1b[2J \"q\"", 60) == "a b c d\\x1b[2J \"q\"");
  CHECK(agentsdb::preview("abcdef", 3) == "abc...");
}

}  // namespace cli_text_output_test
