// agentctx/relay/pull_json.hpp: the JSON forms of what a pull (seed 001
// section 8.2) reads, one writer for `relay pull --json` and the relay_pull
// MCP tool (mcp_tools.hpp), so that both answer with the same members:
//
//   stored_package_json    {"hash", "package"}: the current wire form and
//                          the content hash of that form (section 6.6: never
//                          inside the package)
//   package_detail_json    {"hash", "deposited_hash", "package",
//                          "status_changes": [{"status", "review_type",
//                          "at", "note"?, "hash"}]}: a package in full, as a
//                          specific pull shows it (a review's notes included)
//   relevant_hit_json      {"score", "vector_score", "lexical_score",
//                          "hash", "package"}
//   latest_pull_json       {"mode": "latest", "project_id", "limit",
//                          "packages": [stored_package_json...]}
//   specific_pull_json     {"mode": "specific", "project_id" (null when
//                          not given), "packages": [package_detail_json]}
//   relevant_pull_json     {"mode": "relevant", "project_id" (null: every
//                          project), "query", "limit",
//                          "packages": [relevant_hit_json...]}
//
// Members are in the order listed; a package's as the store holds them.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "agentctx/json/value.hpp"
#include "agentctx/relay/model.hpp"
#include "agentctx/relay/search.hpp"
#include "agentctx/relay/store.hpp"

namespace agentctx::relay {

inline json::value stored_package_json(const stored_package& p) {
  return json::value::object_type{{"hash", p.hash}, {"package", p.package.wire}};
}

inline json::value stored_package_list_json(const std::vector<const stored_package*>& packages) {
  json::value::array_type out;
  out.reserve(packages.size());
  for (const stored_package* p : packages) out.push_back(stored_package_json(*p));
  return out;
}

inline json::value package_detail_json(const stored_package& p) {
  json::value::array_type changes;
  changes.reserve(p.changes.size());
  for (const status_change& c : p.changes) {
    json::value change = json::value::object_type{
        {"status", to_string(c.status)}, {"review_type", to_string(c.review)}, {"at", c.at}};
    if (c.note) change.set("note", *c.note);
    change.set("hash", c.hash);
    changes.push_back(std::move(change));
  }
  return json::value::object_type{{"hash", p.hash},
                                   {"deposited_hash", p.deposited_hash},
                                   {"package", p.package.wire},
                                   {"status_changes", std::move(changes)}};
}

inline json::value relevant_hit_json(const relevant_hit& hit) {
  return json::value::object_type{{"score", hit.score},
                                  {"vector_score", hit.vector_score},
                                  {"lexical_score", hit.lexical_score},
                                  {"hash", hit.package->hash},
                                  {"package", hit.package->package.wire}};
}

/// `project_id` as a pull result names it: null when empty (every project).
inline json::value pull_project_json(std::string_view project_id) {
  return project_id.empty() ? json::value() : json::value(project_id);
}

inline json::value latest_pull_json(std::string_view project_id, std::size_t limit,
                                    const std::vector<const stored_package*>& packages) {
  return json::value::object_type{{"mode", "latest"},
                                  {"project_id", pull_project_json(project_id)},
                                  {"limit", limit},
                                  {"packages", stored_package_list_json(packages)}};
}

inline json::value specific_pull_json(std::string_view project_id, const stored_package& p) {
  return json::value::object_type{{"mode", "specific"},
                                  {"project_id", pull_project_json(project_id)},
                                  {"packages", json::value::array_type{package_detail_json(p)}}};
}

inline json::value relevant_pull_json(std::string_view project_id, std::string_view query, std::size_t limit,
                                      const std::vector<relevant_hit>& hits) {
  json::value::array_type packages;
  packages.reserve(hits.size());
  for (const relevant_hit& hit : hits) packages.push_back(relevant_hit_json(hit));
  return json::value::object_type{{"mode", "relevant"},
                                  {"project_id", pull_project_json(project_id)},
                                  {"query", query},
                                  {"limit", limit},
                                  {"packages", std::move(packages)}};
}

}  // namespace agentctx::relay
