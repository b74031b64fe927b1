// Reads the two layers written by the Rust reference implementation and
// checks every fact published in the fixtures' README. The fixtures live
// outside the repository: these tests skip, saying so, when they are absent.
#include <doctest/doctest.h>

#include "support/fixture_paths.hpp"
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"

namespace agdb_layer_fixture_test {

using agentctx::agdb::layer_reader;
using agentctx::agdb::section_kind;
using agentctx::agdb::source_ref;

namespace {

std::string fixture_dir() { return test_support::agdb_fixture_dir(); }

/// The fixture opened from a copy of its bytes, or nullopt (with a message) when absent.
std::optional<layer_reader> open_fixture(const std::string& name) {
  const std::string path = fixture_dir() + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    MESSAGE("skipping: fixtures not found at " << path);
    return std::nullopt;
  }
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto reader = layer_reader::from_mapping(agentctx::io::mapped_bytes::copy_of(std::as_bytes(std::span(chars))), path);
  INFO((reader ? std::string() : reader.error().describe()));
  REQUIRE(reader.has_value());
  return std::move(*reader);
}

std::vector<std::uint64_t> section_offsets(const layer_reader& reader) {
  std::vector<std::uint64_t> out;
  for (const auto& s : reader.sections()) out.push_back(s.offset);
  return out;
}

std::vector<std::uint32_t> section_kinds(const layer_reader& reader) {
  std::vector<std::uint32_t> out;
  for (const auto& s : reader.sections()) out.push_back(s.kind);
  return out;
}

std::map<std::string, int> count_by(const layer_reader& reader, std::string_view agentctx::agdb::chunk_view::*field) {
  std::map<std::string, int> out;
  for (std::size_t i = 0; i < reader.chunk_count(); ++i) ++out[std::string((*reader.chunk(i)).*field)];
  return out;
}

/// String and chunk-id sources over all relationship records.
std::pair<int, int> relationship_split(const layer_reader& reader) {
  int strings = 0, chunk_ids = 0;
  for (std::size_t i = 0; i < reader.relationship_count(); ++i) {
    (reader.relationship(i).kind == 2 ? strings : chunk_ids) += 1;
  }
  return {strings, chunk_ids};
}

bool row_is_zero(const layer_reader& reader, std::uint32_t row) {
  auto r = reader.row(row);
  for (std::uint32_t i = 0; i < r->dim(); ++i) {
    if ((*r)[i] != 0.0f) return false;
  }
  return true;
}

/// Both fixtures hold an f32 matrix of 384-dim rows, quant_scale 1.0.
void check_f32_matrix(const layer_reader& reader, std::uint64_t rows) {
  const auto& m = reader.embedding_header();
  CHECK(m.row_count == rows);
  CHECK(m.dim == 384);
  CHECK(m.element_type == 1);
  CHECK(m.quant_scale == 1.0f);
}

}  // namespace

TEST_CASE("AGENTS.db from the reference implementation") {
  auto opened = open_fixture("AGENTS.db");
  if (!opened) return;
  const layer_reader& reader = *opened;

  CHECK(reader.bytes().size() == 84808);
  CHECK(reader.header().file_length_bytes == 84808);
  CHECK(reader.header().version_major == 1);
  CHECK(reader.header().version_minor == 0);
  CHECK(reader.header().sections_offset == 40);
  CHECK(section_offsets(reader) == std::vector<std::uint64_t>{136, 65600, 66240, 66336});
  CHECK(section_kinds(reader) == std::vector<std::uint32_t>{1, 2, 4, 3});
  CHECK_FALSE(reader.find_section(section_kind::layer_metadata));
  CHECK_FALSE(reader.metadata_json());

  CHECK(reader.chunk_count() == 12);
  CHECK(reader.string_count() == 24);
  CHECK(reader.relationship_count() == 10);
  CHECK(relationship_split(reader) == std::pair<int, int>{9, 1});

  check_f32_matrix(reader, 12);

  CHECK(count_by(reader, &agentctx::agdb::chunk_view::kind) ==
        std::map<std::string, int>{{"canonical", 9}, {"options", 2}, {"tombstone", 1}});
  CHECK(count_by(reader, &agentctx::agdb::chunk_view::author) == std::map<std::string, int>{{"human", 12}});
  std::vector<std::uint32_t> tombstone_rows, other_rows;
  for (std::size_t i = 0; i < reader.chunk_count(); ++i) {
    auto c = reader.chunk(i);
    REQUIRE(c);
    CHECK(c->confidence == 1.0f);
    CHECK(c->embedding_row == i + 1);
    if (c->kind == "options") CHECK(row_is_zero(reader, c->embedding_row));
    (c->kind == "tombstone" ? tombstone_rows : other_rows).push_back(c->embedding_row);
  }
  // The tombstone's row is a copy of another chunk's row.
  REQUIRE(tombstone_rows.size() == 1);
  const auto tombstone = reader.row(tombstone_rows[0])->bytes();
  bool copied = false;
  for (std::uint32_t row : other_rows) {
    const auto other = reader.row(row)->bytes();
    copied = copied || std::equal(other.begin(), other.end(), tombstone.begin(), tombstone.end());
  }
  CHECK(copied);
  CHECK_FALSE(row_is_zero(reader, tombstone_rows[0]));

  const auto index = reader.find_chunk(2);
  REQUIRE(index);
  auto two = reader.chunk(*index);
  REQUIRE(two);
  CHECK(two->kind == "canonical");
  CHECK(two->content.starts_with("# The Mental Model"));
  CHECK(*reader.sources(*two) == std::vector<source_ref>{source_ref::to_string("docs/WORKFLOW.md:1")});

  CHECK(agentctx::agdb::validate(reader).empty());
  auto contents = agentctx::agdb::read_layer_contents(reader);
  REQUIRE(contents);
  CHECK(contents->chunks.size() == 12);
  CHECK(contents->embeddings.f32_values.size() == 12 * 384);
  CHECK_FALSE(contents->metadata_json);
}

TEST_CASE("AGENTS.delta.db from the reference implementation") {
  auto opened = open_fixture("AGENTS.delta.db");
  if (!opened) return;
  const layer_reader& reader = *opened;

  CHECK(reader.bytes().size() == 63449);
  CHECK(reader.header().file_length_bytes == 63449);
  CHECK(reader.header().section_count == 5);
  CHECK(section_offsets(reader) == std::vector<std::uint64_t>{160, 49934, 50366, 51017, 51121});
  CHECK(section_kinds(reader) == std::vector<std::uint32_t>{1, 2, 5, 4, 3});
  REQUIRE(reader.metadata_header());
  CHECK(reader.metadata_header()->blob_offset == 50390);
  CHECK(reader.metadata_header()->blob_length == 627);

  check_f32_matrix(reader, 8);
  CHECK(reader.embedding_header().data_offset == 51161);
  CHECK(reader.embedding_header().data_offset % 4 != 0);

  CHECK(reader.chunk_count() == 8);
  CHECK(reader.string_count() == 26);
  CHECK(reader.relationship_count() == 11);
  CHECK(count_by(reader, &agentctx::agdb::chunk_view::author) ==
        std::map<std::string, int>{{"mcp", 5}, {"human", 3}});

  // Unaligned rows read the same through operator[] and to_f32.
  auto row = reader.row(8);
  REQUIRE(row);
  std::vector<float> values(384);
  row->to_f32(values);
  for (std::size_t i = 0; i < 384; ++i) CHECK(values[i] == (*row)[i]);

  const std::optional<std::string_view> json = reader.metadata_json();
  REQUIRE(json);
  CHECK(json->size() == 627);
  CHECK(json->starts_with(R"({"v":1,"embedding_profile":{"backend":"candle","model":"all-minilm-l6-v2",)"
                          R"("revision":"main","dim":384,"output_norm":"none"},)"
                          R"("cache_key_alg":"sha256_profile_json_v2_null_content_utf8",)"));
  CHECK(json->ends_with(R"("tool_name":"agentsdb-web","tool_version":"0.1.6"})"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE(parser.parse(json->data(), json->size()).get(doc) == simdjson::SUCCESS);
  std::string_view backend, model, revision, norm, alg, tool, version;
  std::uint64_t dim = 0;
  CHECK(doc["embedding_profile"]["backend"].get(backend) == simdjson::SUCCESS);
  CHECK(doc["embedding_profile"]["model"].get(model) == simdjson::SUCCESS);
  CHECK(doc["embedding_profile"]["revision"].get(revision) == simdjson::SUCCESS);
  CHECK(doc["embedding_profile"]["dim"].get(dim) == simdjson::SUCCESS);
  CHECK(doc["embedding_profile"]["output_norm"].get(norm) == simdjson::SUCCESS);
  CHECK(doc["cache_key_alg"].get(alg) == simdjson::SUCCESS);
  CHECK(doc["tool_name"].get(tool) == simdjson::SUCCESS);
  CHECK(doc["tool_version"].get(version) == simdjson::SUCCESS);
  CHECK(backend == "candle");
  CHECK(model == "all-minilm-l6-v2");
  CHECK(revision == "main");
  CHECK(dim == 384);
  CHECK(norm == "none");
  CHECK(alg == "sha256_profile_json_v2_null_content_utf8");
  CHECK(tool == "agentsdb-web");
  CHECK(version == "0.1.6");

  CHECK(agentctx::agdb::validate(reader).empty());
  auto contents = agentctx::agdb::read_layer_contents(reader);
  REQUIRE(contents);
  CHECK(contents->metadata_json == std::string(*json));
  CHECK(contents->embeddings.f32_values.size() == 8 * 384);
}

TEST_CASE("the fixtures open through the file system too") {
  for (const char* name : {"AGENTS.db", "AGENTS.delta.db"}) {
    const std::string path = fixture_dir() + "/" + name;
    if (!std::filesystem::exists(path)) {
      MESSAGE("skipping: fixtures not found at " << path);
      return;
    }
    const auto report = agentctx::agdb::validate_file(path);
    CHECK(report.ok());
    CHECK(report.path == path);
  }
}

}  // namespace agdb_layer_fixture_test
