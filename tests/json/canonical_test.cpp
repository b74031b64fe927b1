// Canonical JSON (json/canonical.hpp): number formatting, member order in both
// forms, escapes, and every input RFC 8785 refuses. The differential tests
// against node's `canonicalize` and String(x) are canonical_node_driver.cpp
// with node/canonical_diff.mjs (ctest: json_canonical_node_documents, _numbers).
#include "agentctx/json/canonical.hpp"

#include "support/random.hpp"
#include "support/result_checks.hpp"

#include <doctest/doctest.h>
#include <pthread.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace json_canonical_test {

using agentctx::errc;
using agentctx::json::canonical_form;
using agentctx::json::canonicalizer;
namespace json = agentctx::json;

namespace {

std::string es(double number) {
  std::string out;
  json::append_es_number(out, number);
  return out;
}

std::string canonical(std::string_view text, canonical_form form = canonical_form::relay) {
  auto out = json::canonicalize(text, form);
  REQUIRE_MESSAGE(out.has_value(), test_support::error_text(out));
  return *out;
}

}  // namespace

TEST_CASE("numbers are written as ECMAScript's Number::toString writes them (RFC 8785 appendix B)") {
  struct sample {
    std::uint64_t bits;
    const char* text;
  };
  const sample samples[] = {
      {0x0000000000000000, "0"},
      {0x8000000000000000, "0"},
      {0x0000000000000001, "5e-324"},
      {0x8000000000000001, "-5e-324"},
      {0x7fefffffffffffff, "1.7976931348623157e+308"},
      {0xffefffffffffffff, "-1.7976931348623157e+308"},
      {0x4340000000000000, "9007199254740992"},
      {0xc340000000000000, "-9007199254740992"},
      {0x4430000000000000, "295147905179352830000"},
      {0x44b52d02c7e14af5, "9.999999999999997e+22"},
      {0x44b52d02c7e14af6, "1e+23"},
      {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
      {0x444b1ae4d6e2ef4e, "999999999999999700000"},
      {0x444b1ae4d6e2ef4f, "999999999999999900000"},
      {0x444b1ae4d6e2ef50, "1e+21"},
      {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
      {0x3eb0c6f7a0b5ed8d, "0.000001"},
      {0x41b3de4355555553, "333333333.3333332"},
      {0x41b3de4355555554, "333333333.33333325"},
      {0x41b3de4355555555, "333333333.3333333"},
      {0x41b3de4355555556, "333333333.3333334"},
      {0x41b3de4355555557, "333333333.33333343"},
      {0xbecbf647612f3696, "-0.0000033333333333333333"},
      {0x43143ff3c1cb0959, "1424953923781206.2"},
  };
  for (const sample& s : samples) {
    CAPTURE(s.text);
    CHECK(es(std::bit_cast<double>(s.bits)) == s.text);
  }
  CHECK(es(0.1) == "0.1");
  CHECK(es(1e-6) == "0.000001");
  CHECK(es(1e-7) == "1e-7");
  CHECK(es(1.5e-7) == "1.5e-7");
  CHECK(es(1e20) == "100000000000000000000");
  CHECK(es(1e21) == "1e+21");
  CHECK(es(-1e21) == "-1e+21");
  CHECK(es(123.456) == "123.456");
  CHECK(es(-42) == "-42");
  CHECK(es(0.000123) == "0.000123");
}

TEST_CASE("number text in any spelling canonicalizes to the same form") {
  CHECK(canonical("[1.0, 1E2, 1e-7, -0, -0.0, 0.1e1, 100e-2, 18446744073709551616, -12345678901234567890123]") ==
        "[1,100,1e-7,0,0,1,1,18446744073709552000,-1.2345678901234568e+22]");
  // Long fractions and exponents next to a long integer (found by the fuzzer).
  CHECK(canonical("[18446744073709551616,0.1234567890123456789]") == "[18446744073709552000,0.12345678901234568]");
  CHECK(canonical("[18446744073709551616,1e0000000000000000001]") == "[18446744073709552000,10]");
  CHECK(canonical("[18446744073709551616,-1.5E+0000000000000000002]") == "[18446744073709552000,-150]");
  CHECK(canonical(canonical("[1e20,0.0000017972345678901235]")) == "[100000000000000000000,0.0000017972345678901235]");
  CHECK(canonical("9007199254740993") == "9007199254740992");  // nearest double, as JSON.parse reads it
  CHECK(canonical("1e-400") == "0");                           // underflow to zero, as in JavaScript
  CHECK(canonical(R"({"n":123456789012345678901234567890})") == R"({"n":1.2345678901234568e+29})");
  CHECK(canonical(R"(["12345678901234567890123", 12345678901234567890123])") ==
        R"(["12345678901234567890123",1.2345678901234568e+22])");  // strings stay strings
}

TEST_CASE("members sort by UTF-8 bytes in the relay form and by UTF-16 code units in RFC 8785") {
  // The RFC 8785 section 3.2.3 example.
  const char* text = R"({"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",)"
                     R"("1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"})";
  CHECK(canonical(text, canonical_form::jcs) ==
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xC2\x80\":\"Control\",\"\xC3\xB6\":\"Latin Small Letter O With "
        "Diaeresis\",\"\xE2\x82\xAC\":\"Euro Sign\",\"\xF0\x9F\x98\x80\":\"Emoji: Grinning Face\",\"\xEF\xAC\xB3\":"
        "\"Hebrew Letter Dalet With Dagesh\"}");
  CHECK(canonical(text, canonical_form::relay) ==
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xC2\x80\":\"Control\",\"\xC3\xB6\":\"Latin Small Letter O With "
        "Diaeresis\",\"\xE2\x82\xAC\":\"Euro Sign\",\"\xEF\xAC\xB3\":\"Hebrew Letter Dalet With Dagesh\",\"\xF0\x9F\x98"
        "\x80\":\"Emoji: Grinning Face\"}");
  CHECK(json::name_less("a", "ab", canonical_form::jcs));
  CHECK_FALSE(json::name_less("ab", "a", canonical_form::jcs));
  CHECK_FALSE(json::name_less("a", "a", canonical_form::jcs));
  CHECK(json::name_less("\xF0\x9F\x98\x80", "\xEF\xBF\xBD", canonical_form::jcs));
  CHECK(json::name_less("\xEF\xBF\xBD", "\xF0\x9F\x98\x80", canonical_form::relay));
}

TEST_CASE("null members are left out of the relay form, kept in RFC 8785 and inside arrays") {
  const char* text = R"({"b":null,"a":{"z":null,"y":[null,{"q":null}]},"c":0})";
  CHECK(canonical(text) == R"({"a":{"y":[null,{}]},"c":0})");
  CHECK(canonical(text, canonical_form::jcs) == R"({"a":{"y":[null,{"q":null}],"z":null},"b":null,"c":0})");
  CHECK(canonical("null") == "null");
  CHECK(canonical(" [ true , false ] ") == "[true,false]");
}

TEST_CASE("strings use the minimal escapes") {
  CHECK(canonical(R"(["\u0041\u00e9\/\"\\\b\f\n\r\t\u0000\u001f\u007f\u2028"])") ==
        "[\"A\xC3\xA9/\\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\x7F\xE2\x80\xA8\"]");
  CHECK(canonical(R"("\ud83d\ude00")") == "\"\xF0\x9F\x98\x80\"");
}

TEST_CASE("inputs RFC 8785 refuses are errors with a one-line reason") {
  struct bad {
    const char* text;
    errc code;
    const char* words;
  };
  const bad cases[] = {
      {R"({"a":1,"a":2})", errc::invalid_value, "duplicate member name \"a\""},
      {R"({"x":{"b":1,"c":2,"b":3}})", errc::invalid_value, "duplicate member name \"b\""},
      {R"({"a":null,"a":null})", errc::invalid_value, "duplicate member name"},
      {R"(["\ud800"])", errc::invalid_value, "lone surrogate"},
      {R"(["\udc00x"])", errc::invalid_value, "lone surrogate"},
      {R"(["\ud800\u0041"])", errc::invalid_value, "lone surrogate"},
      {"[1e400]", errc::invalid_value, "beyond the range"},
      {"[-1e400]", errc::invalid_value, "beyond the range"},
      {"[NaN]", errc::invalid_value, "not JSON"},
      {"[Infinity]", errc::invalid_value, "not JSON"},
      {"[01]", errc::invalid_value, "number"},
      {"\"\xFF\"", errc::invalid_utf8, "UTF-8"},
      {"", errc::invalid_value, "empty"},
      {"[1,]", errc::invalid_value, "not JSON"},
      {"{\"a\":1} x", errc::invalid_value, "not JSON"},
      {"[\"abc", errc::invalid_value, ""},
      {"\xEF\xBB\xBF{}", errc::invalid_value, "not JSON: the text starts with a byte-order mark (U+FEFF)"},
  };
  canonicalizer c;
  for (const bad& b : cases) {
    CAPTURE(b.text);
    for (canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
      auto out = c.canonicalize(b.text, form);
      REQUIRE_FALSE(out.has_value());
      CHECK(out.error().code == b.code);
      CHECK(out.error().message.find(b.words) != std::string::npos);
      CHECK(out.error().message.find('\n') == std::string::npos);
    }
    CHECK_FALSE(c.parse(b.text).has_value());
  }
  // A text that is not UTF-8 is reported as such, at its first bad byte,
  // whatever else is wrong with it: a byte-order mark too.
  for (const std::string_view text : {std::string_view("\xEF\xBB\xBF\xFF"), std::string_view("\xEF\xBB\xBF[\"\xC0\"]")}) {
    CAPTURE(text);
    const std::uint64_t first_bad = text.find_first_of("\xFF\xC0");
    for (canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
      auto out = c.canonicalize(text, form);
      REQUIRE_FALSE(out.has_value());
      CHECK(out.error().code == errc::invalid_utf8);
      CHECK(out.error().offset == first_bad);
    }
    auto tree = c.parse(text);
    REQUIRE_FALSE(tree.has_value());
    CHECK(tree.error().code == errc::invalid_utf8);
    CHECK(tree.error().offset == first_bad);
  }
  // Integers of 400 digits are doubles beyond range, as 1e400 is.
  std::string long_integer = "[1";
  long_integer.append(400, '0').append("]");
  CHECK_FALSE(c.canonicalize(long_integer).has_value());
  // Deep nesting within simdjson's limit works; beyond it is an error.
  const auto nested = [](std::size_t depth) { return std::string(depth, '[').append(depth, ']'); };
  CHECK(c.canonicalize(nested(1000)).has_value());
  CHECK_FALSE(c.canonicalize(nested(1100)).has_value());
  // Exactly 1024 levels around a scalar: both the text and the tree paths agree.
  const auto around_one = [](std::size_t depth) { return std::string(depth, '[').append("1").append(depth, ']'); };
  CHECK(c.canonicalize(around_one(1024)).has_value());
  CHECK_FALSE(c.canonicalize(around_one(1025)).has_value());
  json::value tree = 1;
  for (int i = 0; i < 1024; ++i) tree = json::value::array_type{std::move(tree)};
  REQUIRE(json::serialize(tree).has_value());
  tree = json::value::array_type{std::move(tree)};
  CHECK_FALSE(json::serialize(tree).has_value());
}

TEST_CASE("a canonicalizer is reusable and canonicalization is idempotent") {
  canonicalizer c;
  const char* docs[] = {R"({"b":[1,2,{"d":1e21,"c":"x"}],"a":"\u00e9"})", "[]", "{}", "\"s\"", "-0.5",
                        R"({"k":{"k":{"k":null}}})"};
  for (const char* doc : docs) {
    for (canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
      auto once = c.canonicalize(doc, form);
      REQUIRE(once.has_value());
      const std::string first(*once);
      auto twice = c.canonicalize(first, form);
      REQUIRE(twice.has_value());
      CHECK(*twice == first);
    }
  }
}

TEST_CASE("parse builds a tree that keeps member order; the tree canonicalizes like the text") {
  auto tree = json::parse(R"({"b":1,"a":[true,null,"x"],"c":{"z":1.5,"y":null}})");
  REQUIRE(tree.has_value());
  REQUIRE(tree->is_object());
  CHECK(tree->as_object()[0].first == "b");
  CHECK(tree->as_object()[1].first == "a");
  CHECK(tree->find("a")->as_array().size() == 3);
  CHECK(tree->find("c")->find("z")->as_number() == 1.5);
  CHECK(tree->find("missing") == nullptr);
  auto text = json::serialize(*tree);
  REQUIRE(text.has_value());
  CHECK(*text == R"({"a":[true,null,"x"],"b":1,"c":{"z":1.5}})");
  auto jcs = json::serialize(*tree, canonical_form::jcs);
  REQUIRE(jcs.has_value());
  CHECK(*jcs == R"({"a":[true,null,"x"],"b":1,"c":{"y":null,"z":1.5}})");

  tree->set("b", "changed");
  tree->set("d", json::value::array_type{1, 2});
  CHECK(tree->erase("a"));
  CHECK_FALSE(tree->erase("a"));
  CHECK(*json::serialize(*tree) == R"({"b":"changed","c":{"z":1.5},"d":[1,2]})");
  CHECK(*tree == *json::parse(R"({"d":[1,2],"c":{"z":1.5,"y":null},"b":"changed"})"));
  CHECK_FALSE(*tree == *json::parse(R"({"d":[1,2],"c":{"z":1.5},"b":"changed"})"));
}

TEST_CASE("a tree's members are written in canonical order whatever order they are in, and a name twice is refused") {
  // U+FF61 sorts before U+1F600 by UTF-8 bytes (relay), after it by UTF-16
  // code units (jcs): a tree in either order is written in each form's.
  const std::string bmp = "\xEF\xBD\xA1", astral = "\xF0\x9F\x98\x80";
  const std::string relay_order = "{\"a\":1,\"" + bmp + "\":2,\"" + astral + "\":3}";
  const std::string jcs_order = "{\"a\":1,\"" + astral + "\":3,\"" + bmp + "\":2}";
  for (const auto& members : {json::value::object_type{{"a", 1}, {bmp, 2}, {astral, 3}},
                              json::value::object_type{{"a", 1}, {astral, 3}, {bmp, 2}},
                              json::value::object_type{{astral, 3}, {bmp, 2}, {"a", 1}}}) {
    const json::value tree = members;
    CHECK(json::serialize(tree).value() == relay_order);
    CHECK(json::serialize(tree, canonical_form::jcs).value() == jcs_order);
  }
  // A name twice, next to each other (in order otherwise) or apart.
  for (const auto& members : {json::value::object_type{{"a", 1}, {"a", 2}},
                              json::value::object_type{{"a", 1}, {"b", 2}, {"b", 3}},
                              json::value::object_type{{"b", 1}, {"a", 2}, {"b", 3}}}) {
    const auto refused = json::serialize(json::value(members));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("duplicate member name") != std::string::npos);
  }
}

TEST_CASE("a tree a program built is checked as it is written") {
  json::value bad_number = json::value::array_type{std::nan("")};
  CHECK(json::serialize(bad_number).error().code == errc::invalid_value);
  json::value infinite = json::value::array_type{1e308 * 10};
  CHECK_FALSE(json::serialize(infinite).has_value());
  json::value bad_text = json::value::object_type{{"k", std::string("\xC3")}};
  CHECK(json::serialize(bad_text).error().code == errc::invalid_utf8);
  json::value bad_name = json::value::object_type{{std::string("\xFF"), 1}};
  CHECK(json::serialize(bad_name).error().code == errc::invalid_utf8);
  json::value dup = json::value::object_type{{"a", 1}, {"a", 2}};
  CHECK(json::serialize(dup).error().message == "duplicate member name \"a\"");
  json::value null_dup = json::value::object_type{{"a", nullptr}, {"a", nullptr}};
  CHECK(json::serialize(null_dup, canonical_form::jcs).error().message == "duplicate member name \"a\"");
  json::value deep;
  for (int i = 0; i < 1100; ++i) deep = json::value::array_type{std::move(deep)};
  CHECK_FALSE(json::serialize(deep).has_value());
}

namespace {
std::string function_sink_bytes;
void function_sink(std::string_view piece) { function_sink_bytes += piece; }
}  // namespace

TEST_CASE("serialize_to gives a tree's canonical form in pieces, never held whole, and stops at a problem") {
  // About 2.5 MB of canonical text: more than one spill of the buffer, a
  // long string (longer than a spill) among the numbers.
  json::value::array_type items;
  for (int i = 0; i < 200000; ++i) items.emplace_back(i * 1.25e-3);
  items.emplace_back(std::string(300000, 'x') + "\n");
  for (int i = 0; i < 50000; ++i) {
    items.emplace_back(json::value::object_type{{"b", i}, {"a", nullptr}, {"\xC3\xA9", "caf\xC3\xA9"}});
  }
  const json::value tree(std::move(items));
  canonicalizer c;
  for (const canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
    const std::string whole(test_support::require_value(c.serialize(tree, form)));
    std::string joined;
    std::size_t pieces = 0;
    std::size_t largest = 0;
    test_support::require_ok(c.serialize_to(tree, form, [&](std::string_view piece) {
      joined += piece;
      ++pieces;
      largest = std::max(largest, piece.size());
    }));
    CHECK(joined == whole);
    CHECK(pieces > 10);
    // A piece holds at most 64 KiB and the room one item needed (up to six
    // bytes for each byte of the long string): far from the whole.
    CHECK(largest <= (64 << 10) + 6 * 300003);
    CHECK(largest < whole.size() / 2);
  }
  // A problem after some pieces were given: an error, as serialize() says it.
  json::value::array_type late(100000, json::value(1.5));
  late.emplace_back(std::nan(""));
  std::size_t given = 0;
  const auto failed = c.serialize_to(json::value(std::move(late)), canonical_form::relay,
                                     [&](std::string_view piece) { given += piece.size(); });
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().message == "a number is NaN or infinite, which JSON cannot express");
  CHECK(given > 0);
  // The canonicalizer is whole again after it: the next form is right.
  CHECK(test_support::require_value(c.serialize(json::value::object_type{{"b", 1}, {"a", 2}})) == R"({"a":2,"b":1})");
  // So it is after a sink that throws; and a function's name is a sink.
  CHECK_THROWS_AS(static_cast<void>(c.serialize_to(tree, canonical_form::relay,
                                                   [](std::string_view) { throw std::runtime_error("full"); })),
                  std::runtime_error);
  test_support::require_ok(c.serialize_to(json::value::object_type{{"b", 1}, {"a", 2}}, canonical_form::relay, function_sink));
  CHECK(function_sink_bytes == R"({"a":2,"b":1})");
}

namespace {

// The escaped form of `text` byte by byte, as the canonical forms write it:
// the oracle of the writer's block-at-a-time copy.
std::string escaped_by_bytes(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    char buffer[8];
    out.append(buffer, json::write_canonical_ascii(buffer, static_cast<unsigned char>(ch)) - buffer);
  }
  return out + "\"";
}

}  // namespace

TEST_CASE("a tree's strings are checked for UTF-8 in the pass that escapes them") {
  // Pieces that land at every offset of the sixteen- and eight-byte blocks
  // and of the tail: plain ASCII, escapes, well-formed sequences of two to
  // four bytes, and ill-formed ones (a lone continuation byte, a truncated
  // sequence, an overlong form, a surrogate, a code point above U+10FFFF, a
  // byte UTF-8 never uses).
  const std::string_view pieces[] = {"a",        "bcdefgh",   "\"",       "\\",      "\n",       "\x01",
                                     "\x7F",    "\xC3\xA9",  "\xE2\x80\xA8", "\xF0\x9F\x98\x80", "\x80",    "\xC3",
                                     "\xE2\x80", "\xC0\xAF",  "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF",    "0123456789abcdef"};
  test_support::random_stream random(0x9E3779B97F4A7C15ull);
  const auto next = [&random] { return random.next(); };
  std::size_t valid = 0, invalid = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const std::size_t count = next() % 12;
    for (std::size_t k = 0; k < count; ++k) text += pieces[next() % std::size(pieces)];
    CAPTURE(text);
    const bool is_utf8 = agentctx::is_valid_utf8(text);
    for (const bool as_name : {false, true}) {
      const json::value tree = as_name ? json::value(json::value::object_type{{text, 1}})
                                       : json::value(json::value::array_type{json::value(text)});
      const auto written = json::serialize(tree);
      REQUIRE(written.has_value() == is_utf8);
      if (is_utf8) {
        CHECK(*written == (as_name ? "{" + escaped_by_bytes(text) + ":1}" : "[" + escaped_by_bytes(text) + "]"));
      } else {
        CHECK(written.error().code == errc::invalid_utf8);
      }
    }
    (is_utf8 ? valid : invalid) += 1;
  }
  // Both outcomes were tried often.
  CHECK(valid > 1000);
  CHECK(invalid > 1000);
}

TEST_CASE("invalid_utf8_path names where the first string that is not UTF-8 is") {
  using object = json::value::object_type;
  using array = json::value::array_type;
  const std::pair<json::value, std::optional<std::string>> cases[] = {
      {json::value("ok"), std::nullopt},
      {json::value(object{{"a", 1}, {"b", array{"x", nullptr, object{{"c", "\xC3\xA9"}}}}}), std::nullopt},
      {json::value("\xFF"), std::string()},
      {json::value(object{{"a", "ok"}, {"b", "\xC3"}}), std::string("b")},
      {json::value(object{{"fact", object{{"tags", array{"ok", "\xED\xA0\x80", "\xFF"}}}}}),
       std::string("fact.tags[1]")},
      // (The inner array as a value: array{array{...}} may copy it instead.)
      {json::value(array{json::value(array{1, "\x80"})}), std::string("[0][1]")},
      {json::value(object{{"fact", object{{"\xFF", 1}}}}), std::string("fact (a member's name)")},
  };
  for (const auto& c : cases) {
    CAPTURE(json::to_text(c.first));
    CHECK(json::invalid_utf8_path(c.first) == c.second);
  }
}

TEST_CASE("parse refuses nesting past 1024 levels as canonicalize does, empty containers at the 1025th too") {
  for (const char* pair : {"[]", "{}"}) {
    const auto nest = [&](int levels) {
      std::string text;
      for (int i = 0; i < levels - 1; ++i) text += "[";
      text += pair;
      for (int i = 0; i < levels - 1; ++i) text += "]";
      return text;
    };
    CHECK(json::parse(nest(1024)).has_value());
    const auto refused = json::parse(nest(1025));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message == "arrays and objects nest deeper than 1024 levels");
    CHECK(refused.error().offset == 1024);  // where canonicalize() says it is
    CHECK_FALSE(json::canonicalize(nest(1025)).has_value());
  }
}

TEST_CASE("parse finds a name twice whether or not the names are in order") {
  canonicalizer c;
  for (const char* text : {R"({"a":1,"b":2,"b":3})", R"({"a":1,"a":2,"b":3})", R"({"b":1,"a":2,"b":3})",
                           R"({"a":{"x":1,"y":2,"x":3}})", R"([{"k":1},{"k":1,"k":2}])"}) {
    CAPTURE(text);
    const auto parsed = c.parse(text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().message.find("duplicate member name") != std::string::npos);
  }
  // In order, out of order, and names that are prefixes of each other.
  for (const char* text : {R"({"a":1,"ab":2,"b":3})", R"({"b":1,"ab":2,"a":3})", R"({"":1,"a":{"":2}})"}) {
    CAPTURE(text);
    const auto parsed = c.parse(text);
    REQUIRE(parsed.has_value());
    CHECK(json::to_text(*parsed) == text);
  }
}

namespace {
// Runs `work` on a thread whose stack is `bytes` large: an overflow there
// crashes the test.
void on_small_stack(std::size_t bytes, const std::function<void()>& work) {
  pthread_attr_t attributes;
  REQUIRE(pthread_attr_init(&attributes) == 0);
  REQUIRE(pthread_attr_setstacksize(&attributes, bytes) == 0);
  pthread_t thread;
  auto* task = const_cast<std::function<void()>*>(&work);
  const auto run = [](void* context) -> void* {
    (*static_cast<std::function<void()>*>(context))();
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attributes, run, task) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
}

// A document of `levels` arrays and objects nested, alternating, with null
// members and siblings at every level (an array or object beside each, one
// level deeper).
std::string deep_mixed(int levels) {
  std::string open, close;
  for (int i = 0; i < levels; ++i) {
    if (i % 2 == 0) {
      open += R"({"z":null,"b":[1,"x"],"a":)";
      close.insert(0, R"(,"n":null})");
    } else {
      open += R"([null,{"k":true},)";
      close.insert(0, "]");
    }
  }
  return open + "1" + close;
}
}  // namespace

TEST_CASE("parse and serialize of 1,024 levels take no stack a level (a 256 KB thread stack is enough)") {
  // The tree is built and written with explicit stacks: a recursive build
  // took about 0.8 KB a level (2 KB under ASan), 0.8 MB at this depth. The
  // one-pass text canonicalizer recurses (and words parse()'s refusals), and
  // so does destroying a tree: those run on this thread.
  const std::string text = deep_mixed(1023);  // 1,024 levels with the siblings
  std::optional<json::value> tree;
  std::string relay, jcs, relay_of_text, jcs_of_text;
  std::optional<agentctx::error> too_deep_parse, too_deep_write;
  json::value deeper = json::value::array_type{};
  for (int i = 0; i < 1024; ++i) deeper = json::value::array_type{std::move(deeper)};
  const std::string deeper_text = deep_mixed(1023).insert(0, "[").append("]");
  on_small_stack(std::size_t{256} << 10, [&] {
    canonicalizer c;
    auto parsed = c.parse(text);
    if (!parsed) return;
    tree.emplace(std::move(*parsed));
    if (auto written = c.serialize(*tree)) relay = *written;
    if (auto written = c.serialize(*tree, canonical_form::jcs)) jcs = *written;
    if (auto refused = c.serialize(deeper); !refused) too_deep_write = refused.error();
  });
  canonicalizer c;
  if (auto written = c.canonicalize(text)) relay_of_text = *written;
  if (auto written = c.canonicalize(text, canonical_form::jcs)) jcs_of_text = *written;
  if (auto refused = c.parse(deeper_text); !refused) too_deep_parse = refused.error();
  REQUIRE(tree.has_value());
  CHECK(relay == relay_of_text);
  CHECK(jcs == jcs_of_text);
  CHECK(relay.find("null,") != std::string::npos);     // nulls in arrays are kept
  CHECK(relay.find("\"n\"") == std::string::npos);   // null members are not
  CHECK(jcs.find("\"n\":null") != std::string::npos);
  CHECK(relay.starts_with(R"({"a":[null,{"k":true},{"a":)"));
  REQUIRE(too_deep_parse.has_value());
  CHECK(too_deep_parse->message == "arrays and objects nest deeper than 1024 levels");
  REQUIRE(too_deep_write.has_value());
  CHECK(too_deep_write->message == "arrays and objects nest deeper than 1024 levels");
}

TEST_CASE("parse and serialize agree with canonicalize on generated documents, errors included") {
  // Mixed nesting, null members at any place, members out of order, and
  // every so often a name twice at some depth: the tree path (parse, then
  // serialize) and the text path give the same bytes or both refuse.
  test_support::random_stream random(0x5eed5eedULL);
  canonicalizer c;
  const std::function<void(std::string&, int)> generate = [&](std::string& out, int depth) {
    const std::size_t pick = depth > 6 ? random.below(4) : random.below(7);
    switch (pick) {
      case 0: out += "null"; break;
      case 1: out += std::to_string(static_cast<int>(random.below(2000)) - 1000) + ".5e-3"; break;
      case 2: out += "\"s" + std::to_string(random.below(10)) + "\""; break;
      case 3: out += random.below(2) ? "true" : "false"; break;
      case 4:
      case 5: {
        out += '[';
        const std::size_t n = random.below(4);
        for (std::size_t i = 0; i < n; ++i) {
          if (i) out += ',';
          generate(out, depth + 1);
        }
        out += ']';
        break;
      }
      default: {
        out += '{';
        const std::size_t n = random.below(5);
        for (std::size_t i = 0; i < n; ++i) {
          if (i) out += ',';
          // Names from a small set: sometimes one is given twice.
          out += "\"" + std::string(1, static_cast<char>('a' + random.below(n + 3))) + "\":";
          generate(out, depth + 1);
        }
        out += '}';
      }
    }
  };
  int refused = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    generate(text, 0);
    CAPTURE(text);
    for (canonical_form form : {canonical_form::relay, canonical_form::jcs}) {
      auto of_text = c.canonicalize(text, form);
      const std::optional<std::string> expected =
          of_text ? std::optional<std::string>(std::string(*of_text)) : std::nullopt;
      auto tree = c.parse(text);
      REQUIRE(tree.has_value() == expected.has_value());
      if (!tree) {
        ++refused;
        CHECK(tree.error().message.starts_with("duplicate member name"));
        continue;
      }
      auto written = c.serialize(*tree, form);
      REQUIRE(written.has_value());
      CHECK(*written == *expected);
    }
  }
  CHECK(refused > 100);  // the refusals were exercised too
  CHECK(refused < 5000);
}

TEST_CASE("to_text writes a tree with its members in their order") {
  auto tree = json::parse(R"({"b":1,"a":[true,null,"x\n"],"c":{"z":1.5}})");
  REQUIRE(tree.has_value());
  CHECK(json::to_text(*tree) == R"({"b":1,"a":[true,null,"x\n"],"c":{"z":1.5}})");
  CHECK(json::to_text(*tree, json::layout::pretty).find("\n  \"a\": [") != std::string::npos);
}

}  // namespace json_canonical_test
