// Table-driven bad input for the JSON-RPC line handler, with the AGDB tools
// of `agentsdb serve`: every kind of damaged message and every refused tool
// argument gets the documented answer (a JSON-RPC error with its code and id,
// or an isError tool result), nothing is written, and the session keeps
// serving after each one.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "mcp/mcp_test_support.hpp"
#include "support/hash_layer.hpp"

namespace mcp_bad_input_test {

namespace agdb = agentctx::agdb;
using mcp_test::call;
using mcp_test::request;

namespace {

enum class expect {
  rpc_error,   // a JSON-RPC error with `code`
  tool_error,  // a tools/call result with isError true
  no_answer,   // nothing (a notification)
};

struct bad_input {
  std::string name;
  std::string line;
  expect outcome;
  int code = 0;              // rpc_error only
  std::string id_json;       // rpc_error only: the id the answer must echo
  std::string fragment;      // in the error message or the tool's error text
};

bad_input rpc(std::string name, std::string line, int code, std::string id_json, std::string fragment) {
  return {std::move(name), std::move(line), expect::rpc_error, code, std::move(id_json), std::move(fragment)};
}

bad_input tool(std::string name, std::string tool_name, std::string arguments, std::string fragment) {
  return {std::move(name), call(77, tool_name, arguments), expect::tool_error, 0, "77", std::move(fragment)};
}

std::vector<bad_input> bad_inputs() {
  const std::string deep(5000, '[');
  const std::string search = "agents_search";
  const std::string write = "agents_context_write";
  const std::string propose = "agents_context_propose";
  // A valid write, for cases that change one member.
  struct write_fields {
    std::string kind = R"("note")";
    std::string confidence = "0.5";
    std::string scope = R"("local")";
    std::string extra = {};
  };
  const auto write_args = [](const write_fields& f) {
    return R"({"content":"c","kind":)" + f.kind + R"(,"confidence":)" + f.confidence + R"(,"scope":)" + f.scope +
           (f.extra.empty() ? std::string() : "," + f.extra) + "}";
  };
  return {
      // ---- not JSON: -32700 with id null ----
      rpc("truncated object", R"({"jsonrpc":"2.0","id":1,"method":"ping")", -32700, "null", "parse error"),
      rpc("not JSON at all", "hello", -32700, "null", "parse error"),
      rpc("trailing garbage", R"({"jsonrpc":"2.0","id":1,"method":"ping"} x)", -32700, "null", "parse error"),
      rpc("invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xFFing\"}", -32700, "null", "parse error"),
      rpc("nesting deeper than the parser allows", deep, -32700, "null", "parse error"),
      rpc("a lone NUL byte", std::string(1, '\0'), -32700, "null", "parse error"),
      rpc("a lone surrogate escape", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"a\udc00"}})", -32700,
          "null", "parse error"),
      rpc("a high surrogate escape without its pair", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800x"}})",
          -32700, "null", "parse error"),
      // ---- JSON, but not a request: -32600 ----
      rpc("a number", "42", -32600, "null", "must be a JSON object"),
      rpc("a string", R"("ping")", -32600, "null", "must be a JSON object"),
      rpc("null", "null", -32600, "null", "must be a JSON object"),
      rpc("a batch (not in this version)", R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", -32600, "null",
          "batches are not supported"),
      rpc("wrong jsonrpc version", R"({"jsonrpc":"1.0","id":5,"method":"ping"})", -32600, "5", "\"jsonrpc\": \"2.0\""),
      rpc("jsonrpc missing", R"({"id":5,"method":"ping"})", -32600, "5", "\"jsonrpc\": \"2.0\""),
      rpc("jsonrpc a number", R"({"jsonrpc":2,"id":"s","method":"ping"})", -32600, "\"s\"", "\"jsonrpc\": \"2.0\""),
      rpc("method missing", R"({"jsonrpc":"2.0","id":6})", -32600, "6", "no \"method\""),
      rpc("method not a string", R"({"jsonrpc":"2.0","id":6,"method":["ping"]})", -32600, "6",
          "method must be a string"),
      rpc("id null", R"({"jsonrpc":"2.0","id":null,"method":"ping"})", -32600, "null", "id must be a string or an integer"),
      rpc("id a fraction", R"({"jsonrpc":"2.0","id":1.25,"method":"ping"})", -32600, "null", "not a fraction"),
      rpc("id a boolean", R"({"jsonrpc":"2.0","id":false,"method":"ping"})", -32600, "null", "not a boolean"),
      rpc("id an object", R"({"jsonrpc":"2.0","id":{"n":1},"method":"ping"})", -32600, "null", "not an object"),
      rpc("id an array", R"({"jsonrpc":"2.0","id":[1],"method":"ping"})", -32600, "null", "not an array"),
      rpc("params a string", R"({"jsonrpc":"2.0","id":8,"method":"ping","params":"x"})", -32600, "8",
          "params must be an object"),
      rpc("params null", R"({"jsonrpc":"2.0","id":8,"method":"tools/list","params":null})", -32600, "8",
          "params must be an object"),
      rpc("invalid notification", R"({"jsonrpc":"2.1","method":"notifications/initialized"})", -32600, "null",
          "\"jsonrpc\": \"2.0\""),
      rpc("initialize again", mcp_test::initialize(9), -32600, "9", "already received"),
      // ---- methods and params ----
      rpc("unknown method", request(10, "resources/list"), -32601, "10", "method not found: \"resources/list\""),
      rpc("reserved rpc. method", request(10, "rpc.discover"), -32601, "10", "method not found"),
      rpc("method name of another case", request(10, "Ping"), -32601, "10", "method not found"),
      rpc("params an array", R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":["agents_search"]})", -32602,
          "11", "params must be an object"),
      rpc("tools/call without params", request(12, "tools/call"), -32602, "12", "tools/call needs params.name"),
      rpc("tools/call without a name", request(12, "tools/call", R"({"arguments":{}})"), -32602, "12",
          "tools/call needs params.name"),
      rpc("tools/call with a numeric name", request(12, "tools/call", R"({"name":7})"), -32602, "12",
          "tools/call needs params.name"),
      rpc("unknown tool", call(13, "agents_delete", "{}"), -32602, "13", "unknown tool: \"agents_delete\""),
      rpc("unknown tool, near miss", call(13, "agents-search", "{}"), -32602, "13", "unknown tool"),
      rpc("arguments an array", call(14, "agents_search", R"(["q"])"), -32602, "14", "params.arguments must be an object"),
      rpc("arguments a string", call(14, "agents_search", R"("q")"), -32602, "14", "params.arguments must be an object"),
      {"unknown notification", R"({"jsonrpc":"2.0","method":"notifications/whatever","params":{}})",
       expect::no_answer, 0, "", ""},
      {"a response from the client", R"({"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}})",
       expect::no_answer, 0, "", ""},
      // ---- agents_search arguments ----
      tool("search: no arguments", search, "{}", "query is required"),
      tool("search: empty query", search, R"({"query":""})", "query must not be empty"),
      tool("search: query a number", search, R"({"query":5})", "query must be a string, not a number"),
      tool("search: k zero", search, R"({"query":"q","k":0})", "k must be at least 1, not 0"),
      tool("search: k negative", search, R"({"query":"q","k":-1})", "k must be at least 1, not -1"),
      tool("search: k a fraction", search, R"({"query":"q","k":2.5})", "k must be an integer, not a fraction"),
      tool("search: k a string", search, R"({"query":"q","k":"10"})", "k must be an integer, not a string"),
      tool("search: k too large", search, R"({"query":"q","k":1001})", "k must be at most 1000, not 1001"),
      tool("search: filters an array", search, R"({"query":"q","filters":["note"]})",
           "filters must be an object, not an array"),
      tool("search: filters.kind a string", search, R"({"query":"q","filters":{"kind":"note"}})",
           "filters.kind must be an array, not a string"),
      tool("search: filters.kind of numbers", search, R"({"query":"q","filters":{"kind":[1]}})",
           "filters.kind[0] must be a string, not a number"),
      tool("search: unknown filter", search, R"({"query":"q","filters":{"author":"mcp"}})",
           "unknown property 'filters.author' (known: kind)"),
      tool("search: layers a string", search, R"({"query":"q","layers":"base"})", "layers must be an array, not a string"),
      tool("search: unknown layer", search, R"({"query":"q","layers":["base","global"]})",
           "layers[1] must be one of base, user, delta, local, not \"global\""),
      tool("search: a path where a layer name goes", search, R"({"query":"q","layers":["../AGENTS.db"]})",
           "layers[0] must be one of base, user, delta, local, not \"../AGENTS.db\""),
      tool("search: unknown argument", search, R"({"query":"q","mode":"hybrid"})",
           "unknown property 'mode' (known: query, k, filters, layers)"),
      tool("search by its dotted alias", "agents.search", "{}", "invalid arguments for agents_search: query is required"),
      // ---- agents_context_write arguments ----
      tool("write: no arguments", write, "{}", "content is required"),
      tool("write: empty content", write, R"({"content":"","kind":"note","confidence":0.5,"scope":"local"})",
           "content must not be empty"),
      tool("write: content too long", write,
           R"({"content":")" + std::string(65537, 'a') + R"(","kind":"note","confidence":0.5,"scope":"local"})",
           "the content has 65537 bytes; at most 65536 are allowed"),
      tool("write: kind missing", write, R"({"content":"c","confidence":0.5,"scope":"local"})", "kind is required"),
      tool("write: reserved kind tombstone", write, write_args({.kind = R"("tombstone")"}),
           "the kind 'tombstone' is reserved"),
      tool("write: reserved kind meta.*", write, write_args({.kind = R"("meta.proposal_event")"}),
           "the kind 'meta.proposal_event' is reserved"),
      tool("write: reserved kind options", write, write_args({.kind = R"("options")"}),
           "the kind 'options' is reserved"),
      tool("write: confidence missing", write, R"({"content":"c","kind":"note","scope":"local"})",
           "confidence is required"),
      tool("write: confidence negative", write, write_args({.confidence = "-0.1"}),
           "confidence must be at least 0, not -0.1"),
      tool("write: confidence above 1", write, write_args({.confidence = "1.5"}),
           "confidence must be at most 1, not 1.5"),
      tool("write: confidence NaN as text", write, write_args({.confidence = R"("NaN")"}),
           "confidence must be a number, not a string"),
      tool("write: confidence null", write, write_args({.confidence = "null"}), "confidence must be a number, not null"),
      tool("write: scope missing", write, R"({"content":"c","kind":"note","confidence":0.5})", "scope is required"),
      tool("write: scope base", write, write_args({.scope = R"("base")"}),
           "scope must be one of local, delta, not \"base\""),
      tool("write: scope user", write, write_args({.scope = R"("user")"}),
           "scope must be one of local, delta, not \"user\""),
      tool("write: a path where the scope goes", write, write_args({.scope = R"("../../etc/passwd")"}),
           "scope must be one of local, delta, not \"../../etc/passwd\""),
      tool("write: sources not an array", write, write_args({.extra = R"("sources":"a.md:1")"}),
           "sources must be an array, not a string"),
      tool("write: a boolean source", write, write_args({.extra = R"("sources":[true])"}),
           "sources[0] must be a string or an integer, not a boolean"),
      tool("write: source chunk id 0", write, write_args({.extra = R"("sources":[0])"}), "sources[0] must be at least 1, not 0"),
      tool("write: an empty source", write, write_args({.extra = R"("sources":[""])"}), "sources[0] must not be empty"),
      tool("write: a source that is no file:line", write, write_args({.extra = R"("sources":["README.md"])"}),
           "source 'README.md' is neither a chunk id nor file:line"),
      tool("write: a source chunk that no layer holds", write, write_args({.extra = R"("sources":[4000000000])"}),
           "source chunk 4000000000 is in none of the layers"),
      tool("write: too many sources", write, write_args({.extra = R"("sources":[)" + [] {
             std::string list;
             for (int i = 0; i < 65; ++i) list += (i ? ",\"a.md:" : "\"a.md:") + std::to_string(i + 1) + "\"";
             return list;
           }() + "]"}),
           "sources must have at most 64 items, not 65"),
      tool("write: unknown argument", write, write_args({.extra = R"("author":"human")"}), "unknown property 'author'"),
      tool("write by its dotted alias", "agents.context.write", write_args({.scope = R"("base")"}),
           "invalid arguments for agents_context_write: scope must be one of local, delta"),
      // ---- agents_context_propose arguments ----
      tool("propose: no arguments", propose, "{}", "context_id is required"),
      tool("propose: context_id zero", propose, R"({"context_id":0})", "context_id must be at least 1, not 0"),
      tool("propose: context_id negative", propose, R"({"context_id":-5})", "context_id must be at least 1, not -5"),
      tool("propose: context_id above uint32", propose, R"({"context_id":4294967296})",
           "context_id must be at most 4294967295, not 4294967296"),
      tool("propose: context_id a string", propose, R"({"context_id":"31"})", "context_id must be an integer, not a string"),
      tool("propose: context_id a fraction", propose, R"({"context_id":31.5})", "context_id must be an integer, not a fraction"),
      tool("propose: target base", propose, R"({"context_id":31,"target":"base"})",
           "target must be one of user, not \"base\""),
      tool("propose: a path where the target goes", propose, R"({"context_id":31,"target":"../AGENTS.user.db"})",
           "target must be one of user, not \"../AGENTS.user.db\""),
      tool("propose: title not a string", propose, R"({"context_id":31,"title":7})", "title must be a string"),
      tool("propose: a chunk of the base layer", propose, R"({"context_id":1})", "chunk 1 is not in the delta layer"),
      tool("propose: a chunk no layer holds", propose, R"({"context_id":123456})", "chunk 123456 is not in the delta layer"),
      tool("propose: unknown argument", propose, R"({"context_id":31,"scope":"user"})", "unknown property 'scope'"),
      tool("propose by its dotted alias", "agents.context.propose", R"({"context_id":0})",
           "invalid arguments for agents_context_propose: context_id must be at least 1"),
  };
}

std::uint64_t file_size(agentctx::io::file_system& fs, const std::string& path) {
  return fs.file_size(path).value_or(0);
}

}  // namespace

TEST_CASE("bad input: every case gets its documented answer and the session keeps serving") {
  mcp_test::agdb_server fixture;
  test_support::write_hash_layer(fixture.fs, fixture.path(agdb::layer_id::base),
                                 {{1, "canonical", "Releases are cut on Tuesdays."}, {2, "note", "Use the CLI."}});
  test_support::write_hash_layer(fixture.fs, fixture.path(agdb::layer_id::delta), {{31, "invariant", "Bar is set."}});
  const std::uint64_t delta_size = file_size(fixture.fs, fixture.path(agdb::layer_id::delta));
  // Lines up to 256 KiB (the 64 KiB content case fits); the oversized case is above it.
  mcp_test::session s = mcp_test::initialized_session(fixture, "2025-11-25", {256 * 1024, 256});

  std::vector<bad_input> cases = bad_inputs();
  cases.push_back(rpc("a line over the limit", call(15, "agents_search", R"({"query":")" + std::string(300000, 'q') + "\"}"),
                      -32600, "null", "bytes; the limit is 262144 bytes per line"));
  std::int64_t ping_id = 100000;
  for (const bad_input& c : cases) {
    CAPTURE(c.name);
    const std::optional<std::string> answer = s.send(c.line);
    if (c.outcome == expect::no_answer) {
      CHECK_FALSE(answer.has_value());
    } else {
      REQUIRE(answer.has_value());
      INFO("answer: " << answer->substr(0, 400));
      simdjson::dom::parser parser;
      simdjson::dom::element root;
      REQUIRE(parser.parse(*answer).get(root) == simdjson::SUCCESS);
      CHECK(std::string_view(root["jsonrpc"].get_string().value()) == "2.0");
      CHECK(simdjson::minify(root["id"].value()) == c.id_json);
      if (c.outcome == expect::rpc_error) {
        CHECK(root["result"].error() == simdjson::NO_SUCH_FIELD);
        CHECK(root["error"]["code"].get_int64().value() == c.code);
        CHECK(std::string_view(root["error"]["message"].get_string().value()).find(c.fragment) != std::string::npos);
      } else {
        CHECK(root["error"].error() == simdjson::NO_SUCH_FIELD);
        CHECK(root["result"]["isError"].get_bool().value());
        CHECK(root["result"]["structuredContent"].error() == simdjson::NO_SUCH_FIELD);
        CHECK(std::string_view(root["result"]["content"].at(0)["text"].get_string().value()).find(c.fragment) !=
              std::string::npos);
      }
    }
    // The session still answers, and nothing was written.
    ++ping_id;
    CHECK(*s.send(request(ping_id, "ping")) ==
          R"({"jsonrpc":"2.0","id":)" + std::to_string(ping_id) + R"(,"result":{}})");
    CHECK_FALSE(fixture.fs.exists(fixture.path(agdb::layer_id::local)).value_or(true));
    CHECK(file_size(fixture.fs, fixture.path(agdb::layer_id::delta)) == delta_size);
  }
  CHECK(s.send(call(16, "agents_search", R"({"query":"Releases are cut on Tuesdays.","k":1})"))
            ->find(R"(\"id\":1,)") != std::string::npos);
}

}  // namespace mcp_bad_input_test
