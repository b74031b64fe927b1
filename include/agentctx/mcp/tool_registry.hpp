// agentctx/mcp/tool_registry.hpp: the tools an MCP server offers.
//
// A tool is a name, a description, the JSON Schema of its arguments, an
// optional JSON Schema of its structured result, and a handler. The server
// (server.hpp) lists them for tools/list and, for tools/call, finds the tool
// (by name or alias), checks the arguments against the input schema and
// only then calls the handler, so a handler reads arguments that are known
// to have the declared types, ranges and required members.
//
// A handler reports failures of the call itself (a refused write, a missing
// record) as tool_result::failure(message): MCP returns them as a result
// with isError true, which the model sees and can act on; JSON-RPC errors
// are kept for protocol problems (server.hpp).
#pragma once

#include <simdjson.h>

#include <functional>
#include <memory>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/core/result.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/mcp/json_schema.hpp"

namespace agentctx::mcp {

/// What a tool call produced.
struct tool_result {
  bool is_error = false;
  /// The text content the model reads: the JSON result, or the error message.
  std::string text;
  /// The structured result (one JSON object, conforming to the tool's output
  /// schema); sent as structuredContent to clients of protocol 2025-06-18
  /// and later. Unset on errors.
  std::optional<std::string> structured_json;

  static tool_result failure(std::string message) { return {true, std::move(message), std::nullopt}; }
  /// A JSON object result, as both text and structured content.
  static tool_result object(std::string json) { return {false, json, std::move(json)}; }
};

/// Called with arguments that passed the tool's input schema. Should not
/// throw; the server turns an exception into an isError result.
using tool_handler = std::function<tool_result(simdjson::dom::object arguments)>;

/// How a family of tools words the failures the server itself reports for
/// them, given the whole message; unset: the message as the result's text.
/// A family whose errors are structured (Relay's protocol errors) gives
/// these the same structure.
struct failure_wording {
  /// Arguments that break input_schema ("invalid arguments for T: ...").
  tool_result (*invalid_arguments)(const std::string& message) = nullptr;
  /// An exception the handler threw ("internal error in T: ...").
  tool_result (*internal_error)(const std::string& message) = nullptr;
};

struct tool_definition {
  std::string name;         ///< 1 to 128 of A-Z a-z 0-9 _ - . (the MCP naming rule)
  std::string title;        ///< display name (protocol 2025-06-18 and later)
  std::string description;  ///< what the tool does, for the model
  json_schema input_schema = json_schema::object();
  std::optional<json_schema> output_schema;
  std::vector<std::string> aliases;  ///< other names tools/call accepts; never listed
  tool_handler handler;
  failure_wording failures;
};

class tool_registry {
 public:
  /// True when `name` follows the MCP tool naming rule.
  static bool is_valid_name(std::string_view name) noexcept {
    if (name.empty() || name.size() > 128) return false;
    for (const char c : name) {
      const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                           c == '-' || c == '.';
      if (!allowed) return false;
    }
    return true;
  }

  /// Adds a tool. Errors (invalid_argument): a name or alias that breaks the
  /// naming rule or is already taken, no handler, an input or output schema
  /// that is not an object schema (MCP requires both to be).
  result<void> add(tool_definition tool) {
    if (!tool.handler) return fail(errc::invalid_argument, "tool " + tool.name + " has no handler");
    if (!tool.input_schema.is_object_schema() || (tool.output_schema && !tool.output_schema->is_object_schema())) {
      return fail(errc::invalid_argument, "the schemas of tool " + tool.name + " must be object schemas");
    }
    std::vector<std::string_view> names{tool.name};
    names.insert(names.end(), tool.aliases.begin(), tool.aliases.end());
    for (const std::string_view name : names) {
      if (!is_valid_name(name)) return fail(errc::invalid_argument, "'" + std::string(name) + "' is not a valid tool name");
      if (find(name) != nullptr) return fail(errc::invalid_argument, "tool name " + std::string(name) + " is taken");
    }
    tools_.push_back(std::move(tool));
    return {};
  }

  /// The tool called `name` or having it as an alias; null when none.
  /// Pointers stay valid until the next add().
  const tool_definition* find(std::string_view name) const noexcept {
    for (const tool_definition& tool : tools_) {
      if (tool.name == name) return &tool;
      for (const std::string& alias : tool.aliases) {
        if (alias == name) return &tool;
      }
    }
    return nullptr;
  }

  const std::vector<tool_definition>& tools() const noexcept { return tools_; }

  /// The tools/list result: {"tools":[{"name","description","inputSchema"}]},
  /// with "title" and "outputSchema" when `structured` (protocol 2025-06-18
  /// and later). All tools fit on one page: there is no nextCursor.
  void write_list(json::writer& w, bool structured) const {
    w.begin_object();
    w.key("tools").begin_array();
    for (const tool_definition& tool : tools_) {
      w.begin_object();
      w.key("name").value(tool.name);
      if (structured && !tool.title.empty()) w.key("title").value(tool.title);
      w.key("description").value(tool.description);
      w.key("inputSchema");
      tool.input_schema.write(w);
      if (structured && tool.output_schema) {
        w.key("outputSchema");
        tool.output_schema->write(w);
      }
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }

 private:
  std::vector<tool_definition> tools_;
};

/// A tool whose handler is a plain function of shared state and the
/// arguments, as the servers of the library declare theirs in a table.
template <class State>
struct stateful_tool {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  json_schema input;
  json_schema output;
  tool_result (*run)(State& state, simdjson::dom::object arguments);
};

/// Adds every tool of `specs`, each calling its function with `state`
/// (which the handlers share, and keep alive), and reporting the server's
/// own failures of them as `failures` words them. Errors: those of add().
template <class State, std::size_t N>
result<void> add_stateful_tools(tool_registry& registry, const std::shared_ptr<State>& state,
                                const stateful_tool<State> (&specs)[N],
                                failure_wording failures = {}) {
  for (const stateful_tool<State>& spec : specs) {
    AGENTCTX_TRY(registry.add(
        {.name = std::string(spec.name),
         .title = std::string(spec.title),
         .description = std::string(spec.description),
         .input_schema = spec.input,
         .output_schema = spec.output,
         .aliases = {},
         .handler = [state, run = spec.run](simdjson::dom::object arguments) { return run(*state, arguments); },
         .failures = failures}));
  }
  return {};
}

}  // namespace agentctx::mcp
