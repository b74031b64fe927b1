// agentctx/json/f32_array.hpp: JSON arrays of numbers read as f32 vectors.
//
// Vectors cross agentctx's boundaries as JSON arrays of numbers: the answers
// of a `command` embedder (agdb/command_embedder.hpp) and the query vectors a
// user types (`agentsdb search --query-vec '[0.1, -0.2]'`). Both go through
// these two functions, so they accept and reject exactly the same inputs:
//
//   - every element must be a JSON number (integers are fine);
//   - every number must be finite and within the f32 range, checked before
//     narrowing (a double beyond FLT_MAX has no f32 value; simdjson already
//     rejects literals that overflow a double);
//   - a value is rounded to the nearest f32.
//
// Errors are invalid_value values whose message names the 1-based position
// of the first bad element ("value 3 is not a number"). Nothing throws.
#pragma once

#include <simdjson.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/result.hpp"

namespace agentctx::json {

/// Reads `values` into `out`, which must have exactly values.size() elements
/// (check the count first: callers word that error in their own terms).
inline result<void> read_f32_values(simdjson::dom::array values, std::span<float> out) {
  std::size_t i = 0;
  for (simdjson::dom::element value : values) {
    if (i == out.size()) return fail(errc::invalid_value, "more values than expected");
    double number = 0;
    if (value.get_double().get(number) != simdjson::SUCCESS) {
      return fail(errc::invalid_value, "value " + std::to_string(i + 1) + " is not a number");
    }
    if (!std::isfinite(number) || std::fabs(number) > std::numeric_limits<float>::max()) {
      return fail(errc::invalid_value, "value " + std::to_string(i + 1) + " is not a finite f32");
    }
    out[i++] = static_cast<float>(number);
  }
  if (i != out.size()) return fail(errc::invalid_value, "fewer values than expected");
  return {};
}

/// Parses `text`, which must be one JSON array of numbers (whitespace around
/// it allowed), into a vector. Errors (invalid_value): not JSON, not an array,
/// or an element as read_f32_values() describes.
inline result<std::vector<float>> parse_f32_array(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::array array;
  const simdjson::padded_string padded(text);
  if (parser.parse(padded).get_array().get(array) != simdjson::SUCCESS) {
    return fail(errc::invalid_value, "not a JSON array of numbers");
  }
  std::vector<float> out(array.size());
  AGENTCTX_TRY(read_f32_values(array, out));
  return out;
}

}  // namespace agentctx::json
