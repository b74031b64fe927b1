// agentctx/json/json_type.hpp: the type of a parsed JSON value in words, for
// error messages about untrusted input ("must be a string, not an array").
#pragma once

#include <simdjson.h>

#include <string_view>

namespace agentctx::json {

/// "an object", "an array", "a string", "a number", "a boolean" or "null".
inline std::string_view describe_type(simdjson::dom::element value) noexcept {
  switch (value.type()) {
    case simdjson::dom::element_type::ARRAY: return "an array";
    case simdjson::dom::element_type::OBJECT: return "an object";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: return "a number";
    case simdjson::dom::element_type::STRING: return "a string";
    case simdjson::dom::element_type::BOOL: return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "a value";
}

}  // namespace agentctx::json
