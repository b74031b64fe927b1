// Feeds the layer reader and validator every kind of damaged layer. Each case
// mutates the valid hand-built base layer and names the exact error code and
// byte offset that open() or validate() must report.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "agdb/hand_built_layer.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"

namespace agdb_layer_corruption_test {

using agentctx::errc;
using agentctx::agdb::layer_reader;

namespace {

/// The layer under mutation, with helpers to patch fields in place.
struct damaged_layer {
  agdb_test::built_layer layer = agdb_test::build(agdb_test::base_spec());

  std::vector<std::byte>& bytes() { return layer.bytes; }
  std::uint64_t size() const { return layer.bytes.size(); }
  void u8(std::uint64_t at, std::uint8_t v) { layer.bytes.at(at) = static_cast<std::byte>(v); }
  void u16(std::uint64_t at, std::uint16_t v) { agentctx::store_u16(slot(at, 2), v); }
  void u32(std::uint64_t at, std::uint32_t v) { agentctx::store_u32(slot(at, 4), v); }
  void u64(std::uint64_t at, std::uint64_t v) { agentctx::store_u64(slot(at, 8), v); }
  void f32(std::uint64_t at, float v) { agentctx::store_f32(slot(at, 4), v); }
  std::uint64_t get_u64(std::uint64_t at) { return agentctx::load_u64(slot(at, 8)); }
  void rebuild(const agdb_test::layer_spec& spec) { layer = agdb_test::build(spec); }

  // Section layout of the base layer: strings, chunks, metadata, relationships, embeddings.
  std::uint64_t entry(std::size_t i) const { return layer.entry_at.at(i); }
  std::uint64_t strings() const { return layer.section_at.at(1); }
  std::uint64_t chunks() const { return layer.section_at.at(2); }
  std::uint64_t matrix() const { return layer.section_at.at(3); }
  std::uint64_t relations() const { return layer.section_at.at(4); }
  std::uint64_t metadata() const { return layer.section_at.at(5); }
  std::uint64_t record(std::size_t i) const { return layer.record(i); }
  std::uint64_t relationship(std::size_t i) const { return layer.relationship(i); }
  std::uint64_t string_entry(std::uint32_t id) const { return layer.string_entry(id); }

 private:
  std::byte* slot(std::uint64_t at, std::size_t width) {
    REQUIRE(at + width <= layer.bytes.size());
    return layer.bytes.data() + at;
  }
};

enum class stage { open, validate };

struct corruption {
  const char* name;
  stage detected_by;
  errc code;
  /// Damages the layer; returns the offset the (first) report must name.
  std::function<std::uint64_t(damaged_layer&)> damage;
  std::size_t violations = 1;  ///< validate stage: how many violations in all
};

constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();

agdb_test::layer_spec with_order(std::vector<std::uint32_t> order) {
  auto spec = agdb_test::base_spec();
  spec.order = std::move(order);
  return spec;
}

agdb_test::layer_spec i8_with_scale(float scale) {
  auto spec = agdb_test::base_spec();
  spec.type = agdb_test::element_type::i8;
  spec.quant_scale = scale;
  return spec;
}

const std::vector<corruption>& corruptions() {
  static const std::vector<corruption> cases = {
      // ---- file header ----------------------------------------------------
      {"file shorter than the header", stage::open, errc::truncated,
       [](damaged_layer& d) { d.bytes().resize(39); return 0; }},
      {"empty file", stage::open, errc::truncated, [](damaged_layer& d) { d.bytes().clear(); return 0; }},
      {"bad magic", stage::open, errc::bad_magic, [](damaged_layer& d) { d.u32(0, 0x42444742); return 0; }},
      {"magic of another format", stage::open, errc::bad_magic, [](damaged_layer& d) { d.u8(3, 'X'); return 0; }},
      {"version_major 2", stage::open, errc::unsupported_version, [](damaged_layer& d) { d.u16(4, 2); return 4; }},
      {"version_major 0", stage::open, errc::unsupported_version, [](damaged_layer& d) { d.u16(4, 0); return 4; }},
      {"flags non-zero", stage::open, errc::reserved_nonzero,
       [](damaged_layer& d) { d.u64(32, 1ull << 40); return 32; }},
      {"file_length_bytes above the file size", stage::open, errc::truncated,
       [](damaged_layer& d) { d.u64(8, d.size() + 1); return 8; }},
      {"file_length_bytes below the file size", stage::open, errc::invalid_value,
       [](damaged_layer& d) { d.u64(8, d.size() - 1); return 8; }},
      {"trailing bytes after the declared length", stage::open, errc::invalid_value,
       [](damaged_layer& d) { d.bytes().push_back(std::byte{0}); return 8; }},

      // ---- section table --------------------------------------------------
      {"section table starts past the end", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(24, d.size() + 1); return 24; }},
      {"section table longer than the file", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(16, 1000); return 16; }},
      {"section_count whose byte size overflows", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(16, 1ull << 62); return 16; }},
      {"section table inside the file header", stage::open, errc::overlap,
       [](damaged_layer& d) { d.u64(24, 16); return 24; }},
      {"empty section table", stage::open, errc::missing_section, [](damaged_layer& d) { d.u64(16, 0); return 40; }},
      {"section starts past the end", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.entry(1) + 8, d.size() + 5); return d.entry(1) + 8; }},
      {"section ends past the end", stage::open, errc::out_of_bounds, [](damaged_layer& d) {
         d.u64(d.entry(4) + 16, d.get_u64(d.entry(4) + 16) + 1);
         return d.entry(4) + 16;
       }},
      {"section length that overflows", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.entry(0) + 16, max_u64); return d.entry(0) + 16; }},
      {"overlapping sections", stage::open, errc::overlap,
       [](damaged_layer& d) { d.u64(d.entry(1) + 8, d.chunks() - 8); return d.entry(1) + 8; }},
      {"section growing into the next one", stage::open, errc::overlap, [](damaged_layer& d) {
         // Reported at the section that starts later, not the one that grew.
         d.u64(d.entry(0) + 16, d.get_u64(d.entry(0) + 16) + 8);
         return d.entry(1) + 8;
       }},
      {"sections overlapping out of table order", stage::open, errc::overlap, [](damaged_layer& d) {
         // The embeddings (last in the table) also claim most of the metadata.
         d.u64(d.entry(4) + 8, d.metadata() + 4);
         d.u64(d.entry(4) + 16, d.size() - d.metadata() - 4);
         return d.entry(4) + 8;
       }},
      {"section overlapping the section table", stage::open, errc::overlap, [](damaged_layer& d) {
         d.u64(d.entry(0) + 8, 100);
         d.u64(d.entry(0) + 16, 10);
         return d.entry(0) + 8;
       }},
      {"section overlapping the file header", stage::open, errc::overlap, [](damaged_layer& d) {
         d.u64(d.entry(0) + 8, 8);
         d.u64(d.entry(0) + 16, 4);
         return d.entry(0) + 8;
       }},
      {"duplicate chunk table", stage::open, errc::duplicate_section,
       [](damaged_layer& d) { d.rebuild(with_order({1, 2, 5, 4, 3, 2})); return d.entry(5); }},
      {"duplicate layer metadata", stage::open, errc::duplicate_section,
       [](damaged_layer& d) { d.rebuild(with_order({1, 2, 5, 4, 5, 3})); return d.entry(4); }},
      {"duplicate relationships", stage::open, errc::duplicate_section,
       [](damaged_layer& d) { d.rebuild(with_order({4, 1, 2, 5, 4, 3})); return d.entry(4); }},
      {"missing string dictionary", stage::open, errc::missing_section,
       [](damaged_layer& d) { d.rebuild(with_order({2, 5, 4, 3})); return 40; }},
      {"missing chunk table", stage::open, errc::missing_section,
       [](damaged_layer& d) { d.rebuild(with_order({1, 5, 4, 3})); return 40; }},
      {"missing embedding matrix", stage::open, errc::missing_section,
       [](damaged_layer& d) { d.rebuild(with_order({1, 2, 5, 4})); return 40; }},
      {"chunk table too short for its header", stage::open, errc::truncated,
       [](damaged_layer& d) { d.u64(d.entry(1) + 16, 10); return d.entry(1) + 16; }},
      {"metadata section too short for its header", stage::open, errc::truncated,
       [](damaged_layer& d) { d.u64(d.entry(2) + 16, 23); return d.entry(2) + 16; }},

      // ---- arrays inside their sections -------------------------------------
      {"string entries past the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.strings(), 1000); return d.strings(); }},
      {"string entries over the section header", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.strings() + 8, d.strings()); return d.strings() + 8; }},
      {"string blob starts past the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.strings() + 16, d.chunks() + 1); return d.strings() + 16; }},
      {"string blob ends past the section", stage::open, errc::out_of_bounds, [](damaged_layer& d) {
         d.u64(d.strings() + 24, d.get_u64(d.strings() + 24) + 1);
         return d.strings() + 24;
       }},
      {"string count whose byte size overflows", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.strings(), 1ull << 61); return d.strings(); }},
      {"chunk records past the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.chunks(), 4); return d.chunks(); }},
      {"chunk records before the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.chunks() + 8, 0); return d.chunks() + 8; }},
      {"relationship records past the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.relations(), 4); return d.relations(); }},
      {"relationship records start outside the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.relations() + 8, d.matrix() + 1); return d.relations() + 8; }},
      {"metadata blob starts past the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.metadata() + 8, d.relations() + 1); return d.metadata() + 8; }},
      {"metadata blob ends past the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.metadata() + 8, d.metadata() + 25); return d.metadata() + 16; }},
      {"unknown element type", stage::open, errc::invalid_value,
       [](damaged_layer& d) { d.u32(d.matrix() + 12, 3); return d.matrix() + 12; }},
      {"element type 0", stage::open, errc::invalid_value,
       [](damaged_layer& d) { d.u32(d.matrix() + 12, 0); return d.matrix() + 12; }},
      {"data_length not row_count x dim x 4", stage::open, errc::invalid_value,
       [](damaged_layer& d) { d.u64(d.matrix() + 24, 44); return d.matrix() + 24; }},
      {"row_count disagreeing with data_length", stage::open, errc::invalid_value,
       [](damaged_layer& d) { d.u64(d.matrix(), 4); return d.matrix() + 24; }},
      {"row_count x dim that overflows", stage::open, errc::invalid_value, [](damaged_layer& d) {
         d.u64(d.matrix(), 1ull << 40);
         d.u32(d.matrix() + 8, 0xFFFFFFFFu);
         return d.matrix() + 24;
       }},
      {"i8 data_length counted as f32", stage::open, errc::invalid_value,
       [](damaged_layer& d) { d.u32(d.matrix() + 12, 2); return d.matrix() + 24; }},
      {"embedding data over the section header", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.matrix() + 16, d.matrix()); return d.matrix() + 16; }},
      {"embedding data past the section", stage::open, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.matrix() + 16, d.matrix() + 41); return d.matrix() + 24; }},

      // ---- found by validate() ---------------------------------------------
      {"section entry reserved non-zero", stage::validate, errc::reserved_nonzero,
       [](damaged_layer& d) { d.u32(d.entry(3) + 4, 1); return d.entry(3) + 4; }},
      {"unknown section kind", stage::validate, errc::unknown_section,
       [](damaged_layer& d) { d.rebuild(with_order({1, 2, 99, 5, 4, 3})); return d.entry(2); }},
      {"section kind 0", stage::validate, errc::unknown_section,
       [](damaged_layer& d) { d.rebuild(with_order({1, 2, 5, 4, 3, 0})); return d.entry(5); }},
      {"string entry ends past the blob", stage::validate, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.string_entry(8) + 8, 6); return d.string_entry(8) + 8; }},
      {"string entry starts past the blob", stage::validate, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.string_entry(2), 1000); return d.string_entry(2); }},
      {"string entry length that overflows", stage::validate, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.string_entry(4) + 8, max_u64); return d.string_entry(4) + 8; }},
      {"string with a stray 0xFF", stage::validate, errc::invalid_utf8,
       [](damaged_layer& d) { d.u8(d.layer.string_at[5] + 22, 0xFF); return d.layer.string_at[5] + 21; }},
      {"string with an overlong encoding", stage::validate, errc::invalid_utf8, [](damaged_layer& d) {
         d.u8(d.layer.string_at[0] + 3, 0xC0);
         d.u8(d.layer.string_at[0] + 4, 0xAF);
         return d.layer.string_at[0] + 3;
       }},
      {"string cut inside a multi-byte character", stage::validate, errc::invalid_utf8, [](damaged_layer& d) {
         d.u64(d.string_entry(6) + 8, 22);  // "...Gr\xC3" without its continuation byte
         return d.layer.string_at[5] + 21;
       }},
      {"chunk id 0", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.record(1), 0); return d.record(1); }},
      {"duplicate chunk id", stage::validate, errc::duplicate_id,
       [](damaged_layer& d) { d.u32(d.record(2), 7); return d.record(2); }},
      {"kind_str_id 0", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.record(0) + 4, 0); return d.record(0) + 4; }},
      {"content_str_id past string_count", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.record(1) + 8, 9); return d.record(1) + 8; }},
      {"author_str_id 0", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.record(2) + 12, 0); return d.record(2) + 12; }},
      {"author neither human nor mcp", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.u32(d.record(1) + 12, 5); return d.record(1) + 12; }},
      {"confidence NaN", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.f32(d.record(0) + 16, std::nanf("")); return d.record(0) + 16; }},
      {"confidence above 1", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.f32(d.record(1) + 16, 1.0001f); return d.record(1) + 16; }},
      {"confidence below 0", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.f32(d.record(2) + 16, -0.25f); return d.record(2) + 16; }},
      {"confidence infinite", stage::validate, errc::invalid_value, [](damaged_layer& d) {
         d.f32(d.record(2) + 16, std::numeric_limits<float>::infinity());
         return d.record(2) + 16;
       }},
      {"embedding_row 0", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.record(0) + 28, 0); return d.record(0) + 28; }},
      {"embedding_row past row_count", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.record(2) + 28, 4); return d.record(2) + 28; }},
      {"chunk reserved0 non-zero", stage::validate, errc::reserved_nonzero,
       [](damaged_layer& d) { d.u32(d.record(1) + 32, 1); return d.record(1) + 32; }},
      {"chunk reserved1 non-zero", stage::validate, errc::reserved_nonzero,
       [](damaged_layer& d) { d.u32(d.record(2) + 48, 0x80000000u); return d.record(2) + 48; }},
      {"relationship range past the table", stage::validate, errc::out_of_bounds,
       [](damaged_layer& d) { d.u32(d.record(2) + 44, 2); return d.record(2) + 44; }},
      {"rel_start past the table", stage::validate, errc::out_of_bounds,
       [](damaged_layer& d) { d.u64(d.record(1) + 36, 4); return d.record(1) + 36; }},
      {"rel_start + rel_count that overflows", stage::validate, errc::out_of_bounds, [](damaged_layer& d) {
         d.u64(d.record(0) + 36, max_u64);
         return d.record(0) + 36;
       }},
      {"rel fields without a relationships section", stage::validate, errc::invalid_value,
       [](damaged_layer& d) {
         // The base records keep their rel_start/rel_count: chunk 0 has
         // rel_count 2, chunk 1 rel_start 2, chunk 2 both.
         d.rebuild(with_order({1, 2, 5, 3}));
         return d.record(0) + 44;
       },
       4},
      {"relationship kind 3", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.u32(d.relationship(0), 3); return d.relationship(0); }},
      {"relationship kind 0", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.u32(d.relationship(2), 0); return d.relationship(2); }},
      {"chunk-id source 0", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.relationship(1) + 4, 0); return d.relationship(1) + 4; }},
      {"string source 0", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.relationship(0) + 4, 0); return d.relationship(0) + 4; }},
      {"string source past string_count", stage::validate, errc::invalid_id,
       [](damaged_layer& d) { d.u32(d.relationship(0) + 4, 9); return d.relationship(0) + 4; }},
      {"metadata version 2", stage::validate, errc::unsupported_version,
       [](damaged_layer& d) { d.u32(d.metadata(), 2); return d.metadata(); }},
      {"metadata format 2", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.u32(d.metadata() + 4, 2); return d.metadata() + 4; }},
      {"metadata blob_offset not section + 24", stage::validate, errc::invalid_value,
       [](damaged_layer& d) {
         // Shifted by one byte, still inside the section: the blob also stops
         // being JSON (it now starts with a quote and ends after the object).
         d.u64(d.metadata() + 8, d.metadata() + 25);
         d.u64(d.metadata() + 16, d.get_u64(d.metadata() + 16) - 1);
         return d.metadata() + 8;
       },
       3},
      {"metadata blob_length not section - 24", stage::validate, errc::invalid_value,
       [](damaged_layer& d) {
         d.u64(d.metadata() + 16, d.get_u64(d.metadata() + 16) - 1);
         return d.metadata() + 16;
       },
       2},
      {"metadata not JSON", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.u8(d.layer.metadata_blob_at + 1, '{'); return d.layer.metadata_blob_at; }},
      {"metadata not UTF-8", stage::validate, errc::invalid_utf8,
       [](damaged_layer& d) { d.u8(d.layer.metadata_blob_at + 3, 0xFE); return d.layer.metadata_blob_at + 3; }},
      {"i8 quant_scale 0", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.rebuild(i8_with_scale(0.0f)); return d.matrix() + 32; }},
      {"i8 quant_scale NaN", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.rebuild(i8_with_scale(std::nanf(""))); return d.matrix() + 32; }},
      {"i8 quant_scale infinite", stage::validate, errc::invalid_value, [](damaged_layer& d) {
         d.rebuild(i8_with_scale(-std::numeric_limits<float>::infinity()));
         return d.matrix() + 32;
       }},
      {"f32 quant_scale not 1", stage::validate, errc::invalid_value,
       [](damaged_layer& d) { d.f32(d.matrix() + 32, 0.5f); return d.matrix() + 32; }},
      {"embedding reserved0 -0.0", stage::validate, errc::reserved_nonzero,
       [](damaged_layer& d) { d.f32(d.matrix() + 36, -0.0f); return d.matrix() + 36; }},
  };
  return cases;
}

/// Reads everything a reader offers, so AddressSanitizer sees any access a
/// damaged layer could steer out of bounds. Errors are fine; reads past the
/// buffer are not.
void exercise(const layer_reader& reader) {
  (void)agentctx::agdb::validate(reader);
  (void)agentctx::agdb::read_layer_contents(reader);
  for (std::uint32_t id = 0; id <= reader.string_count() + 1 && id < 64; ++id) (void)reader.string(id);
  for (std::size_t i = 0; i < reader.chunk_count() && i < 64; ++i) {
    auto view = reader.chunk(i);
    if (view) (void)reader.sources(*view);
    (void)reader.sources(reader.record(i));
    (void)reader.find_chunk(reader.record(i).id);
    if (auto row = reader.row(reader.record(i).embedding_row); row && row->dim() != 0) {
      std::vector<float> values(row->dim());
      row->to_f32(values);
      (void)(*row)[row->dim() - 1];
    }
  }
  (void)reader.metadata_json();
}

}  // namespace

TEST_CASE("the base layer used by the corruption suite is valid") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  auto reader = layer_reader::from_bytes(layer.bytes, "base.db");
  REQUIRE(reader);
  CHECK(agentctx::agdb::validate(*reader).empty());
}

TEST_CASE("every corruption is reported with its code and offset") {
  CHECK(corruptions().size() >= 30);
  for (const corruption& c : corruptions()) {
    CAPTURE(c.name);
    damaged_layer d;
    const std::uint64_t expected_offset = c.damage(d);
    const agdb_test::exact_buffer buffer(d.bytes());
    auto reader = layer_reader::from_bytes(buffer.span(), "damaged.db");
    if (c.detected_by == stage::open) {
      REQUIRE_FALSE(reader.has_value());
      CHECK(agentctx::to_string(reader.error().code) == agentctx::to_string(c.code));
      CHECK(reader.error().offset == expected_offset);
      CHECK(reader.error().path == "damaged.db");
      CHECK_FALSE(reader.error().message.empty());
      continue;
    }
    INFO((reader ? std::string() : reader.error().describe()));
    REQUIRE(reader.has_value());
    const auto violations = agentctx::agdb::validate(*reader);
    REQUIRE_FALSE(violations.empty());
    CHECK(agentctx::to_string(violations[0].code) == agentctx::to_string(c.code));
    CHECK(violations[0].offset == expected_offset);
    CHECK_FALSE(violations[0].message.empty());
    CHECK(violations.size() == c.violations);
    exercise(*reader);
  }
}

TEST_CASE("a layer truncated at any offset fails to open") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  for (std::size_t cut = 0; cut < layer.bytes.size(); ++cut) {
    CAPTURE(cut);
    const agdb_test::exact_buffer buffer(std::span(layer.bytes).first(cut));
    auto reader = layer_reader::from_bytes(buffer.span(), "cut.db");
    REQUIRE_FALSE(reader.has_value());
    CHECK(reader.error().code == errc::truncated);
    CHECK(reader.error().offset == (cut < 40 ? 0u : 8u));
  }
}

TEST_CASE("a truncated layer whose header claims the shorter length fails at the first cut section") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  const std::uint64_t table_end = 40 + 5 * 24;
  for (std::size_t cut = 40; cut < layer.bytes.size(); ++cut) {
    CAPTURE(cut);
    std::vector<std::byte> bytes(layer.bytes.begin(), layer.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    agentctx::store_u64(bytes.data() + 8, cut);
    const agdb_test::exact_buffer buffer(bytes);
    auto reader = layer_reader::from_bytes(buffer.span(), "cut.db");
    REQUIRE_FALSE(reader.has_value());
    CHECK(reader.error().code == errc::out_of_bounds);
    std::uint64_t expected = 16;  // the table itself does not fit
    if (cut >= table_end) {
      for (std::size_t i = 0; i < 5; ++i) {
        const std::uint64_t offset = agentctx::load_u64(layer.bytes.data() + layer.entry_at[i] + 8);
        const std::uint64_t length = agentctx::load_u64(layer.bytes.data() + layer.entry_at[i] + 16);
        if (offset + length > cut) {
          expected = layer.entry_at[i] + (offset > cut ? 8 : 16);
          break;
        }
      }
    }
    CHECK(reader.error().offset == expected);
  }
}

TEST_CASE("flipping any byte never reads out of bounds and reports in-file offsets") {
  const auto layer = agdb_test::build(agdb_test::base_spec());
  for (std::size_t at = 0; at < layer.bytes.size(); ++at) {
    for (std::uint8_t mask : {0x01, 0x80, 0xFF}) {
      std::vector<std::byte> bytes = layer.bytes;
      bytes[at] ^= static_cast<std::byte>(mask);
      const agdb_test::exact_buffer buffer(bytes);
      auto reader = layer_reader::from_bytes(buffer.span(), "flipped.db");
      if (!reader) {
        CAPTURE(at);
        CHECK(agentctx::is_data_error(reader.error().code));
        CHECK(reader.error().offset < bytes.size());
        continue;
      }
      for (const auto& v : agentctx::agdb::validate(*reader)) {
        CAPTURE(at);
        CHECK(v.offset < bytes.size());
      }
      if (at >= layer.data_at) CHECK(agentctx::agdb::validate(*reader).empty());  // embedding values are free
      exercise(*reader);
    }
  }
}

}  // namespace agdb_layer_corruption_test
