// agentctx/json/dom_nesting.hpp: how deep a value simdjson has parsed nests,
// counted as JSON readers count it (JSON.parse, canonicalize, the library's
// canonical JSON): every array and object is a level, a scalar is none, so
// "[]" and "[1]" are both one level deep.
//
// simdjson's parser counts differently: its max_depth counts a scalar inside
// the innermost container as a level too. A reader that allows N levels
// therefore refuses "[[...[1]...]]" of N levels with a parser of max_depth N,
// and accepts N + 1 empty containers with one of N + 1. Such a reader parses
// with max_depth N, and only when simdjson answers DEPTH_ERROR parses again
// with N + 1 and asks nests_deeper_than(root, N): the common case pays
// nothing.
#pragma once

#include <simdjson.h>

namespace agentctx::json {

/// True when arrays and objects nest more than `levels` deep in `node`.
/// Recursive: call it only on a document parsed with a bounded max_depth.
inline bool nests_deeper_than(simdjson::dom::element node, unsigned levels) {
  simdjson::dom::array items;
  if (node.get_array().get(items) == simdjson::SUCCESS) {
    if (levels == 0) return true;
    for (const simdjson::dom::element item : items) {
      if (nests_deeper_than(item, levels - 1)) return true;
    }
    return false;
  }
  simdjson::dom::object members;
  if (node.get_object().get(members) == simdjson::SUCCESS) {
    if (levels == 0) return true;
    for (const simdjson::dom::key_value_pair member : members) {
      if (nests_deeper_than(member.value, levels - 1)) return true;
    }
  }
  return false;
}

}  // namespace agentctx::json
