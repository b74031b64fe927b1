// quote_for_message / escape_for_message: untrusted text in an error message
// is always one line of valid UTF-8, cut at a character boundary.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agentctx/core/quote.hpp"
#include "agentctx/core/utf8.hpp"

namespace core_quote_test {

using agentctx::escape_for_message;
using agentctx::quote_for_message;
using agentctx::quote_style;

TEST_CASE("quote_for_message: what is escaped, in both styles") {
  struct row {
    std::string input;
    std::string text;   // quote_style::text
    std::string ascii;  // quote_style::ascii
  };
  const std::vector<row> rows = {
      {"", "\"\"", "\"\""},
      {"plain name", "\"plain name\"", "\"plain name\""},
      {"say \"hi\" \\ bye", "\"say \\\"hi\\\" \\\\ bye\"", "\"say \\\"hi\\\" \\\\ bye\""},
      {"a\nb\r\tc", "\"a\\nb\\r\\tc\"", "\"a\\nb\\r\\tc\""},
      {std::string("a\0b", 3), "\"a\\x00b\"", "\"a\\x00b\""},
      {"\x1b[31mred\x7f", "\"\\x1b[31mred\\x7f\"", "\"\\x1b[31mred\\x7f\""},
      {"caf\xC3\xA9", "\"caf\xC3\xA9\"", "\"caf\\xc3\\xa9\""},                      // é
      {"\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\"", "\"\\xf0\\x9f\\x98\\x80\""},     // an astral character
      {"\xE2\x80\xAE" "evil", "\"\\u202eevil\"", "\"\\xe2\\x80\\xaeevil\""},        // RIGHT-TO-LEFT OVERRIDE
      {"a\xE2\x80\x8B" "b", "\"a\\u200bb\"", "\"a\\xe2\\x80\\x8bb\""},              // ZERO WIDTH SPACE
      {"\xEF\xBB\xBFx", "\"\\ufeffx\"", "\"\\xef\\xbb\\xbfx\""},                    // BOM
      {"\xC2\x85", "\"\\u0085\"", "\"\\xc2\\x85\""},                                // a C1 control
      {"caf\xC3", "\"caf\\xc3\"", "\"caf\\xc3\""},                                  // truncated sequence
      {"\xC0\xAF", "\"\\xc0\\xaf\"", "\"\\xc0\\xaf\""},                             // overlong '/'
      {"\xED\xA0\x80", "\"\\xed\\xa0\\x80\"", "\"\\xed\\xa0\\x80\""},               // a surrogate
      {"\xFF\xFE", "\"\\xff\\xfe\"", "\"\\xff\\xfe\""},
  };
  for (const row& r : rows) {
    CAPTURE(r.input);
    CHECK(quote_for_message(r.input) == r.text);
    CHECK(quote_for_message(r.input, 60, quote_style::ascii) == r.ascii);
    CHECK(agentctx::is_valid_utf8(quote_for_message(r.input)));
  }
}

TEST_CASE("quote_for_message: at most max_bytes of the input, cut between characters") {
  CHECK(quote_for_message(std::string(100, 'x')) == "\"" + std::string(60, 'x') + "...\"");
  CHECK(quote_for_message(std::string(60, 'x')) == "\"" + std::string(60, 'x') + "\"");
  CHECK(quote_for_message("abcdef", 3) == "\"abc...\"");
  CHECK(quote_for_message("abcdef", 0) == "\"...\"");
  // "é" is two bytes: with room for one, the cut comes before it.
  CHECK(quote_for_message("ab\xC3\xA9z", 3) == "\"ab...\"");
  CHECK(quote_for_message("ab\xC3\xA9z", 4) == "\"ab\xC3\xA9...\"");
  CHECK(escape_for_message("Thoughts\n", 80) == "Thoughts\\n");
  CHECK(escape_for_message(std::string(10, 'y'), 4) == "yyyy...");
}

TEST_CASE("printable_line and printable_text: quotes as they are, line breaks escaped or kept") {
  const std::string text = "say \"hi\" \\ now\nnext\tcol\r\x1b[2J\x07 \xE2\x80\xAE \xFF end";
  CHECK(agentctx::printable_line(text) == "say \"hi\" \\ now\\nnext\\tcol\\r\\x1b[2J\\x07 \\u202e \\xff end");
  CHECK(agentctx::printable_text(text) == "say \"hi\" \\ now\nnext\tcol\\r\\x1b[2J\\x07 \\u202e \\xff end");
  CHECK(agentctx::printable_text("") == "");
  CHECK(agentctx::printable_text("a\n\nb\n") == "a\n\nb\n");
  // A CRLF line end is kept; a carriage return elsewhere could overwrite a line.
  CHECK(agentctx::printable_text("a\r\nb\rc\r") == "a\r\nb\\rc\\r");
  CHECK(agentctx::printable_line("a\r\n") == "a\\r\\n");
  // A cut between CR and LF escapes the CR: it is no line end then.
  CHECK(agentctx::detail::escape_text("a\r\nb", 2, agentctx::quote_style::text, false, true) == "a\\r...");
  CHECK(agentctx::detail::escape_text("a\r\nb", 3, agentctx::quote_style::text, false, true) == "a\r\n...");
}

}  // namespace core_quote_test
