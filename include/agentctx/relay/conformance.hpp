// agentctx/relay/conformance.hpp: the conformance descriptor (seed 001
// section 11.5) of this implementation.
//
// agentctx implements L3 (review-aware): pull in every mode, orient, deposit
// with content hashing and idempotent re-deposit, assert_fact and
// invalidate_fact with atomic supersession and temporal queries,
// flag_for_review with the L3 transitions and the awaiting_review listing,
// and orchestrate. Capabilities (section 10.2): hybrid_search (pull
// mode=relevant fuses an embedder's vectors with BM25 ranking). Not offered:
// semantic_search, which section 10.2 defines as relevant pull by semantic
// search only (there is no vector-only mode, and the default embedder hashes
// words, so it finds nothing semantic beyond shared words); realtime
// (subscriptions); blob_storage (deliverables stored apart from packages).
#pragma once

#include <string>

#include "agentctx/core/version.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/relay/model.hpp"

namespace agentctx::relay {

inline constexpr std::string_view conformance_level = "L3";

inline json::value conformance_descriptor() {
  return json::value::object_type{
      {"protocol_version", std::string(protocol_version)},
      {"conformance_level", std::string(conformance_level)},
      {"capabilities", json::value::object_type{{"hybrid_search", true},
                                                {"semantic_search", false},
                                                {"realtime", false},
                                                {"blob_storage", false}}},
      {"implementation", json::value::object_type{{"name", "agentctx"}, {"version", std::string(version)}}}};
}

}  // namespace agentctx::relay
