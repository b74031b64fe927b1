// Test helper: AGDB v1 layers assembled by hand from the records of
// agdb/format.hpp (independent of the layer writer), with the offset of every
// structure recorded so tests can patch fields and predict error offsets.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agentctx/agdb/format.hpp"
#include "agentctx/core/endian.hpp"

namespace agdb_test {

using agentctx::agdb::chunk_record;
using agentctx::agdb::element_type;
using agentctx::agdb::relationship_record;

struct layer_spec {
  std::vector<std::string> strings;  // string id N is element N - 1
  std::vector<chunk_record> chunks;
  std::vector<relationship_record> relationships;
  std::optional<std::string> metadata;
  element_type type = element_type::f32;
  std::uint32_t dim = 4;
  std::uint64_t rows = 3;
  float quant_scale = 1.0f;
  std::uint16_t version_minor = 0;
  /// Section kinds in file order; kinds outside 1..5 get `unknown_payload`.
  std::vector<std::uint32_t> order = {1, 2, 5, 4, 3};
  std::vector<std::byte> unknown_payload = std::vector<std::byte>(8, std::byte{0xAB});
};

struct built_layer {
  std::vector<std::byte> bytes;
  std::vector<std::uint64_t> entry_at;                // file offset of each section table entry
  std::map<std::uint32_t, std::uint64_t> section_at;  // kind -> offset of its first section
  std::uint64_t string_entries_at = 0;
  std::uint64_t string_blob_at = 0;
  std::vector<std::uint64_t> string_at;  // absolute offset of each string's bytes
  std::uint64_t records_at = 0;
  std::uint64_t relationships_at = 0;
  std::uint64_t metadata_blob_at = 0;
  std::uint64_t data_at = 0;

  std::uint64_t record(std::size_t index) const { return records_at + index * chunk_record::size; }
  std::uint64_t relationship(std::size_t index) const { return relationships_at + index * relationship_record::size; }
  std::uint64_t string_entry(std::uint32_t id) const { return string_entries_at + (id - 1) * 16u; }
};

/// The valid base layer: 8 strings (one with multi-byte UTF-8), 3 chunks of
/// both authors, 3 relationships (a string source, a chunk-id source inside
/// the layer and one naming a chunk of another layer), layer metadata, and a
/// 3 x 4 f32 matrix whose data starts at an odd offset.
inline layer_spec base_spec() {
  layer_spec s;
  s.strings = {"canonical", "First chunk content", "human", "docs/a.md:12",
               "note",      "Zweiter Abschnitt: Gr\xC3\xBC\xC3\x9F" "e", "mcp", "third"};
  s.chunks = {
      {7, 1, 2, 3, 1.0f, 1700000000000ull, 1, 0, 0, 2, 0},
      {9, 5, 6, 7, 0.5f, 1700000000001ull, 2, 0, 2, 0, 0},
      {12, 1, 8, 3, 0.25f, 0, 3, 0, 2, 1, 0},
  };
  s.relationships = {{2, 4}, {1, 9}, {1, 4242}};
  s.metadata = R"({"v":1,"embedding_profile":{"backend":"hash","model":null,"revision":null,"dim":4,"output_norm":"none"}})";
  return s;
}

/// Value c of row r (0-based) of the generated matrix.
inline float f32_value(std::uint64_t r, std::uint32_t c) { return static_cast<float>(r * 10 + c) * 0.125f - 0.5f; }
inline std::int8_t i8_value(std::uint64_t r, std::uint32_t c) { return static_cast<std::int8_t>(r * 10 + c) - 7; }

namespace detail {

/// Writes a count-and-offset table header followed by its records; returns
/// the offset of the first record.
template <class Header, class Record>
std::uint64_t put_table(agentctx::byte_writer& w, std::uint64_t at, const std::vector<Record>& records) {
  encode(w, Header{records.size(), at + Header::size});
  for (const auto& r : records) encode(w, r);
  return at + Header::size;
}

/// Offsets are recorded for the first section of each kind only.
inline void keep_first(std::uint64_t& slot, std::uint64_t value) {
  if (slot == 0) slot = value;
}

}  // namespace detail

inline built_layer build(const layer_spec& spec) {
  using namespace agentctx::agdb;
  built_layer out;
  std::vector<std::byte>& b = out.bytes;
  agentctx::byte_writer w(b);
  const std::uint64_t count = spec.order.size();
  w.zeros(file_header::size + count * section_entry::size);
  std::vector<section_entry> entries;
  for (std::uint32_t kind : spec.order) {
    const std::uint64_t at = b.size();
    switch (kind) {
      case 1: {
        std::uint64_t blob = 0;
        for (const auto& s : spec.strings) blob += s.size();
        const std::uint64_t entries_at = at + string_dictionary_header::size;
        const std::uint64_t blob_at = entries_at + spec.strings.size() * string_entry::size;
        encode(w, string_dictionary_header{spec.strings.size(), entries_at, blob_at, blob});
        const bool first = out.string_entries_at == 0;
        std::uint64_t offset = 0;
        for (const auto& s : spec.strings) {
          encode(w, string_entry{offset, s.size()});
          if (first) out.string_at.push_back(blob_at + offset);
          offset += s.size();
        }
        for (const auto& s : spec.strings) w.bytes(s.data(), s.size());
        detail::keep_first(out.string_entries_at, entries_at);
        detail::keep_first(out.string_blob_at, blob_at);
        break;
      }
      case 2:
        detail::keep_first(out.records_at, detail::put_table<chunk_table_header>(w, at, spec.chunks));
        break;
      case 3: {
        const std::uint64_t value_size = spec.type == element_type::i8 ? 1 : 4;
        const std::uint64_t data_at = at + embedding_matrix_header::size;
        encode(w, embedding_matrix_header{spec.rows, spec.dim, static_cast<std::uint32_t>(spec.type), data_at,
                                          spec.rows * spec.dim * value_size, spec.quant_scale, 0.0f});
        detail::keep_first(out.data_at, data_at);
        for (std::uint64_t r = 0; r < spec.rows; ++r) {
          for (std::uint32_t c = 0; c < spec.dim; ++c) {
            if (spec.type == element_type::i8) w.u8(static_cast<std::uint8_t>(i8_value(r, c)));
            else w.f32(f32_value(r, c));
          }
        }
        break;
      }
      case 4:
        detail::keep_first(out.relationships_at, detail::put_table<relationships_header>(w, at, spec.relationships));
        break;
      case 5: {
        const std::string json = spec.metadata.value_or("{}");
        encode(w, layer_metadata_header{1, 1, at + layer_metadata_header::size, json.size()});
        detail::keep_first(out.metadata_blob_at, at + layer_metadata_header::size);
        w.bytes(json.data(), json.size());
        break;
      }
      default:
        w.bytes(spec.unknown_payload.data(), spec.unknown_payload.size());
        break;
    }
    entries.push_back({kind, 0, at, b.size() - at});
    out.section_at.emplace(kind, at);
  }
  // Header and table last, once the length and section offsets are known.
  std::vector<std::byte> head;
  agentctx::byte_writer hw(head);
  encode(hw, file_header{agentctx::agdb::magic, 1, spec.version_minor, b.size(), count, file_header::size, 0});
  for (std::size_t i = 0; i < entries.size(); ++i) {
    out.entry_at.push_back(head.size());
    encode(hw, entries[i]);
  }
  std::copy(head.begin(), head.end(), b.begin());
  return out;
}

/// A heap copy of exactly `bytes.size()` bytes, so AddressSanitizer flags any
/// read past the end (a vector's spare capacity would hide it).
struct exact_buffer {
  explicit exact_buffer(std::span<const std::byte> bytes)
      : size(bytes.size()), data(std::make_unique<std::byte[]>(bytes.size() == 0 ? 1 : bytes.size())) {
    std::copy(bytes.begin(), bytes.end(), data.get());
  }
  std::span<const std::byte> span() const { return {data.get(), size}; }
  std::size_t size;
  std::unique_ptr<std::byte[]> data;
};

}  // namespace agdb_test
