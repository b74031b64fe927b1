// JSON Schemas of tool arguments (agentctx/mcp/json_schema.hpp): the JSON
// they describe themselves as, and the messages of every check.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "agentctx/mcp/json_schema.hpp"

namespace mcp_json_schema_test {

namespace mcp = agentctx::mcp;
using mcp::json_schema;

namespace {

json_schema example_schema() {
  return json_schema::object()
      .required_property("query", json_schema::string().min_length(1).max_length(5).description("what"))
      .property("k", json_schema::integer().minimum(1).maximum(100).default_json("10"))
      .property("ratio", json_schema::number().minimum(0).maximum(1))
      .property("flag", json_schema::boolean())
      .property("filters", json_schema::object().property("kind", json_schema::array(json_schema::string())))
      .property("layers",
                json_schema::array(json_schema::string().allowed_values({"base", "user"})).min_items(1).max_items(2))
      .property("sources", json_schema::array(json_schema::any_of_types({mcp::json_type::string,
                                                                         mcp::json_type::integer})
                                                  .minimum(1)));
}

std::string check(const json_schema& schema, std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(text.data(), text.size()).get(root) == simdjson::SUCCESS);
  auto checked = schema.validate(root, "the arguments");
  if (checked) return "ok";
  CHECK(checked.error().code == agentctx::errc::invalid_argument);
  return checked.error().message;
}

}  // namespace

TEST_CASE("json_schema writes the JSON Schema it checks") {
  CHECK(example_schema().to_json() ==
        R"({"type":"object","properties":{)"
        R"("query":{"type":"string","description":"what","minLength":1,"maxLength":5},)"
        R"("k":{"type":"integer","minimum":1,"maximum":100,"default":10},)"
        R"("ratio":{"type":"number","minimum":0,"maximum":1},)"
        R"("flag":{"type":"boolean"},)"
        R"("filters":{"type":"object","properties":{"kind":{"type":"array","items":{"type":"string"}}},)"
        R"("additionalProperties":false},)"
        R"("layers":{"type":"array","items":{"type":"string","enum":["base","user"]},"minItems":1,"maxItems":2},)"
        R"("sources":{"type":"array","items":{"type":["string","integer"],"minimum":1}}},)"
        R"("required":["query"],"additionalProperties":false})");
  CHECK(json_schema::object().to_json() == R"({"type":"object","properties":{},"additionalProperties":false})");
  CHECK(json_schema::object().allow_other_properties().to_json() ==
        R"({"type":"object","properties":{},"additionalProperties":true})");
  CHECK(json_schema::object().allow_extensions().to_json() ==
        R"({"type":"object","properties":{},"patternProperties":{"^x-":{}},"additionalProperties":false})");
  CHECK(example_schema().is_object_schema());
  CHECK_FALSE(json_schema::string().is_object_schema());
  CHECK(example_schema().find_property("k") != nullptr);
  CHECK(example_schema().find_property("nope") == nullptr);
}

TEST_CASE("json_schema accepts what fits and names the first member that does not") {
  const json_schema schema = example_schema();
  struct validation_case {
    const char* arguments;
    const char* expected;  // "ok" or the message
  };
  const std::vector<validation_case> cases = {
      {R"({"query":"x"})", "ok"},
      {R"({"query":"\u00e9\u00e9\u00e9\u00e9\u00e9","k":100,"ratio":0,"flag":false,"filters":{"kind":[]},)"
       R"("layers":["user"],"sources":["a:1",2]})",
       "ok"},
      {R"({"query":"x","k":10.0})", "ok"},
      {R"({"query":"x","k":1e2})", "ok"},
      {R"({"query":"x","ratio":1})", "ok"},
      {R"([])", "the arguments must be an object, not an array"},
      {R"({})", "query is required"},
      {R"({"query":""})", "query must not be empty"},
      {R"({"query":"abcdef"})", "query must have at most 5 characters, not 6"},
      {R"({"query":5})", "query must be a string, not a number"},
      {R"({"query":null})", "query must be a string, not null"},
      {R"({"query":"x","k":0})", "k must be at least 1, not 0"},
      {R"({"query":"x","k":-3})", "k must be at least 1, not -3"},
      {R"({"query":"x","k":101})", "k must be at most 100, not 101"},
      {R"({"query":"x","k":1.5})", "k must be an integer, not a fraction"},
      {R"({"query":"x","k":"10"})", "k must be an integer, not a string"},
      {R"({"query":"x","k":18446744073709551615})", "k must be at most 100, not 1.8446744073709552e+19"},
      {R"({"query":"x","ratio":1.5})", "ratio must be at most 1, not 1.5"},
      {R"({"query":"x","ratio":-0.25})", "ratio must be at least 0, not -0.25"},
      {R"({"query":"x","ratio":"NaN"})", "ratio must be a number, not a string"},
      {R"({"query":"x","flag":1})", "flag must be a boolean, not a number"},
      {R"({"query":"x","filters":[]})", "filters must be an object, not an array"},
      {R"({"query":"x","filters":{"kind":"a"}})", "filters.kind must be an array, not a string"},
      {R"({"query":"x","filters":{"kind":["a",7]}})", "filters.kind[1] must be a string, not a number"},
      {R"({"query":"x","filters":{"author":"me"}})", "unknown property 'filters.author' (known: kind)"},
      {R"({"query":"x","layers":[]})", "layers must have at least 1 items, not 0"},
      {R"({"query":"x","layers":["base","user","base"]})", "layers must have at most 2 items, not 3"},
      {R"({"query":"x","layers":["../etc"]})", "layers[0] must be one of base, user, not \"../etc\""},
      {R"({"query":"x","sources":[true]})", "sources[0] must be a string or an integer, not a boolean"},
      {R"({"query":"x","sources":[0]})", "sources[0] must be at least 1, not 0"},
      {R"({"query":"x","sources":[1.5]})", "sources[0] must be a string or an integer, not a fraction"},
      {R"({"query":"x","extra":1})",
       "unknown property 'extra' (known: query, k, ratio, flag, filters, layers, sources)"},
      // A declared member given twice (simdjson keeps both; a handler would read the first).
      {R"({"query":"x","k":1,"query":"y"})", "duplicate member name \"query\""},
      {R"({"query":"x","filters":{"kind":[],"kind":["a"]}})", "filters: duplicate member name \"kind\""},
  };
  for (const validation_case& c : cases) {
    CAPTURE(c.arguments);
    CHECK(check(schema, c.arguments) == c.expected);
  }
  CHECK(check(json_schema::object(), R"({"a":1})") == "unknown property 'a' (none are taken)");
  CHECK(check(json_schema::object().allow_other_properties(), R"({"a":1})") == "ok");
  // Members an open object does not declare are its reader's: given twice, they pass.
  CHECK(check(json_schema::object().allow_other_properties(), R"({"a":1,"a":2})") == "ok");
  // Extension members (x-*): any value, each once; other undeclared members are still refused.
  const json_schema extensible = json_schema::object().property("a", json_schema::integer()).allow_extensions();
  CHECK(check(extensible, R"({"a":1,"x-k":{"deep":[1,null]},"x-":"empty suffix"})") == "ok");
  CHECK(check(extensible, R"({"x-k":1,"x-k":2})") == "duplicate member name \"x-k\"");
  CHECK(check(extensible, R"({"y-k":1})") == "unknown property 'y-k' (known: a)");
  CHECK(check(json_schema::object().property("by", extensible), R"({"by":{"x-k":1,"x-k":1}})") ==
        "by: duplicate member name \"x-k\"");
  CHECK(check(json_schema::array(json_schema::integer()), R"([1,"x"])") ==
        "the arguments[1] must be an integer, not a string");
}

TEST_CASE("integer_value reads whole numbers written either way") {
  simdjson::dom::parser parser;
  const auto value = [&](const char* text) {
    simdjson::dom::element root;
    REQUIRE(parser.parse(std::string_view(text)).get(root) == simdjson::SUCCESS);
    return mcp::integer_value(root);
  };
  CHECK(value("7") == 7);
  CHECK(value("-7") == -7);
  CHECK(value("7.0") == 7);
  CHECK(value("7e2") == 700);
  CHECK_FALSE(value("7.5").has_value());
  CHECK_FALSE(value("\"7\"").has_value());
  CHECK_FALSE(value("18446744073709551615").has_value());
  CHECK_FALSE(value("1e300").has_value());
}

}  // namespace mcp_json_schema_test
