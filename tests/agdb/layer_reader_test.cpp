#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "agdb/hand_built_layer.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/posix_file_system.hpp"

namespace agdb_layer_reader_test {

using agentctx::errc;
using agentctx::agdb::element_type;
using agentctx::agdb::layer_reader;
using agentctx::agdb::source_ref;

namespace {

layer_reader open_or_fail(std::span<const std::byte> bytes) {
  auto reader = layer_reader::from_bytes(bytes, "base.db");
  INFO((reader ? std::string() : reader.error().describe()));
  REQUIRE(reader.has_value());
  return std::move(*reader);
}

}  // namespace

TEST_CASE("layer_reader decodes every part of a hand-built layer") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  const agdb_test::exact_buffer buffer(layer.bytes);
  const layer_reader reader = open_or_fail(buffer.span());

  CHECK(reader.name() == "base.db");
  CHECK(reader.path() == "base.db");
  CHECK(reader.bytes().data() == buffer.span().data());
  CHECK(reader.header().file_length_bytes == layer.bytes.size());
  CHECK(reader.header().section_count == 5);
  REQUIRE(reader.sections().size() == 5);
  CHECK(reader.sections()[2].kind == 5);
  CHECK(reader.sections()[2].offset == layer.section_at.at(5));
  CHECK(reader.section_entry_offset(2) == layer.entry_at[2]);
  CHECK(reader.find_section(agentctx::agdb::section_kind::relationships) == std::optional<std::size_t>(3));

  SUBCASE("strings are 1-based and bounds-checked") {
    CHECK(reader.string_count() == 8);
    CHECK(*reader.string(1) == "canonical");
    CHECK(*reader.string(6) == "Zweiter Abschnitt: Gr\xC3\xBC\xC3\x9F" "e");
    CHECK(*reader.string(8) == "third");
    CHECK(reader.string(0).error().code == errc::invalid_id);
    CHECK(reader.string(9).error().code == errc::invalid_id);
    CHECK(reader.string(9).error().path == "base.db");
    CHECK(reader.find_string(3) == std::optional<std::string_view>("human"));
    CHECK_FALSE(reader.find_string(0));
    CHECK(reader.string_entry_offset(2) == layer.string_entry(2));
  }

  SUBCASE("chunks resolve their strings and are found by id") {
    REQUIRE(reader.chunk_count() == 3);
    auto first = reader.chunk(0);
    REQUIRE(first);
    CHECK(first->id == 7);
    CHECK(first->kind == "canonical");
    CHECK(first->content == "First chunk content");
    CHECK(first->author == "human");
    CHECK(first->confidence == 1.0f);
    CHECK(first->created_at_unix_ms == 1700000000000ull);
    CHECK(first->embedding_row == 1);
    CHECK(first->rel_start == 0);
    CHECK(first->rel_count == 2);
    CHECK(first->record_offset == layer.record(0));
    auto second = reader.chunk(1);
    REQUIRE(second);
    CHECK(second->author == "mcp");
    CHECK(second->confidence == 0.5f);
    CHECK(reader.record(2).id == 12);
    CHECK(reader.record(2).content_str_id == 8);
    CHECK(reader.record_offset(1) == layer.record(1));
    auto past_end = reader.chunk(3);
    REQUIRE_FALSE(past_end);
    CHECK(past_end.error().code == errc::invalid_argument);

    CHECK(reader.find_chunk(7) == std::optional<std::size_t>(0));
    CHECK(reader.find_chunk(12) == std::optional<std::size_t>(2));
    CHECK(reader.find_chunk(9) == std::optional<std::size_t>(1));
    CHECK_FALSE(reader.find_chunk(8));
    CHECK_FALSE(reader.find_chunk(0));
    CHECK_FALSE(reader.find_chunk(4242));
  }

  SUBCASE("sources resolve chunk ids and strings") {
    CHECK(reader.has_relationships());
    REQUIRE(reader.relationship_count() == 3);
    CHECK(reader.relationship(1).kind == 1);
    CHECK(reader.relationship(1).value_u32 == 9);
    CHECK(reader.relationship_offset(2) == layer.relationship(2));
    auto first = reader.sources(*reader.chunk(0));
    REQUIRE(first);
    CHECK(*first == std::vector<source_ref>{source_ref::to_string("docs/a.md:12"), source_ref::to_chunk(9)});
    auto none = reader.sources(reader.record(1));
    REQUIRE(none);
    CHECK(none->empty());
    auto other_layer = reader.sources(reader.record(2));
    REQUIRE(other_layer);
    CHECK(*other_layer == std::vector<source_ref>{source_ref::to_chunk(4242)});
  }

  SUBCASE("embedding rows are read in place from unaligned data") {
    const auto& h = reader.embedding_header();
    CHECK(h.row_count == 3);
    CHECK(h.dim == 4);
    CHECK(h.data_offset == layer.data_at);
    CHECK(h.data_offset % 4 != 0);
    auto row = reader.row(2);
    REQUIRE(row);
    CHECK(row->dim() == 4);
    CHECK(row->type() == element_type::f32);
    CHECK(row->scale() == 1.0f);
    CHECK(row->bytes().size() == 16);
    CHECK(row->bytes().data() == reader.bytes().data() + layer.data_at + 16);
    for (std::uint32_t c = 0; c < 4; ++c) CHECK((*row)[c] == agdb_test::f32_value(1, c));
    std::array<float, 4> values{};
    row->to_f32(values);
    for (std::uint32_t c = 0; c < 4; ++c) CHECK(values[c] == agdb_test::f32_value(1, c));
    std::array<float, 2> shorter{};
    row->to_f32(shorter);
    CHECK(shorter[1] == agdb_test::f32_value(1, 1));
    CHECK(reader.row(0).error().code == errc::invalid_id);
    CHECK(reader.row(4).error().code == errc::invalid_id);
  }

  SUBCASE("layer metadata") {
    REQUIRE(reader.metadata_header());
    CHECK(reader.metadata_header()->blob_offset == layer.metadata_blob_at);
    CHECK(reader.metadata_json() == agdb_test::base_spec().metadata);
  }
}

TEST_CASE("i8 embedding rows dequantise as value * quant_scale") {
  auto spec = agdb_test::base_spec();
  spec.type = element_type::i8;
  spec.quant_scale = 0.5f;
  const auto layer = agdb_test::build(spec);
  const agdb_test::exact_buffer buffer(layer.bytes);
  const layer_reader reader = open_or_fail(buffer.span());
  CHECK(reader.embedding_header().data_length == 12);
  auto row = reader.row(3);
  REQUIRE(row);
  CHECK(row->type() == element_type::i8);
  CHECK(row->scale() == 0.5f);
  CHECK(row->bytes().size() == 4);
  std::array<float, 4> values{};
  row->to_f32(values);
  for (std::uint32_t c = 0; c < 4; ++c) {
    const float expected = static_cast<float>(agdb_test::i8_value(2, c)) * 0.5f;
    CHECK((*row)[c] == expected);
    CHECK(values[c] == expected);
  }
  CHECK((*reader.row(1))[0] == -3.5f);  // i8 -7 * 0.5
}

TEST_CASE("a layer without relationships or metadata reads as such") {
  auto spec = agdb_test::base_spec();
  spec.order = {1, 2, 3};
  spec.metadata.reset();
  for (auto& c : spec.chunks) c.rel_start = c.rel_count = 0;
  const auto layer = agdb_test::build(spec);
  const layer_reader reader = open_or_fail(layer.bytes);
  CHECK_FALSE(reader.has_relationships());
  CHECK(reader.relationship_count() == 0);
  CHECK_FALSE(reader.metadata_header());
  CHECK_FALSE(reader.metadata_json());
  auto sources = reader.sources(*reader.chunk(0));
  REQUIRE(sources);
  CHECK(sources->empty());
  // A record that claims sources anyway is an error, not a read of nothing.
  auto claimed = reader.record(0);
  claimed.rel_count = 1;
  CHECK(reader.sources(claimed).error().code == errc::invalid_value);
}

TEST_CASE("read_layer_contents materialises chunks, sources, rows and metadata") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  const layer_reader reader = open_or_fail(layer.bytes);
  auto contents = agentctx::agdb::read_layer_contents(reader);
  REQUIRE(contents);
  CHECK(contents->version_minor == 0);
  REQUIRE(contents->chunks.size() == 3);
  const agentctx::agdb::chunk expected_first{
      7, "canonical", "First chunk content", "human", 1.0f, 1700000000000ull,
      {source_ref::to_string("docs/a.md:12"), source_ref::to_chunk(9)}};
  CHECK(contents->chunks[0] == expected_first);
  CHECK(contents->chunks[1].author == "mcp");
  CHECK(contents->chunks[1].sources.empty());
  CHECK(contents->chunks[2].sources == std::vector<source_ref>{source_ref::to_chunk(4242)});
  CHECK(contents->embeddings.type == element_type::f32);
  CHECK(contents->embeddings.dim == 4);
  CHECK(contents->embeddings.quant_scale == 1.0f);
  CHECK(contents->embeddings.i8_values.empty());
  REQUIRE(contents->embeddings.f32_values.size() == 12);
  for (std::uint64_t r = 0; r < 3; ++r) {
    for (std::uint32_t c = 0; c < 4; ++c) CHECK(contents->embeddings.f32_values[r * 4 + c] == agdb_test::f32_value(r, c));
  }
  CHECK(contents->metadata_json == agdb_test::base_spec().metadata);

  SUBCASE("rows follow each chunk's embedding_row, in chunk order") {
    auto spec = agdb_test::base_spec();
    spec.type = element_type::i8;
    spec.quant_scale = 0.25f;
    spec.chunks[0].embedding_row = 3;
    spec.chunks[2].embedding_row = 1;
    const auto swapped = agdb_test::build(spec);
    const layer_reader swapped_reader = open_or_fail(swapped.bytes);
    auto read = agentctx::agdb::read_layer_contents(swapped_reader);
    REQUIRE(read);
    CHECK(read->embeddings.type == element_type::i8);
    CHECK(read->embeddings.quant_scale == 0.25f);
    REQUIRE(read->embeddings.i8_values.size() == 12);
    CHECK(read->embeddings.i8_values[0] == agdb_test::i8_value(2, 0));
    CHECK(read->embeddings.i8_values[4] == agdb_test::i8_value(1, 0));
    CHECK(read->embeddings.i8_values[8] == agdb_test::i8_value(0, 0));
  }

  SUBCASE("a bad embedding_row fails at the record's field") {
    auto spec = agdb_test::base_spec();
    spec.chunks[1].embedding_row = 9;
    const auto bad = agdb_test::build(spec);
    const layer_reader bad_reader = open_or_fail(bad.bytes);
    auto read = agentctx::agdb::read_layer_contents(bad_reader);
    REQUIRE_FALSE(read);
    CHECK(read.error().code == errc::invalid_id);
    CHECK(read.error().offset == bad.record(1) + 28);
  }
}

TEST_CASE("a moved reader keeps its mapping and views valid") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  auto opened = layer_reader::from_mapping(agentctx::io::mapped_bytes::copy_of(layer.bytes), "copy.db");
  REQUIRE(opened);
  layer_reader first = std::move(*opened);
  const std::string_view content = first.chunk(0)->content;
  CHECK(first.find_chunk(9) == std::optional<std::size_t>(1));
  layer_reader second = std::move(first);
  CHECK(content == "First chunk content");
  CHECK(second.name() == "copy.db");
  CHECK(second.find_chunk(12) == std::optional<std::size_t>(2));
  CHECK(second.chunk(0)->content.data() == content.data());
}

TEST_CASE("open maps a file through the file system") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  const std::string path = "/tmp/agentctx_layer_reader_test_" + std::to_string(::getpid()) + ".db";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(layer.bytes.data()), static_cast<std::streamsize>(layer.bytes.size()));
  }
  auto through_fs = layer_reader::open(agentctx::io::default_file_system(), path);
  REQUIRE(through_fs);
  CHECK(through_fs->path() == path);
  CHECK(through_fs->chunk_count() == 3);
  auto direct = layer_reader::open(path);
  REQUIRE(direct);
  CHECK(direct->chunk(2)->content == "third");
  std::remove(path.c_str());

  auto missing = layer_reader::open(path);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().path == path);
}

TEST_CASE("the hand-built layer is byte for byte what the writer encodes from its contents") {
  for (const auto type : {element_type::f32, element_type::i8}) {
    auto spec = agdb_test::base_spec();
    spec.type = type;
    spec.quant_scale = type == element_type::i8 ? 0.5f : 1.0f;
    const auto layer = agdb_test::build(spec);
    const layer_reader reader = open_or_fail(layer.bytes);
    auto contents = agentctx::agdb::read_layer_contents(reader);
    REQUIRE(contents);
    auto encoded = agentctx::agdb::encode_layer(*contents);
    REQUIRE(encoded);
    CHECK(*encoded == layer.bytes);
  }
}

}  // namespace agdb_layer_reader_test
