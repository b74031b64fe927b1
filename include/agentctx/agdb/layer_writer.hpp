// agentctx/agdb/layer_writer.hpp: encodes a layer_contents as an AGDB v1 file.
//
// The output is the layout the reference implementation writes, so the same
// contents give the same bytes here and there (docs/format/agdb.md, "Writer
// conventions"):
//   - strings are interned in first-seen order while walking the chunks; for
//     each chunk: kind, content, author, then its string sources in order.
//     Equal strings share one id;
//   - sections follow the header and the section table in the order
//     strings, chunks, [layer metadata], [relationships], embeddings, each
//     section's payload directly after its header, no padding anywhere;
//   - a chunk's embedding_row is its index + 1, its rel_start is the number of
//     relationship records written before it (also when it has no sources);
//   - the relationships section is present only when some chunk has a source,
//     the layer metadata section only when `metadata_json` is set.
//
// Encoding is deterministic: the same contents always give the same bytes.
//
// write_layer_appending writes the layer an existing file becomes with some
// chunks appended, byte for byte what write_layer would write for its
// decoded contents plus the chunks, but straight from the file's mapping:
// an update that appends (an agent write) then costs about a file copy,
// whatever the layer's size, instead of a decode and an encode of it.
//
// Every call validates its input completely before producing a byte, and
// fails with one of (the message names the offending chunk id and field):
//   errc::invalid_id        a chunk id is 0, or a chunk-id source is 0;
//   errc::duplicate_id      two chunks share an id;
//   errc::invalid_value     author is not "human" or "mcp"; confidence is not
//                           finite in [0, 1]; a source or element type is not
//                           one of the enumerators; an f32 matrix has
//                           quant_scale != 1.0; an i8 matrix has a zero or
//                           non-finite quant_scale; the metadata blob is not
//                           JSON (the format requires JSON for format 1);
//   errc::invalid_utf8      a kind, content, author, string source or the
//                           metadata blob is not valid UTF-8;
//   errc::invalid_argument  dim is 0; the value count is not chunks x dim; the
//                           vector of the other element type is not empty;
//                           more chunks, distinct strings or sources per chunk
//                           than a u32 id can address.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedding_row_view.hpp"
#include "agentctx/agdb/format.hpp"
#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/detail/string_hash.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

namespace detail {

inline constexpr std::uint64_t max_u32 = std::numeric_limits<std::uint32_t>::max();

inline std::string chunk_label(std::uint32_t id) { return "chunk " + std::to_string(id) + ": "; }

/// Assigns 1-based string ids in first-seen order. An open-addressing table of
/// ids keyed by views into the caller's strings: interning allocates nothing
/// per string beyond the amortised growth of two vectors.
class string_interner {
 public:
  explicit string_interner(std::size_t expected_strings) {
    std::size_t capacity = 16;
    while (capacity < expected_strings * 2) capacity *= 2;
    slots_.assign(capacity, slot{});
    strings_.reserve(expected_strings);
  }

  static std::uint64_t hash_of(std::string_view text) noexcept { return string_table_hash(text); }

  /// Starts loading the table slot of a string with this hash into cache, so
  /// that interning it a little later does not wait for memory.
  void prefetch(std::uint64_t hash) const noexcept {
    __builtin_prefetch(&slots_[static_cast<std::size_t>(hash) & (slots_.size() - 1)]);
  }

  /// The id of `text`, adding it when new. `text` must outlive the interner.
  /// A new string is checked for UTF-8; `chunk_id` and `field` name it in errors.
  result<std::uint32_t> intern(std::string_view text, std::uint32_t chunk_id, std::string_view field) {
    return intern(text, hash_of(text), chunk_id, field);
  }

  /// Same, with `hash` = hash_of(text) computed by the caller.
  result<std::uint32_t> intern(std::string_view text, std::uint64_t hash, std::uint32_t chunk_id,
                               std::string_view field) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(hash) & mask;; i = (i + 1) & mask) {
      const slot s = slots_[i];
      if (s.id == 0) break;
      if (s.hash_check == check_bits(hash) && strings_[s.id - 1] == text) return s.id;
    }
    if (std::size_t bad = find_invalid_utf8(text); bad != text.size()) {
      return fail(errc::invalid_utf8, chunk_label(chunk_id) + std::string(field) +
                                          " is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    if (strings_.size() >= max_u32) {
      return fail(errc::invalid_argument, "more than 4294967295 distinct strings do not fit u32 string ids");
    }
    strings_.push_back(text);
    bytes_ += text.size();
    const auto id = static_cast<std::uint32_t>(strings_.size());
    if (strings_.size() * 2 > slots_.size()) {
      grow();  // re-inserts every string, this one included
    } else {
      insert(hash, id);
    }
    return id;
  }

  /// Moves the interned strings out; string id N is element N - 1.
  std::vector<std::string_view> take_strings() noexcept { return std::move(strings_); }
  /// Total bytes of the interned strings.
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  // Eight bytes, so that more of the table stays in cache: the probe is the
  // likely cache miss of every lookup. The upper hash bits (the lower ones
  // chose the slot) reject most mismatches without touching the string.
  struct slot {
    std::uint32_t id = 0;  // 0 marks an empty slot
    std::uint32_t hash_check = 0;
  };

  static std::uint32_t check_bits(std::uint64_t hash) noexcept { return static_cast<std::uint32_t>(hash >> 32); }

  void insert(std::uint64_t hash, std::uint32_t id) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>(hash) & mask;
    while (slots_[i].id != 0) i = (i + 1) & mask;
    slots_[i] = slot{id, check_bits(hash)};
  }

  void grow() {
    slots_.assign(slots_.size() * 2, slot{});
    for (std::size_t i = 0; i < strings_.size(); ++i) {
      insert(hash_of(strings_[i]), static_cast<std::uint32_t>(i + 1));
    }
  }

  std::vector<slot> slots_;
  std::vector<std::string_view> strings_;
  std::uint64_t bytes_ = 0;
};

/// The element type, dim, chunk count and quant_scale of a matrix to write.
inline result<void> check_matrix_shape(element_type type, std::uint32_t dim, float quant_scale,
                                       std::uint64_t chunk_count) {
  if (type != element_type::f32 && type != element_type::i8) {
    return fail(errc::invalid_value, "embedding element type " + std::to_string(static_cast<std::uint32_t>(type)) +
                                         " is neither f32 (1) nor i8 (2)");
  }
  if (dim == 0) return fail(errc::invalid_argument, "embedding dim must be greater than zero");
  if (chunk_count > max_u32) {
    return fail(errc::invalid_argument, "more than 4294967295 chunks do not fit u32 embedding rows");
  }
  const bool f32 = type == element_type::f32;
  if (f32 && quant_scale != 1.0f) {
    return fail(errc::invalid_value,
                "quant_scale of an f32 embedding matrix must be 1.0, got " + std::to_string(quant_scale));
  }
  if (!f32 && (!std::isfinite(quant_scale) || quant_scale == 0.0f)) {
    return fail(errc::invalid_value, "quant_scale of an i8 embedding matrix must be finite and non-zero, got " +
                                         std::to_string(quant_scale));
  }
  return {};
}

/// `m` holds exactly `chunk_count` rows of its element type and nothing of the other.
inline result<void> check_matrix_values(const embedding_matrix& m, std::uint64_t chunk_count) {
  const bool f32 = m.type == element_type::f32;
  const std::size_t values = f32 ? m.f32_values.size() : m.i8_values.size();
  const std::size_t other_values = f32 ? m.i8_values.size() : m.f32_values.size();
  // Both factors fit in u32, so the product fits in u64.
  const std::uint64_t expected = chunk_count * m.dim;
  if (values != expected) {
    return fail(errc::invalid_argument, "embedding matrix holds " + std::to_string(values) + " values, expected " +
                                            std::to_string(chunk_count) + " chunks x dim " + std::to_string(m.dim) +
                                            " = " + std::to_string(expected));
  }
  if (other_values != 0) {
    return fail(errc::invalid_argument, f32 ? "i8_values must be empty in an f32 embedding matrix"
                                            : "f32_values must be empty in an i8 embedding matrix");
  }
  return {};
}

inline result<void> check_embeddings(const layer_contents& contents) {
  const embedding_matrix& m = contents.embeddings;
  AGENTCTX_TRY(check_matrix_shape(m.type, m.dim, m.quant_scale, contents.chunks.size()));
  return check_matrix_values(m, contents.chunks.size());
}

inline result<void> check_metadata(std::string_view json) {
  if (std::size_t bad = find_invalid_utf8(json); bad != json.size()) {
    return fail(errc::invalid_utf8, "layer metadata is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (const auto failure = parser.parse(json.data(), json.size()).get(document); failure != simdjson::SUCCESS) {
    return fail(errc::invalid_value, std::string("layer metadata is not JSON: ") + simdjson::error_message(failure));
  }
  return {};
}

/// A chunk of a layer_contents as the planner reads chunks: a chunk_view of
/// its fields (no record offset, row or relationship start).
inline result<chunk_view> view_of(const chunk& c) {
  if (c.sources.size() > max_u32) {
    return fail(errc::invalid_argument, chunk_label(c.id) + "more than 4294967295 sources");
  }
  chunk_view view;
  view.id = c.id;
  view.kind = c.kind;
  view.content = c.content;
  view.author = c.author;
  view.confidence = c.confidence;
  view.created_at_unix_ms = c.created_at_unix_ms;
  view.rel_count = static_cast<std::uint32_t>(c.sources.size());
  return view;
}

template <class Visit>
result<void> visit_sources(const chunk& c, Visit& visit) {
  for (const source_ref& source : c.sources) {
    AGENTCTX_TRY(visit(source_view{source.kind, source.chunk_id, source.text}));
  }
  return {};
}

/// The chunks of a layer_contents, as plan_chunks reads them: size(),
/// fields(index) (the chunk's fields as a chunk_view) and
/// for_each_source(index, visit).
class contents_chunks {
 public:
  explicit contents_chunks(const std::vector<chunk>& chunks) noexcept : chunks_(chunks) {}
  std::size_t size() const noexcept { return chunks_.size(); }
  result<chunk_view> fields(std::size_t index) const { return view_of(chunks_[index]); }
  template <class Visit>
  result<void> for_each_source(std::size_t index, Visit& visit) const {
    return visit_sources(chunks_[index], visit);
  }

 private:
  const std::vector<chunk>& chunks_;
};

/// The chunks of `base` followed by `added`, as plan_chunks reads them: the
/// base's strings are views into its file, nothing is copied.
class appended_chunks {
 public:
  appended_chunks(const layer_reader& base, std::span<const chunk> added) noexcept : base_(base), added_(added) {}
  std::size_t size() const noexcept { return base_.chunk_count() + added_.size(); }
  result<chunk_view> fields(std::size_t index) const {
    if (index >= base_.chunk_count()) return view_of(added_[index - base_.chunk_count()]);
    return base_.chunk(index);
  }
  template <class Visit>
  result<void> for_each_source(std::size_t index, Visit& visit) const {
    if (index >= base_.chunk_count()) return visit_sources(added_[index - base_.chunk_count()], visit);
    const chunk_record record = base_.record(index);
    chunk_view located;
    located.rel_start = record.rel_start;
    located.rel_count = record.rel_count;
    located.record_offset = base_.record_offset(index);
    return base_.for_each_source(located, visit);
  }

 private:
  const layer_reader& base_;
  std::span<const chunk> added_;
};

inline result<void> check_chunk_fields(const chunk_view& c) {
  if (c.id == 0) return fail(errc::invalid_id, "chunk id 0 is reserved (ids must be non-zero)");
  if (c.author != "human" && c.author != "mcp") {
    return fail(errc::invalid_value, chunk_label(c.id) + "author must be \"human\" or \"mcp\"");
  }
  if (!std::isfinite(c.confidence) || c.confidence < 0.0f || c.confidence > 1.0f) {
    return fail(errc::invalid_value, chunk_label(c.id) + "confidence must be finite and in [0, 1], got " +
                                         std::to_string(c.confidence));
  }
  return {};
}

inline result<void> check_unique_ids(const std::vector<chunk_record>& records) {
  std::vector<std::uint32_t> ids;
  ids.reserve(records.size());
  for (const chunk_record& r : records) ids.push_back(r.id);
  std::sort(ids.begin(), ids.end());
  auto repeated = std::adjacent_find(ids.begin(), ids.end());
  if (repeated != ids.end()) {
    return fail(errc::duplicate_id, "chunk id " + std::to_string(*repeated) + " appears more than once");
  }
  return {};
}

/// Everything needed to emit a layer, computed before the first byte is
/// written. The string views point into the contents it was planned from.
struct layer_plan {
  std::vector<std::string_view> strings;
  std::vector<chunk_record> records;
  std::vector<relationship_record> relationships;
  std::vector<section_entry> sections;  // in file order
  file_header header;
  string_dictionary_header strings_header;
  chunk_table_header chunks_header;
  layer_metadata_header metadata_header;
  agdb::relationships_header relationships_header;
  embedding_matrix_header embeddings_header;
};

/// The element type, dim and quant_scale of the matrix to write.
struct matrix_shape {
  element_type type = element_type::f32;
  std::uint32_t dim = 0;
  float quant_scale = 1.0f;
};

/// Lays out a file of `chunks` (contents_chunks or appended_chunks), whose
/// matrix has `shape` (checked by the caller), checking every chunk. The
/// plan's string views point into what `chunks` reads from, which must
/// outlive it and stay unchanged.
template <class Chunks>
result<layer_plan> plan_chunks(const Chunks& chunks, const matrix_shape& shape,
                               std::optional<std::string_view> metadata_json, std::uint16_t version_minor) {
  layer_plan plan;
  const std::size_t chunk_count = chunks.size();
  string_interner interner(chunk_count * 2 + 2);
  plan.records.reserve(chunk_count);
  // Kinds and authors mostly repeat from one chunk to the next; comparing with
  // the previous one saves a table probe for them.
  struct interned_string {
    std::string_view text;
    std::uint32_t id = 0;
  };
  interned_string previous_kind;
  interned_string previous_author;
  auto intern_repeating = [&interner](interned_string& previous, std::string_view text, std::uint32_t chunk_id,
                                      std::string_view field) -> result<std::uint32_t> {
    if (previous.id != 0 && previous.text == text) return previous.id;
    auto id = interner.intern(text, chunk_id, field);
    if (id) previous = {text, *id};
    return id;
  };
  // Chunks are read and their contents hashed a few chunks ahead, and their
  // table slots prefetched: each lookup would otherwise stall on a cache
  // miss, and the content bytes are then still in cache when they are
  // compared and checked for UTF-8. A chunk that cannot be read fails when
  // its turn comes, so errors come in chunk order.
  constexpr std::size_t lookahead = 8;
  chunk_view fields_ahead[lookahead] = {};
  std::uint64_t content_hashes[lookahead] = {};
  std::optional<error> unreadable;
  std::size_t unreadable_index = chunk_count;
  auto read_ahead = [&](std::size_t index) {
    if (index >= chunk_count || unreadable) return;
    auto fields = chunks.fields(index);
    if (!fields) {
      unreadable = std::move(fields).error();
      unreadable_index = index;
      return;
    }
    const std::uint64_t hash = string_interner::hash_of(fields->content);
    fields_ahead[index % lookahead] = *fields;
    content_hashes[index % lookahead] = hash;
    interner.prefetch(hash);
  };
  for (std::size_t index = 0; index < lookahead; ++index) read_ahead(index);
  for (std::size_t index = 0; index < chunk_count; ++index) {
    if (index == unreadable_index) return unexpected(std::move(*unreadable));
    const chunk_view c = fields_ahead[index % lookahead];
    const std::uint64_t content_hash = content_hashes[index % lookahead];
    read_ahead(index + lookahead);
    AGENTCTX_TRY(check_chunk_fields(c));
    chunk_record record;
    record.id = c.id;
    auto kind = intern_repeating(previous_kind, c.kind, c.id, "kind");
    if (!kind) return unexpected(std::move(kind).error());
    auto content = interner.intern(c.content, content_hash, c.id, "content");
    if (!content) return unexpected(std::move(content).error());
    auto author = intern_repeating(previous_author, c.author, c.id, "author");
    if (!author) return unexpected(std::move(author).error());
    record.kind_str_id = *kind;
    record.content_str_id = *content;
    record.author_str_id = *author;
    record.confidence = c.confidence;
    record.created_at_unix_ms = c.created_at_unix_ms;
    record.embedding_row = static_cast<std::uint32_t>(index + 1);
    record.rel_start = plan.relationships.size();
    record.rel_count = c.rel_count;
    auto add_source = [&](const source_view& source) -> result<void> {
      if (source.kind == relationship_kind::source_chunk_id) {
        if (source.chunk_id == 0) {
          return fail(errc::invalid_id, chunk_label(c.id) + "a chunk-id source is 0 (ids must be non-zero)");
        }
        plan.relationships.push_back({static_cast<std::uint32_t>(source.kind), source.chunk_id});
      } else if (source.kind == relationship_kind::source_string) {
        auto text = interner.intern(source.text, c.id, "source");
        if (!text) return unexpected(std::move(text).error());
        plan.relationships.push_back({static_cast<std::uint32_t>(source.kind), *text});
      } else {
        return fail(errc::invalid_value, chunk_label(c.id) + "source kind " +
                                             std::to_string(static_cast<std::uint32_t>(source.kind)) +
                                             " is neither a chunk id (1) nor a string (2)");
      }
      return {};
    };
    AGENTCTX_TRY(chunks.for_each_source(index, add_source));
    plan.records.push_back(record);
  }
  AGENTCTX_TRY(check_unique_ids(plan.records));
  const std::uint64_t string_bytes = interner.bytes();
  plan.strings = interner.take_strings();

  const bool has_metadata = metadata_json.has_value();
  const bool has_relationships = !plan.relationships.empty();
  const std::uint64_t section_count = 3u + (has_metadata ? 1u : 0u) + (has_relationships ? 1u : 0u);
  std::uint64_t cursor = file_header::size + section_count * section_entry::size;
  auto add_section = [&](section_kind kind, std::uint64_t length) {
    const std::uint64_t offset = cursor;
    plan.sections.push_back({static_cast<std::uint32_t>(kind), 0, offset, length});
    cursor += length;
    return offset;
  };

  const std::uint64_t string_count = plan.strings.size();
  const std::uint64_t strings_at = add_section(
      section_kind::string_dictionary,
      string_dictionary_header::size + string_count * string_entry::size + string_bytes);
  plan.strings_header = {string_count, strings_at + string_dictionary_header::size,
                         strings_at + string_dictionary_header::size + string_count * string_entry::size,
                         string_bytes};

  const std::uint64_t chunks_at =
      add_section(section_kind::chunk_table, chunk_table_header::size + chunk_count * chunk_record::size);
  plan.chunks_header = {chunk_count, chunks_at + chunk_table_header::size};

  if (has_metadata) {
    const std::uint64_t blob_length = metadata_json->size();
    const std::uint64_t metadata_at =
        add_section(section_kind::layer_metadata, layer_metadata_header::size + blob_length);
    plan.metadata_header = {layer_metadata_version, layer_metadata_format_json,
                            metadata_at + layer_metadata_header::size, blob_length};
  }
  if (has_relationships) {
    const std::uint64_t count = plan.relationships.size();
    const std::uint64_t relationships_at =
        add_section(section_kind::relationships, relationships_header::size + count * relationship_record::size);
    plan.relationships_header = {count, relationships_at + relationships_header::size};
  }

  const std::uint64_t data_length = static_cast<std::uint64_t>(chunk_count) * shape.dim *
                                    element_size_bytes(static_cast<std::uint32_t>(shape.type));
  const std::uint64_t embeddings_at =
      add_section(section_kind::embedding_matrix, embedding_matrix_header::size + data_length);
  plan.embeddings_header = {chunk_count, shape.dim, static_cast<std::uint32_t>(shape.type),
                            embeddings_at + embedding_matrix_header::size, data_length, shape.quant_scale,
                            0.0f};

  plan.header = {magic, version_major, version_minor, cursor, section_count, file_header::size, 0};
  return plan;
}

/// Validates `contents` and lays the file out. The plan refers to `contents`,
/// which must outlive it and stay unchanged.
inline result<layer_plan> plan_layer(const layer_contents& contents) {
  AGENTCTX_TRY(check_embeddings(contents));
  std::optional<std::string_view> metadata_json;
  if (contents.metadata_json) {
    AGENTCTX_TRY(check_metadata(*contents.metadata_json));
    metadata_json = *contents.metadata_json;
  }
  const embedding_matrix& m = contents.embeddings;
  return plan_chunks(contents_chunks(contents.chunks), matrix_shape{m.type, m.dim, m.quant_scale}, metadata_json,
                     contents.version_minor);
}

/// Collects small records and hands them to `Sink` in large pieces; spans at
/// least as large as the staging buffer go to the sink directly, uncopied.
/// `Sink` is callable as `result<void>(std::span<const std::byte>)`.
template <class Sink>
class staged_output {
 public:
  static constexpr std::size_t staging_capacity = std::size_t{1} << 20;

  /// `expected_bytes` (the file length) keeps the buffer small for small files.
  staged_output(Sink& sink, std::uint64_t expected_bytes) : sink_(sink), writer_(staging_) {
    staging_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(staging_capacity, expected_bytes)));
  }

  template <class Record>
  result<void> record(const Record& r) {
    encode(writer_, r);
    return flush_if_full();
  }

  result<void> bytes(std::span<const std::byte> data) {
    if (data.size() >= staging_capacity) {
      AGENTCTX_TRY(flush());
      return sink_(data);
    }
    writer_.bytes(data.data(), data.size());
    return flush_if_full();
  }

  result<void> f32(float value) {
    writer_.f32(value);
    return flush_if_full();
  }

  result<void> flush() {
    if (staging_.empty()) return {};
    auto written = sink_(std::span<const std::byte>(staging_));
    staging_.clear();
    return written;
  }

 private:
  result<void> flush_if_full() { return staging_.size() >= staging_capacity ? flush() : result<void>{}; }

  Sink& sink_;
  std::vector<std::byte> staging_;
  byte_writer writer_;
};

/// Writes the values of `m` (row-major, as the file stores them) to `out`.
template <class Output>
result<void> emit_matrix_values(Output& out, const embedding_matrix& m) {
  if (m.type == element_type::i8) return out.bytes(std::as_bytes(std::span(m.i8_values)));
  if constexpr (std::endian::native == std::endian::little) {
    // In memory the floats already are little-endian IEEE-754: write them as they lie.
    return out.bytes(std::as_bytes(std::span(m.f32_values)));
  } else {
    for (float v : m.f32_values) AGENTCTX_TRY(out.f32(v));
    return {};
  }
}

/// Writes the planned layer, in file order, to `sink`: `metadata_json` is the
/// blob the plan was made with, and `emit_rows(staged_output<Sink>&)` writes
/// the embedding values.
template <class Sink, class EmitRows>
result<void> emit_layer(const layer_plan& plan, std::optional<std::string_view> metadata_json, Sink& sink,
                        EmitRows&& emit_rows) {
  staged_output<Sink> out(sink, plan.header.file_length_bytes);
  AGENTCTX_TRY(out.record(plan.header));
  for (const section_entry& entry : plan.sections) AGENTCTX_TRY(out.record(entry));

  AGENTCTX_TRY(out.record(plan.strings_header));
  std::uint64_t string_offset = 0;
  for (std::string_view s : plan.strings) {
    AGENTCTX_TRY(out.record(string_entry{string_offset, s.size()}));
    string_offset += s.size();
  }
  for (std::string_view s : plan.strings) AGENTCTX_TRY(out.bytes(std::as_bytes(std::span(s))));

  AGENTCTX_TRY(out.record(plan.chunks_header));
  for (const chunk_record& record : plan.records) AGENTCTX_TRY(out.record(record));

  if (metadata_json) {
    AGENTCTX_TRY(out.record(plan.metadata_header));
    AGENTCTX_TRY(out.bytes(std::as_bytes(std::span(*metadata_json))));
  }
  if (!plan.relationships.empty()) {
    AGENTCTX_TRY(out.record(plan.relationships_header));
    for (const relationship_record& r : plan.relationships) AGENTCTX_TRY(out.record(r));
  }

  AGENTCTX_TRY(out.record(plan.embeddings_header));
  AGENTCTX_TRY(emit_rows(out));
  return out.flush();
}

/// Streams the planned layer to a temporary file next to `path`, syncs it and
/// renames it over `path` (io::atomic_file_writer); see emit_layer.
template <class EmitRows>
result<void> write_planned_layer(io::file_system& fs, const std::string& path, const layer_plan& plan,
                                 std::optional<std::string_view> metadata_json, EmitRows&& emit_rows) {
  // The records arrive already gathered into large pieces: a second buffer
  // in the writer would only copy them again.
  io::atomic_write_options unbuffered;
  unbuffered.buffer_size = 0;
  auto writer = io::atomic_file_writer::begin(fs, path, unbuffered);
  if (!writer) return unexpected(std::move(writer).error());
  auto sink = [&writer](std::span<const std::byte> bytes) { return writer->append(bytes); };
  AGENTCTX_TRY(emit_layer(plan, metadata_json, sink, emit_rows));
  return writer->commit();
}

inline std::optional<std::string_view> metadata_view(const layer_contents& contents) {
  if (!contents.metadata_json) return std::nullopt;
  return std::string_view(*contents.metadata_json);
}

}  // namespace detail

/// Encodes `contents` as the bytes of an AGDB v1 layer file (see the top of
/// this header for the layout conventions and the errors returned).
inline result<std::vector<std::byte>> encode_layer(const layer_contents& contents) {
  auto plan = detail::plan_layer(contents);
  if (!plan) return unexpected(std::move(plan).error());
  std::vector<std::byte> out;
  out.reserve(static_cast<std::size_t>(plan->header.file_length_bytes));
  auto sink = [&out](std::span<const std::byte> bytes) -> result<void> {
    out.insert(out.end(), bytes.begin(), bytes.end());
    return {};
  };
  AGENTCTX_TRY(detail::emit_layer(*plan, detail::metadata_view(contents), sink, [&](auto& staged) {
    return detail::emit_matrix_values(staged, contents.embeddings);
  }));
  return out;
}

/// Writes `contents` as an AGDB v1 layer file at `path`, replacing any file
/// there atomically: the bytes are streamed to a temporary file in the same
/// directory, synced, and renamed over `path`; an existing file is never
/// modified in place, and on any failure `path` keeps its previous contents
/// (or stays absent). The embedding matrix is written straight from
/// `contents`, never copied whole. Validation errors (see the top of this
/// header) are returned before anything is created and name `path`; I/O
/// errors are those of io::atomic_file_writer.
inline result<void> write_layer(io::file_system& fs, const std::string& path, const layer_contents& contents) {
  auto plan = detail::plan_layer(contents);
  if (!plan) return unexpected(std::move(plan).error().with_path(path));
  return detail::write_planned_layer(fs, path, *plan, detail::metadata_view(contents), [&](auto& staged) {
    return detail::emit_matrix_values(staged, contents.embeddings);
  });
}

/// Replaces the layer file `path` (atomically, as write_layer does) by the
/// layer `base` with the chunks `added` appended; `added_rows` holds their
/// rows, one per added chunk, and has the element type, dim and quant_scale
/// of the base's matrix (an i8 row is quantised with the base's scale).
///
/// The file is byte for byte what write_layer writes for
/// read_layer_contents(base) with `added` and `added_rows` appended, and
/// this fails whenever that detour fails (with the errors of
/// read_layer_contents and of the top of this header, though not always
/// with the same first one), plus invalid_argument when `added_rows` does not
/// fit the base's matrix. But nothing of the base is decoded into memory of
/// its own: its strings and rows go from its mapping to the file (the rows in
/// one piece when they are stored in chunk order, as this writer stores
/// them), so appending a chunk to a large layer costs about what copying the
/// file costs. Errors before the first byte name `path`. `base` (and its
/// mapping) must stay unchanged during the call; `path` may be its file.
inline result<void> write_layer_appending(io::file_system& fs, const std::string& path, const layer_reader& base,
                                          std::span<const chunk> added, const embedding_matrix& added_rows) {
  const embedding_matrix_header& stored = base.embedding_header();
  const detail::matrix_shape shape{static_cast<element_type>(stored.element_type), stored.dim, stored.quant_scale};
  const std::size_t base_count = base.chunk_count();
  const auto with_path = [&path](error e) { return unexpected(std::move(e).with_path(path)); };
  if (added_rows.type != shape.type || added_rows.dim != shape.dim || !(added_rows.quant_scale == shape.quant_scale)) {
    return with_path(make_error(errc::invalid_argument,
                                "the rows to append do not have the element type, dim and quant_scale of the layer's "
                                "embedding matrix"));
  }
  if (auto checked = detail::check_matrix_shape(shape.type, shape.dim, shape.quant_scale, base_count + added.size());
      !checked) {
    return with_path(std::move(checked).error());
  }
  if (auto checked = detail::check_matrix_values(added_rows, added.size()); !checked) {
    return with_path(std::move(checked).error());
  }
  if (auto checked = detail::check_row_per_chunk(base); !checked) return unexpected(std::move(checked).error());
  // Every base chunk's row, checked before anything is written; stored in
  // chunk order they are one piece of the file.
  bool rows_in_order = true;
  for (std::size_t i = 0; i < base_count; ++i) {
    auto row = detail::row_of_chunk(base, i);
    if (!row) return unexpected(std::move(row).error());
    rows_in_order = rows_in_order && base.record(i).embedding_row == i + 1;
  }
  const std::optional<std::string_view> metadata_json = base.metadata_json();
  if (metadata_json) {
    if (auto checked = detail::check_metadata(*metadata_json); !checked) return with_path(std::move(checked).error());
  }
  auto plan = detail::plan_chunks(detail::appended_chunks(base, added), shape, metadata_json,
                                  base.header().version_minor);
  if (!plan) return with_path(std::move(plan).error());

  return detail::write_planned_layer(fs, path, *plan, metadata_json, [&](auto& staged) -> result<void> {
    if (rows_in_order) {
      const std::uint64_t row_bytes = std::uint64_t{stored.dim} * element_size_bytes(stored.element_type);
      AGENTCTX_TRY(staged.bytes(base.bytes().subspan(static_cast<std::size_t>(stored.data_offset),
                                                     static_cast<std::size_t>(base_count * row_bytes))));
    } else {
      for (std::size_t i = 0; i < base_count; ++i) {
        AGENTCTX_TRY(staged.bytes(base.row(base.record(i).embedding_row)->bytes()));
      }
    }
    return detail::emit_matrix_values(staged, added_rows);
  });
}

/// Quantises `values` to i8 for an embedding matrix with quant_scale `scale`:
/// each value becomes round(x / scale), rounding halves away from zero, then
/// saturated to [-127, 127] (-128 is never produced, so negation is safe).
/// NaN becomes 0. Dequantise with `q * scale`. `scale` should come from
/// choose_i8_scale() or be otherwise finite and non-zero.
inline std::vector<std::int8_t> quantize_i8(std::span<const float> values, float scale) {
  std::vector<std::int8_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    float q = values[i] / scale;
    if (std::isnan(q)) {
      q = 0.0f;
    }
    out[i] = static_cast<std::int8_t>(std::clamp(std::round(q), -127.0f, 127.0f));
  }
  return out;
}

/// The scale that maps the largest finite |x| of `values` to 127: max|x| / 127.
/// Non-finite values are ignored; 1.0 when no finite value is non-zero. Never
/// returns 0, even when max|x| / 127 underflows.
inline float choose_i8_scale(std::span<const float> values) {
  float largest = 0.0f;
  for (float v : values) {
    if (std::isfinite(v)) largest = std::max(largest, std::fabs(v));
  }
  if (largest == 0.0f) return 1.0f;
  const float scale = largest / 127.0f;
  return scale > 0.0f ? scale : std::numeric_limits<float>::denorm_min();
}

}  // namespace agentctx::agdb
