// Integers beyond 64 bits in JSON text read with simdjson.
//
// simdjson's DOM parser refuses an integer that does not fit 64 bits
// (NUMBER_ERROR), where JSON.parse, RFC 8785 and the relay protocol read the
// nearest double. parse_widening_long_integers() parses the text as it is
// and, only when simdjson refuses a number, parses a copy in which every
// plain integer beyond 64 bits is followed by ".0": the same value as the
// nearest double, which simdjson reads (those within 64 bits are untouched).
// One definition serves every reader of untrusted JSON built on simdjson's
// DOM (json::canonicalizer's trees, the MCP server's JSON-RPC lines).
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace agentctx::json {

namespace detail {

// True when the digits of a plain integer (no sign, no leading zero) with
// the sign `negative` are beyond what simdjson reads as an integer: below
// -2^63 or above 2^64 - 1.
inline bool beyond_64_bits(std::string_view digits, bool negative) {
  const std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
  if (digits.size() != limit.size()) return digits.size() > limit.size();
  return digits > limit;
}

// A copy of `text` in which every integer beyond 64 bits (outside strings)
// is followed by ".0", so that simdjson, which refuses such integers, reads
// it as the nearest double as JSON.parse does. Integers within 64 bits stay
// as written (a JSON-RPC id among them is still an integer).
inline std::string widen_long_integers(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {  // copy the string, escapes included
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      // The whole number: integer digits, then a fraction and an exponent
      // if present; only a plain integer is widened.
      const auto digits_from = [&](std::size_t j) {
        while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
        return j;
      };
      const std::size_t integer_start = i + (c == '-' ? 1 : 0);
      std::size_t j = digits_from(integer_start);
      const std::size_t integer_digits = j - integer_start;
      bool plain_integer = true;
      if (j < text.size() && text[j] == '.') {
        plain_integer = false;
        j = digits_from(j + 1);
      }
      if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
        plain_integer = false;
        ++j;
        if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
        j = digits_from(j);
      }
      out.append(text.substr(i, j - i));
      if (plain_integer && beyond_64_bits(text.substr(integer_start, integer_digits), c == '-')) out.append(".0");
      i = std::max(j, i + 1);
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

}  // namespace detail

/// Parses `text` with `parser` into `root`, reading integers beyond 64 bits
/// as the nearest double. `widened` holds the widened copy when one was
/// needed: `root` points into it (or into `parser`), so both must outlive
/// the use of `root`. Returns simdjson's code.
inline simdjson::error_code parse_widening_long_integers(simdjson::dom::parser& parser, std::string_view text,
                                                         std::string& widened, simdjson::dom::element& root) {
  auto code = parser.parse(text.data(), text.size()).get(root);
  if (code == simdjson::NUMBER_ERROR) {
    widened = detail::widen_long_integers(text);
    code = parser.parse(widened.data(), widened.size()).get(root);
  }
  return code;
}

}  // namespace agentctx::json
