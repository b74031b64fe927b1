// Helpers for the MCP tests: request lines, a session that feeds lines to a
// server the way the stdio transport does (through a bounded line_reader),
// and access to the answers as parsed JSON.
#pragma once

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/mcp_tools.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/mcp/line_reader.hpp"
#include "agentctx/mcp/server.hpp"

namespace mcp_test {

namespace mcp = agentctx::mcp;
namespace agdb = agentctx::agdb;

/// A request line: {"jsonrpc":"2.0","id":ID,"method":METHOD[,"params":PARAMS]}.
inline std::string request(std::int64_t id, std::string_view method, std::string_view params_json = {}) {
  std::string out = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) + '"';
  if (!params_json.empty()) out += R"(,"params":)" + std::string(params_json);
  return out + "}";
}

/// A tools/call line.
inline std::string call(std::int64_t id, std::string_view tool, std::string_view arguments_json) {
  return request(id, "tools/call", R"({"name":")" + std::string(tool) + R"(","arguments":)" +
                                       std::string(arguments_json) + "}");
}

/// An initialize line asking for `version`.
inline std::string initialize(std::int64_t id, std::string_view version = "2025-11-25") {
  return request(id, "initialize",
                 R"({"protocolVersion":")" + std::string(version) +
                     R"(","capabilities":{},"clientInfo":{"name":"doctest","version":"1"}})");
}

/// A server session. Lines go through a line_reader (limit: the server's
/// max_line_bytes) exactly as serve_stdio sends them.
class session {
 public:
  explicit session(mcp::server server) : lines_(server.limits().max_line_bytes), server_(std::move(server)) {
    server_.set_log([sink = log](std::string_view line) { sink->emplace_back(line); });
  }

  /// The answers to `line` (one line of input; a line over the limit gives
  /// the oversized-line error): zero or one.
  std::vector<std::string> send_all(std::string_view line) {
    std::vector<std::string> answers;
    const auto on_line = [&](const mcp::line_reader::line& l) {
      auto answer = l.oversized ? server_.handle_oversized_line(l.size) : server_.handle_line(l.text);
      if (answer) answers.push_back(std::move(*answer));
      return true;
    };
    lines_.feed(line, on_line);
    lines_.feed("\n", on_line);
    return answers;
  }

  /// The one answer to `line`, or nullopt when there is none.
  std::optional<std::string> send(std::string_view line) {
    std::vector<std::string> answers = send_all(line);
    REQUIRE(answers.size() <= 1);
    if (answers.empty()) return std::nullopt;
    return std::move(answers.front());
  }

  /// The parsed answer to `line`, which must have one (valid while the
  /// session lives and until the next call of answer()).
  simdjson::dom::element answer(std::string_view line) {
    const std::optional<std::string> text = send(line);
    INFO("request: " << line.substr(0, 300));
    REQUIRE(text.has_value());
    last_ = *text;
    simdjson::dom::element root;
    INFO("answer: " << last_);
    REQUIRE(parser_.parse(last_).get(root) == simdjson::SUCCESS);
    return root;
  }

  /// The "result" of the answer to `line`; fails when it is an error.
  simdjson::dom::element result(std::string_view line) {
    const simdjson::dom::element root = answer(line);
    INFO("answer: " << last_);
    simdjson::dom::element out;
    REQUIRE(root["result"].get(out) == simdjson::SUCCESS);
    return out;
  }

  /// The tools/call result of `tool` with `arguments_json`.
  simdjson::dom::element call_tool(std::string_view tool, std::string_view arguments_json) {
    return result(call(++next_id_, tool, arguments_json));
  }

  /// The structured content of a successful call (checked against its text
  /// content: the same JSON).
  simdjson::dom::element call_ok(std::string_view tool, std::string_view arguments_json) {
    const simdjson::dom::element r = call_tool(tool, arguments_json);
    INFO("answer: " << last_);
    REQUIRE_FALSE(r["isError"].get_bool().value());
    simdjson::dom::element structured;
    REQUIRE(r["structuredContent"].get(structured) == simdjson::SUCCESS);
    // The same JSON: both as simdjson writes them (its number spelling
    // differs from the server's: 1e-8 is its 1e-08).
    simdjson::dom::parser text_parser;
    simdjson::dom::element text_root;
    REQUIRE(text_parser.parse(std::string(r["content"].at(0)["text"].get_string().value())).get(text_root) ==
            simdjson::SUCCESS);
    CHECK(simdjson::minify(text_root) == simdjson::minify(structured));
    return structured;
  }

  /// The error text of a call that must fail with isError.
  std::string call_error(std::string_view tool, std::string_view arguments_json) {
    const simdjson::dom::element r = call_tool(tool, arguments_json);
    INFO("answer: " << last_);
    REQUIRE(r["isError"].get_bool().value());
    CHECK(r["structuredContent"].error() == simdjson::NO_SUCH_FIELD);
    return std::string(r["content"].at(0)["text"].get_string().value());
  }

  mcp::server& server() { return server_; }
  const std::string& last_answer() const { return last_; }
  /// What the server logged (shared with its log sink, so sessions move).
  std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();

 private:
  mcp::line_reader lines_;
  mcp::server server_;
  simdjson::dom::parser parser_;
  std::string last_;
  std::int64_t next_id_ = 1000;
};

/// The AGDB tools over an in-memory file system whose four layers are the
/// standard files of /repo (none exists yet).
struct agdb_server {
  agentctx::io::memory_file_system fs;
  std::vector<agdb::layer_location> layers = agdb::standard_layer_locations("/repo");

  agdb_server() { REQUIRE(fs.create_dir("/repo").has_value()); }

  /// A server for these layers (the fixture must outlive it).
  mcp::server make_server(mcp::server_limits limits = {}) {
    mcp::tool_registry tools;
    agdb::mcp_tool_options options;
    options.layers = layers;
    auto added = agdb::add_mcp_tools(tools, fs, options);
    INFO((added ? std::string() : added.error().describe()));
    REQUIRE(added.has_value());
    return mcp::server({"agentsdb-test", "0.0.1", "Test", "Use the tools."}, std::move(tools), limits);
  }

  std::string path(agdb::layer_id layer) const { return "/repo/" + std::string(agdb::standard_file_name(layer)); }
};

/// A session with the AGDB tools, initialized at `version`.
inline session initialized_session(agdb_server& fixture, std::string_view version = "2025-11-25",
                                   mcp::server_limits limits = {}) {
  session s(fixture.make_server(limits));
  REQUIRE(s.send(initialize(1, version)).has_value());
  REQUIRE_FALSE(s.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").has_value());
  return s;
}

}  // namespace mcp_test
