// agentctx/agdb/layer_validator.hpp: full conformance check of an AGDB v1 layer.
//
// layer_reader::open() checks only what reading needs in constant time.
// validate() checks every remaining MUST of seed 000 section 8, plus what
// this library requires of a layer, and lists each violation with its code
// and the offset of the offending field:
//
//   section table   reserved != 0 (reserved_nonzero); kind unknown (unknown_section)
//   strings         entry outside the blob (out_of_bounds); bytes not UTF-8
//                   (invalid_utf8, at the first bad byte)
//   chunk records   id 0 (invalid_id) or repeated (duplicate_id, at the later
//                   record); kind/content/author id 0 or above string_count
//                   (invalid_id); author not exactly "human" or "mcp",
//                   confidence not in [0, 1] or NaN (invalid_value);
//                   embedding_row outside 1..row_count (invalid_id);
//                   reserved0/reserved1 != 0 (reserved_nonzero); rel_start or
//                   rel_count != 0 without a relationships section
//                   (invalid_value); rel_start/rel_count range outside the
//                   relationships table (out_of_bounds)
//   relationships   kind not 1 or 2 (invalid_value); chunk id 0 or string id
//                   out of range (invalid_id). A chunk id absent from this
//                   layer is legal: sources may name chunks of other layers.
//   embeddings      reserved0 != 0 (reserved_nonzero); f32 quant_scale not
//                   exactly 1.0, i8 quant_scale zero or not finite (invalid_value)
//   layer metadata  version != 1 (unsupported_version); format != 1,
//                   blob_offset != section offset + 24, blob_length !=
//                   section length - 24 (invalid_value); blob not UTF-8
//                   (invalid_utf8) or not JSON (invalid_value)
//
// Violations come grouped in that order, each group in file order. The check
// reads the header, section table, string dictionary, chunk and relationship
// records and metadata blob once; it never touches embedding values, and
// allocates only for the chunk-id table, the violations and the JSON parser.
#pragma once

#include <simdjson.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/detail/chunk_id_index.hpp"
#include "agentctx/agdb/format.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/core/error.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"

namespace agentctx::agdb {

/// One way a layer fails to conform. `offset` is error::no_offset when no
/// byte position applies (for example, the file could not be opened).
struct violation {
  errc code = errc::ok;
  std::uint64_t offset = error::no_offset;
  std::string message;  ///< one line, without path or offset
};

/// The outcome of validating one file: either open() failed (one violation,
/// the open error) or the violations validate() found.
struct validation_report {
  std::string path;
  bool opened = false;
  std::vector<violation> violations;

  bool ok() const noexcept { return opened && violations.empty(); }
};

/// Lists the violations of an opened layer, at most `max_violations` of them.
std::vector<violation> validate(const layer_reader& reader, std::size_t max_violations = 1000);

/// The violation an open() error stands for.
inline violation to_violation(const error& e) { return {e.code, e.offset, e.message}; }

/// The error a violation stands for, naming `path`.
inline error to_error(const violation& v, std::string path) {
  return make_error(v.code, v.message, std::move(path), v.offset);
}

/// Validates the outcome of layer_reader::open uniformly: an open error gives
/// a one-violation report with opened == false.
inline validation_report make_validation_report(const result<layer_reader>& opened,
                                                std::size_t max_violations = 1000) {
  validation_report report;
  if (!opened) {
    report.path = opened.error().path;
    report.violations.push_back(to_violation(opened.error()));
    return report;
  }
  report.path = opened->path();
  report.opened = true;
  report.violations = validate(*opened, max_violations);
  return report;
}

/// Opens `path` through `fs` and validates it.
inline validation_report validate_file(io::file_system& fs, const std::string& path,
                                       std::size_t max_violations = 1000) {
  validation_report report = make_validation_report(layer_reader::open(fs, path), max_violations);
  if (report.path.empty()) report.path = path;
  return report;
}

/// Opens `path` on the POSIX file system and validates it.
inline validation_report validate_file(const std::string& path, std::size_t max_violations = 1000) {
  return validate_file(io::default_file_system(), path, max_violations);
}

// ============================================================================
// Implementation.

namespace detail {

class violation_sink {
 public:
  violation_sink(std::vector<violation>& out, std::size_t max) noexcept : out_(out), max_(max) {}
  bool full() const noexcept { return out_.size() >= max_; }
  void add(errc code, std::uint64_t offset, std::string message) {
    if (!full()) out_.push_back({code, offset, std::move(message)});
  }

 private:
  std::vector<violation>& out_;
  std::size_t max_;
};

inline std::string field_value(std::string_view field, std::uint64_t value) {
  return std::string(field) + " is " + std::to_string(value);
}

inline void validate_section_table(const layer_reader& reader, violation_sink& sink) {
  const auto sections = reader.sections();
  for (std::size_t i = 0; i < sections.size() && !sink.full(); ++i) {
    const std::uint64_t at = reader.section_entry_offset(i);
    if (sections[i].reserved != 0) {
      sink.add(errc::reserved_nonzero, at + 4,
               "section " + std::to_string(i) + ": " + field_value("reserved", sections[i].reserved));
    }
    if (sections[i].kind == 0 || sections[i].kind > static_cast<std::uint32_t>(section_kind::layer_metadata)) {
      sink.add(errc::unknown_section, at, "section " + std::to_string(i) + ": unknown " +
                                               field_value("kind", sections[i].kind));
    }
  }
}

inline void validate_strings(const layer_reader& reader, violation_sink& sink) {
  const string_dictionary_header& h = reader.string_dictionary();
  const std::byte* blob = reader.bytes().data() + h.bytes_offset;
  for (std::uint64_t id = 1; id <= h.string_count && !sink.full(); ++id) {
    const std::uint64_t at = reader.string_entry_offset(static_cast<std::uint32_t>(id));
    const string_entry e = decode_string_entry(reader.bytes().data() + at);
    const region_fit fit = fit_region(0, h.bytes_length, e.byte_offset, e.byte_length, 1);
    if (fit != region_fit::inside) {
      sink.add(errc::out_of_bounds, fit == region_fit::offset_outside ? at : at + 8,
               "string " + std::to_string(id) + " (" + std::to_string(e.byte_offset) + "+" +
                   std::to_string(e.byte_length) + ") leaves the " + std::to_string(h.bytes_length) + "-byte blob");
      continue;
    }
    const std::string_view text = chars_at(blob + e.byte_offset, e.byte_length);
    if (const std::size_t bad = find_invalid_utf8(text); bad != text.size()) {
      sink.add(errc::invalid_utf8, h.bytes_offset + e.byte_offset + bad,
               "string " + std::to_string(id) + " is not valid UTF-8 at its byte " + std::to_string(bad));
    }
  }
}

inline void validate_chunk(const layer_reader& reader, const chunk_record& r, std::uint64_t at,
                           chunk_id_index& ids, std::size_t index, std::uint32_t& known_good_author,
                           violation_sink& sink) {
  auto label = [&] { return "chunk " + std::to_string(index) + " (id " + std::to_string(r.id) + "): "; };
  if (r.id == 0) {
    sink.add(errc::invalid_id, at, label() + "id is 0");
  } else if (const std::size_t first = ids.insert(r.id, index); first != chunk_id_index::npos) {
    sink.add(errc::duplicate_id, at, label() + "id repeats chunk " + std::to_string(first));
  }
  const std::uint64_t strings = reader.string_dictionary().string_count;
  const struct {
    std::uint32_t id;
    std::uint64_t field;
    const char* name;
  } string_fields[] = {{r.kind_str_id, 4, "kind_str_id"},
                       {r.content_str_id, 8, "content_str_id"},
                       {r.author_str_id, 12, "author_str_id"}};
  for (const auto& f : string_fields) {
    if (f.id == 0 || f.id > strings) {
      sink.add(errc::invalid_id, at + f.field,
               label() + field_value(f.name, f.id) + ", outside 1.." + std::to_string(strings));
    }
  }
  if (r.author_str_id != known_good_author && r.author_str_id != 0 && r.author_str_id <= strings) {
    // An unreadable author string is reported with the string dictionary.
    if (auto author = reader.find_string(r.author_str_id)) {
      if (*author == "human" || *author == "mcp") {
        known_good_author = r.author_str_id;
      } else {
        sink.add(errc::invalid_value, at + 12, label() + "author is neither \"human\" nor \"mcp\"");
      }
    }
  }
  if (!(r.confidence >= 0.0f && r.confidence <= 1.0f)) {
    sink.add(errc::invalid_value, at + 16, label() + "confidence " + std::to_string(r.confidence) + " is not in [0, 1]");
  }
  const std::uint64_t rows = reader.embedding_header().row_count;
  if (r.embedding_row == 0 || r.embedding_row > rows) {
    sink.add(errc::invalid_id, at + 28,
             label() + field_value("embedding_row", r.embedding_row) + ", outside 1.." + std::to_string(rows));
  }
  if (r.reserved0 != 0) sink.add(errc::reserved_nonzero, at + 32, label() + field_value("reserved0", r.reserved0));
  if (!reader.has_relationships()) {
    if (r.rel_start != 0) {
      sink.add(errc::invalid_value, at + 36, label() + field_value("rel_start", r.rel_start) +
                                                 " without a relationships section");
    }
    if (r.rel_count != 0) {
      sink.add(errc::invalid_value, at + 44, label() + field_value("rel_count", r.rel_count) +
                                                 " without a relationships section");
    }
  } else {
    const std::uint64_t total = reader.relationships().relationship_count;
    const region_fit fit = fit_region(0, total, r.rel_start, r.rel_count, 1);
    if (fit != region_fit::inside) {
      sink.add(errc::out_of_bounds, fit == region_fit::offset_outside ? at + 36 : at + 44,
               label() + "relationships " + std::to_string(r.rel_start) + "+" + std::to_string(r.rel_count) +
                   " leave the table of " + std::to_string(total));
    }
  }
  if (r.reserved1 != 0) sink.add(errc::reserved_nonzero, at + 48, label() + field_value("reserved1", r.reserved1));
}

inline void validate_chunks(const layer_reader& reader, violation_sink& sink) {
  chunk_id_index ids(reader.chunk_count());
  std::uint32_t known_good_author = 0;
  const std::byte* base = reader.bytes().data();
  for (std::size_t i = 0; i < reader.chunk_count() && !sink.full(); ++i) {
    const std::uint64_t at = reader.record_offset(i);
    validate_chunk(reader, decode_chunk_record(base + at), at, ids, i, known_good_author, sink);
  }
}

inline void validate_relationships(const layer_reader& reader, violation_sink& sink) {
  const std::uint64_t strings = reader.string_dictionary().string_count;
  for (std::size_t i = 0; i < reader.relationship_count() && !sink.full(); ++i) {
    const std::uint64_t at = reader.relationship_offset(i);
    const relationship_record r = reader.relationship(i);
    auto label = [i] { return "relationship " + std::to_string(i) + ": "; };
    if (r.kind == static_cast<std::uint32_t>(relationship_kind::source_chunk_id)) {
      if (r.value_u32 == 0) sink.add(errc::invalid_id, at + 4, label() + "chunk id is 0");
    } else if (r.kind == static_cast<std::uint32_t>(relationship_kind::source_string)) {
      if (r.value_u32 == 0 || r.value_u32 > strings) {
        sink.add(errc::invalid_id, at + 4,
                 label() + "string id " + std::to_string(r.value_u32) + " is outside 1.." + std::to_string(strings));
      }
    } else {
      sink.add(errc::invalid_value, at, label() + field_value("kind", r.kind) + ", neither 1 nor 2");
    }
  }
}

inline void validate_embeddings(const layer_reader& reader, violation_sink& sink) {
  const embedding_matrix_header& h = reader.embedding_header();
  const std::uint64_t at = reader.sections()[*reader.find_section(section_kind::embedding_matrix)].offset;
  const float scale = h.quant_scale;
  if (h.dim == 0) {
    // A zero-width matrix embeds nothing and cannot be searched or re-encoded.
    sink.add(errc::invalid_value, at + 8, "embedding dim is 0, must be greater than zero");
  }
  if (h.element_type == static_cast<std::uint32_t>(element_type::f32)) {
    if (scale != 1.0f) {
      sink.add(errc::invalid_value, at + 32, "quant_scale of an f32 matrix is " + std::to_string(scale) + ", must be 1.0");
    }
  } else if (scale == 0.0f || !std::isfinite(scale)) {
    sink.add(errc::invalid_value, at + 32,
             "quant_scale of an i8 matrix is " + std::to_string(scale) + ", must be finite and non-zero");
  }
  // Compare bits: -0.0 and NaN payloads are not the zero bytes the RFC asks for.
  if (const std::uint32_t bits = load_u32(reader.bytes().data() + at + 36); bits != 0) {
    sink.add(errc::reserved_nonzero, at + 36, "embedding reserved0 bits are " + hex32(bits));
  }
}

inline void validate_metadata(const layer_reader& reader, violation_sink& sink) {
  const auto& h = reader.metadata_header();
  if (!h) return;
  const section_entry& s = reader.sections()[*reader.find_section(section_kind::layer_metadata)];
  if (h->version != layer_metadata_version) {
    sink.add(errc::unsupported_version, s.offset, "layer metadata " + field_value("version", h->version) + ", must be 1");
  }
  if (h->format != layer_metadata_format_json) {
    sink.add(errc::invalid_value, s.offset + 4, "layer metadata " + field_value("format", h->format) + ", must be 1");
  }
  if (h->blob_offset != s.offset + layer_metadata_header::size) {
    sink.add(errc::invalid_value, s.offset + 8,
             "layer metadata " + field_value("blob_offset", h->blob_offset) + ", must be section offset + 24 = " +
                 std::to_string(s.offset + layer_metadata_header::size));
  }
  if (h->blob_length != s.length - layer_metadata_header::size) {
    sink.add(errc::invalid_value, s.offset + 16,
             "layer metadata " + field_value("blob_length", h->blob_length) + ", must be section length - 24 = " +
                 std::to_string(s.length - layer_metadata_header::size));
  }
  if (h->format != layer_metadata_format_json || sink.full()) return;
  const std::string_view blob = *reader.metadata_json();
  if (const std::size_t bad = find_invalid_utf8(blob); bad != blob.size()) {
    sink.add(errc::invalid_utf8, h->blob_offset + bad, "layer metadata is not valid UTF-8");
    return;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (const auto failure = parser.parse(blob.data(), blob.size()).get(document); failure != simdjson::SUCCESS) {
    sink.add(errc::invalid_value, h->blob_offset,
             std::string("layer metadata is not JSON: ") + simdjson::error_message(failure));
  }
}

}  // namespace detail

inline std::vector<violation> validate(const layer_reader& reader, std::size_t max_violations) {
  std::vector<violation> out;
  detail::violation_sink sink(out, max_violations);
  detail::validate_section_table(reader, sink);
  if (!sink.full()) detail::validate_strings(reader, sink);
  if (!sink.full()) detail::validate_chunks(reader, sink);
  if (!sink.full()) detail::validate_relationships(reader, sink);
  if (!sink.full()) detail::validate_embeddings(reader, sink);
  if (!sink.full()) detail::validate_metadata(reader, sink);
  return out;
}

}  // namespace agentctx::agdb
