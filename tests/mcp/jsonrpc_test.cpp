// JSON-RPC 2.0 message decoding and answer building (agentctx/mcp/jsonrpc.hpp).
#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "agentctx/mcp/jsonrpc.hpp"

namespace mcp_jsonrpc_test {

namespace mcp = agentctx::mcp;
using mcp::message_kind;
using mcp::rpc_error_code;

namespace {

mcp::decoded_message decode(simdjson::dom::parser& parser, std::string_view text) {
  simdjson::dom::element root;
  REQUIRE(parser.parse(text.data(), text.size()).get(root) == simdjson::SUCCESS);
  return mcp::decode_message(root);
}

}  // namespace

TEST_CASE("decode_message: requests, notifications and responses") {
  simdjson::dom::parser parser;

  auto m = decode(parser, R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}})");
  CHECK(m.kind == message_kind::request);
  CHECK(m.id.json() == "7");
  CHECK(m.method == "tools/list");
  REQUIRE(m.params.has_value());
  CHECK(std::string_view(m.params->at_key("cursor").get_string().value()) == "x");

  m = decode(parser, R"({"jsonrpc":"2.0","id":"req-\u00e9","method":"ping"})");
  CHECK(m.kind == message_kind::request);
  CHECK(m.id.json() == "\"req-\xC3\xA9\"");
  CHECK_FALSE(m.params.has_value());

  m = decode(parser, R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})");
  CHECK(m.id.json() == "-9223372036854775808");
  m = decode(parser, R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})");
  CHECK(m.id.json() == "18446744073709551615");

  m = decode(parser, R"({"method":"notifications/initialized","jsonrpc":"2.0"})");
  CHECK(m.kind == message_kind::notification);
  CHECK(m.method == "notifications/initialized");
  CHECK(m.id.is_null());

  // Array params are dropped from a notification (never answered), refused in a request.
  m = decode(parser, R"({"jsonrpc":"2.0","method":"notifications/x","params":[1]})");
  CHECK(m.kind == message_kind::notification);
  CHECK_FALSE(m.params.has_value());

  // A notification's params are not checked for names given twice: it is never answered for them.
  m = decode(parser, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}})");
  CHECK(m.kind == message_kind::notification);

  // Responses are ignored whatever their members, a name given twice included.
  for (const char* response : {R"({"jsonrpc":"2.0","id":3,"result":{}})",
                               R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}})",
                               R"({"result":1})", R"({"jsonrpc":"2.0","id":7,"result":{},"result":{}})"}) {
    CAPTURE(response);
    CHECK(decode(parser, response).kind == message_kind::response);
  }
}

TEST_CASE("decode_message: invalid messages carry the code, a message and the id when readable") {
  struct bad_case {
    const char* text;
    rpc_error_code code;
    const char* id_json;
    const char* fragment;
  };
  const std::vector<bad_case> cases = {
      {"42", rpc_error_code::invalid_request, "null", "must be a JSON object, not a number"},
      {"\"ping\"", rpc_error_code::invalid_request, "null", "not a string"},
      {"null", rpc_error_code::invalid_request, "null", "not null"},
      {"true", rpc_error_code::invalid_request, "null", "not a boolean"},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", rpc_error_code::invalid_request, "null",
       "the id must be a string or an integer, not null"},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", rpc_error_code::invalid_request, "null", "not a fraction"},
      {R"({"jsonrpc":"2.0","id":true,"method":"ping"})", rpc_error_code::invalid_request, "null", "not a boolean"},
      {R"({"jsonrpc":"2.0","id":{},"method":"ping"})", rpc_error_code::invalid_request, "null", "not an object"},
      {R"({"jsonrpc":"2.0","id":[1],"method":"ping"})", rpc_error_code::invalid_request, "null", "not an array"},
      {R"({"jsonrpc":"1.0","id":4,"method":"ping"})", rpc_error_code::invalid_request, "4", "\"jsonrpc\": \"2.0\""},
      {R"({"id":4,"method":"ping"})", rpc_error_code::invalid_request, "4", "\"jsonrpc\": \"2.0\""},
      {R"({"jsonrpc":2.0,"id":4,"method":"ping"})", rpc_error_code::invalid_request, "4", "\"jsonrpc\": \"2.0\""},
      {R"({"jsonrpc":"2.0","id":"a"})", rpc_error_code::invalid_request, "\"a\"", "no \"method\""},
      {R"({"jsonrpc":"2.0","id":5,"method":42})", rpc_error_code::invalid_request, "5",
       "the method must be a string, not a number"},
      {R"({"jsonrpc":"2.0","id":5,"method":"ping","params":"x"})", rpc_error_code::invalid_request, "5",
       "params must be an object, not a string"},
      {R"({"jsonrpc":"2.0","id":5,"method":"ping","params":null})", rpc_error_code::invalid_request, "5",
       "params must be an object, not null"},
      {R"({"jsonrpc":"2.0","id":5,"method":"ping","params":[1,2]})", rpc_error_code::invalid_params, "5",
       "MCP takes named params"},
      {R"({"jsonrpc":"1.0","method":"notifications/initialized"})", rpc_error_code::invalid_request, "null",
       "\"jsonrpc\": \"2.0\""},
      // An integer written as a fraction or with an exponent could not be echoed as written.
      {R"({"jsonrpc":"2.0","id":1.0,"method":"ping"})", rpc_error_code::invalid_request, "null",
       "not a number written with a fraction or an exponent"},
      {R"({"jsonrpc":"2.0","id":1E2,"method":"ping"})", rpc_error_code::invalid_request, "null",
       "not a number written with a fraction or an exponent"},
      // A member given twice: readers differ on which counts (first here, last in JSON.parse).
      {R"({"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"})", rpc_error_code::invalid_request, "null",
       "duplicate member name \"method\""},
      {R"({"jsonrpc":"2.0","id":1,"id":2,"method":"ping"})", rpc_error_code::invalid_request, "null",
       "duplicate member name \"id\""},
      {R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","name":"b","arguments":{}}})",
       rpc_error_code::invalid_params, "7", "params: duplicate member name \"name\""},
      {R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{},"arguments":{"x":1}}})",
       rpc_error_code::invalid_params, "7", "params: duplicate member name \"arguments\""},
  };
  simdjson::dom::parser parser;
  for (const bad_case& c : cases) {
    CAPTURE(c.text);
    const mcp::decoded_message m = decode(parser, c.text);
    CHECK(m.kind == message_kind::invalid);
    CHECK(m.error_code == c.code);
    CHECK(m.id.json() == c.id_json);
    CHECK(m.error_message.find(c.fragment) != std::string::npos);
  }
}

TEST_CASE("result_response and error_response are one line of JSON echoing the id") {
  CHECK(mcp::result_response(mcp::request_id::from_integer(3), R"({"a":[1,2]})") ==
        R"({"jsonrpc":"2.0","id":3,"result":{"a":[1,2]}})");
  CHECK(mcp::error_response({}, rpc_error_code::parse_error, "bad \"json\"\nhere") ==
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"json\"\nhere"}})");
  CHECK(mcp::error_response(mcp::request_id::from_string("x\"y"), rpc_error_code::method_not_found, "m") ==
        R"({"jsonrpc":"2.0","id":"x\"y","error":{"code":-32601,"message":"m"}})");
  CHECK(mcp::request_id() == mcp::request_id());
  CHECK(mcp::request_id::from_unsigned(7) == mcp::request_id::from_integer(7));
}

TEST_CASE("quoted_excerpt keeps messages short and cuts at a UTF-8 boundary") {
  CHECK(mcp::quoted_excerpt("abc") == "\"abc\"");
  std::string long_text(59, 'a');
  long_text.append("\xC3\xA9").append(100, 'b');
  std::string cut_before_e_acute(1, '"');
  cut_before_e_acute.append(59, 'a').append("...\"");
  CHECK(mcp::quoted_excerpt(long_text) == cut_before_e_acute);
  std::string cut_at_60(1, '"');
  cut_at_60.append(60, 'z').append("...\"");
  CHECK(mcp::quoted_excerpt(std::string(61, 'z')) == cut_at_60);
}

}  // namespace mcp_jsonrpc_test
