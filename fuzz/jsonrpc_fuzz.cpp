// fuzz/jsonrpc_fuzz.cpp: libFuzzer target for the MCP server core
// (agentctx/mcp) with the AGDB tools of `agentsdb serve` and the Relay tools
// of `relay serve` (a store on the same in-memory file system), which read
// every byte an MCP client sends.
//
// The input is a session: its bytes go through the stdio transport's
// line_reader (a 2 KiB line limit, so oversized lines are common) into one
// mcp::server whose tools work on a fresh in-memory file system holding a
// small base layer. Searches, writes and proposals really run. For every
// answer the server gives:
//   - it is one line of valid JSON (no raw '\n');
//   - it is a JSON-RPC 2.0 response object, or under protocol 2025-03-26 an
//     array of them;
//   - each response has "jsonrpc": "2.0", an "id" (a string, an integer or
//     null), and exactly one of "result" and "error";
//   - an error's code is one of the five JSON-RPC codes the server answers;
//   - a tools/call result holds content [{"type": "text", "text"}] and a
//     boolean isError;
//   - a relay_* tool's error text is the protocol error, a JSON object
//     {"error": {"code", "status", "message"}} (bad arguments and exceptions
//     included).
// Nothing may crash, leak, hang or trip a sanitizer. A broken rule traps
// (__builtin_trap), so libFuzzer keeps the input.
//
// Seeds: fuzz/seeds/jsonrpc_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target jsonrpc_fuzz
//   build-fuzz/fuzz/jsonrpc_fuzz -dict=fuzz/jsonrpc_fuzz.dict corpus/ fuzz/seeds/jsonrpc_fuzz/
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/agdb/mcp_tools.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/mcp/line_reader.hpp"
#include "agentctx/mcp/server.hpp"
#include "agentctx/relay/mcp_tools.hpp"
#include "agentctx/relay/store.hpp"

namespace {

namespace agdb = agentctx::agdb;
namespace mcp = agentctx::mcp;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

// The bytes of a base layer of three hash-embedded chunks (built once).
const std::vector<std::byte>& base_layer_bytes() {
  static const std::vector<std::byte> bytes = [] {
    agentctx::io::memory_file_system fs;
    agdb::hash_embedder embedder(16);
    agdb::layer_contents layer;
    layer.metadata_json = agdb::layer_metadata_json(embedder.profile(), "fuzz", "1");
    layer.embeddings.dim = 16;
    const std::vector<std::string_view> texts = {"Releases are cut on Tuesdays.", "The CLI lives in cli/.", "{}"};
    const char* kinds[] = {"canonical", "note", "options"};
    for (std::size_t i = 0; i < texts.size(); ++i) {
      agdb::chunk c;
      c.id = static_cast<std::uint32_t>(i + 1);
      c.kind = kinds[i];
      c.content = std::string(texts[i]);
      c.author = "human";
      if (i == 1) c.sources = {agdb::source_ref::to_string("README.md:1"), agdb::source_ref::to_chunk(1)};
      layer.chunks.push_back(c);
    }
    layer.embeddings.f32_values.resize(texts.size() * 16);
    require(embedder.embed(texts, layer.embeddings.f32_values).has_value());
    require(agdb::write_layer(fs, "/AGENTS.db", layer).has_value());
    auto mapped = fs.map("/AGENTS.db");
    require(mapped.has_value());
    return std::vector<std::byte>(mapped->bytes().begin(), mapped->bytes().end());
  }();
  return bytes;
}

bool is_error_code(std::int64_t code) {
  return code == -32700 || code == -32600 || code == -32601 || code == -32602 || code == -32603;
}

// The tool a tools/call line names, when it is one line that parses (for
// checking the shape of relay_* errors).
bool names_relay_tool(simdjson::dom::parser& parser, std::string_view line) {
  simdjson::dom::element root;
  if (parser.parse(line).get(root) != simdjson::SUCCESS) return false;
  std::string_view name;
  if (root["params"]["name"].get_string().get(name) != simdjson::SUCCESS) return false;
  return name.starts_with("relay_");
}

void check_relay_error_text(simdjson::dom::parser& parser, std::string_view text) {
  simdjson::dom::element root;
  require(parser.parse(text).get(root) == simdjson::SUCCESS);
  require(root["error"]["code"].is_string());
  require(root["error"]["status"].is_int64());
  require(root["error"]["message"].is_string());
}

void check_response(simdjson::dom::element response, bool relay_call = false) {
  simdjson::dom::object object;
  require(response.get_object().get(object) == simdjson::SUCCESS);
  std::string_view version;
  require(object["jsonrpc"].get_string().get(version) == simdjson::SUCCESS && version == "2.0");
  simdjson::dom::element id;
  require(object["id"].get(id) == simdjson::SUCCESS);
  require(id.is_string() || id.is_int64() || id.is_uint64() || id.is_null());
  const bool has_result = object["result"].error() == simdjson::SUCCESS;
  const bool has_error = object["error"].error() == simdjson::SUCCESS;
  require(has_result != has_error);
  if (has_error) {
    std::int64_t code = 0;
    require(object["error"]["code"].get_int64().get(code) == simdjson::SUCCESS && is_error_code(code));
    require(object["error"]["message"].is_string());
    return;
  }
  simdjson::dom::array content;
  if (object["result"]["content"].get_array().get(content) == simdjson::SUCCESS) {
    require(content.size() == 1);
    require(content.at(0)["type"].get_string().value_unsafe() == "text");
    require(content.at(0)["text"].is_string());
    require(object["result"]["isError"].is_bool());
    if (relay_call && object["result"]["isError"].get_bool().value_unsafe()) {
      simdjson::dom::parser text_parser;
      check_relay_error_text(text_parser, content.at(0)["text"].get_string().value_unsafe());
    }
  }
}

void check_answer(simdjson::dom::parser& parser, const std::string& answer, bool relay_call) {
  require(answer.find('\n') == std::string::npos);
  simdjson::dom::element root;
  require(parser.parse(answer).get(root) == simdjson::SUCCESS);
  if (root.is_array()) {
    simdjson::dom::array batch = root.get_array().value_unsafe();
    require(batch.size() > 0);
    for (const simdjson::dom::element response : batch) check_response(response);
  } else {
    check_response(root, relay_call);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  agentctx::io::memory_file_system fs;
  require(fs.create_dir("/repo").has_value());
  {
    auto file = fs.open("/repo/AGENTS.db", agentctx::io::create_truncate);
    require(file.has_value());
    require((*file)->append(base_layer_bytes()).has_value());
    require((*file)->close().has_value());
  }
  mcp::tool_registry tools;
  agdb::mcp_tool_options options;
  options.layers = agdb::standard_layer_locations("/repo");
  options.max_k = 50;
  require(agdb::add_mcp_tools(tools, fs, options).has_value());
  // The Relay tools, over a store on the same file system (writes really run).
  agentctx::relay::store_options relay_options;
  relay_options.clock = [] { return std::uint64_t{1'776'542'400'000}; };
  std::uint64_t next_random = 0;
  relay_options.random = [&next_random] { return ++next_random * 0x9e3779b97f4a7c15ull; };
  auto relay_store = agentctx::relay::store::open(fs, "/relay", relay_options);
  require(relay_store.has_value());
  agdb::hash_embedder relay_embedder(16);
  require(agentctx::relay::add_mcp_tools(tools, *relay_store, relay_embedder).has_value());
  mcp::server_limits limits;
  limits.max_line_bytes = 2048;
  limits.max_batch_messages = 16;
  mcp::server server({"fuzz", "1"}, std::move(tools), limits);

  simdjson::dom::parser parser;
  mcp::line_reader lines(limits.max_line_bytes);
  const auto on_line = [&](const mcp::line_reader::line& line) {
    const std::optional<std::string> answer =
        line.oversized ? server.handle_oversized_line(line.size) : server.handle_line(line.text);
    if (line.oversized) require(answer.has_value());
    if (answer) {
      simdjson::dom::parser line_parser;
      check_answer(parser, *answer, !line.oversized && names_relay_tool(line_parser, line.text));
    }
    return true;
  };
  lines.feed(std::string_view(reinterpret_cast<const char*>(data), size), on_line);
  lines.finish(on_line);
  return 0;
}
