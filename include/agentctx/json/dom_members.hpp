// agentctx/json/dom_members.hpp: reading a member of an object simdjson has
// parsed when only "present with the right type" or "not" matters (tool
// arguments already checked against a schema, optional members of log lines).
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>

namespace agentctx::json {

/// The string member `key`, or nullopt when it is absent or not a string.
inline std::optional<std::string> optional_string(simdjson::dom::object object, std::string_view key) {
  std::string_view text;
  if (object.at_key(key).get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
  return std::string(text);
}

}  // namespace agentctx::json
