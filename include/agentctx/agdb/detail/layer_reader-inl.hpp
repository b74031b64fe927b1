// agentctx/agdb/detail/layer_reader-inl.hpp: definitions for
// layer_reader.hpp (included at its end; do not include directly).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"

namespace agentctx::agdb {

inline result<layer_reader> layer_reader::open(io::file_system& fs, const std::string& path) {
  auto mapping = fs.map(path);
  if (!mapping) return unexpected(std::move(mapping).error().with_path(path));
  return from_mapping(std::move(*mapping), path);
}

inline result<layer_reader> layer_reader::open(const std::string& path) {
  return open(io::default_file_system(), path);
}

inline result<layer_reader> layer_reader::from_mapping(io::mapped_bytes mapping, std::string name) {
  layer_reader reader;
  reader.mapping_ = std::move(mapping);
  reader.bytes_ = reader.mapping_.bytes();
  reader.name_ = std::move(name);
  AGENTCTX_TRY(reader.check_structure());
  return reader;
}

inline result<layer_reader> layer_reader::from_bytes(std::span<const std::byte> bytes, std::string name) {
  layer_reader reader;
  reader.bytes_ = bytes;
  reader.name_ = std::move(name);
  AGENTCTX_TRY(reader.check_structure());
  return reader;
}

inline result<void> layer_reader::check_structure() {
  const std::uint64_t size = bytes_.size();
  if (size < file_header::size) {
    return corrupt(errc::truncated, 0,
                   "file is " + std::to_string(size) + " bytes, shorter than the 40-byte file header");
  }
  header_ = decode_file_header(bytes_.data());
  if (header_.magic != magic) {
    return corrupt(errc::bad_magic, 0, "magic is " + detail::hex32(header_.magic) + ", expected 0x42444741 (\"AGDB\")");
  }
  if (header_.version_major != version_major) {
    return corrupt(errc::unsupported_version, 4,
                   "version_major is " + std::to_string(header_.version_major) + ", this reader handles 1");
  }
  if (header_.flags != 0) {
    return corrupt(errc::reserved_nonzero, 32, "flags is " + std::to_string(header_.flags) + ", must be 0");
  }
  if (header_.file_length_bytes != size) {
    return corrupt(header_.file_length_bytes > size ? errc::truncated : errc::invalid_value, 8,
                   "file_length_bytes is " + std::to_string(header_.file_length_bytes) + " but the file is " +
                       std::to_string(size) + " bytes");
  }
  AGENTCTX_TRY(check_section_table());
  AGENTCTX_TRY(check_section_headers());
  chunk_index_ = std::make_unique<lazy_chunk_index>();
  return {};
}

inline result<void> layer_reader::check_section_table() {
  const std::uint64_t size = bytes_.size();
  const std::uint64_t table_at = header_.sections_offset;
  const std::uint64_t count = header_.section_count;
  if (count != 0 && table_at < file_header::size) {
    return corrupt(errc::overlap, 24, "sections_offset " + std::to_string(table_at) + " is inside the file header");
  }
  const auto table_fit = detail::fit_region(0, size, table_at, count, section_entry::size);
  if (table_fit != detail::region_fit::inside) {
    return region_error(table_fit, 24, 16, "section table");
  }
  const std::uint64_t table_end = table_at + count * section_entry::size;

  sections_.resize(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    const std::uint64_t entry_at = section_entry_offset(i);
    const section_entry& e = sections_[i] = decode_section_entry(bytes_.data() + entry_at);
    auto label = [&] { return "section " + std::to_string(i) + " (kind " + std::to_string(e.kind) + ")"; };
    const auto fit = detail::fit_region(0, size, e.offset, e.length, 1);
    if (fit != detail::region_fit::inside) return region_error(fit, entry_at + 8, entry_at + 16, label());
    const bool over_table = count != 0 && e.offset < table_end && table_at < e.offset + e.length;
    if (e.length != 0 && (e.offset < file_header::size || over_table)) {
      return corrupt(errc::overlap, entry_at + 8,
                     label() + " at " + std::to_string(e.offset) + " overlaps the file header or the section table");
    }
    if (e.kind >= 1 && e.kind < section_slots) {
      if (section_index_[e.kind] != no_section) {
        return corrupt(errc::duplicate_section, entry_at,
                       label() + " repeats section " + std::to_string(section_index_[e.kind]));
      }
      section_index_[e.kind] = i;
    }
  }
  for (section_kind required :
       {section_kind::string_dictionary, section_kind::chunk_table, section_kind::embedding_matrix}) {
    if (!find_section(required)) {
      return corrupt(errc::missing_section, table_at,
                     "no section of required kind " + std::to_string(static_cast<std::uint32_t>(required)));
    }
  }

  // Sections sorted by start: any overlap shows between neighbours.
  std::vector<std::size_t> order;
  order.reserve(sections_.size());
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    if (sections_[i].length != 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
    return sections_[a].offset != sections_[b].offset ? sections_[a].offset < sections_[b].offset : a < b;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const section_entry& before = sections_[order[k - 1]];
    const section_entry& after = sections_[order[k]];
    if (before.offset + before.length > after.offset) {
      return corrupt(errc::overlap, section_entry_offset(order[k]) + 8,
                     "section " + std::to_string(order[k]) + " overlaps section " + std::to_string(order[k - 1]));
    }
  }
  return {};
}

inline result<void> layer_reader::check_section_headers() {
  // Each known section: it holds its header, and its arrays lie after it.
  auto holds = [&](section_kind kind, std::size_t header_size) -> result<void> {
    const std::size_t index = section_index_[static_cast<std::size_t>(kind)];
    if (sections_[index].length < header_size) {
      return corrupt(errc::truncated, section_entry_offset(index) + 16,
                     "section " + std::to_string(index) + " is " + std::to_string(sections_[index].length) +
                         " bytes, too short for its " + std::to_string(header_size) + "-byte header");
    }
    return {};
  };
  auto within = [&](section_kind kind, std::size_t header_size, std::uint64_t offset_field,
                    std::uint64_t count_field, std::uint64_t offset, std::uint64_t count, std::uint64_t element_size,
                    std::string_view what) -> result<void> {
    const section_entry& s = section(kind);
    const auto fit = detail::fit_region(s.offset + header_size, s.offset + s.length, offset, count, element_size);
    if (fit != detail::region_fit::inside) return region_error(fit, s.offset + offset_field, s.offset + count_field, what);
    return {};
  };

  AGENTCTX_TRY(holds(section_kind::string_dictionary, string_dictionary_header::size));
  const std::uint64_t strings_at = section(section_kind::string_dictionary).offset;
  strings_ = decode_string_dictionary_header(bytes_.data() + strings_at);
  AGENTCTX_TRY(within(section_kind::string_dictionary, string_dictionary_header::size, 8, 0, strings_.entries_offset,
                      strings_.string_count, string_entry::size, "string entries"));
  AGENTCTX_TRY(within(section_kind::string_dictionary, string_dictionary_header::size, 16, 24, strings_.bytes_offset,
                      strings_.bytes_length, 1, "string blob"));

  AGENTCTX_TRY(holds(section_kind::chunk_table, chunk_table_header::size));
  chunks_ = decode_chunk_table_header(bytes_.data() + section(section_kind::chunk_table).offset);
  AGENTCTX_TRY(within(section_kind::chunk_table, chunk_table_header::size, 8, 0, chunks_.records_offset,
                      chunks_.chunk_count, chunk_record::size, "chunk records"));

  AGENTCTX_TRY(holds(section_kind::embedding_matrix, embedding_matrix_header::size));
  const std::uint64_t matrix_at = section(section_kind::embedding_matrix).offset;
  embeddings_ = decode_embedding_matrix_header(bytes_.data() + matrix_at);
  const std::uint64_t value_size = element_size_bytes(embeddings_.element_type);
  if (value_size == 0) {
    return corrupt(errc::invalid_value, matrix_at + 12,
                   "element_type " + std::to_string(embeddings_.element_type) + " is neither f32 (1) nor i8 (2)");
  }
  // row_count * dim * value_size without overflow: data_length is at most the
  // file size, so any product that overflows cannot match it.
  const std::uint64_t row_bytes = std::uint64_t{embeddings_.dim} * value_size;
  const bool length_matches = row_bytes == 0 ? embeddings_.data_length == 0
                                             : embeddings_.data_length % row_bytes == 0 &&
                                                   embeddings_.data_length / row_bytes == embeddings_.row_count;
  if (!length_matches) {
    return corrupt(errc::invalid_value, matrix_at + 24,
                   "data_length " + std::to_string(embeddings_.data_length) + " is not row_count " +
                       std::to_string(embeddings_.row_count) + " x dim " + std::to_string(embeddings_.dim) + " x " +
                       std::to_string(value_size) + " bytes");
  }
  AGENTCTX_TRY(within(section_kind::embedding_matrix, embedding_matrix_header::size, 16, 24, embeddings_.data_offset,
                      embeddings_.data_length, 1, "embedding data"));

  if (has_relationships()) {
    AGENTCTX_TRY(holds(section_kind::relationships, relationships_header::size));
    relationships_ = decode_relationships_header(bytes_.data() + section(section_kind::relationships).offset);
    AGENTCTX_TRY(within(section_kind::relationships, relationships_header::size, 8, 0, relationships_.records_offset,
                        relationships_.relationship_count, relationship_record::size, "relationship records"));
  }

  if (find_section(section_kind::layer_metadata)) {
    AGENTCTX_TRY(holds(section_kind::layer_metadata, layer_metadata_header::size));
    const auto m = decode_layer_metadata_header(bytes_.data() + section(section_kind::layer_metadata).offset);
    AGENTCTX_TRY(within(section_kind::layer_metadata, layer_metadata_header::size, 8, 16, m.blob_offset,
                        m.blob_length, 1, "metadata blob"));
    metadata_ = m;
  }
  return {};
}

inline unexpected layer_reader::region_error(detail::region_fit fit, std::uint64_t offset_field,
                                             std::uint64_t length_field, std::string_view what) const {
  if (fit == detail::region_fit::offset_outside) {
    return corrupt(errc::out_of_bounds, offset_field, std::string(what) + " starts outside its container");
  }
  return corrupt(errc::out_of_bounds, length_field, std::string(what) + " extends past the end of its container");
}

inline std::optional<std::string_view> layer_reader::find_string(std::uint32_t id) const noexcept {
  if (id == 0 || id > strings_.string_count) return std::nullopt;
  const string_entry e = decode_string_entry(bytes_.data() + string_entry_offset(id));
  if (detail::fit_region(0, strings_.bytes_length, e.byte_offset, e.byte_length, 1) != detail::region_fit::inside) {
    return std::nullopt;
  }
  return detail::chars_at(bytes_.data() + strings_.bytes_offset + e.byte_offset, e.byte_length);
}

inline result<std::string_view> layer_reader::string_for_field(std::uint32_t id, std::uint64_t field_offset) const {
  if (auto found = find_string(id)) return *found;
  if (id == 0 || id > strings_.string_count) {
    return corrupt(errc::invalid_id, field_offset,
                   "string id " + std::to_string(id) + " is outside 1.." + std::to_string(strings_.string_count));
  }
  const std::uint64_t entry_at = string_entry_offset(id);
  const string_entry e = decode_string_entry(bytes_.data() + entry_at);
  return region_error(detail::fit_region(0, strings_.bytes_length, e.byte_offset, e.byte_length, 1), entry_at,
                      entry_at + 8, "string " + std::to_string(id));
}

inline result<chunk_view> layer_reader::chunk(std::size_t index) const {
  if (index >= chunk_count()) {
    return fail(errc::invalid_argument,
                "chunk index " + std::to_string(index) + " is not below chunk_count " + std::to_string(chunk_count()),
                name_);
  }
  const std::uint64_t at = record_offset(index);
  const chunk_record r = decode_chunk_record(bytes_.data() + at);
  auto kind = string_for_field(r.kind_str_id, at + 4);
  if (!kind) return unexpected(std::move(kind).error());
  auto content = string_for_field(r.content_str_id, at + 8);
  if (!content) return unexpected(std::move(content).error());
  auto author = string_for_field(r.author_str_id, at + 12);
  if (!author) return unexpected(std::move(author).error());
  return chunk_view{r.id,           *kind,        *content,     *author,     r.confidence,
                    r.created_at_unix_ms, r.embedding_row, r.rel_start, r.rel_count, at};
}

inline std::optional<std::size_t> layer_reader::find_chunk(std::uint32_t id) const {
  if (!chunk_index_) return std::nullopt;  // moved-from
  lazy_chunk_index& index = *chunk_index_;
  std::call_once(index.built, [this, &index] {
    detail::chunk_id_index table(chunk_count());
    for (std::size_t i = 0; i < chunk_count(); ++i) {
      const std::uint32_t chunk_id = load_u32(bytes_.data() + record_offset(i));
      if (chunk_id != 0) table.insert(chunk_id, i);
    }
    index.table = std::move(table);
  });
  return index.table.find(id);
}

template <class Visit>
result<void> layer_reader::visit_sources_in_range(std::uint64_t rel_start, std::uint32_t rel_count,
                                                  std::uint64_t record_offset, Visit& visit) const {
  if (rel_count == 0) return {};
  const bool at_record = record_offset != error::no_offset;
  const std::uint64_t start_field = at_record ? record_offset + 36 : error::no_offset;
  const std::uint64_t count_field = at_record ? record_offset + 44 : error::no_offset;
  if (!has_relationships()) {
    return corrupt(errc::invalid_value, count_field, "rel_count is non-zero but the layer has no relationships section");
  }
  const auto fit = detail::fit_region(0, relationships_.relationship_count, rel_start, rel_count, 1);
  if (fit != detail::region_fit::inside) {
    return corrupt(errc::out_of_bounds, fit == detail::region_fit::offset_outside ? start_field : count_field,
                   "relationships " + std::to_string(rel_start) + "+" + std::to_string(rel_count) +
                       " leave the table of " + std::to_string(relationships_.relationship_count));
  }
  for (std::uint64_t i = rel_start; i < rel_start + rel_count; ++i) {
    const std::uint64_t at = relationship_offset(static_cast<std::size_t>(i));
    const relationship_record r = decode_relationship_record(bytes_.data() + at);
    if (r.kind == static_cast<std::uint32_t>(relationship_kind::source_chunk_id)) {
      AGENTCTX_TRY(visit(source_view{relationship_kind::source_chunk_id, r.value_u32, {}}));
    } else if (r.kind == static_cast<std::uint32_t>(relationship_kind::source_string)) {
      auto text = string_for_field(r.value_u32, at + 4);
      if (!text) return unexpected(std::move(text).error());
      AGENTCTX_TRY(visit(source_view{relationship_kind::source_string, 0, *text}));
    } else {
      return corrupt(errc::invalid_value, at,
                     "relationship kind " + std::to_string(r.kind) + " is neither a chunk id (1) nor a string (2)");
    }
  }
  return {};
}

inline result<std::vector<source_ref>> layer_reader::sources_in_range(std::uint64_t rel_start, std::uint32_t rel_count,
                                                                      std::uint64_t record_offset) const {
  std::vector<source_ref> out;
  auto collect = [&out, rel_count](const source_view& source) -> result<void> {
    if (out.empty()) out.reserve(rel_count);  // the range was checked before the first visit
    out.push_back(source.kind == relationship_kind::source_chunk_id ? source_ref::to_chunk(source.chunk_id)
                                                                    : source_ref::to_string(std::string(source.text)));
    return {};
  };
  AGENTCTX_TRY(visit_sources_in_range(rel_start, rel_count, record_offset, collect));
  return out;
}

inline result<embedding_row_view> layer_reader::row(std::uint32_t row_1_based) const {
  if (row_1_based == 0 || row_1_based > embeddings_.row_count) {
    return fail(errc::invalid_id,
                "embedding row " + std::to_string(row_1_based) + " is outside 1.." +
                    std::to_string(embeddings_.row_count),
                name_);
  }
  // data_length == row_count * row_bytes was checked at open, so nothing overflows.
  const std::uint64_t row_bytes = std::uint64_t{embeddings_.dim} * element_size_bytes(embeddings_.element_type);
  const std::uint64_t at = embeddings_.data_offset + (row_1_based - 1) * row_bytes;
  return embedding_row_view(bytes_.subspan(static_cast<std::size_t>(at), static_cast<std::size_t>(row_bytes)),
                            embeddings_.dim, static_cast<element_type>(embeddings_.element_type),
                            embeddings_.quant_scale);
}

namespace detail {

inline result<void> check_row_per_chunk(const layer_reader& reader) {
  // layer_contents keeps one row per chunk. When chunks share rows that copy
  // could be quadratic in the file size (many chunks x one huge row), so such
  // layers are refused rather than letting a small file demand gigabytes.
  const std::uint64_t rows = reader.embedding_header().row_count;
  if (reader.chunk_count() > rows) {
    return fail(errc::unsupported,
                std::to_string(reader.chunk_count()) + " chunks share " + std::to_string(rows) +
                    " embedding rows; layer_contents needs one row per chunk",
                reader.name(), reader.sections()[*reader.find_section(section_kind::embedding_matrix)].offset);
  }
  return {};
}

inline result<embedding_row_view> row_of_chunk(const layer_reader& reader, std::size_t index) {
  const chunk_record record = reader.record(index);
  auto row = reader.row(record.embedding_row);
  if (!row) {
    return fail(errc::invalid_id, "chunk " + std::to_string(record.id) + ": " + row.error().message, reader.name(),
                reader.record_offset(index) + 28);
  }
  return row;
}

}  // namespace detail

inline result<layer_contents> read_layer_contents(const layer_reader& reader) {
  layer_contents out;
  out.version_minor = reader.header().version_minor;
  const embedding_matrix_header& m = reader.embedding_header();
  out.embeddings.type = static_cast<element_type>(m.element_type);
  out.embeddings.dim = m.dim;
  out.embeddings.quant_scale = m.quant_scale;
  const std::size_t n = reader.chunk_count();
  const std::size_t dim = m.dim;
  const bool f32 = out.embeddings.type == element_type::f32;
  AGENTCTX_TRY(detail::check_row_per_chunk(reader));
  // Room for one more chunk and row: contents are mostly read to be extended
  // by a chunk (an agent write), and growing a full vector would copy it
  // whole. n <= row_count, and a row is no larger than the stored matrix
  // when it holds one, so the reservation is bounded by the file size.
  const std::size_t reserved_rows = m.row_count == 0 ? 0 : n + 1;
  if (f32) out.embeddings.f32_values.reserve(reserved_rows * dim);
  else out.embeddings.i8_values.reserve(reserved_rows * dim);
  out.chunks.reserve(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    auto view = reader.chunk(i);
    if (!view) return unexpected(std::move(view).error());
    auto sources = reader.sources(*view);
    if (!sources) return unexpected(std::move(sources).error());
    out.chunks.push_back(chunk{view->id, std::string(view->kind), std::string(view->content),
                               std::string(view->author), view->confidence, view->created_at_unix_ms,
                               std::move(*sources)});
    auto row = detail::row_of_chunk(reader, i);
    if (!row) return unexpected(std::move(row).error());
    if (f32) {
      std::vector<float>& values = out.embeddings.f32_values;
      values.resize(values.size() + dim);
      row->to_f32(std::span<float>(values).last(dim));
    } else {
      const auto* stored = reinterpret_cast<const std::int8_t*>(row->bytes().data());
      out.embeddings.i8_values.insert(out.embeddings.i8_values.end(), stored, stored + dim);
    }
  }
  if (auto json = reader.metadata_json()) out.metadata_json = std::string(*json);
  return out;
}

}  // namespace agentctx::agdb
