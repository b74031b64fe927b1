// The one-pass text canonicalizer (json/detail/canonical_text.hpp, behind
// json::canonicalizer::canonicalize): every shortcut it takes is checked
// against the tree path (canonicalizer::parse, which reads with simdjson, then
// serialize), which shares none of its parsing code: members already in order,
// sorting networks of every size and the large-object sort, names whose
// prefixes tie, names with escapes, numbers written from their own digits, the
// output buffer swapped and reused, texts too short for block loads, and the
// byte offsets its errors carry.
#include "agentctx/json/canonical.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "agentctx/core/utf8.hpp"
#include "agentctx/json/detail/canonical_text.hpp"
#include "support/result_checks.hpp"

namespace json_canonical_text_test {

using agentctx::errc;
using agentctx::json::canonical_form;
using agentctx::json::canonicalizer;
namespace json = agentctx::json;

namespace {

// canonicalize(text) in `form`, checked against serialize(parse(text)).
std::string both_paths(canonicalizer& c, const std::string& text, canonical_form form) {
  auto tree = c.parse(text);
  REQUIRE_MESSAGE(tree.has_value(), test_support::error_text(tree));
  auto serialized = c.serialize(*tree, form);
  REQUIRE_MESSAGE(serialized.has_value(), test_support::error_text(serialized));
  const std::string expected(*serialized);
  auto direct = c.canonicalize(text, form);
  REQUIRE_MESSAGE(direct.has_value(), test_support::error_text(direct));
  CHECK(*direct == expected);
  return std::string(*direct);
}

// The message of canonicalize(text)'s refusal; fails the test if it succeeds.
std::string refusal(canonicalizer& c, const std::string& text) {
  auto out = c.canonicalize(text);
  REQUIRE_FALSE(out.has_value());
  return out.error().message;
}

std::string name_of(std::size_t i) { return "member_" + std::to_string(i * 7919 % 1000); }

// An object of `count` members whose names are shuffled by `rng`, some
// values nested objects, some null.
std::string shuffled_object(std::size_t count, std::mt19937_64& rng, int depth = 0) {
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::string text = "{";
  for (std::size_t i = 0; i < count; ++i) {
    if (i != 0) text += rng() % 2 ? ", " : ",\n    ";
    text += '"' + name_of(order[i]) + "\": ";
    switch (rng() % 6) {
      case 0: text += "null"; break;
      case 1: text += depth < 2 ? shuffled_object(rng() % 5, rng, depth + 1) : "[]"; break;
      case 2: text += std::to_string(rng() % 100000); break;
      default: text += "\"value " + std::to_string(order[i]) + "\"";
    }
  }
  return text + "}";
}

}  // namespace

TEST_CASE("objects of every size are put in order as the tree path orders them") {
  canonicalizer c;
  std::mt19937_64 rng(20261125);
  // 0..40 members: every sorting network (2, 4, 8, 16, 32 keys) and the
  // general sort above 32; then sizes whose index needs more than 8 and 16 bits.
  std::vector<std::size_t> sizes;
  for (std::size_t n = 0; n <= 40; ++n) sizes.push_back(n);
  sizes.push_back(257);
  sizes.push_back(1000);
  for (const std::size_t n : sizes) {
    CAPTURE(n);
    for (int trial = 0; trial < 3; ++trial) {
      const std::string text = shuffled_object(n, rng);
      for (const canonical_form form : {canonical_form::relay, canonical_form::jcs}) both_paths(c, text, form);
    }
  }
}

TEST_CASE("names that share their first bytes are ordered by the whole name") {
  canonicalizer c;
  // Names equal in 8 bytes or more, names one a prefix of another, a NUL
  // inside a name, names whose 8th bytes differ only in their low bits
  // (which the sort key gives to the member's index).
  const std::string text = R"({"package_type":1,"package_id":2,"package_":3,"package":4,"created_by":5,)"
                           R"("created_at":6,"tokens_out":7,"tokens_in":8,"tokens_i":9,"a\u0000b":10,"a":11,)"
                           R"("abcdefghijklmnopqrstuvwxyz1":12,"abcdefghijklmnopqrstuvwxyz0":13})";
  CHECK(both_paths(c, text, canonical_form::relay) ==
        R"({"a":11,"a\u0000b":10,"abcdefghijklmnopqrstuvwxyz0":13,"abcdefghijklmnopqrstuvwxyz1":12,)"
        R"("created_at":6,"created_by":5,"package":4,"package_":3,"package_id":2,"package_type":1,)"
        R"("tokens_i":9,"tokens_in":8,"tokens_out":7})");
  both_paths(c, text, canonical_form::jcs);
}

TEST_CASE("many names that share their first bytes are sorted in O(n log n), in order") {
  // One long run of equal sort-key prefixes (and, with 20,000 members, the
  // index takes 15 bits of the key): ordered by whole names, as the tree path
  // orders them, without the quadratic insertion sort a run this long would
  // cost (seconds, found by review).
  canonicalizer c;
  std::mt19937_64 rng(42);
  for (const std::size_t count : {std::size_t{40}, std::size_t{20'000}}) {
    CAPTURE(count);
    std::vector<std::size_t> order(count);
    for (std::size_t i = 0; i < count; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::string text = "{";
    for (std::size_t i = 0; i < count; ++i) {
      if (i != 0) text += ',';
      text += "\"field_" + std::to_string(order[i]) + "\":" + std::to_string(i % 7);
    }
    text += "}";
    for (const canonical_form form : {canonical_form::relay, canonical_form::jcs}) both_paths(c, text, form);
    // The same names in reverse, with one name twice.
    std::string twice = "{\"field_7\":0";
    for (std::size_t i = count; i-- > 0;) twice += ",\"field_" + std::to_string(i) + "\":1";
    twice += "}";
    CHECK(refusal(c, twice) == "duplicate member name \"field_7\"");
  }
}

TEST_CASE("names with escapes are ordered by their decoded bytes") {
  canonicalizer c;
  // '"' (0x22) sorts between '!' and '#', though its canonical text starts
  // with '\\' (0x5C); a \u escape of a plain letter is that letter.
  CHECK(both_paths(c, R"({"a#":3,"a\"":2,"a!":1,"\u0062":4})", canonical_form::relay) ==
        R"({"a!":1,"a\"":2,"a#":3,"b":4})");
  // Decoded names that tie with plain ones are duplicates.
  CHECK(refusal(c, R"({"ab":1,"a\u0062":2})") == "duplicate member name \"ab\" (in the object that closes here)");
  CHECK(refusal(c, R"({"a\u0062":1,"ab":2})") == "duplicate member name \"ab\"");
  // Supplementary characters against U+E000..U+FFFF: the forms disagree.
  const std::string text = R"({"\uffff":1,"\ud83d\ude00":2,"\ue000x":3})";
  CHECK(both_paths(c, text, canonical_form::relay) == "{\"\xEE\x80\x80x\":3,\"\xEF\xBF\xBF\":1,\"\xF0\x9F\x98\x80\":2}");
  CHECK(both_paths(c, text, canonical_form::jcs) == "{\"\xF0\x9F\x98\x80\":2,\"\xEE\x80\x80x\":3,\"\xEF\xBF\xBF\":1}");
}

TEST_CASE("text already canonical comes back unchanged, and null members are taken back") {
  canonicalizer c;
  const std::string canonical = R"({"a":[1,{"b":"c","d":{}}],"e":"f\n","g":true})";
  CHECK(both_paths(c, canonical, canonical_form::relay) == canonical);
  CHECK(both_paths(c, R"({"a":null,"b":1,"c":null})", canonical_form::relay) == R"({"b":1})");
  CHECK(both_paths(c, R"({"a":null,"b":1,"c":null})", canonical_form::jcs) == R"({"a":null,"b":1,"c":null})");
  CHECK(both_paths(c, R"({"c":null,"a":null})", canonical_form::relay) == "{}");
  CHECK(both_paths(c, R"({"z":{"y":null,"x":[null]},"a":null})", canonical_form::relay) == R"({"z":{"x":[null]}})");
}

TEST_CASE("numbers: their own digits when 15 or fewer, the shortest round trip otherwise") {
  canonicalizer c;
  struct sample {
    const char* text;
    const char* canonical;
  };
  const sample samples[] = {
      {"0.30", "0.3"},
      {"-0.000", "0"},
      {"0e-99999", "0"},
      {"1.50e3", "1500"},
      {"2.50", "2.5"},
      {"1.5e-3", "0.0015"},
      {"0.0000001", "1e-7"},
      {"0.000001", "0.000001"},
      {"1.0e21", "1e+21"},
      {"999999999999999e6", "999999999999999000000"},
      {"123456789012345.0", "123456789012345"},
      {"123456789012345", "123456789012345"},
      {"1234567890123456", "1234567890123456"},
      {"12345678901234567", "12345678901234568"},
      {"0.1234567890123456789", "0.12345678901234568"},
      {"1e-299", "1e-299"},
      {"1e-300", "1e-300"},
      {"4.9e-324", "5e-324"},
      {"2.4e-324", "0"},
      {"1.7976931348623157e308", "1.7976931348623157e+308"},
      {"-12.5E+1", "-125"},
      {"100000000000000000000", "100000000000000000000"},
      {"1E400", ""},
  };
  for (const sample& s : samples) {
    CAPTURE(s.text);
    const std::string text = std::string("[") + s.text + "]";
    auto out = c.canonicalize(text);
    if (*s.canonical == '\0') {
      REQUIRE_FALSE(out.has_value());
      CHECK(out.error().message.find("beyond the range") != std::string::npos);
      continue;
    }
    REQUIRE_MESSAGE(out.has_value(), test_support::error_text(out));
    CHECK(*out == std::string("[") + s.canonical + "]");
    both_paths(c, text, canonical_form::relay);
  }
  // Numbers of more than a million digits: whether one is too large (an
  // error) or too small (zero) is not decided by a capped exponent (found by
  // review: 10^99999 came out as 0).
  const std::string huge = "[0." + std::string(1'500'000, '0') + "1e1600000]";
  auto too_large = c.canonicalize(huge);
  REQUIRE_FALSE(too_large.has_value());
  CHECK(too_large.error().message.find("beyond the range") != std::string::npos);
  const std::string tiny = "[1" + std::string(1'000'001, '0') + "e-1001100]";
  auto too_small = c.canonicalize(tiny);
  REQUIRE_MESSAGE(too_small.has_value(), test_support::error_text(too_small));
  CHECK(*too_small == "[0]");
  // Every short decimal agrees with the tree path, which goes through
  // simdjson's number parser and the shortest-digits search.
  std::mt19937_64 rng(7);
  std::string many = "[";
  for (int i = 0; i < 2000; ++i) {
    if (i != 0) many += ',';
    if (rng() % 2) many += '-';
    many += std::to_string(rng() % 1000000);
    if (rng() % 2) many += "." + std::to_string(rng() % 100000000);
    if (rng() % 3 == 0) many += "e" + std::to_string(static_cast<int>(rng() % 600) - 300);
  }
  many += "]";
  both_paths(c, many, canonical_form::relay);
}

TEST_CASE("runs of digits of every length, measured by blocks or byte by byte") {
  // Digit runs are measured sixteen bytes at a time where sixteen bytes
  // remain: runs of 1..40 digits in the integer part and in the fraction,
  // followed by every byte that may end a number, with the text ending right
  // after the number or sixteen bytes and more later.
  canonicalizer c;
  for (std::size_t length = 1; length <= 40; ++length) {
    std::string digits;
    for (std::size_t i = 0; i < length; ++i) digits += static_cast<char>('1' + i % 9);
    for (const std::string& number : {digits, "-" + digits, "0." + digits, digits + "." + digits,
                                      digits + "e-7", "-" + digits + "." + digits + "E+2"}) {
      for (const char* after : {"]", " ]", "\n]", "\t]", ",0]", "]" "                  "}) {
        const std::string text = "[" + number + after;
        CAPTURE(text);
        both_paths(c, text, canonical_form::relay);
      }
    }
    // What may not follow a number, at every distance from the end.
    for (const char* bad : {"x]", ".]", ".e1]", "e]", "\xC3\xA9]", "0]"}) {
      const std::string text = "[" + (length > 1 ? "1" + digits.substr(1) : std::string("0")) + bad +
                               std::string(length % 20, ' ');
      CAPTURE(text);
      if (std::string(bad) == "0]" && length > 1) continue;  // "1230" is a number
      CHECK_FALSE(c.canonicalize(text).has_value());
    }
  }
}

TEST_CASE("the sorting networks sort every count of keys from 2 to 32") {
  // By the 0-1 principle a comparator network sorts every input when it
  // sorts every input of zeros and ones: all of them up to 20 keys; above,
  // random keys with many ties.
  std::uint64_t keys[32];
  for (std::size_t count = 2; count <= 32; ++count) {
    CAPTURE(count);
    if (count <= 20) {
      std::uint64_t unsorted = 0;
      for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << count); ++bits) {
        for (std::size_t i = 0; i < count; ++i) keys[i] = (bits >> i) & 1;
        json::detail::sort_small(keys, count);
        unsorted += std::is_sorted(keys, keys + count) ? 0 : 1;
      }
      CHECK(unsorted == 0);
    }
    std::mt19937_64 rng(count);
    for (int trial = 0; trial < 2000; ++trial) {
      std::vector<std::uint64_t> expected(count);
      for (std::size_t i = 0; i < count; ++i) expected[i] = keys[i] = trial % 2 ? rng() : rng() % 4 << 62;
      json::detail::sort_small(keys, count);
      std::sort(expected.begin(), expected.end());
      REQUIRE(std::equal(expected.begin(), expected.end(), keys));
    }
  }
}

TEST_CASE("white space of every kind and length, and texts too short for block loads") {
  canonicalizer c;
  const std::string spaces(40, ' ');
  const std::string texts[] = {
      "1", " 1 ", "\"\"", "\"a\"", "[]", "{}", "{\"a\":1}", "[1,2]", "true", "null",
      "\r\n\t {\r\n\t \"b\"\r\n:\t[ 1 ,\n2 ]\r\n,\"a\" : \"x\" }\r\n\t ",
      spaces + "{" + spaces + "\"b\"" + spaces + ":" + spaces + "1" + spaces + "," + spaces + "\"a\":2" + spaces + "}" + spaces,
      "{\n  \"b\": 1,\n  \"a\": {\n    \"d\": [\n      true\n    ],\n    \"c\": \"x\"\n  }\n}\n",
  };
  for (const std::string& text : texts) {
    CAPTURE(text);
    for (const canonical_form form : {canonical_form::relay, canonical_form::jcs}) both_paths(c, text, form);
  }
  // A string of every length up to past two blocks, at the end of the text
  // and inside it, with an escape and a non-ASCII character at every place.
  for (std::size_t n = 0; n < 40; ++n) {
    for (std::size_t at = 0; at <= n; ++at) {
      std::string body(n, 'x');
      std::string escaped = body;
      escaped.insert(at, "\\n");
      std::string accented = body;
      accented.insert(at, "\xC3\xA9");
      for (const std::string& s : {body, escaped, accented}) {
        both_paths(c, '"' + s + '"', canonical_form::relay);
        both_paths(c, "{\"" + s + "\":\"" + s + "\",\"a\":0}", canonical_form::relay);
      }
    }
  }
}

TEST_CASE("one canonicalizer reused: the output buffer swapped by a reordered root object stays correct") {
  canonicalizer c;
  const std::string docs[] = {R"({"b":1,"a":2})", "[3,2,1]", R"({"y":{"b":1,"a":2},"x":0})", "\"s\"",
                              R"({"a":1,"b":2})", std::string(5000, ' ') + R"({"d":1,"c":")" + std::string(3000, 'z') + "\"}"};
  for (int round = 0; round < 3; ++round) {
    for (const std::string& doc : docs) {
      canonicalizer fresh;
      auto once = fresh.canonicalize(doc);
      REQUIRE(once.has_value());
      auto reused = c.canonicalize(doc);
      REQUIRE(reused.has_value());
      CHECK(*reused == *once);
    }
  }
}

TEST_CASE("a canonicalizer's own last result can be canonicalized again") {
  canonicalizer c;
  const std::string docs[] = {R"({"b":[1e20,{"d":1,"c":2}],"a":"x"})", R"([{"b":1,"a":2},3])",
                              "{\"z\":\"" + std::string(5000, 'q') + "\",\"y\":1e20}"};
  for (const std::string& doc : docs) {
    for (const canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
      auto once = c.canonicalize(doc, form);
      REQUIRE(once.has_value());
      const std::string expected(*once);
      auto again = c.canonicalize(*once, form);  // the input is the buffer this call writes
      REQUIRE(again.has_value());
      CHECK(*again == expected);
    }
  }
}

TEST_CASE("errors of the text path name the problem and the byte where it is") {
  struct bad {
    const char* text;
    errc code;
    std::uint64_t offset;
    const char* words;
  };
  const bad cases[] = {
      {"[1, 2", errc::invalid_value, 5, "not closed"},
      {"{\"a\" 1}", errc::invalid_value, 5, "expected ':'"},
      {"{\"a\":1 \"b\":2}", errc::invalid_value, 7, "expected ',' or '}'"},
      {"{1:2}", errc::invalid_value, 1, "member name"},
      {"[1 2]", errc::invalid_value, 3, "expected ',' or ']'"},
      {"[tru]", errc::invalid_value, 1, "expected a value"},
      {"[\"a\\x\"]", errc::invalid_value, 3, "bad escape"},
      {"[\"\\u12\"]", errc::invalid_value, 2, "four hex digits"},
      {"[\"ok\", \"\\udc00\"]", errc::invalid_value, 8, "lone surrogate (\\udc00 is not preceded by a high"},
      {"[\"\\uD83Dx\"]", errc::invalid_value, 2, "lone surrogate (\\ud83d is not followed by a low"},
      {"[\"\\udbff\\u0041\"]", errc::invalid_value, 2, "lone surrogate (\\udbff is not followed"},
      {"[\"a\tb\"]", errc::invalid_value, 3, "control character"},
      {"[-]", errc::invalid_value, 1, "number is malformed"},
      {"[1.]", errc::invalid_value, 1, "no digit after the point"},
      {"[1e+]", errc::invalid_value, 1, "no digit in the exponent"},
      {"[012]", errc::invalid_value, 1, "leading zero"},
      {"[1, 1e999]", errc::invalid_value, 4, "beyond the range"},
      {"{} {}", errc::invalid_value, 3, "more text after the value"},
      {"\"abc", errc::invalid_value, 0, "not closed"},
      {"[\"x\", \"\xC3\"]", errc::invalid_utf8, 7, "UTF-8"},
      {"[1, \xFF]", errc::invalid_utf8, 4, "UTF-8"},  // not JSON either: UTF-8 is reported first
      // A name twice: its second use; when that has escapes, the object's end.
      {"{\"a\":1,\n \"b\":2, \"a\":3}", errc::invalid_value, 16, "duplicate member name \"a\""},
      {"[{\"b\":{\"a\":1,\"a\":2}}]", errc::invalid_value, 13, "duplicate member name \"a\""},
      {"{\"a\":1,\"\\u0061\":2} ", errc::invalid_value, 17, "(in the object that closes here)"},
  };
  canonicalizer c;
  for (const bad& b : cases) {
    CAPTURE(b.text);
    auto out = c.canonicalize(b.text);
    REQUIRE_FALSE(out.has_value());
    CHECK(out.error().code == b.code);
    CHECK(out.error().offset == b.offset);
    CHECK(out.error().message.find(b.words) != std::string::npos);
    CHECK_FALSE(c.parse(b.text).has_value());
  }
  CHECK(refusal(c, "   ").find("only white space") != std::string::npos);
  // A duplicate found by the sort, in a large object and behind a tie.
  std::string large = "{";
  for (int i = 0; i < 100; ++i) large += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  large += "\"k42\":0}";
  CHECK(refusal(c, large) == "duplicate member name \"k42\"");
  CHECK(refusal(c, R"({"package_id":1,"package_type":2,"package_id":3})") ==
        "duplicate member name \"package_id\"");
  // The byte named is the second use of the first name used again, in the
  // text's order, whatever order the sort meets the copies in: a long run
  // of names sharing their first bytes (sorted by std::sort, which keeps no
  // order among equals), a name five times, shuffled.
  std::mt19937 shuffle(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> names;
    for (int i = 0; i < 40; ++i) names.push_back("samepref" + std::to_string(1000 + i));
    for (int copy = 0; copy < 5; ++copy) names.push_back("samepref1007");
    std::shuffle(names.begin(), names.end(), shuffle);
    std::string text = "{";
    for (const std::string& name : names) text += (text.size() > 1 ? ",\"" : "\"") + name + "\":0";
    text += "}";
    const std::size_t first = text.find("\"samepref1007\"");
    auto out = c.canonicalize(text);
    REQUIRE_FALSE(out.has_value());
    CHECK(out.error().offset == text.find("\"samepref1007\"", first + 1));
  }
  // Two names used again: the one used again first.
  auto two = c.canonicalize(R"({"b":1,"a":1,"b":2,"a":2})");
  REQUIRE_FALSE(two.has_value());
  CHECK(two.error().offset == 13);
  CHECK(two.error().message == "duplicate member name \"b\"");
}

}  // namespace json_canonical_text_test
