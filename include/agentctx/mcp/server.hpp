// agentctx/mcp/server.hpp: a transport-independent MCP server for tools.
//
//   mcp::tool_registry tools;
//   tools.add({...});
//   mcp::server server({"agentsdb", "0.1.0"}, std::move(tools));
//   while (read a line) {
//     if (auto answer = server.handle_line(line)) send(*answer);  // never throws
//   }
//
// One server is one MCP session. It answers, one JSON-RPC message per line:
//
//   initialize                 protocol negotiation (protocol_version.hpp);
//                              capabilities {"tools": {}}; serverInfo
//   notifications/initialized  remembered; like every notification, never answered
//   ping                       {}
//   tools/list                 every tool (tool_registry::write_list)
//   tools/call                 finds the tool (name or alias), checks the
//                              arguments against its input schema, calls it;
//                              result {"content": [{"type": "text", ...}],
//                              "structuredContent" (2025-06-18 and later),
//                              "isError"}
//
// Errors (see docs/mcp.md): a line that is not JSON: -32700 with id null;
// a value that is not a valid request: -32600 (id null unless it could be
// read); an unknown method: -32601; params that do not fit the method, and
// an unknown tool: -32602; a line longer than limits.max_line_bytes:
// -32600 with id null (handle_oversized_line; the transport never holds
// it). Arguments that break the tool's input schema and failures of the
// tool itself are *results* with isError true, so that the model sees them.
//
// Batches (a JSON array of messages) exist only in protocol 2025-03-26; they
// are answered with an array of the answers (nothing when all were
// notifications) when that version was negotiated, and refused with -32600
// otherwise. Requests before initialize are served under the latest protocol
// version; a second initialize is refused (-32600).
//
// The server never writes anywhere: diagnostics (refused messages, tool
// errors, the client's name) go to the optional log sink, one line each.
// Not thread-safe: one session is one sequence of lines.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "agentctx/json/canonical_form.hpp"
#include "agentctx/json/dom_nesting.hpp"
#include "agentctx/json/long_integers.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/mcp/jsonrpc.hpp"
#include "agentctx/mcp/protocol_version.hpp"
#include "agentctx/mcp/tool_registry.hpp"

namespace agentctx::mcp {

static_assert(simdjson::DEFAULT_MAX_DEPTH == json::max_nesting_depth, "server::parse assumes parser_ allows the limit");

struct server_info {
  std::string name;               ///< serverInfo.name
  std::string version;            ///< serverInfo.version
  std::string title = {};         ///< serverInfo.title (2025-06-18 and later); may be empty
  std::string instructions = {};  ///< initialize's "instructions" for the model; may be empty
};

struct server_limits {
  /// The longest line (one message, without its '\n') the transport reads.
  std::size_t max_line_bytes = std::size_t{1} << 20;
  /// The most messages one batch may hold.
  std::size_t max_batch_messages = 256;
};

class server {
 public:
  /// Receives one line of diagnostics at a time (no trailing newline).
  using log_sink = std::function<void(std::string_view line)>;

  server(server_info info, tool_registry tools, server_limits limits = {})
      : info_(std::move(info)), tools_(std::move(tools)), limits_(limits) {}

  /// Handles one line (one JSON-RPC message or batch, without the '\n'; a
  /// '\r' before it is JSON whitespace). Returns the answer to send as one
  /// line, or nullopt when there is none (notifications, responses, blank
  /// lines). Never throws: an unexpected failure is answered with -32603.
  std::optional<std::string> handle_line(std::string_view line) noexcept {
    try {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
      simdjson::dom::element root;
      if (const auto failure = parse(line, root); failure != simdjson::SUCCESS) {
        log(std::string("parse error: ") + simdjson::error_message(failure));
        return error_response({}, rpc_error_code::parse_error,
                              std::string("parse error: ") + simdjson::error_message(failure));
      }
      if (root.is_array()) return handle_batch(root.get_array().value_unsafe());
      return handle_message(root);
    } catch (const std::exception& e) {
      return internal_error(e.what());
    } catch (...) {
      return internal_error("unknown exception");
    }
  }

  /// The answer to a line of `size` bytes that exceeded
  /// limits().max_line_bytes and was skipped (-32600, id null).
  std::optional<std::string> handle_oversized_line(std::size_t size) noexcept {
    try {
      const std::string message = "the message has " + std::to_string(size) + " bytes; the limit is " +
                                  std::to_string(limits_.max_line_bytes) + " bytes per line";
      log(message);
      return error_response({}, rpc_error_code::invalid_request, message);
    } catch (...) {
      return std::nullopt;
    }
  }

  /// The negotiated protocol version; empty before initialize.
  std::string_view protocol_version() const noexcept { return version_; }
  /// True once notifications/initialized has arrived.
  bool initialized() const noexcept { return initialized_; }
  const server_limits& limits() const noexcept { return limits_; }
  const tool_registry& tools() const noexcept { return tools_; }
  void set_log(log_sink sink) { log_ = std::move(sink); }

 private:
  // The version rules apply under: the negotiated one, else the latest.
  std::string_view effective_version() const noexcept {
    return version_.empty() ? latest_protocol_version : std::string_view(version_);
  }

  // One line into `root`. Integers beyond 64 bits are read as the nearest
  // double, as the library's JSON readers do (a package's x-* member may
  // hold one). Arrays and objects may nest json::max_nesting_depth levels,
  // counted as JSON.parse counts them (dom_nesting.hpp): a line simdjson
  // finds one level too deep is parsed again by a parser allowing one more.
  simdjson::error_code parse(std::string_view line, simdjson::dom::element& root) {
    const auto code = json::parse_widening_long_integers(parser_, line, widened_, root);
    if (code != simdjson::DEPTH_ERROR) return code;
    if (deeper_parser_.max_depth() != json::max_nesting_depth + 1) {
      if (const auto allocated = deeper_parser_.allocate(line.size(), json::max_nesting_depth + 1);
          allocated != simdjson::SUCCESS) {
        return allocated;
      }
    }
    // Another fault the first parse did not reach is reported as itself.
    if (const auto deeper = json::parse_widening_long_integers(deeper_parser_, line, widened_, root);
        deeper != simdjson::SUCCESS) {
      return deeper;
    }
    return json::nests_deeper_than(root, json::max_nesting_depth) ? simdjson::DEPTH_ERROR : simdjson::SUCCESS;
  }

  void log(std::string_view line) const {
    if (log_) log_(line);
  }

  std::optional<std::string> internal_error(std::string_view what) noexcept {
    try {
      log("internal error: " + std::string(what));
      return error_response({}, rpc_error_code::internal_error, "internal error: " + std::string(what));
    } catch (...) {
      return std::nullopt;
    }
  }

  std::optional<std::string> handle_batch(simdjson::dom::array batch) {
    const auto refuse = [&](std::string message) {
      log(message);
      return error_response({}, rpc_error_code::invalid_request, message);
    };
    if (!allows_batches(effective_version())) {
      return refuse("batches are not supported in protocol version " + std::string(effective_version()) +
                    " (only 2025-03-26 has them)");
    }
    const std::size_t count = batch.size();
    if (count == 0) return refuse("the batch is empty");
    if (count > limits_.max_batch_messages) {
      return refuse("the batch has " + std::to_string(count) + " messages; at most " +
                    std::to_string(limits_.max_batch_messages) + " are allowed");
    }
    std::string out = "[";
    for (const simdjson::dom::element message : batch) {
      std::optional<std::string> answer;
      if (message.is_array()) {
        answer = refuse("a batch must not contain a batch");
      } else {
        answer = handle_message(message);
      }
      if (!answer) continue;
      if (out.size() > 1) out += ',';
      out += *answer;
    }
    if (out.size() == 1) return std::nullopt;
    out += ']';
    return out;
  }

  std::optional<std::string> handle_message(simdjson::dom::element value) {
    const decoded_message message = decode_message(value);
    switch (message.kind) {
      case message_kind::response:
        log("ignored a response: this server sends no requests");
        return std::nullopt;
      case message_kind::invalid:
        log(message.error_message);
        return error_response(message.id, message.error_code, message.error_message);
      case message_kind::notification:
        if (message.method == "notifications/initialized") initialized_ = true;
        if (!message.method.starts_with("notifications/")) {
          // A request without its id: never answered, so never run (a
          // client that left the id out by mistake would not learn what a
          // tools/call did), but said here.
          log("ignored a notification of method " + quoted_excerpt(message.method) +
              ": a message without an id is not answered, so it is not run (a request needs an id)");
        }
        return std::nullopt;
      case message_kind::request:
        break;
    }
    if (message.method == "initialize") return initialize(message);
    if (message.method == "ping") return result_response(message.id, "{}");
    if (message.method == "tools/list") {
      std::string list;
      json::writer w(list);
      tools_.write_list(w, has_structured_tool_output(effective_version()));
      return result_response(message.id, list);
    }
    if (message.method == "tools/call") return call_tool(message);
    const std::string problem = "method not found: " + quoted_excerpt(message.method);
    log(problem);
    return error_response(message.id, rpc_error_code::method_not_found, problem);
  }

  std::string invalid_params(const decoded_message& message, const std::string& problem) const {
    log(problem);
    return error_response(message.id, rpc_error_code::invalid_params, problem);
  }

  std::string initialize(const decoded_message& message) {
    if (!version_.empty()) {
      const std::string problem = "initialize was already received; this session speaks protocol " + version_;
      log(problem);
      return error_response(message.id, rpc_error_code::invalid_request, problem);
    }
    std::string_view requested;
    if (!message.params || message.params->at_key("protocolVersion").get_string().get(requested) != simdjson::SUCCESS) {
      return invalid_params(message, "initialize needs params.protocolVersion (a string)");
    }
    version_ = std::string(negotiate_protocol_version(requested));
    std::string_view client_name;
    std::string_view client_version;
    if (message.params->at_pointer("/clientInfo/name").get_string().get(client_name) != simdjson::SUCCESS) {
      client_name = "(unnamed)";
    }
    if (message.params->at_pointer("/clientInfo/version").get_string().get(client_version) != simdjson::SUCCESS) {
      client_version = "";
    }
    log("client " + quoted_excerpt(client_name) + " " + quoted_excerpt(client_version) + " asked for protocol " +
        quoted_excerpt(requested) + "; speaking " + version_);

    std::string result;
    json::writer w(result);
    w.begin_object();
    w.key("protocolVersion").value(version_);
    w.key("capabilities").begin_object().key("tools").begin_object().end_object().end_object();
    w.key("serverInfo").begin_object();
    w.key("name").value(info_.name);
    w.key("version").value(info_.version);
    if (!info_.title.empty() && has_structured_tool_output(version_)) w.key("title").value(info_.title);
    w.end_object();
    if (!info_.instructions.empty()) w.key("instructions").value(info_.instructions);
    w.end_object();
    return result_response(message.id, result);
  }

  std::string call_tool(const decoded_message& message) {
    std::string_view name;
    if (!message.params || message.params->at_key("name").get_string().get(name) != simdjson::SUCCESS) {
      return invalid_params(message, "tools/call needs params.name (a string)");
    }
    const tool_definition* tool = tools_.find(name);
    if (tool == nullptr) return invalid_params(message, "unknown tool: " + quoted_excerpt(name));
    simdjson::dom::element arguments;
    if (message.params->at_key("arguments").get(arguments) != simdjson::SUCCESS) {
      if (empty_object_parser_.parse("{}", 2).get(arguments) != simdjson::SUCCESS) {
        return error_response(message.id, rpc_error_code::internal_error, "internal error: cannot parse {}");
      }
    }
    if (!arguments.is_object()) return invalid_params(message, "params.arguments must be an object");

    tool_result outcome;
    if (auto checked = tool->input_schema.validate(arguments, "the arguments"); !checked) {
      std::string refusal = "invalid arguments for " + tool->name + ": " + checked.error().message;
      outcome = tool->failures.invalid_arguments ? tool->failures.invalid_arguments(refusal)
                                                 : tool_result::failure(std::move(refusal));
    } else {
      std::optional<std::string> thrown;
      try {
        outcome = tool->handler(arguments.get_object().value_unsafe());
      } catch (const std::exception& e) {
        thrown = "internal error in " + tool->name + ": " + e.what();
      } catch (...) {
        thrown = "internal error in " + tool->name + ": an exception that is not a std::exception";
      }
      if (thrown) {
        outcome = tool->failures.internal_error ? tool->failures.internal_error(*thrown)
                                                : tool_result::failure(std::move(*thrown));
      }
    }
    if (outcome.is_error) log(tool->name + ": " + outcome.text);

    std::string result;
    json::writer w(result);
    w.begin_object();
    w.key("content").begin_array();
    w.begin_object().key("type").value("text").key("text").value(outcome.text).end_object();
    w.end_array();
    if (!outcome.is_error && outcome.structured_json && has_structured_tool_output(effective_version())) {
      w.key("structuredContent").raw(*outcome.structured_json);
    }
    w.key("isError").value(outcome.is_error);
    w.end_object();
    return result_response(message.id, result);
  }

  server_info info_;
  tool_registry tools_;
  server_limits limits_;
  std::string version_;
  bool initialized_ = false;
  simdjson::dom::parser parser_;  // simdjson's default max_depth: json::max_nesting_depth
  simdjson::dom::parser deeper_parser_;  // one level more, for the lines parser_ finds too deep
  std::string widened_;  // the line with long integers widened, when parse_widening_long_integers needed it
  simdjson::dom::parser empty_object_parser_;  // for calls without "arguments"
  log_sink log_;
};

}  // namespace agentctx::mcp
