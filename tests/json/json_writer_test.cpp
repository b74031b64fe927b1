#include <doctest/doctest.h>

#include <simdjson.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/utf8.hpp"
#include "agentctx/json/writer.hpp"

namespace json_writer_test {

using agentctx::json::layout;
using agentctx::json::writer;

namespace {
// The output of writing `text` as a single top-level string.
std::string as_json_string(std::string_view text) {
  std::string out;
  writer w(out);
  w.value(text);
  CHECK(w.complete());
  return out;
}

std::string written(const std::function<void(writer&)>& write, layout style = layout::compact) {
  std::string out;
  writer w(out, style);
  write(w);
  CHECK(w.complete());
  return out;
}

const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD

void append_utf8(std::string& out, char32_t code_point) {
  auto put = [&out](unsigned bits) { out += static_cast<char>(bits); };
  if (code_point < 0x80) {
    put(code_point);
  } else if (code_point < 0x800) {
    put(0xC0 | (code_point >> 6));
    put(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    put(0xE0 | (code_point >> 12));
    put(0x80 | ((code_point >> 6) & 0x3F));
    put(0x80 | (code_point & 0x3F));
  } else {
    put(0xF0 | (code_point >> 18));
    put(0x80 | ((code_point >> 12) & 0x3F));
    put(0x80 | ((code_point >> 6) & 0x3F));
    put(0x80 | (code_point & 0x3F));
  }
}

// The elements of the array root[key], each read as T.
template <class T>
std::vector<T> read_array(simdjson::dom::element root, const char* key) {
  std::vector<T> out;
  simdjson::dom::array array;
  REQUIRE(root[key].get(array) == simdjson::SUCCESS);
  for (simdjson::dom::element e : array) {
    T value{};
    REQUIRE(e.get(value) == simdjson::SUCCESS);
    out.push_back(value);
  }
  return out;
}

// Any scalar value (no surrogates), each encoded length about equally likely.
char32_t random_code_point(std::mt19937_64& generator) {
  static constexpr char32_t limits[] = {0x80, 0x800, 0x10000, 0x110000};
  char32_t c = static_cast<char32_t>(generator() % limits[generator() % 4]);
  return c >= 0xD800 && c <= 0xDFFF ? c - 0x800 : c;
}
}  // namespace

TEST_CASE("strings are escaped as RFC 8259 requires and nothing more") {
  struct row {
    std::string input;
    std::string output;
  };
  const std::vector<row> rows = {
      {"", R"("")"},
      {"plain", R"("plain")"},
      {"\"", R"("\"")"},
      {"\\", R"("\\")"},
      {"\b\f\n\r\t", R"("\b\f\n\r\t")"},
      {std::string("\0", 1), R"("\u0000")"},
      {"\x01\x1a\x1f", R"("\u0001\u001a\u001f")"},
      {"\x0b", R"("\u000b")"},
      {"\x7f/<>'", "\"\x7f/<>'\""},
      {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\""},
      {"\xE2\x80\xA8", "\"\xE2\x80\xA8\""},  // U+2028 is valid in JSON
      // Longer than a word, so the eight-bytes-at-a-time path meets each case.
      {"abcdefghijklmnop\"qrstuvwx", R"("abcdefghijklmnop\"qrstuvwx")"},
      {"abcdefgh\\ijklmnop\nqrstuvw\x1e", R"("abcdefgh\\ijklmnop\nqrstuvw\u001e")"},
      {"0123456789abcdef\xC3\xA9" "0123456789", "\"0123456789abcdef\xC3\xA9" "0123456789\""},
  };
  for (const auto& r : rows) {
    CAPTURE(r.input);
    CHECK(as_json_string(r.input) == r.output);
  }
}

TEST_CASE("invalid UTF-8 becomes U+FFFD, one per maximal ill-formed subsequence") {
  const std::string& f = replacement;
  struct row {
    std::string input;
    std::string output;  // without the quotes
  };
  const std::vector<row> rows = {
      {"ab\x80" "cd", "ab" + f + "cd"},
      {"\xFF", f},
      {"\xC0\xAF", f + f},                   // overlong: C0 never starts a sequence
      {"\xE2\x82", f},                       // truncated at the end
      {"\xE2\x82" "A", f + "A"},             // truncated before ASCII
      {"\xE2\x82\xE2\x82\xAC", f + "\xE2\x82\xAC"},
      {"\xED\xA0\x80", f + f + f},           // surrogate: A0 cannot follow ED
      {"\xF0\x9F\x98", f},
      {"\xF4\x90\x80\x80", f + f + f + f},   // above U+10FFFF
      {"ok\xC3(", "ok" + f + "("},
      {"\xC3\xA9\x80\xC3\xA9", "\xC3\xA9" + f + "\xC3\xA9"},
      {"0123456789\x80\"\x01\xFE", "0123456789" + f + "\\\"\\u0001" + f},
  };
  for (const auto& r : rows) {
    CAPTURE(r.input);
    const std::string out = as_json_string(r.input);
    CHECK(out == "\"" + r.output + "\"");
    CHECK(agentctx::is_valid_utf8(out));
  }
}

TEST_CASE("containers nest and commas are placed automatically") {
  CHECK(written([](writer& w) { w.begin_object().end_object(); }) == "{}");
  CHECK(written([](writer& w) { w.begin_array().end_array(); }) == "[]");
  CHECK(written([](writer& w) { w.value(42); }) == "42");
  CHECK(written([](writer& w) {
          w.begin_object();
          w.key("a").value(1);
          w.key("b").begin_array().value(true).value(false).value(nullptr).begin_object().end_object().end_array();
          w.key("c").begin_object().key("d").begin_array().begin_array().end_array().end_array().end_object();
          w.key("").value("");
          w.key("k\"ey").value(static_cast<const char*>(nullptr));
          w.end_object();
        }) == R"({"a":1,"b":[true,false,null,{}],"c":{"d":[[]]},"":"","k\"ey":null})");
  CHECK(written([](writer& w) { w.begin_array().value("x").raw(R"({"pre":[1,2]})").value(3).end_array(); }) ==
        R"(["x",{"pre":[1,2]},3])");
}

TEST_CASE("an optional is its value when it has one, null otherwise") {
  const std::optional<std::string> name = "relay", none_text;
  const std::optional<std::uint32_t> id = 7, none_id;
  CHECK(written([&](writer& w) { w.begin_array().value(name).value(none_text).value(id).value(none_id).end_array(); }) ==
        R"(["relay",null,7,null])");
}

TEST_CASE("the writer appends to existing text") {
  std::string out = "prefix ";
  writer w(out);
  w.begin_array().value(1).end_array();
  CHECK(out == "prefix [1]");
}

TEST_CASE("integers of every width, doubles and floats in shortest round-trip form") {
  struct row {
    std::function<void(writer&)> write;
    const char* text;
  };
  const std::vector<row> rows = {
      {[](writer& w) { w.value(0); }, "0"},
      {[](writer& w) { w.value(std::numeric_limits<std::int8_t>::min()); }, "-128"},
      {[](writer& w) { w.value(std::numeric_limits<std::uint8_t>::max()); }, "255"},
      {[](writer& w) { w.value(std::numeric_limits<std::int16_t>::min()); }, "-32768"},
      {[](writer& w) { w.value(std::numeric_limits<std::uint16_t>::max()); }, "65535"},
      {[](writer& w) { w.value(std::numeric_limits<std::int32_t>::min()); }, "-2147483648"},
      {[](writer& w) { w.value(std::numeric_limits<std::uint32_t>::max()); }, "4294967295"},
      {[](writer& w) { w.value(std::numeric_limits<std::int64_t>::min()); }, "-9223372036854775808"},
      {[](writer& w) { w.value(std::numeric_limits<std::int64_t>::max()); }, "9223372036854775807"},
      {[](writer& w) { w.value(std::numeric_limits<std::uint64_t>::max()); }, "18446744073709551615"},
      {[](writer& w) { w.value(std::size_t{7}); }, "7"},
      {[](writer& w) { w.value(0.1); }, "0.1"},
      {[](writer& w) { w.value(1e21); }, "1e+21"},
      {[](writer& w) { w.value(-0.0); }, "0"},
      {[](writer& w) { w.value(1.0); }, "1"},
      {[](writer& w) { w.value(-1.5); }, "-1.5"},
      {[](writer& w) { w.value(1e-7); }, "1e-7"},
      {[](writer& w) { w.value(1.5e-7); }, "1.5e-7"},
      {[](writer& w) { w.value(0.000001); }, "0.000001"},
      {[](writer& w) { w.value(0.0001); }, "0.0001"},
      {[](writer& w) { w.value(1e6); }, "1000000"},  // not std::to_chars's shorter "1e+06"
      {[](writer& w) { w.value(123e12); }, "123000000000000"},
      {[](writer& w) { w.value(1e20 + 0.0); }, "1e+20"},
      {[](writer& w) { w.value(5e-324); }, "5e-324"},
      {[](writer& w) { w.value(std::numeric_limits<double>::max()); }, "1.7976931348623157e+308"},
      {[](writer& w) { w.value(9007199254740991.0); }, "9007199254740991"},  // 2^53 - 1 stays an integer
      {[](writer& w) { w.value(123456789012345683968.0); }, "1.2345678901234568e+20"},
      {[](writer& w) { w.value(0.5f); }, "0.5"},
      {[](writer& w) { w.value(0.7f); }, "0.7"},  // the f32's shortest text, not its double's 0.699999988079071
      {[](writer& w) { w.value(static_cast<double>(0.7f)); }, "0.699999988079071"},
      {[](writer& w) { w.value(-0.0f); }, "0"},
      {[](writer& w) { w.value(1e6f); }, "1000000"},
      {[](writer& w) { w.value(0.000123f); }, "0.000123"},
      {[](writer& w) { w.value(1.5e-7f); }, "1.5e-7"},
      {[](writer& w) { w.value(-2.5f); }, "-2.5"},
      {[](writer& w) { w.value(1e-45f); }, "1e-45"},  // the smallest f32 subnormal
      {[](writer& w) { w.value(std::numeric_limits<float>::max()); }, "3.4028235e+38"},
      {[](writer& w) { w.value(16777215.0f); }, "16777215"},  // 2^24 - 1 stays an integer
      {[](writer& w) { w.value(16777216.0f); }, "1.6777216e+07"},
      {[](writer& w) { w.value(std::numeric_limits<float>::quiet_NaN()); }, "null"},
      {[](writer& w) { w.value(-std::numeric_limits<float>::infinity()); }, "null"},
      {[](writer& w) { w.value(std::numeric_limits<double>::quiet_NaN()); }, "null"},
      {[](writer& w) { w.value(std::numeric_limits<double>::infinity()); }, "null"},
      {[](writer& w) { w.value(-std::numeric_limits<double>::infinity()); }, "null"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.text);
    CHECK(written(r.write) == r.text);
  }
}

TEST_CASE("pretty layout indents by two spaces") {
  const std::string out = written(
      [](writer& w) {
        w.begin_object();
        w.key("name").value("db");
        w.key("empty").begin_array().end_array();
        w.key("layers").begin_array().value(1).begin_object().key("x").value(2).end_object().end_array();
        w.key("none").begin_object().end_object();
        w.end_object();
      },
      layout::pretty);
  CHECK(out ==
        "{\n"
        "  \"name\": \"db\",\n"
        "  \"empty\": [],\n"
        "  \"layers\": [\n"
        "    1,\n"
        "    {\n"
        "      \"x\": 2\n"
        "    }\n"
        "  ],\n"
        "  \"none\": {}\n"
        "}");
  CHECK(written([](writer& w) { w.value("top"); }, layout::pretty) == "\"top\"");
}

TEST_CASE("grammar mistakes are reported by ok() and complete()") {
  const std::vector<std::function<void(writer&)>> mistakes = {
      [](writer& w) { w.begin_object().value(1).end_object(); },        // value without key
      [](writer& w) { w.key("a").value(1); },                           // key outside an object
      [](writer& w) { w.begin_array().key("a").value(1).end_array(); },  // key in an array
      [](writer& w) { w.begin_object().key("a").key("b").value(1).end_object(); },
      [](writer& w) { w.begin_object().key("a").end_object(); },        // key without value
      [](writer& w) { w.begin_array().end_object(); },                  // mismatched end
      [](writer& w) { w.end_array(); },
      [](writer& w) { w.value(1).value(2); },                           // two top-level values
  };
  for (std::size_t i = 0; i < mistakes.size(); ++i) {
    CAPTURE(i);
    std::string out;
    writer w(out);
    mistakes[i](w);
    CHECK_FALSE(w.ok());
    CHECK_FALSE(w.complete());
  }
  std::string out;
  writer w(out);
  CHECK(w.ok());
  CHECK_FALSE(w.complete());  // nothing written yet
  w.begin_array();
  CHECK(w.ok());
  CHECK_FALSE(w.complete());  // still open
  w.end_array();
  CHECK(w.complete());
}

TEST_CASE("simdjson reads back what the writer wrote") {
  std::mt19937_64 generator(17);
  std::vector<std::string> strings = {"", "plain", "quote\" backslash\\ controls\x01\x1f\n\t", "caf\xC3\xA9 \xF0\x9F\x98\x80"};
  for (int i = 0; i < 300; ++i) {
    std::string s;
    const std::size_t length = generator() % 40;
    for (std::size_t k = 0; k < length; ++k) {
      switch (i % 3) {
        case 0: s += static_cast<char>(generator() % 128); break;  // ASCII, control characters included
        case 1: s += static_cast<char>(generator() % 256); break;  // arbitrary bytes, mostly invalid UTF-8
        default: append_utf8(s, random_code_point(generator)); break;
      }
    }
    strings.push_back(s);
  }
  std::vector<double> doubles = {0.1, 1e21, -0.0, 5e-324, std::numeric_limits<double>::max(), 0x1p53, 123456789012345683968.0};
  while (doubles.size() < 2000) {
    double d = std::bit_cast<double>(generator());
    if (std::isfinite(d)) doubles.push_back(d);
  }
  std::vector<std::int64_t> signed_numbers = {std::numeric_limits<std::int64_t>::min(), -1, 0,
                                              std::numeric_limits<std::int64_t>::max()};
  std::vector<std::uint64_t> unsigned_numbers = {0, std::numeric_limits<std::uint64_t>::max()};
  for (int i = 0; i < 100; ++i) {
    signed_numbers.push_back(static_cast<std::int64_t>(generator()));
    unsigned_numbers.push_back(generator());
  }

  for (layout style : {layout::compact, layout::pretty}) {
    std::string out;
    writer w(out, style);
    w.begin_object();
    w.key("strings").begin_array();
    for (const auto& s : strings) w.value(s);
    w.end_array();
    w.key("doubles").begin_array();
    for (double d : doubles) w.value(d);
    w.end_array();
    w.key("signed").begin_array();
    for (auto n : signed_numbers) w.value(n);
    w.end_array();
    w.key("unsigned").begin_array();
    for (auto n : unsigned_numbers) w.value(n);
    w.end_array();
    w.key("flags").begin_object().key("t").value(true).key("f").value(false).key("n").value(nullptr).end_object();
    w.end_object();
    REQUIRE(w.complete());

    simdjson::dom::parser parser;
    simdjson::dom::element root;
    REQUIRE(parser.parse(out).get(root) == simdjson::SUCCESS);

    const auto parsed_strings = read_array<std::string_view>(root, "strings");
    REQUIRE(parsed_strings.size() == strings.size());
    for (std::size_t i = 0; i < strings.size(); ++i) {
      CAPTURE(strings[i]);
      // Valid input reads back unchanged; invalid input (see the table test
      // for the exact replacement) reads back with U+FFFD in it.
      if (agentctx::is_valid_utf8(strings[i])) {
        CHECK(parsed_strings[i] == strings[i]);
      } else {
        CHECK(parsed_strings[i].find(replacement) != std::string_view::npos);
      }
    }
    // -0 reads back as the integer 0, which compares equal.
    CHECK(read_array<double>(root, "doubles") == doubles);
    CHECK(read_array<std::int64_t>(root, "signed") == signed_numbers);
    CHECK(read_array<std::uint64_t>(root, "unsigned") == unsigned_numbers);

    bool flag = false;
    REQUIRE(root["flags"]["t"].get(flag) == simdjson::SUCCESS);
    CHECK(flag);
    REQUIRE(root["flags"]["f"].get(flag) == simdjson::SUCCESS);
    CHECK_FALSE(flag);
    CHECK(root["flags"]["n"].is_null());
  }
}

}  // namespace json_writer_test
