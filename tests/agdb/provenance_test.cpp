// Tests of agentctx/agdb/provenance.hpp: chains across layers, a promoted
// chunk's self-reference resolved one layer down, unresolved sources,
// cycles and the depth limit.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/provenance.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/hash_layer.hpp"

namespace agdb_provenance_test {

namespace agdb = agentctx::agdb;
using agdb::source_ref;

namespace {

// base < delta < user in precedence (seed 000 section 6.2), lowest first.
struct three_layers {
  agentctx::io::memory_file_system fs;
  std::vector<agdb::layer_reader> readers;
  std::vector<agdb::provenance_layer> layers;

  three_layers() {
    REQUIRE(fs.create_dir("/r").has_value());
    test_support::write_hash_layer(fs, "/r/base", {{1, "canonical", "Base one.", {source_ref::to_string("a.md:1")}},
                                                   {2, "canonical", "Base two.", {source_ref::to_chunk(1)}}});
    test_support::write_hash_layer(fs, "/r/delta", {{5, "note", "Delta five.", {source_ref::to_chunk(2),
                                                                              source_ref::to_chunk(99)}},
                                                    {7, "note", "Seven.", {source_ref::to_chunk(8)}},
                                                    {8, "note", "Eight.", {source_ref::to_chunk(7)}}});
    test_support::write_hash_layer(fs, "/r/user", {{5, "note", "Promoted five.", {source_ref::to_string("b.md:3"),
                                                                                 source_ref::to_chunk(5)}},
                                                   {2, "canonical", "User two.", {source_ref::to_chunk(1)}}});
    for (const char* path : {"/r/base", "/r/delta", "/r/user"}) {
      auto reader = agdb::layer_reader::open(fs, path);
      REQUIRE(reader.has_value());
      readers.push_back(std::move(*reader));
    }
    layers = {{"base", &readers[0]}, {"delta", &readers[1]}, {"user", &readers[2]}};
  }
};

}  // namespace

TEST_CASE("provenance_chain: a promoted chunk leads to its delta copy and on to what that cites") {
  three_layers t;
  auto chain = agdb::provenance_chain(t.layers, 2, 5);
  REQUIRE(chain.has_value());
  REQUIRE(chain->size() == 5);
  const auto& s = *chain;
  // The user copy; its own id resolves one layer down, to the delta copy.
  CHECK((s[0].id == 5 && s[0].layer == 2u && s[0].depth == 0 && s[0].content == "Promoted five."));
  CHECK(s[0].sources.front() == source_ref::to_string("b.md:3"));
  CHECK((s[1].id == 5 && s[1].layer == 1u && s[1].depth == 1 && s[1].content == "Delta five."));
  // Another id resolves to the copy in effect (user's 2 over base's), then on to base.
  CHECK((s[2].id == 2 && s[2].layer == 2u && s[2].depth == 2 && s[2].content == "User two."));
  CHECK((s[3].id == 1 && s[3].layer == 0u && s[3].depth == 3));
  CHECK(s[3].sources == std::vector{source_ref::to_string("a.md:1")});
  // A source no layer holds.
  CHECK((s[4].id == 99 && !s[4].layer.has_value() && s[4].depth == 2));
  for (const agdb::provenance_step& step : s) CHECK_FALSE(step.repeated);
}

TEST_CASE("provenance_chain: cycles end, the depth limit holds, a missing start is not_found") {
  three_layers t;
  auto cycle = agdb::provenance_chain(t.layers, 1, 7);
  REQUIRE(cycle.has_value());
  REQUIRE(cycle->size() == 3);
  CHECK((*cycle)[1].id == 8);
  CHECK((*cycle)[2].id == 7);
  CHECK((*cycle)[2].repeated);

  auto limited = agdb::provenance_chain(t.layers, 1, 7, 1);
  REQUIRE(limited.has_value());
  REQUIRE(limited->size() == 2);
  CHECK((*limited)[1].depth_limit);

  auto missing = agdb::provenance_chain(t.layers, 0, 5);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == agentctx::errc::not_found);
  CHECK_FALSE(agdb::provenance_chain(t.layers, 3, 5).has_value());
}

}  // namespace agdb_provenance_test
