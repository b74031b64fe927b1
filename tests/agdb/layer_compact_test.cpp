// Tests of agentctx/agdb/layer_compact.hpp: the merge of user over base,
// tombstones, determinism, i8 handling, refusals, and --archive rotation.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_compact.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/hash_layer.hpp"

namespace agdb_layer_compact_test {

namespace agdb = agentctx::agdb;
using agentctx::errc;

namespace {

using test_support::file_bytes;
using test_support::read_valid_layer;

struct compact_repo {
  agentctx::io::memory_file_system fs;
  agdb::compact_request request;
  compact_repo() {
    REQUIRE(fs.create_dir("/repo").has_value());
    test_support::write_hash_layer(fs, "/repo/AGENTS.db", {{1, "canonical", "One."},
                                                           {2, "canonical", "Two."},
                                                           {3, "canonical", "Three."}});
    test_support::write_hash_layer(fs, "/repo/AGENTS.user.db",
                                   {{9, "note", "Nine, promoted.", {agdb::source_ref::to_chunk(9)}},
                                    {2, "canonical", "Two, corrected."},
                                    {3, "tombstone", ""},
                                    {4, "tombstone", ""}});
    test_support::write_hash_layer(fs, "/repo/AGENTS.delta.db", {{9, "note", "Nine, promoted."}});
    request.base = "/repo/AGENTS.db";
    request.user = "/repo/AGENTS.user.db";
    request.delta = "/repo/AGENTS.delta.db";
    request.out = "/repo/AGENTS.db.new";
    request.now_unix_ms = 1'795'412'833'998;  // 2026-11-23T05:47:13Z
  }
};

}  // namespace

TEST_CASE("compact: user chunks replace, tombstones remove, new ones follow, inputs untouched") {
  compact_repo repo;
  const auto base_bytes = file_bytes(repo.fs, repo.request.base);
  const auto user_bytes = file_bytes(repo.fs, repo.request.user);
  auto report = agdb::compact_layers(repo.fs, repo.request);
  INFO((report ? std::string() : report.error().describe()));
  REQUIRE(report.has_value());
  CHECK(report->base_chunks == 3);
  CHECK(report->user_chunks == 4);
  CHECK(report->replaced == 1);
  CHECK(report->removed == 1);
  CHECK(report->added == 1);
  CHECK(report->out_chunks == 3);
  CHECK_FALSE(report->requantized);
  CHECK(report->archived.empty());

  const agdb::layer_contents out = read_valid_layer(repo.fs, repo.request.out);
  const agdb::layer_contents base = read_valid_layer(repo.fs, repo.request.base);
  const agdb::layer_contents user = read_valid_layer(repo.fs, repo.request.user);
  REQUIRE(out.chunks.size() == 3);
  CHECK(out.chunks[0] == base.chunks[0]);
  CHECK(out.chunks[1] == user.chunks[1]);  // replaced in place
  CHECK(out.chunks[2] == user.chunks[0]);  // appended
  CHECK(out.metadata_json == base.metadata_json);
  const auto row = [](const agdb::layer_contents& c, std::size_t i) {
    return std::vector<float>(c.embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>(i * 128),
                              c.embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>((i + 1) * 128));
  };
  CHECK(row(out, 0) == row(base, 0));
  CHECK(row(out, 1) == row(user, 1));
  CHECK(row(out, 2) == row(user, 0));
  CHECK(file_bytes(repo.fs, repo.request.base) == base_bytes);
  CHECK(file_bytes(repo.fs, repo.request.user) == user_bytes);

  // Deterministic: the same inputs give the same bytes.
  const auto first = file_bytes(repo.fs, repo.request.out);
  repo.request.out = "/repo/again.db";
  REQUIRE(agdb::compact_layers(repo.fs, repo.request).has_value());
  CHECK(file_bytes(repo.fs, "/repo/again.db") == first);
}

TEST_CASE("compact --archive moves the consumed user and delta layers, stamped") {
  compact_repo repo;
  repo.request.archive = "/repo/archive";
  auto report = agdb::compact_layers(repo.fs, repo.request);
  REQUIRE(report.has_value());
  REQUIRE(report->archived.size() == 2);
  CHECK(report->archived[0].second == "/repo/archive/AGENTS.user.20261123T054713Z.db");
  CHECK(report->archived[1].second == "/repo/archive/AGENTS.delta.20261123T054713Z.db");
  CHECK_FALSE(repo.fs.exists(repo.request.user).value());
  CHECK_FALSE(repo.fs.exists(repo.request.delta).value());
  CHECK(read_valid_layer(repo.fs, report->archived[0].second).chunks.size() == 4);

  // A second run with the same stamp finds the archive names taken.
  test_support::write_hash_layer(repo.fs, repo.request.user, {{5, "note", "Five."}});
  repo.request.out = "/repo/second.db";
  auto again = agdb::compact_layers(repo.fs, repo.request);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == errc::already_exists);
}

TEST_CASE("compact refuses to write an input, different profiles, and damaged layers") {
  compact_repo repo;
  for (const std::string& input : {repo.request.base, repo.request.user, repo.request.delta}) {
    agdb::compact_request r = repo.request;
    r.out = input;
    auto refused = agdb::compact_layers(repo.fs, r);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("never writes its inputs") != std::string::npos);
  }
  agdb::layer_contents other;
  agdb::embedding_profile profile = agdb::hash_embedder(128).profile();
  profile.model = "different";
  other.metadata_json = agdb::layer_metadata_json(profile, "t", "1");
  other.embeddings.dim = 128;
  REQUIRE(agdb::write_layer(repo.fs, repo.request.user, other).has_value());
  auto mismatch = agdb::compact_layers(repo.fs, repo.request);
  REQUIRE_FALSE(mismatch.has_value());
  CHECK(mismatch.error().code == errc::incompatible);
  CHECK_FALSE(repo.fs.exists(repo.request.out).value());

  agdb::compact_request missing = repo.request;
  missing.user = "/repo/none.db";
  CHECK_FALSE(agdb::compact_layers(repo.fs, missing).has_value());
}

TEST_CASE("compact with an i8 base: same-scale i8 user rows are copied, f32 user rows re-quantise all") {
  compact_repo repo;
  agdb::layer_contents base = read_valid_layer(repo.fs, repo.request.base);
  std::vector<float> values = base.embeddings.f32_values;
  base.embeddings.type = agdb::element_type::i8;
  base.embeddings.quant_scale = agdb::choose_i8_scale(values);
  base.embeddings.i8_values = agdb::quantize_i8(values, base.embeddings.quant_scale);
  base.embeddings.f32_values.clear();
  REQUIRE(agdb::write_layer(repo.fs, repo.request.base, base).has_value());

  auto report = agdb::compact_layers(repo.fs, repo.request);  // f32 user layer
  REQUIRE(report.has_value());
  CHECK(report->requantized);
  const agdb::layer_contents out = read_valid_layer(repo.fs, repo.request.out);
  CHECK(out.embeddings.type == agdb::element_type::i8);
  CHECK(out.embeddings.i8_values.size() == 3 * 128);

  agdb::layer_contents user = read_valid_layer(repo.fs, repo.request.user);
  std::vector<float> user_values = user.embeddings.f32_values;
  user.embeddings.type = agdb::element_type::i8;
  user.embeddings.quant_scale = base.embeddings.quant_scale;
  user.embeddings.i8_values = agdb::quantize_i8(user_values, base.embeddings.quant_scale);
  user.embeddings.f32_values.clear();
  REQUIRE(agdb::write_layer(repo.fs, repo.request.user, user).has_value());
  repo.request.out = "/repo/i8.db";
  auto copied = agdb::compact_layers(repo.fs, repo.request);
  REQUIRE(copied.has_value());
  CHECK_FALSE(copied->requantized);
  const agdb::layer_contents same = read_valid_layer(repo.fs, "/repo/i8.db");
  CHECK(same.embeddings.quant_scale == base.embeddings.quant_scale);
  CHECK(std::equal(same.embeddings.i8_values.begin(), same.embeddings.i8_values.begin() + 128,
                   base.embeddings.i8_values.begin()));
}

}  // namespace agdb_layer_compact_test
