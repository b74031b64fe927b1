// write_layer_appending (agentctx/agdb/layer_writer.hpp): the layer a base
// file extended by some chunks, written from the base's mapping. Its bytes
// must be those of the detour it replaces, write_layer(read_layer_contents
// (base) + the chunks), for every base: canonical or not (rows out of chunk
// order, unused rows and strings, i8, no metadata or relationships), the
// reference fixtures, and every chunk the writer accepts; and it must refuse
// what the detour refuses, writing nothing.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agdb/hand_built_layer.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace agdb_layer_writer_appending_test {

namespace agdb = agentctx::agdb;
using agentctx::errc;

namespace {

using bytes = std::vector<std::byte>;

/// The chunks to append: one that reuses the base's strings where it can and
/// one with only new ones; both kinds of source.
std::vector<agdb::chunk> chunks_to_add(const agdb::layer_reader& base) {
  agdb::chunk reusing;
  reusing.id = 900001;
  auto first = base.chunk(0);
  REQUIRE(first.has_value());
  reusing.kind = std::string(first->kind);
  reusing.content = std::string(first->content);  // the same text twice shares a string
  reusing.author = std::string(first->author);
  reusing.confidence = 0.7f;
  reusing.created_at_unix_ms = 1'700'000'000'123;
  reusing.sources = {agdb::source_ref::to_chunk(first->id)};

  agdb::chunk fresh;
  fresh.id = 900002;
  fresh.kind = "derived-summary";
  fresh.content = "A new finding: r\xC3\xA9sum\xC3\xA9 parsing lives in src/parse.rs.";
  fresh.author = "mcp";
  fresh.confidence = 0.25f;
  fresh.sources = {agdb::source_ref::to_string("src/parse.rs:88"), agdb::source_ref::to_chunk(first->id)};
  return {reusing, fresh};
}

/// `count` rows for the base's matrix.
agdb::embedding_matrix rows_for(const agdb::layer_reader& base, std::size_t count) {
  const agdb::embedding_matrix_header& h = base.embedding_header();
  agdb::embedding_matrix rows;
  rows.type = static_cast<agdb::element_type>(h.element_type);
  rows.dim = h.dim;
  rows.quant_scale = h.quant_scale;
  for (std::size_t i = 0; i < count * h.dim; ++i) {
    if (rows.type == agdb::element_type::i8) {
      rows.i8_values.push_back(static_cast<std::int8_t>(static_cast<int>(i % 255) - 127));
    } else {
      rows.f32_values.push_back(static_cast<float>(i) * 0.25f - 3.0f);
    }
  }
  return rows;
}

/// The detour: the base decoded, extended and written by write_layer.
bytes write_by_detour(const agdb::layer_reader& base, std::span<const agdb::chunk> added,
                      const agdb::embedding_matrix& rows) {
  auto contents = agdb::read_layer_contents(base);
  REQUIRE(contents.has_value());
  contents->chunks.insert(contents->chunks.end(), added.begin(), added.end());
  agdb::embedding_matrix& m = contents->embeddings;
  m.f32_values.insert(m.f32_values.end(), rows.f32_values.begin(), rows.f32_values.end());
  m.i8_values.insert(m.i8_values.end(), rows.i8_values.begin(), rows.i8_values.end());
  agentctx::io::memory_file_system fs;
  auto written = agdb::write_layer(fs, "/layer.db", *contents);
  if (!written) FAIL(written.error().describe());
  return fs.read_whole("/layer.db").value();
}

bytes write_appending(const agdb::layer_reader& base, std::span<const agdb::chunk> added,
                      const agdb::embedding_matrix& rows) {
  agentctx::io::memory_file_system fs;
  auto written = agdb::write_layer_appending(fs, "/layer.db", base, added, rows);
  if (!written) FAIL(written.error().describe());
  return fs.read_whole("/layer.db").value();
}

/// Appending none, the first and both of chunks_to_add gives the detour's bytes.
void check_same_bytes(const agdb::layer_reader& base) {
  const std::vector<agdb::chunk> added = chunks_to_add(base);
  for (std::size_t count = 0; count <= added.size(); ++count) {
    CAPTURE(count);
    const auto some = std::span(added).first(count);
    const agdb::embedding_matrix rows = rows_for(base, count);
    const bytes expected = write_by_detour(base, some, rows);
    CHECK(write_appending(base, some, rows) == expected);
    auto reread = agdb::layer_reader::from_bytes(expected, "appended");
    REQUIRE(reread.has_value());
    CHECK(reread->chunk_count() == base.chunk_count() + count);
  }
}

agdb::layer_reader open_bytes(const bytes& file) {
  auto reader = agdb::layer_reader::from_bytes(file, "base");
  if (!reader) FAIL(reader.error().describe());
  return std::move(*reader);
}

}  // namespace

TEST_CASE("write_layer_appending writes the detour's bytes for every kind of base") {
  struct variant {
    const char* name;
    void (*change)(agdb_test::layer_spec&);
  };
  const std::vector<variant> variants = {
      {"canonical", [](agdb_test::layer_spec&) {}},
      {"rows out of chunk order", [](agdb_test::layer_spec& s) {
         s.chunks[0].embedding_row = 3;
         s.chunks[2].embedding_row = 1;
       }},
      {"two chunks share a row, unused rows", [](agdb_test::layer_spec& s) {
         s.rows = 6;
         s.chunks[1].embedding_row = 1;
       }},
      {"an unused string", [](agdb_test::layer_spec& s) { s.strings.push_back("nobody cites this"); }},
      {"i8 rows", [](agdb_test::layer_spec& s) {
         s.type = agdb::element_type::i8;
         s.quant_scale = 0.02f;
       }},
      {"no metadata, minor version 3", [](agdb_test::layer_spec& s) {
         s.order = {1, 2, 4, 3};
         s.metadata.reset();
         s.version_minor = 3;
       }},
      {"no relationships", [](agdb_test::layer_spec& s) {
         s.order = {1, 2, 5, 3};
         s.relationships.clear();
         for (auto& c : s.chunks) {
           c.rel_start = 0;
           c.rel_count = 0;
         }
       }},
  };
  for (const variant& v : variants) {
    CAPTURE(v.name);
    agdb_test::layer_spec spec = agdb_test::base_spec();
    v.change(spec);
    const bytes file = agdb_test::build(spec).bytes;
    check_same_bytes(open_bytes(file));
  }
}

TEST_CASE("write_layer_appending writes the detour's bytes for the reference fixtures") {
  for (const char* name : {"AGENTS.db", "AGENTS.delta.db"}) {
    CAPTURE(name);
    const std::optional<std::string> path = cli_test::agdb_fixture(name);
    if (!path) continue;
    const bytes file = io_test::bytes_of(cli_test::read_file(*path));
    const agdb::layer_reader base = open_bytes(file);
    check_same_bytes(base);
    // Appending nothing rewrites the reference file byte for byte.
    CHECK(write_appending(base, {}, rows_for(base, 0)) == file);
  }
}

TEST_CASE("write_layer_appending refuses what the detour refuses and writes nothing") {
  const bytes file = agdb_test::build(agdb_test::base_spec()).bytes;
  const agdb::layer_reader base = open_bytes(file);
  const std::vector<agdb::chunk> good = chunks_to_add(base);
  struct bad_case {
    const char* name;
    std::vector<agdb::chunk> added;
    agdb::embedding_matrix rows;
    errc code;
  };
  const auto with = [&](auto change) {
    std::vector<agdb::chunk> added = good;
    change(added[1]);
    return added;
  };
  agdb::embedding_matrix i8_rows = rows_for(base, 2);
  i8_rows.type = agdb::element_type::i8;
  i8_rows.i8_values.assign(i8_rows.f32_values.size(), 1);
  i8_rows.f32_values.clear();
  agdb::embedding_matrix wide_rows = rows_for(base, 2);
  wide_rows.dim += 1;
  wide_rows.f32_values.resize(2 * wide_rows.dim);
  const std::vector<bad_case> cases = {
      {"an id the base holds", with([](agdb::chunk& c) { c.id = 9; }), rows_for(base, 2), errc::duplicate_id},
      {"id 0", with([](agdb::chunk& c) { c.id = 0; }), rows_for(base, 2), errc::invalid_id},
      {"an unknown author", with([](agdb::chunk& c) { c.author = "robot"; }), rows_for(base, 2), errc::invalid_value},
      {"confidence above 1", with([](agdb::chunk& c) { c.confidence = 1.5f; }), rows_for(base, 2),
       errc::invalid_value},
      {"content not UTF-8", with([](agdb::chunk& c) { c.content = "caf\xE9"; }), rows_for(base, 2),
       errc::invalid_utf8},
      {"a chunk-id source 0", with([](agdb::chunk& c) { c.sources = {agdb::source_ref::to_chunk(0)}; }),
       rows_for(base, 2), errc::invalid_id},
      {"one row for two chunks", good, rows_for(base, 1), errc::invalid_argument},
      {"i8 rows for an f32 layer", good, i8_rows, errc::invalid_argument},
      {"rows of another dim", good, wide_rows, errc::invalid_argument},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.name);
    agentctx::io::memory_file_system fs;
    auto written = agdb::write_layer_appending(fs, "/layer.db", base, c.added, c.rows);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().code == c.code);
    CHECK(written.error().path == "/layer.db");
    CHECK(fs.list_dir("/").value().empty());
  }

  // A base the detour cannot read: more chunks than rows, a row that does not exist.
  for (const std::uint32_t bad_row : {0u, 4u}) {
    CAPTURE(bad_row);
    agdb_test::layer_spec spec = agdb_test::base_spec();
    spec.chunks[1].embedding_row = bad_row;
    const bytes damaged = agdb_test::build(spec).bytes;
    const agdb::layer_reader reader = open_bytes(damaged);
    CHECK_FALSE(agdb::read_layer_contents(reader).has_value());
    agentctx::io::memory_file_system fs;
    auto written = agdb::write_layer_appending(fs, "/layer.db", reader, good, rows_for(reader, 2));
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().code == errc::invalid_id);
    CHECK(written.error().offset == agdb_test::build(spec).record(1) + 28);
    CHECK(fs.list_dir("/").value().empty());
  }
  agdb_test::layer_spec few_rows = agdb_test::base_spec();
  few_rows.rows = 2;
  few_rows.chunks[2].embedding_row = 2;
  const bytes short_matrix = agdb_test::build(few_rows).bytes;
  const agdb::layer_reader reader = open_bytes(short_matrix);
  agentctx::io::memory_file_system fs;
  auto written = agdb::write_layer_appending(fs, "/layer.db", reader, good, rows_for(reader, 2));
  REQUIRE_FALSE(written.has_value());
  CHECK(written.error().code == errc::unsupported);
  CHECK(fs.list_dir("/").value().empty());
}

}  // namespace agdb_layer_writer_appending_test
