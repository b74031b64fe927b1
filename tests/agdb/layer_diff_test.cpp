// Tests of agentctx/agdb/layer_diff.hpp: new delta chunks, overrides of base
// ids (with and without content changes), user/delta conflicts and pending
// proposals, on layers in the in-memory file system.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agentctx/agdb/layer_diff.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/hash_layer.hpp"

namespace agdb_layer_diff_test {

namespace agdb = agentctx::agdb;
using agdb::layer_id;
using agentctx::line_edit;

TEST_CASE("diff_layers: added, overrides with line diffs, conflicts and pending proposals") {
  agentctx::io::memory_file_system fs;
  REQUIRE(fs.create_dir("/repo").has_value());
  test_support::write_hash_layer(fs, "/repo/AGENTS.db",
                                 {{1, "canonical", "Releases are cut on Fridays.\nTag them vX.Y."},
                                  {2, "canonical", "The API lives in src/api."},
                                  {3, "canonical", "Unchanged."}});
  test_support::write_hash_layer(fs, "/repo/AGENTS.user.db",
                                 {{3, "canonical", "Unchanged."}, {7, "note", "User note seven."}});
  test_support::write_hash_layer(fs, "/repo/AGENTS.delta.db",
                                 {{1, "canonical", "Releases are cut on Thursdays.\nTag them vX.Y."},
                                  {9, "note", "A new finding."},
                                  {7, "note", "Delta note seven."},
                                  {2, "tombstone", ""}});
  const auto layers = agdb::standard_layer_locations("/repo");
  agdb::proposal_request request;
  request.context_id = 9;
  request.title = "keep it";
  auto proposed = agdb::propose_promotion(fs, layers, request);
  REQUIRE(proposed.has_value());

  auto stack = agdb::layer_stack::open(fs, layers);
  REQUIRE(stack.has_value());
  auto diff = agdb::diff_layers(*stack);
  REQUIRE(diff.has_value());

  REQUIRE(diff->added.size() == 1);  // the proposal event is not context
  CHECK(diff->added[0].id == 9);
  CHECK(diff->added[0].content == "A new finding.");

  REQUIRE(diff->overrides.size() == 3);
  const agdb::chunk_change& fridays = diff->overrides[0];
  CHECK(fridays.chunk.id == 1);
  CHECK(fridays.upper == layer_id::delta);
  CHECK(fridays.lower == layer_id::base);
  CHECK_FALSE(fridays.same_content);
  CHECK(fridays.edits() == std::vector<line_edit>{{line_edit::remove, "Releases are cut on Fridays."},
                                                  {line_edit::add, "Releases are cut on Thursdays."},
                                                  {line_edit::keep, "Tag them vX.Y."}});
  const agdb::chunk_change& tombstone = diff->overrides[1];
  CHECK(tombstone.chunk.id == 2);
  CHECK(tombstone.chunk.kind == "tombstone");
  CHECK(tombstone.lower_kind == "canonical");
  const agdb::chunk_change& unchanged = diff->overrides[2];
  CHECK(unchanged.chunk.id == 3);
  CHECK(unchanged.upper == layer_id::user);
  CHECK(unchanged.same_content);

  REQUIRE(diff->conflicts.size() == 1);
  CHECK(diff->conflicts[0].chunk.id == 7);
  CHECK(diff->conflicts[0].lower == layer_id::user);
  CHECK(diff->conflicts[0].lower_content == "User note seven.");
  CHECK(diff->conflicts[0].chunk.content == "Delta note seven.");

  REQUIRE(diff->pending.size() == 1);
  CHECK(diff->pending[0].id == proposed->proposal_id);
  CHECK(diff->pending[0].context_id == 9);
  CHECK(diff->warnings.empty());
}

TEST_CASE("diff_layers: without a user layer, and with identical layers") {
  agentctx::io::memory_file_system fs;
  REQUIRE(fs.create_dir("/repo").has_value());
  test_support::write_hash_layer(fs, "/repo/AGENTS.db", {{1, "canonical", "One."}});
  test_support::write_hash_layer(fs, "/repo/AGENTS.delta.db", {{1, "canonical", "One."}});
  auto stack = agdb::layer_stack::open(
      fs, {{layer_id::base, "/repo/AGENTS.db", true}, {layer_id::delta, "/repo/AGENTS.delta.db", true}});
  REQUIRE(stack.has_value());
  auto diff = agdb::diff_layers(*stack);
  REQUIRE(diff.has_value());
  CHECK(diff->added.empty());
  REQUIRE(diff->overrides.size() == 1);
  CHECK(diff->overrides[0].same_content);
  CHECK(diff->conflicts.empty());
  CHECK(diff->pending.empty());
}

}  // namespace agdb_layer_diff_test
