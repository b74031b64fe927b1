// agentctx/agdb/layer_reader.hpp: zero-copy reading of an AGDB v1 layer file.
//
// A `layer_reader` owns (or borrows) the bytes of one layer file and decodes
// records from them in place. Opening checks the file's structure in time
// independent of the number of strings, chunks, relationships and rows:
//
//   - the file holds at least the 40-byte header;
//   - magic is "AGDB" (errc::bad_magic), version_major is 1
//     (errc::unsupported_version), flags is 0 (errc::reserved_nonzero), and
//     file_length_bytes equals the real size (errc::truncated when the file is
//     shorter, errc::invalid_value when longer);
//   - the section table starts after the header and lies inside the file, and
//     every section lies inside the file (errc::out_of_bounds);
//   - there is exactly one string dictionary, chunk table and embedding matrix
//     (errc::missing_section / errc::duplicate_section) and at most one
//     relationships and one layer metadata section (errc::duplicate_section);
//     sections of unknown kinds are skipped (validate() reports them);
//   - no two sections, nor a section and the header or the section table,
//     share a byte (errc::overlap);
//   - every known section holds its header (errc::truncated), and every array
//     a section header describes (string entries, string blob, chunk records,
//     relationship records, embedding data, metadata blob) lies inside the
//     section after its header (errc::out_of_bounds);
//   - the embedding element type is f32 or i8 and data_length equals
//     row_count * dim * element size (errc::invalid_value).
//
// Every error carries the file's path (or the name given to from_bytes) and
// the offset of the offending field. After a successful open, reading any
// element of those arrays needs no further bounds check. What open() does not
// look at (string entries, UTF-8, ids, reserved fields, relationship ranges,
// metadata invariants) is checked by validate() in layer_validator.hpp;
// accessors that follow such a reference check it and return an error.
//
// Lifetimes: views returned by a reader (string_view, chunk_view,
// embedding_row_view, metadata_json) are valid while the reader lives (for
// from_bytes: while the caller's bytes live). Moving a reader keeps them
// valid. Thread-safety: const members may be called from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/detail/chunk_id_index.hpp"
#include "agentctx/agdb/embedding_row_view.hpp"
#include "agentctx/agdb/format.hpp"
#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"

namespace agentctx::agdb {

/// A chunk's source with its string resolved (a view into the file).
struct source_view {
  relationship_kind kind = relationship_kind::source_string;
  std::uint32_t chunk_id = 0;  ///< set when kind == source_chunk_id
  std::string_view text;       ///< set when kind == source_string
};

/// A chunk record with its strings resolved (views into the file).
struct chunk_view {
  std::uint32_t id = 0;
  std::string_view kind;
  std::string_view content;
  std::string_view author;
  float confidence = 0.0f;
  std::uint64_t created_at_unix_ms = 0;
  std::uint32_t embedding_row = 0;  ///< 1-based row of the embedding matrix
  std::uint64_t rel_start = 0;      ///< first relationship index (0-based)
  std::uint32_t rel_count = 0;
  std::uint64_t record_offset = 0;  ///< file offset of the ChunkRecord
};

namespace detail {

/// Where the region [offset, offset + count * element_size) falls relative
/// to the container [begin, end), computed without overflow.
enum class region_fit { inside, offset_outside, length_outside };

constexpr region_fit fit_region(std::uint64_t begin, std::uint64_t end, std::uint64_t offset, std::uint64_t count,
                                std::uint64_t element_size) noexcept {
  if (offset < begin || offset > end) return region_fit::offset_outside;
  if (element_size != 0 && count > (end - offset) / element_size) return region_fit::length_outside;
  return region_fit::inside;
}

inline std::string hex32(std::uint32_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = "0x00000000";
  for (int i = 9; i >= 2; --i, v >>= 4) out[static_cast<std::size_t>(i)] = digits[v & 0xF];
  return out;
}

inline std::string_view chars_at(const std::byte* p, std::uint64_t length) noexcept {
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(length)};
}

}  // namespace detail

class layer_reader {
 public:
  layer_reader(layer_reader&&) noexcept = default;
  layer_reader& operator=(layer_reader&&) noexcept = default;
  layer_reader(const layer_reader&) = delete;
  layer_reader& operator=(const layer_reader&) = delete;
  ~layer_reader() = default;

  /// Maps `path` through `fs` and checks its structure (see the file comment).
  /// Fails with the file system's error (not_found, io_error...) or a data error.
  static result<layer_reader> open(io::file_system& fs, const std::string& path);
  /// Same, on the POSIX file system.
  static result<layer_reader> open(const std::string& path);
  /// Takes ownership of `mapping`; `name` is used as the path in errors.
  static result<layer_reader> from_mapping(io::mapped_bytes mapping, std::string name);
  /// Borrows `bytes`, which the caller keeps alive and unchanged while the
  /// reader and every view from it live.
  static result<layer_reader> from_bytes(std::span<const std::byte> bytes, std::string name);

  // ---- file --------------------------------------------------------------
  const file_header& header() const noexcept { return header_; }
  /// The section table, in file order (unknown kinds included).
  std::span<const section_entry> sections() const noexcept { return sections_; }
  /// File offset of the table entry sections()[index].
  std::uint64_t section_entry_offset(std::size_t index) const noexcept {
    return header_.sections_offset + index * section_entry::size;
  }
  /// Index into sections() of the section of a known `kind`, if present.
  std::optional<std::size_t> find_section(section_kind kind) const noexcept {
    const std::size_t slot = static_cast<std::size_t>(kind);
    if (slot >= section_slots || section_index_[slot] == no_section) return std::nullopt;
    return section_index_[slot];
  }
  const std::string& path() const noexcept { return name_; }
  const std::string& name() const noexcept { return name_; }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }

  // ---- strings (ids are 1-based) -------------------------------------------
  const string_dictionary_header& string_dictionary() const noexcept { return strings_; }
  std::size_t string_count() const noexcept { return static_cast<std::size_t>(strings_.string_count); }
  /// File offset of the StringEntry of string `id` (precondition: 1 <= id <= string_count()).
  std::uint64_t string_entry_offset(std::uint32_t id) const noexcept {
    return strings_.entries_offset + std::uint64_t{id - 1} * string_entry::size;
  }
  /// The bytes of string `id` (not checked for UTF-8: validate() does that).
  /// errc::invalid_id when id is 0 or above string_count(); errc::out_of_bounds
  /// (at the entry's field) when its entry points outside the string blob.
  result<std::string_view> string(std::uint32_t id) const { return string_for_field(id, error::no_offset); }
  /// Like string() without building an error: nullopt on either failure.
  std::optional<std::string_view> find_string(std::uint32_t id) const noexcept;

  // ---- chunks --------------------------------------------------------------
  const chunk_table_header& chunk_table() const noexcept { return chunks_; }
  std::size_t chunk_count() const noexcept { return static_cast<std::size_t>(chunks_.chunk_count); }
  /// File offset of ChunkRecord `index` (precondition: index < chunk_count()).
  std::uint64_t record_offset(std::size_t index) const noexcept {
    return chunks_.records_offset + std::uint64_t{index} * chunk_record::size;
  }
  /// ChunkRecord `index` as stored (precondition: index < chunk_count()).
  chunk_record record(std::size_t index) const noexcept {
    return decode_chunk_record(bytes_.data() + record_offset(index));
  }
  /// Chunk `index` with its strings resolved. errc::invalid_argument when
  /// index >= chunk_count(); otherwise the errors of string(), at the offset
  /// of the record's string id field.
  result<chunk_view> chunk(std::size_t index) const;
  /// Index of the first chunk whose id is `id`. The first call builds an id
  /// table in O(chunk_count()) (one allocation); later calls are O(1).
  std::optional<std::size_t> find_chunk(std::uint32_t id) const;

  // ---- relationships -------------------------------------------------------
  bool has_relationships() const noexcept { return find_section(section_kind::relationships).has_value(); }
  /// The relationships header; all zero when the section is absent.
  const relationships_header& relationships() const noexcept { return relationships_; }
  std::size_t relationship_count() const noexcept {
    return static_cast<std::size_t>(relationships_.relationship_count);
  }
  /// File offset of RelationshipRecord `index` (precondition: index < relationship_count()).
  std::uint64_t relationship_offset(std::size_t index) const noexcept {
    return relationships_.records_offset + std::uint64_t{index} * relationship_record::size;
  }
  /// RelationshipRecord `index` as stored (precondition: index < relationship_count()).
  relationship_record relationship(std::size_t index) const noexcept {
    return decode_relationship_record(bytes_.data() + relationship_offset(index));
  }
  /// The provenance of a chunk, strings resolved. Fails with
  /// errc::invalid_value when rel_count is non-zero without a relationships
  /// section or a record has an unknown kind, errc::out_of_bounds when the
  /// range leaves the table, and the errors of string() for string sources.
  /// Errors about the range carry no offset; use the chunk_view overload to
  /// have them point at the chunk record.
  result<std::vector<source_ref>> sources(const chunk_record& record) const {
    return sources_in_range(record.rel_start, record.rel_count, error::no_offset);
  }
  result<std::vector<source_ref>> sources(const chunk_view& chunk) const {
    return sources_in_range(chunk.rel_start, chunk.rel_count, chunk.record_offset);
  }
  /// The same sources without copying them: calls `visit(source_view)`
  /// (returning result<void>) for each in order, and stops at the first
  /// error, its own or one that sources() would return.
  template <class Visit>
  result<void> for_each_source(const chunk_view& chunk, Visit&& visit) const {
    return visit_sources_in_range(chunk.rel_start, chunk.rel_count, chunk.record_offset, visit);
  }

  // ---- embeddings ----------------------------------------------------------
  const embedding_matrix_header& embedding_header() const noexcept { return embeddings_; }
  /// Row `row_1_based` of the matrix; errc::invalid_id when it is 0 or above row_count.
  result<embedding_row_view> row(std::uint32_t row_1_based) const;

  // ---- layer metadata ------------------------------------------------------
  /// The layer metadata header, when the section is present.
  const std::optional<layer_metadata_header>& metadata_header() const noexcept { return metadata_; }
  /// The metadata blob (JSON in a valid file), when the section is present.
  std::optional<std::string_view> metadata_json() const noexcept {
    if (!metadata_) return std::nullopt;
    return detail::chars_at(bytes_.data() + metadata_->blob_offset, metadata_->blob_length);
  }

 private:
  static constexpr std::size_t section_slots = 6;  // section kinds 1..5
  static constexpr std::size_t no_section = ~std::size_t{0};

  struct lazy_chunk_index {
    std::once_flag built;
    detail::chunk_id_index table;
  };

  layer_reader() = default;

  result<void> check_structure();
  result<void> check_section_table();
  result<void> check_section_headers();
  unexpected corrupt(errc code, std::uint64_t offset, std::string message) const {
    return fail(code, std::move(message), name_, offset);
  }
  unexpected region_error(detail::region_fit fit, std::uint64_t offset_field, std::uint64_t length_field,
                          std::string_view what) const;
  result<std::string_view> string_for_field(std::uint32_t id, std::uint64_t field_offset) const;
  result<std::vector<source_ref>> sources_in_range(std::uint64_t rel_start, std::uint32_t rel_count,
                                                   std::uint64_t record_offset) const;
  template <class Visit>
  result<void> visit_sources_in_range(std::uint64_t rel_start, std::uint32_t rel_count, std::uint64_t record_offset,
                                      Visit& visit) const;
  const section_entry& section(section_kind kind) const noexcept {
    return sections_[section_index_[static_cast<std::size_t>(kind)]];
  }

  io::mapped_bytes mapping_;
  std::span<const std::byte> bytes_;
  std::string name_;
  file_header header_;
  std::vector<section_entry> sections_;
  std::size_t section_index_[section_slots] = {no_section, no_section, no_section,
                                               no_section, no_section, no_section};
  string_dictionary_header strings_;
  chunk_table_header chunks_;
  embedding_matrix_header embeddings_;
  relationships_header relationships_;
  std::optional<layer_metadata_header> metadata_;
  std::unique_ptr<lazy_chunk_index> chunk_index_;
};

/// Copies the whole layer into its logical form: chunks in file order with
/// strings and sources resolved, chunk i's embedding row as row i of the
/// output matrix, the metadata blob and version_minor. Fails with the first
/// error an accessor reports (a chunk's bad embedding_row gives
/// errc::invalid_id at the record's embedding_row field). A layer with more
/// chunks than embedding rows fails with errc::unsupported: the output holds
/// one row per chunk, and bounding it by the stored matrix keeps a small
/// hostile file from demanding memory quadratic in its size. The vectors of
/// chunks and values have room for one more chunk, so that appending one
/// (an agent write) does not copy them.
result<layer_contents> read_layer_contents(const layer_reader& reader);

namespace detail {

/// errc::unsupported unless `reader` has at least one embedding row per
/// chunk (see read_layer_contents).
result<void> check_row_per_chunk(const layer_reader& reader);

/// The embedding row of chunk `index` (< chunk_count()); errc::invalid_id at
/// its record's embedding_row field when that names no row.
result<embedding_row_view> row_of_chunk(const layer_reader& reader, std::size_t index);

}  // namespace detail

}  // namespace agentctx::agdb

#include "agentctx/agdb/detail/layer_reader-inl.hpp"
