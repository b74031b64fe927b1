// agentctx/agdb/format.hpp: the AGDB v1 on-disk records (seed 000, section 8.4).
//
// Every record is tightly packed, little-endian, and may start at any offset
// (the reference writer produces unaligned chunk and embedding data). Records
// are decoded field by field from bytes with the endian helpers; never cast a
// struct onto mapped memory. Callers check that `size` bytes are available
// before calling a decode_* function. See docs/format/agdb.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agentctx/core/endian.hpp"

namespace agentctx::agdb {

inline constexpr std::uint32_t magic = 0x42444741;  // "AGDB" read as a little-endian u32
inline constexpr std::uint16_t version_major = 1;
inline constexpr std::uint16_t version_minor = 0;

enum class section_kind : std::uint32_t {
  string_dictionary = 1,
  chunk_table = 2,
  embedding_matrix = 3,
  relationships = 4,
  layer_metadata = 5,
};

enum class element_type : std::uint32_t { f32 = 1, i8 = 2 };

enum class relationship_kind : std::uint32_t { source_chunk_id = 1, source_string = 2 };

/// Stable lower-case names used by tools: "strings", "chunks", "embeddings",
/// "relationships", "metadata"; "unknown" for kinds this version does not define.
constexpr std::string_view section_kind_name(std::uint32_t kind) noexcept {
  switch (static_cast<section_kind>(kind)) {
    case section_kind::string_dictionary: return "strings";
    case section_kind::chunk_table: return "chunks";
    case section_kind::embedding_matrix: return "embeddings";
    case section_kind::relationships: return "relationships";
    case section_kind::layer_metadata: return "metadata";
  }
  return "unknown";
}

/// "f32", "i8", or "unknown".
constexpr std::string_view element_type_name(std::uint32_t type) noexcept {
  switch (static_cast<element_type>(type)) {
    case element_type::f32: return "f32";
    case element_type::i8: return "i8";
  }
  return "unknown";
}

inline constexpr std::uint32_t layer_metadata_version = 1;
inline constexpr std::uint32_t layer_metadata_format_json = 1;

/// FileHeaderV1 (40 bytes at offset 0).
struct file_header {
  static constexpr std::size_t size = 40;
  std::uint32_t magic = 0;
  std::uint16_t version_major = 0;
  std::uint16_t version_minor = 0;
  std::uint64_t file_length_bytes = 0;
  std::uint64_t section_count = 0;
  std::uint64_t sections_offset = 0;
  std::uint64_t flags = 0;
};

/// SectionEntry (24 bytes).
struct section_entry {
  static constexpr std::size_t size = 24;
  std::uint32_t kind = 0;
  std::uint32_t reserved = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

/// StringDictionaryHeaderV1 (32 bytes).
struct string_dictionary_header {
  static constexpr std::size_t size = 32;
  std::uint64_t string_count = 0;
  std::uint64_t entries_offset = 0;
  std::uint64_t bytes_offset = 0;
  std::uint64_t bytes_length = 0;
};

/// StringEntry (16 bytes).
struct string_entry {
  static constexpr std::size_t size = 16;
  std::uint64_t byte_offset = 0;
  std::uint64_t byte_length = 0;
};

/// ChunkTableHeaderV1 (16 bytes).
struct chunk_table_header {
  static constexpr std::size_t size = 16;
  std::uint64_t chunk_count = 0;
  std::uint64_t records_offset = 0;
};

/// ChunkRecord (52 bytes).
struct chunk_record {
  static constexpr std::size_t size = 52;
  std::uint32_t id = 0;
  std::uint32_t kind_str_id = 0;
  std::uint32_t content_str_id = 0;
  std::uint32_t author_str_id = 0;
  float confidence = 0.0f;
  std::uint64_t created_at_unix_ms = 0;
  std::uint32_t embedding_row = 0;
  std::uint32_t reserved0 = 0;
  std::uint64_t rel_start = 0;
  std::uint32_t rel_count = 0;
  std::uint32_t reserved1 = 0;
};

/// EmbeddingMatrixHeaderV1 (40 bytes).
struct embedding_matrix_header {
  static constexpr std::size_t size = 40;
  std::uint64_t row_count = 0;
  std::uint32_t dim = 0;
  std::uint32_t element_type = 0;
  std::uint64_t data_offset = 0;
  std::uint64_t data_length = 0;
  float quant_scale = 0.0f;
  float reserved0 = 0.0f;
};

/// RelationshipsHeaderV1 (16 bytes).
struct relationships_header {
  static constexpr std::size_t size = 16;
  std::uint64_t relationship_count = 0;
  std::uint64_t records_offset = 0;
};

/// RelationshipRecord (8 bytes).
struct relationship_record {
  static constexpr std::size_t size = 8;
  std::uint32_t kind = 0;
  std::uint32_t value_u32 = 0;
};

/// LayerMetadataHeaderV1 (24 bytes).
struct layer_metadata_header {
  static constexpr std::size_t size = 24;
  std::uint32_t version = 0;
  std::uint32_t format = 0;
  std::uint64_t blob_offset = 0;
  std::uint64_t blob_length = 0;
};

// ---- decoding (p must point at `T::size` readable bytes) -------------------

inline file_header decode_file_header(const std::byte* p) noexcept {
  return {load_u32(p), load_u16(p + 4), load_u16(p + 6), load_u64(p + 8),
          load_u64(p + 16), load_u64(p + 24), load_u64(p + 32)};
}
inline section_entry decode_section_entry(const std::byte* p) noexcept {
  return {load_u32(p), load_u32(p + 4), load_u64(p + 8), load_u64(p + 16)};
}
inline string_dictionary_header decode_string_dictionary_header(const std::byte* p) noexcept {
  return {load_u64(p), load_u64(p + 8), load_u64(p + 16), load_u64(p + 24)};
}
inline string_entry decode_string_entry(const std::byte* p) noexcept { return {load_u64(p), load_u64(p + 8)}; }
inline chunk_table_header decode_chunk_table_header(const std::byte* p) noexcept {
  return {load_u64(p), load_u64(p + 8)};
}
inline chunk_record decode_chunk_record(const std::byte* p) noexcept {
  return {load_u32(p),      load_u32(p + 4),  load_u32(p + 8),  load_u32(p + 12),
          load_f32(p + 16), load_u64(p + 20), load_u32(p + 28), load_u32(p + 32),
          load_u64(p + 36), load_u32(p + 44), load_u32(p + 48)};
}
inline embedding_matrix_header decode_embedding_matrix_header(const std::byte* p) noexcept {
  return {load_u64(p), load_u32(p + 8), load_u32(p + 12), load_u64(p + 16),
          load_u64(p + 24), load_f32(p + 32), load_f32(p + 36)};
}
inline relationships_header decode_relationships_header(const std::byte* p) noexcept {
  return {load_u64(p), load_u64(p + 8)};
}
inline relationship_record decode_relationship_record(const std::byte* p) noexcept {
  return {load_u32(p), load_u32(p + 4)};
}
inline layer_metadata_header decode_layer_metadata_header(const std::byte* p) noexcept {
  return {load_u32(p), load_u32(p + 4), load_u64(p + 8), load_u64(p + 16)};
}

// ---- encoding --------------------------------------------------------------

inline void encode(byte_writer& w, const file_header& h) {
  w.u32(h.magic); w.u16(h.version_major); w.u16(h.version_minor);
  w.u64(h.file_length_bytes); w.u64(h.section_count); w.u64(h.sections_offset); w.u64(h.flags);
}
inline void encode(byte_writer& w, const section_entry& e) {
  w.u32(e.kind); w.u32(e.reserved); w.u64(e.offset); w.u64(e.length);
}
inline void encode(byte_writer& w, const string_dictionary_header& h) {
  w.u64(h.string_count); w.u64(h.entries_offset); w.u64(h.bytes_offset); w.u64(h.bytes_length);
}
inline void encode(byte_writer& w, const string_entry& e) { w.u64(e.byte_offset); w.u64(e.byte_length); }
inline void encode(byte_writer& w, const chunk_table_header& h) { w.u64(h.chunk_count); w.u64(h.records_offset); }
inline void encode(byte_writer& w, const chunk_record& c) {
  w.u32(c.id); w.u32(c.kind_str_id); w.u32(c.content_str_id); w.u32(c.author_str_id);
  w.f32(c.confidence); w.u64(c.created_at_unix_ms); w.u32(c.embedding_row); w.u32(c.reserved0);
  w.u64(c.rel_start); w.u32(c.rel_count); w.u32(c.reserved1);
}
inline void encode(byte_writer& w, const embedding_matrix_header& h) {
  w.u64(h.row_count); w.u32(h.dim); w.u32(h.element_type); w.u64(h.data_offset);
  w.u64(h.data_length); w.f32(h.quant_scale); w.f32(h.reserved0);
}
inline void encode(byte_writer& w, const relationships_header& h) {
  w.u64(h.relationship_count); w.u64(h.records_offset);
}
inline void encode(byte_writer& w, const relationship_record& r) { w.u32(r.kind); w.u32(r.value_u32); }
inline void encode(byte_writer& w, const layer_metadata_header& h) {
  w.u32(h.version); w.u32(h.format); w.u64(h.blob_offset); w.u64(h.blob_length);
}

}  // namespace agentctx::agdb
