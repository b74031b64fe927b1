// Shared helpers of the Relay tests: a deterministic store on an in-memory
// file system and package builders.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/store.hpp"
#include "support/result_checks.hpp"

namespace relay_test {

namespace json = agentctx::json;
namespace relay = agentctx::relay;

/// Options with a clock that starts at 2026-04-18T20:00:00Z and advances one
/// second per reading, and a counter for randomness: runs are reproducible.
inline relay::store_options test_options() {
  relay::store_options o;
  auto now = std::make_shared<std::uint64_t>(1'776'542'400'000ull);
  o.clock = [now] { return (*now += 1000); };
  auto counter = std::make_shared<std::uint64_t>(0x9E3779B97F4A7C15ull);
  o.random = [counter] {
    std::uint64_t z = (*counter += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  return o;
}

/// test_options() with a clock that reads `*now` (Unix milliseconds), which
/// only the test moves (back, too).
inline relay::store_options options_at(std::shared_ptr<std::uint64_t> now) {
  relay::store_options o = test_options();
  o.clock = [now] { return *now; };
  return o;
}

using test_support::require_error;
using test_support::require_ok;
using test_support::require_value;

/// A minimal valid package (section 6.7) as a tree.
inline json::value package(std::string id, std::string project = "proj_demo", std::string title = "Shipped archive",
                           std::string created_at = "2026-04-18T20:00:00Z") {
  json::value p = json::value::object_type{};
  if (!id.empty()) p.set("package_id", id);
  p.set("project_id", project);
  p.set("relay_version", "0.1");
  p.set("title", title);
  p.set("status", "complete");
  p.set("package_type", "milestone");
  p.set("review_type", "none");
  p.set("created_at", created_at);
  p.set("created_by", json::value::object_type{{"id", "jordan"}, {"type", "human"}, {"session_id", nullptr}});
  return p;
}

/// package() in status draft.
inline json::value draft(std::string id, std::string project = "proj_demo", std::string title = "Draft work") {
  json::value p = package(std::move(id), std::move(project), std::move(title));
  p.set("status", "draft");
  return p;
}

/// An assertion of (proj_demo, `subject`, status) = `value`, from
/// `valid_from` (default: now).
inline relay::fact_assertion status_of(std::string subject, std::string value,
                                       std::optional<std::string> valid_from = {}) {
  relay::fact_assertion a;
  a.project_id = "proj_demo";
  a.subject = std::move(subject);
  a.predicate = "status";
  a.value = std::move(value);
  a.valid_from = std::move(valid_from);
  return a;
}

}  // namespace relay_test
