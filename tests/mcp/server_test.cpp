// The MCP server core (agentctx/mcp/server.hpp) with tools of its own:
// lifecycle and version negotiation, tools/list and tools/call across
// protocol versions, batches, and what the server does with odd input.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/mcp/server.hpp"
#include "agentctx/mcp/tool_registry.hpp"
#include "mcp/mcp_test_support.hpp"

namespace mcp_server_test {

namespace mcp = agentctx::mcp;
using mcp::json_schema;
using mcp_test::call;
using mcp_test::initialize;
using mcp_test::request;

namespace {

std::string text_of(simdjson::dom::element e, std::string_view key) { return std::string(e[key].get_string().value()); }

// echo {text, times?}: the text repeated; fail: an isError result; throws: an exception.
mcp::tool_registry test_tools() {
  mcp::tool_registry tools;
  mcp::tool_definition echo;
  echo.name = "echo";
  echo.title = "Echo";
  echo.description = "Repeats a text";
  echo.input_schema = json_schema::object()
                          .required_property("text", json_schema::string())
                          .property("times", json_schema::integer().minimum(1).maximum(3));
  echo.output_schema = json_schema::object().required_property("echo", json_schema::string());
  echo.aliases = {"test.echo"};
  echo.handler = [](simdjson::dom::object arguments) {
    std::string repeated;
    const std::int64_t times = arguments.at_key("times").error() ? 1 : *mcp::integer_value(arguments["times"].value());
    for (std::int64_t i = 0; i < times; ++i) repeated += arguments["text"].get_string().value();
    std::string out;
    agentctx::json::writer(out).begin_object().key("echo").value(repeated).end_object();
    return mcp::tool_result::object(out);
  };
  REQUIRE(tools.add(std::move(echo)).has_value());

  mcp::tool_definition failing;
  failing.name = "fail";
  failing.description = "Always fails";
  failing.handler = [](simdjson::dom::object) { return mcp::tool_result::failure("it failed, as it always does"); };
  REQUIRE(tools.add(std::move(failing)).has_value());

  // A tool whose errors are structured reports bad arguments and
  // exceptions in its own form.
  mcp::tool_definition structured;
  structured.name = "structured";
  structured.description = "Takes a count (0 throws); reports bad arguments and exceptions as {\"error\": message}";
  structured.input_schema = json_schema::object().required_property("n", json_schema::integer());
  structured.handler = [](simdjson::dom::object arguments) {
    if (arguments["n"].get_int64().value() == 0) throw std::runtime_error("n is 0");
    return mcp::tool_result::object(R"({"ok":true})");
  };
  constexpr auto as_error_object = [](const std::string& message) {
    std::string out;
    agentctx::json::writer(out).begin_object().key("error").value(message).end_object();
    return mcp::tool_result::failure(out);
  };
  structured.failures = {.invalid_arguments = as_error_object, .internal_error = as_error_object};
  REQUIRE(tools.add(std::move(structured)).has_value());

  mcp::tool_definition throwing;
  throwing.name = "throws";
  throwing.description = "Throws";
  throwing.handler = [](simdjson::dom::object) -> mcp::tool_result { throw std::runtime_error("boom"); };
  REQUIRE(tools.add(std::move(throwing)).has_value());
  return tools;
}

mcp_test::session make_session(mcp::server_limits limits = {}) {
  return mcp_test::session(mcp::server({"test-server", "1.2.3", "Test Server", "Be nice."}, test_tools(), limits));
}

}  // namespace

TEST_CASE("initialize answers the client's version when supported, else the latest") {
  struct negotiation {
    const char* requested;
    const char* answered;
  };
  const std::vector<negotiation> cases = {{"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"},
                                          {"2025-03-26", "2025-03-26"}, {"2024-11-05", "2024-11-05"},
                                          {"2024-10-07", "2025-11-25"}, {"2099-01-01", "2025-11-25"},
                                          {"", "2025-11-25"}};
  for (const negotiation& c : cases) {
    CAPTURE(c.requested);
    mcp_test::session s = make_session();
    CHECK(s.server().protocol_version().empty());
    const auto result = s.result(initialize(1, c.requested));
    CHECK(text_of(result, "protocolVersion") == c.answered);
    CHECK(s.server().protocol_version() == c.answered);
    CHECK(simdjson::minify(result["capabilities"].value()) == R"({"tools":{}})");
    CHECK(text_of(result["serverInfo"].value(), "name") == "test-server");
    CHECK(text_of(result["serverInfo"].value(), "version") == "1.2.3");
    CHECK((result["serverInfo"]["title"].error() == simdjson::SUCCESS) == mcp::has_structured_tool_output(c.answered));
    CHECK(text_of(result, "instructions") == "Be nice.");
    REQUIRE_FALSE(s.log->empty());
    CHECK(s.log->back().find("client \"doctest\" \"1\" asked for protocol") != std::string::npos);
  }
}

TEST_CASE("the lifecycle: initialized notification, ping, a second initialize") {
  mcp_test::session s = make_session();
  // Requests before initialize are served (under the latest version).
  CHECK(simdjson::minify(s.result(request(1, "ping"))) == "{}");
  REQUIRE(s.send(initialize(2, "2025-06-18")));
  CHECK_FALSE(s.server().initialized());
  CHECK_FALSE(s.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").has_value());
  CHECK(s.server().initialized());
  CHECK(*s.send(request(3, "ping")) == R"({"jsonrpc":"2.0","id":3,"result":{}})");
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":"p","method":"ping","params":{"_meta":{}}})") ==
        R"({"jsonrpc":"2.0","id":"p","result":{}})");
  CHECK(*s.send(initialize(4)) ==
        R"({"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"initialize was already received; this )"
        R"(session speaks protocol 2025-06-18"}})");
  // Other notifications, a response from the client and blank lines get no answer.
  CHECK_FALSE(s.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})"));
  const std::size_t logged = s.log->size();
  CHECK_FALSE(s.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}})"));
  CHECK(s.log->size() == logged);  // a notification of MCP's is no mistake: nothing to say
  CHECK_FALSE(s.send(R"({"jsonrpc":"2.0","method":"no/such/notification"})"));
  CHECK(s.log->back() == "ignored a notification of method \"no/such/notification\": a message without an id is "
                         "not answered, so it is not run (a request needs an id)");
  // A tools/call without an id (a client's mistake) is not run, and said so.
  CHECK_FALSE(s.send(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{}}})"));
  CHECK(s.log->back().starts_with("ignored a notification of method \"tools/call\""));
  // The method is quoted with its quotes and control characters escaped: it
  // cannot fake the rest of the line.
  CHECK_FALSE(s.send(R"({"jsonrpc":"2.0","method":"tools/call\": fake\u001b"})"));
  CHECK(s.log->back().starts_with(R"(ignored a notification of method "tools/call\": fake\x1b": a message)"));
  CHECK_FALSE(s.send(R"({"jsonrpc":"2.0","id":9,"result":{}})"));
  CHECK_FALSE(s.send(""));
  CHECK_FALSE(s.send(" \t\r"));
  CHECK(s.log->back() == "ignored a response: this server sends no requests");
}

TEST_CASE("initialize without a protocol version is an invalid-params error") {
  for (const char* params : {"", R"({})", R"({"protocolVersion":20250618})"}) {
    CAPTURE(params);
    mcp_test::session s = make_session();
    const auto answer = s.answer(request(1, "initialize", params));
    CHECK(answer["error"]["code"].get_int64().value() == -32602);
    CHECK(text_of(answer["error"].value(), "message") == "initialize needs params.protocolVersion (a string)");
    CHECK(s.server().protocol_version().empty());
  }
}

TEST_CASE("tools/list: names, descriptions and schemas; titles and output schemas from 2025-06-18") {
  for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    CAPTURE(version);
    mcp_test::session s = make_session();
    REQUIRE(s.send(initialize(1, version)));
    const bool structured = mcp::has_structured_tool_output(version);
    const auto result = s.result(request(2, "tools/list", R"({"cursor":"ignored"})"));
    const simdjson::dom::array tools = result["tools"].get_array().value();
    REQUIRE(tools.size() == 4);
    const simdjson::dom::element echo = tools.at(0).value();
    CHECK(text_of(echo, "name") == "echo");
    CHECK(text_of(echo, "description") == "Repeats a text");
    CHECK(std::string(simdjson::minify(echo["inputSchema"].value())) ==
          mcp::json_schema::object()
              .required_property("text", json_schema::string())
              .property("times", json_schema::integer().minimum(1).maximum(3))
              .to_json());
    CHECK((echo["title"].error() == simdjson::SUCCESS) == structured);
    CHECK((echo["outputSchema"].error() == simdjson::SUCCESS) == structured);
    CHECK(result["nextCursor"].error() == simdjson::NO_SUCH_FIELD);
    for (const simdjson::dom::element tool : tools) {
      CHECK(text_of(tool, "name") != "test.echo");  // aliases are not listed
      CHECK(tool["outputSchema"].error() == (structured && text_of(tool, "name") == "echo"
                                                 ? simdjson::SUCCESS
                                                 : simdjson::NO_SUCH_FIELD));
    }
  }
}

TEST_CASE("tools/call: text content always, structured content from 2025-06-18, isError for failures") {
  for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    CAPTURE(version);
    mcp_test::session s = make_session();
    REQUIRE(s.send(initialize(1, version)));
    const bool structured = mcp::has_structured_tool_output(version);
    const std::string answer = *s.send(call(2, "echo", R"({"text":"ab","times":2})"));
    if (structured) {
      CHECK(answer == R"({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"echo\":\"abab\"}"}],)"
                      R"("structuredContent":{"echo":"abab"},"isError":false}})");
    } else {
      CHECK(answer == R"({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"echo\":\"abab\"}"}],)"
                      R"("isError":false}})");
    }
    // The alias, and a call without arguments of a tool that needs none.
    CHECK(s.send(call(3, "test.echo", R"({"text":"x"})"))->find(R"(\"echo\":\"x\")") != std::string::npos);
    CHECK(*s.send(request(4, "tools/call", R"({"name":"fail"})")) ==
          R"({"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"it failed, as it always does"}],)"
          R"("isError":true}})");
    CHECK(*s.send(call(5, "throws", "{}")) ==
          R"({"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"internal error in throws: boom"}],)"
          R"("isError":true}})");
    CHECK(s.log->back() == "throws: internal error in throws: boom");
    CHECK(s.call_error("echo", R"({"text":"x","times":4})") == "invalid arguments for echo: times must be at most 3, not 4");
    CHECK(s.call_error("echo", R"({})") == "invalid arguments for echo: text is required");
    CHECK(s.call_error("fail", R"({"x":1})") == "invalid arguments for fail: unknown property 'x' (none are taken)");
    CHECK(s.call_error("structured", R"({"n":"x"})") == R"({"error":"invalid arguments for structured: n must be an integer, not a string"})");
    CHECK(s.call_error("structured", R"({"n":0})") == R"({"error":"internal error in structured: n is 0"})");
  }
}

TEST_CASE("batches: answered as arrays under 2025-03-26, refused under the other versions") {
  mcp_test::session s = make_session();
  REQUIRE(s.send(initialize(1, "2025-03-26")));
  CHECK(*s.send(R"([{"jsonrpc":"2.0","id":2,"method":"ping"},)"
                R"({"jsonrpc":"2.0","method":"notifications/initialized"},)"
                R"({"jsonrpc":"2.0","id":3,"method":"nope"},)"
                R"(7,)"
                R"([{"jsonrpc":"2.0","id":4,"method":"ping"}]])") ==
        R"([{"jsonrpc":"2.0","id":2,"result":{}},)"
        R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: \"nope\""}},)"
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a message must be a JSON object, not a number"}},)"
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a batch must not contain a batch"}}])");
  CHECK(s.server().initialized());
  // Only notifications: no answer at all.
  CHECK_FALSE(s.send(R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])"));
  CHECK(*s.send("[]") == R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the batch is empty"}})");

  mcp_test::session small = make_session({std::size_t{1} << 20, 2});
  REQUIRE(small.send(initialize(1, "2025-03-26")));
  CHECK(small.send(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}])")
            ->front() == '[');
  CHECK(small.send(R"([1,2,3])")->find("the batch has 3 messages; at most 2 are allowed") != std::string::npos);

  for (const char* version : {"2025-11-25", "2025-06-18", "2024-11-05"}) {
    CAPTURE(version);
    mcp_test::session other = make_session();
    REQUIRE(other.send(initialize(1, version)));
    CHECK(*other.send(R"([{"jsonrpc":"2.0","id":2,"method":"ping"}])") ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches are not supported in protocol )"
          R"(version )" + std::string(version) + R"x( (only 2025-03-26 has them)"}})x");
  }
  // Before initialize the latest version's rules apply: no batches.
  CHECK(make_session().send(R"([{"jsonrpc":"2.0","id":2,"method":"ping"}])")->find("-32600") != std::string::npos);
}

TEST_CASE("nesting: 1,024 levels of arrays and objects are read, as JSON.parse counts them; 1,025 are a parse error") {
  mcp_test::session s = make_session();
  // A ping whose params hold arrays nested so that the line nests `levels`
  // deep (the message is one level, params another), innermost `inner`.
  const auto ping = [](int id, unsigned levels, std::string_view inner) {
    const std::size_t arrays = levels - 2;
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"ping","params":{"x":)" +
           std::string(arrays, '[') + std::string(inner) + std::string(arrays, ']') + "}}";
  };
  const auto answered = [](int id) { return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":{}})"; };
  // simdjson's own limit counts a scalar in the innermost container as a level.
  CHECK(*s.send(ping(1, 1024, "1")) == answered(1));
  CHECK(*s.send(ping(2, 1024, R"("s",null,true,-0.5)")) == answered(2));
  CHECK(*s.send(ping(3, 1024, "")) == answered(3));
  CHECK(*s.send(ping(4, 1023, "[]")) == answered(4));
  const std::string too_deep =
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: )" +
      std::string(simdjson::error_message(simdjson::DEPTH_ERROR)) + R"("}})";
  CHECK(*s.send(ping(5, 1024, "[]")) == too_deep);
  CHECK(*s.send(ping(6, 1024, "{}")) == too_deep);
  CHECK(*s.send(ping(7, 1024, "[1]")) == too_deep);
  CHECK(*s.send(ping(8, 1024, R"(1,[[]])")) == too_deep);
  CHECK(*s.send(std::string(1025, '[') + std::string(1025, ']')) == too_deep);
  CHECK(s.send(std::string(1024, '[') + std::string(1024, ']'))->find(R"("code":-32600)") != std::string::npos);
  // With long integers widened (the parse is repeated) the limits are the same.
  CHECK(*s.send(ping(9, 1024, "123456789012345678901234567890")) == answered(9));
  CHECK(*s.send(ping(10, 1024, "[123456789012345678901234567890]")) == too_deep);
  // A line 1,024 levels deep with another fault is refused for that fault.
  const std::string garbage = *s.send(ping(10, 1024, "1") + " x");
  CHECK(garbage.find(R"("code":-32700)") != std::string::npos);
  CHECK(garbage.find(simdjson::error_message(simdjson::DEPTH_ERROR)) == std::string::npos);
  CHECK(s.send(ping(10, 1024, "1,") + "}")->find(simdjson::error_message(simdjson::DEPTH_ERROR)) == std::string::npos);
  // The deeper parse keeps no state: ordinary lines after it are answered.
  CHECK(*s.send(ping(11, 3, "")) == answered(11));
}

TEST_CASE("oversized lines, parse errors and the log") {
  mcp_test::session s = make_session({64, 256});
  REQUIRE(s.send(R"({"jsonrpc":"2.0","id":1,"method":"ping"})").has_value());
  CHECK(*s.send(std::string(100, ' ') + R"({"jsonrpc":"2.0","id":2,"method":"ping"})") ==
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the message has 140 bytes; the limit is 64 )"
        R"(bytes per line"}})");
  CHECK(s.log->back() == "the message has 140 bytes; the limit is 64 bytes per line");
  const std::string parse_error = *s.send(R"({"jsonrpc":"2.0","id":3,"method":"ping")");
  CHECK(parse_error.rfind(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: )", 0) == 0);
  CHECK(s.log->back().rfind("parse error: ", 0) == 0);
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":4,"method":"ping"})") == R"({"jsonrpc":"2.0","id":4,"result":{}})");
}

TEST_CASE("an integer beyond 64 bits is read as the nearest double, not refused as a parse error") {
  mcp_test::session s = make_session();
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":5,"method":"ping","params":{"x-n":18446744073709551616,"s":"1e400 99999999999999999999"}})") ==
        R"({"jsonrpc":"2.0","id":5,"result":{}})");
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":6,"method":"ping","params":{"n":-123456789012345678901234567890}})") ==
        R"({"jsonrpc":"2.0","id":6,"result":{}})");
  // A number beyond a double's range is still refused.
  CHECK(s.send(R"({"jsonrpc":"2.0","id":7,"method":"ping","params":{"n":1e400}})")->find("-32700") != std::string::npos);
  // As an id, such an integer could not be echoed exactly: refused, saying what it is.
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"})") ==
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the id must be a string or an integer, not an )"
        R"(integer beyond 64 bits or a number written with a fraction or an exponent: it could not be echoed as )"
        R"(written"}})");
  // Written with an exponent or digits, a number beyond the range is the same
  // double: it is named for what both are. So are the range's ends, -2^63 and
  // 2^64, which integers just beyond them and numbers within it written with
  // a fraction both read as.
  for (const char* id : {"1e20", "-1e19", "18446744073709555712", "1.5e300", "-9223372036854777856"}) {
    CAPTURE(id);
    CHECK(s.send(std::string(R"({"jsonrpc":"2.0","method":"ping","id":)") + id + "}")
              ->find("not a number beyond the range of 64-bit integers") != std::string::npos);
  }
  for (const char* id : {"-9223372036854775808.0", "-9.223372036854775808e18", "-9223372036854775809",
                         "-9223372036854775810", "18446744073709551616", "18446744073709551615.0",
                         "1.8446744073709552e19", "18446744073709551000.0"}) {
    CAPTURE(id);
    CHECK(s.send(std::string(R"({"jsonrpc":"2.0","method":"ping","id":)") + id + "}")
              ->find("not an integer beyond 64 bits or a number written with a fraction or an exponent: it could not "
                     "be echoed as written") != std::string::npos);
  }
  CHECK(s.send(R"({"jsonrpc":"2.0","method":"ping","id":1e2})")
            ->find("not a number written with a fraction or an exponent") != std::string::npos);
  // The largest ids that fit are answered, and a fraction is still called one.
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})") ==
        R"({"jsonrpc":"2.0","id":18446744073709551615,"result":{}})");
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})") ==
        R"({"jsonrpc":"2.0","id":-9223372036854775808,"result":{}})");
  CHECK(s.send(R"({"jsonrpc":"2.0","id":2.5,"method":"ping"})")->find("not a fraction") != std::string::npos);
  // -0 is the integer 0.
  CHECK(*s.send(R"({"jsonrpc":"2.0","id":-0,"method":"ping"})") == R"({"jsonrpc":"2.0","id":0,"result":{}})");
  // An integer beyond 64 bits elsewhere in the line leaves the id (and the
  // other integers within 64 bits, of 19 and 20 digits too) as written.
  for (const std::string id : {"1000000000000000001", "18446744073709551615", "-9223372036854775808",
                               "-1000000000000000001", "9999999999999999999", "42"}) {
    CAPTURE(id);
    CHECK(*s.send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping","params":{"x":100000000000000000000,)"
                  R"("y":[18446744073709551615,-9223372036854775808,-99999999999999999999]}})") ==
          R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{}})");
  }
  CHECK(s.send(R"({"jsonrpc":"2.0","id":28446744073709551616,"method":"ping","params":{"x":1e2}})")
            ->find("not a number beyond the range of 64-bit integers") != std::string::npos);
  CHECK(s.send(R"({"jsonrpc":"2.0","id":-9223372036854777856,"method":"ping","params":{"x":18446744073709551616}})")
            ->find("not a number beyond the range of 64-bit integers") != std::string::npos);
}

TEST_CASE("tool_registry refuses bad names, taken names, missing handlers and non-object schemas") {
  const auto handler = [](simdjson::dom::object) { return mcp::tool_result::failure("x"); };
  mcp::tool_registry tools;
  const auto add = [&](std::string name, std::vector<std::string> aliases = {}) {
    mcp::tool_definition tool;
    tool.name = std::move(name);
    tool.aliases = std::move(aliases);
    tool.handler = handler;
    return tools.add(std::move(tool));
  };
  CHECK(add("a_b-c.D9").has_value());
  CHECK(add("a_b-c.D9").error().message == "tool name a_b-c.D9 is taken");
  CHECK(add("other", {"a_b-c.D9"}).error().message == "tool name a_b-c.D9 is taken");
  CHECK(add("").error().message == "'' is not a valid tool name");
  CHECK(add("has space").error().message == "'has space' is not a valid tool name");
  CHECK(add(std::string(129, 'a')).has_value() == false);
  CHECK(add(std::string(128, 'a')).has_value());
  CHECK(add("x", {"y/z"}).error().message == "'y/z' is not a valid tool name");

  mcp::tool_definition no_handler;
  no_handler.name = "lonely";
  CHECK(tools.add(no_handler).error().message == "tool lonely has no handler");
  mcp::tool_definition bad_schema;
  bad_schema.name = "bad";
  bad_schema.handler = handler;
  bad_schema.input_schema = json_schema::string();
  CHECK(tools.add(bad_schema).error().message == "the schemas of tool bad must be object schemas");
  bad_schema.input_schema = json_schema::object();
  bad_schema.output_schema = json_schema::array(json_schema::string());
  CHECK_FALSE(tools.add(bad_schema).has_value());
  CHECK(tools.tools().size() == 2);
  CHECK(tools.find("a_b-c.D9") == &tools.tools().front());
  CHECK(tools.find("missing") == nullptr);
}

}  // namespace mcp_server_test
