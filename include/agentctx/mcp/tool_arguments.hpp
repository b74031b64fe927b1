// agentctx/mcp/tool_arguments.hpp: reading the arguments of a tool call in a
// handler. The server has already checked them against the tool's input
// schema (tool_registry.hpp), so these readers only tell "absent" from
// "present": a member of the wrong type cannot reach a handler and reads as
// absent here.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/json/dom_members.hpp"
#include "agentctx/mcp/json_schema.hpp"

namespace agentctx::mcp {

/// The string member `key`, or nullopt when it is absent.
inline std::optional<std::string> string_argument(simdjson::dom::object arguments, std::string_view key) {
  return json::optional_string(arguments, key);
}

/// The integer member `key` (7, 7.0 and 7e0 alike), or nullopt when absent.
inline std::optional<std::int64_t> integer_argument(simdjson::dom::object arguments, std::string_view key) {
  simdjson::dom::element value;
  if (arguments.at_key(key).get(value) != simdjson::SUCCESS) return std::nullopt;
  return integer_value(value);
}

/// The array of strings `key`, or an empty list when it is absent.
inline std::vector<std::string> string_list_argument(simdjson::dom::object arguments, std::string_view key) {
  std::vector<std::string> out;
  simdjson::dom::array values;
  if (arguments.at_key(key).get_array().get(values) != simdjson::SUCCESS) return out;
  for (const simdjson::dom::element value : values) {
    std::string_view text;
    if (value.get_string().get(text) == simdjson::SUCCESS) out.emplace_back(text);
  }
  return out;
}

}  // namespace agentctx::mcp
