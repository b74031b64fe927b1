// Tests of agentctx/agdb/layer_import.hpp: import into new and existing
// layers, dedupe by content hash, fresh ids with remapped chunk-id sources,
// preserved ids, re-embedding when the profile differs, i8 targets, dry
// runs, and refusals that leave every file untouched.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_export.hpp"
#include "agentctx/agdb/layer_import.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/hash_layer.hpp"

namespace agdb_layer_import_test {

namespace agdb = agentctx::agdb;
using agentctx::errc;
using test_support::file_bytes;
using test_support::read_valid_layer;

namespace {

// An export of one layer made from `entries` (hash embedder, dim 128).
agdb::export_bundle export_of(const std::vector<test_support::layer_entry>& entries, bool with_metadata = true,
                              agdb::redaction redact = agdb::redaction::none) {
  agentctx::io::memory_file_system fs;
  test_support::write_hash_layer(fs, "/src.db", entries, with_metadata);
  auto reader = agdb::layer_reader::open(fs, "/src.db");
  REQUIRE(reader.has_value());
  std::vector<agdb::export_input> inputs{{&*reader, "AGENTS.local.db", agdb::layer_id::local}};
  agdb::export_options options;
  options.redact = redact;
  std::string text;
  REQUIRE(agdb::write_export(inputs, options, [&](std::string_view piece) -> agentctx::result<void> {
            text += piece;
            return {};
          }).has_value());
  auto bundle = agdb::parse_export(text);
  REQUIRE(bundle.has_value());
  return std::move(*bundle);
}

struct repo {
  agentctx::io::memory_file_system fs;
  agdb::import_request request;
  repo() {
    REQUIRE(fs.create_dir("/repo").has_value());
    request.layers = agdb::standard_layer_locations("/repo");
    request.target = agdb::layer_id::user;
  }
  agdb::import_report import(const agdb::export_bundle& bundle) {
    auto report = agdb::import_export(fs, request, bundle);
    INFO((report ? std::string() : report.error().describe()));
    REQUIRE(report.has_value());
    return std::move(*report);
  }
};

std::vector<float> row_of(const agdb::layer_contents& c, std::size_t i) {
  const std::size_t dim = c.embeddings.dim;
  return {c.embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>(i * dim),
          c.embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim)};
}

std::vector<float> hash_row(std::string_view text) {
  agdb::hash_embedder embedder(128);
  std::vector<float> row(128);
  REQUIRE(embedder.embed(std::span(&text, 1), row).has_value());
  return row;
}

}  // namespace

TEST_CASE("import: into a new layer with fresh ids; chunk-id sources follow their chunks") {
  repo r;
  test_support::write_hash_layer(r.fs, "/repo/AGENTS.db", {{1, "canonical", "Base one."}});
  const agdb::export_bundle bundle = export_of({{1, "note", "First."},
                                                {2, "note", "Second, from first.", {agdb::source_ref::to_chunk(1)}},
                                                {3, "note", "Third, from base 1? no: from 2.",
                                                 {agdb::source_ref::to_chunk(2), agdb::source_ref::to_string("a.md:4")}}});
  const agdb::import_report report = r.import(bundle);
  CHECK(report.created);
  CHECK(report.imported == 3);
  CHECK(report.duplicates == 0);
  CHECK(report.embedded == 0);  // the export's vectors have the layers' profile
  CHECK(report.chunk_count == 3);
  REQUIRE(report.ids.size() == 3);

  const agdb::layer_contents user = read_valid_layer(r.fs, "/repo/AGENTS.user.db");
  REQUIRE(user.chunks.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(user.chunks[i].id == report.ids[i].second);
    CHECK(report.ids[i].first == i + 1);
    CHECK(user.chunks[i].id != 1);  // never the id the base layer holds
    CHECK(user.chunks[i].content == bundle.layers[0].chunks[i].record.content);
    CHECK(user.chunks[i].author == "human");
    CHECK(row_of(user, i) == *bundle.layers[0].chunks[i].embedding);
  }
  CHECK(user.chunks[1].sources == std::vector{agdb::source_ref::to_chunk(user.chunks[0].id)});
  CHECK(user.chunks[2].sources ==
        std::vector{agdb::source_ref::to_chunk(user.chunks[1].id), agdb::source_ref::to_string("a.md:4")});
  CHECK(user.metadata_json.has_value());
}

TEST_CASE("import: dedupe by content against the target and within the import") {
  repo r;
  test_support::write_hash_layer(r.fs, "/repo/AGENTS.user.db", {{40, "note", "Already here."}});
  const agdb::export_bundle bundle = export_of({{1, "note", "Already here."},
                                                {2, "note", "New."},
                                                {3, "note", "New."},
                                                {4, "note", "Points at the dup.", {agdb::source_ref::to_chunk(1)}}});
  const agdb::import_report report = r.import(bundle);
  CHECK_FALSE(report.created);
  CHECK(report.imported == 2);
  CHECK(report.duplicates == 2);
  CHECK(report.chunk_count == 3);
  const agdb::layer_contents user = read_valid_layer(r.fs, "/repo/AGENTS.user.db");
  REQUIRE(user.chunks.size() == 3);
  CHECK(user.chunks[0].id == 40);  // existing records untouched, first
  CHECK(user.chunks[1].content == "New.");
  CHECK(user.chunks[2].sources == std::vector{agdb::source_ref::to_chunk(40)});  // the kept copy

  // Importing the same export again adds nothing and leaves the file as it is.
  const auto before = file_bytes(r.fs, "/repo/AGENTS.user.db");
  const agdb::import_report again = r.import(bundle);
  CHECK(again.imported == 0);
  CHECK(again.duplicates == 4);
  CHECK(file_bytes(r.fs, "/repo/AGENTS.user.db") == before);

  // Without dedupe every chunk is added.
  r.request.dedupe = false;
  CHECK(r.import(bundle).imported == 4);
  CHECK(read_valid_layer(r.fs, "/repo/AGENTS.user.db").chunks.size() == 7);
}

TEST_CASE("import: preserved ids keep sources as they are; a clash is refused, an override warned") {
  repo r;
  test_support::write_hash_layer(r.fs, "/repo/AGENTS.db", {{2, "canonical", "Base two."}});
  r.request.preserve_ids = true;
  const agdb::export_bundle bundle =
      export_of({{1, "note", "One."}, {2, "note", "Two, overriding base.", {agdb::source_ref::to_chunk(1)}}});
  const agdb::import_report report = r.import(bundle);
  CHECK(report.imported == 2);
  REQUIRE(report.warnings.size() == 1);
  CHECK(report.warnings[0].find("override") != std::string::npos);
  const agdb::layer_contents user = read_valid_layer(r.fs, "/repo/AGENTS.user.db");
  CHECK(user.chunks[0].id == 1);
  CHECK(user.chunks[1].id == 2);
  CHECK(user.chunks[1].sources == std::vector{agdb::source_ref::to_chunk(1)});

  // Same ids, other contents: the target already holds them.
  const auto before = file_bytes(r.fs, "/repo/AGENTS.user.db");
  auto clash = agdb::import_export(r.fs, r.request, export_of({{1, "note", "Another one."}}));
  REQUIRE_FALSE(clash.has_value());
  CHECK(clash.error().code == errc::duplicate_id);
  CHECK(file_bytes(r.fs, "/repo/AGENTS.user.db") == before);
}

TEST_CASE("import: vectors of another profile, or none, are computed again") {
  repo r;
  // An export without layer metadata cannot prove its vectors' profile.
  agdb::export_bundle unprovable = export_of({{1, "note", "Unproven."}}, false);
  // Vectors that are clearly not the hash embedding of the content.
  for (float& v : *unprovable.layers[0].chunks[0].embedding) v = 0.5f;
  const agdb::import_report report = r.import(unprovable);
  CHECK(report.embedded == 1);
  CHECK(row_of(read_valid_layer(r.fs, "/repo/AGENTS.user.db"), 0) == hash_row("Unproven."));

  const agdb::import_report redacted = r.import(export_of({{1, "note", "No vector."}}, true, agdb::redaction::embeddings));
  CHECK(redacted.embedded == 1);
  CHECK(row_of(read_valid_layer(r.fs, "/repo/AGENTS.user.db"), 1) == hash_row("No vector."));
}

TEST_CASE("import: an export without contents is refused before anything is written") {
  repo r;
  auto refused = agdb::import_export(r.fs, r.request, export_of({{1, "note", "Secret."}}, true, agdb::redaction::content));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::invalid_value);
  CHECK(refused.error().message.find("without its content") != std::string::npos);
  CHECK_FALSE(r.fs.exists("/repo/AGENTS.user.db").value_or(true));
}

TEST_CASE("import: base is never a target; meta.* chunks are not imported") {
  repo r;
  r.request.target = agdb::layer_id::base;
  auto refused = agdb::import_export(r.fs, r.request, export_of({{1, "note", "X."}}));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::invalid_argument);

  r.request.target = agdb::layer_id::delta;
  const agdb::import_report report = r.import(export_of({{1, "meta.proposal_event", "{}"}, {2, "note", "Kept."}}));
  CHECK(report.skipped_meta == 1);
  CHECK(report.imported == 1);
  CHECK(read_valid_layer(r.fs, "/repo/AGENTS.delta.db").chunks.size() == 1);
}

TEST_CASE("import: a dry run reports and writes nothing") {
  repo r;
  r.request.dry_run = true;
  const agdb::import_report report = r.import(export_of({{1, "note", "A."}, {2, "note", "B."}}));
  CHECK(report.dry_run);
  CHECK(report.created);
  CHECK(report.imported == 2);
  CHECK(report.chunk_count == 0);
  CHECK_FALSE(r.fs.exists("/repo/AGENTS.user.db").value_or(true));
}

TEST_CASE("import: an i8 target quantises with its own scale; a profile clash is refused") {
  repo r;
  {
    agdb::layer_contents layer;
    layer.metadata_json = agdb::layer_metadata_json(agdb::hash_embedding_profile(128), "test", "1");
    layer.embeddings.type = agdb::element_type::i8;
    layer.embeddings.dim = 128;
    layer.embeddings.quant_scale = 1.0f / 127.0f;
    layer.embeddings.i8_values.assign(128, 0);
    layer.chunks.push_back({50, "note", "Existing.", "human", 1.0f, 0, {}});
    REQUIRE(agdb::write_layer(r.fs, "/repo/AGENTS.local.db", layer).has_value());
  }
  r.request.target = agdb::layer_id::local;
  const agdb::import_report report = r.import(export_of({{1, "note", "Quantised."}}));
  CHECK(report.imported == 1);
  const agdb::layer_contents local = read_valid_layer(r.fs, "/repo/AGENTS.local.db");
  CHECK(local.embeddings.type == agdb::element_type::i8);
  CHECK(local.embeddings.quant_scale == 1.0f / 127.0f);
  REQUIRE(local.embeddings.i8_values.size() == 256);
  const std::vector<float> expected = hash_row("Quantised.");
  for (std::size_t i = 0; i < 128; ++i) {
    CHECK(static_cast<float>(local.embeddings.i8_values[128 + i]) * local.embeddings.quant_scale ==
          doctest::Approx(expected[i]).epsilon(0.01));
  }

  // A layer that records another profile cannot take the hash vectors.
  agentctx::io::memory_file_system& fs = r.fs;
  agdb::layer_contents other;
  agdb::embedding_profile profile{"command-x", "m", std::nullopt, 128, "l2"};
  other.metadata_json = agdb::layer_metadata_json(profile, "test", "1");
  other.embeddings.dim = 128;
  REQUIRE(agdb::write_layer(fs, "/repo/AGENTS.delta.db", other).has_value());
  auto clash = agdb::import_export(fs, r.request, export_of({{1, "note", "Z."}}));
  REQUIRE_FALSE(clash.has_value());
}

}  // namespace agdb_layer_import_test
