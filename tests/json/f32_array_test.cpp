// Tests of agentctx/json/f32_array.hpp and of the command embedder's answer
// parser built on it: every accepted shape and a table of bad inputs, each
// with the exact message users see.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "agentctx/agdb/command_embedder.hpp"
#include "agentctx/json/f32_array.hpp"

namespace json_f32_array_test {

namespace json = agentctx::json;
using agentctx::errc;

TEST_CASE("parse_f32_array: numbers of every JSON form, rounded to the nearest f32") {
  const auto v = json::parse_f32_array(" [0, -1, 2.5, 1e-3, -3.4028234663852886e38, 1E2, 0.1] \n");
  REQUIRE(v.has_value());
  REQUIRE(v->size() == 7);
  CHECK((*v)[0] == 0.0f);
  CHECK((*v)[1] == -1.0f);
  CHECK((*v)[2] == 2.5f);
  CHECK((*v)[3] == 1e-3f);
  CHECK((*v)[4] == -std::numeric_limits<float>::max());
  CHECK((*v)[5] == 100.0f);
  CHECK((*v)[6] == 0.1f);
  const auto empty = json::parse_f32_array("[]");
  REQUIRE(empty.has_value());
  CHECK(empty->empty());
  // Huge integers are numbers too; they fit an f32 (rounded).
  const auto big = json::parse_f32_array("[18446744073709551615, -9223372036854775808]");
  REQUIRE(big.has_value());
  CHECK((*big)[0] == 18446744073709551615.0f);
}

TEST_CASE("parse_f32_array: bad inputs") {
  struct bad_case {
    std::string text;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {"", "not a JSON array of numbers"},
      {"   ", "not a JSON array of numbers"},
      {"{}", "not a JSON array of numbers"},
      {"1", "not a JSON array of numbers"},
      {"\"[1]\"", "not a JSON array of numbers"},
      {"[1,2", "not a JSON array of numbers"},
      {"[1,]", "not a JSON array of numbers"},
      {"[1] [2]", "not a JSON array of numbers"},
      {"[NaN]", "not a JSON array of numbers"},
      {"[Infinity]", "not a JSON array of numbers"},
      {"[1e400]", "not a JSON array of numbers"},  // simdjson: a double overflow
      {std::string("[1,\0 2]", 7), "not a JSON array of numbers"},
      {"[1,\"a\"]", "value 2 is not a number"},
      {"[null]", "value 1 is not a number"},
      {"[true]", "value 1 is not a number"},
      {"[[1]]", "value 1 is not a number"},
      {"[{\"x\":1}]", "value 1 is not a number"},
      {"[1, 2, 3.5e38]", "value 3 is not a finite f32"},
      {"[-1e39]", "value 1 is not a finite f32"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.text);
    const auto parsed = json::parse_f32_array(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == errc::invalid_value);
    CHECK(parsed.error().message == c.message);
  }
}

TEST_CASE("read_f32_values: the output must have exactly one slot per value") {
  simdjson::dom::parser parser;
  simdjson::dom::array array;
  REQUIRE(parser.parse(simdjson::padded_string(std::string("[1,2,3]"))).get_array().get(array) == simdjson::SUCCESS);
  std::vector<float> two(2), three(3), four(4);
  CHECK(json::read_f32_values(array, two).error().message == "more values than expected");
  CHECK(json::read_f32_values(array, four).error().message == "fewer values than expected");
  REQUIRE(json::read_f32_values(array, three).has_value());
  CHECK(three == std::vector<float>{1, 2, 3});
}

TEST_CASE("command embedder answers: the three shapes and every violation") {
  simdjson::dom::parser parser;
  std::vector<float> row(3);
  using agentctx::agdb::detail::parse_embedding_answer;
  REQUIRE(parse_embedding_answer(parser, "[1,2,3]", 0, row).has_value());
  CHECK(row == std::vector<float>{1, 2, 3});
  REQUIRE(parse_embedding_answer(parser, R"({"embedding":[4,5,6],"model":"x"})", 0, row).has_value());
  CHECK(row == std::vector<float>{4, 5, 6});

  struct bad_case {
    std::string line;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {"", "answer 4 is not JSON: \"\""},
      {"[1,2", "answer 4 is not JSON: \"[1,2\""},
      {std::string(100, 'x'), "answer 4 is not JSON: \"" + std::string(60, 'x') + "...\""},
      {"\x1b[2J\xff", "answer 4 is not JSON: \"\\x1b[2J\\xff\""},
      {"3", "answer 4 is neither an array of numbers nor an object"},
      {"\"text\"", "answer 4 is neither an array of numbers nor an object"},
      {"{}", "answer 4 is an object without an \"embedding\" array or an \"error\" string"},
      {R"({"embedding":"1,2,3"})", "answer 4 is an object without an \"embedding\" array or an \"error\" string"},
      {R"({"error":"model not loaded"})", "embedding text 4 failed: model not loaded"},
      {R"({"error":42})", "embedding text 4 failed: (an error that is not a string)"},
      {"[1,2]", "answer 4 has 2 values, expected dim 3"},
      {"[1,2,3,4]", "answer 4 has 4 values, expected dim 3"},
      {"[1,null,3]", "answer 4 value 2 is not a number"},
      {"[1,2,1e39]", "answer 4 value 3 is not a finite f32"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.line);
    const auto parsed = parse_embedding_answer(parser, c.line, 3, row);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == errc::invalid_value);
    CHECK(parsed.error().message == c.message);
  }
}

}  // namespace json_f32_array_test
