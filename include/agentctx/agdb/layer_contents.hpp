// agentctx/agdb/layer_contents.hpp: a layer's logical contents, decoded.
//
// `layer_contents` is what the layer writer encodes (layer_writer.hpp) and
// what read_layer_contents() (layer_reader.hpp) materialises from a file. It
// owns its data. Encoding the contents decoded from a file written by the
// reference implementation reproduces that file byte for byte.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "agentctx/agdb/format.hpp"

namespace agentctx::agdb {

/// One provenance reference: a chunk id or a string such as "docs/a.md:12".
struct source_ref {
  relationship_kind kind = relationship_kind::source_string;
  std::uint32_t chunk_id = 0;  ///< set when kind == source_chunk_id
  std::string text;            ///< set when kind == source_string

  static source_ref to_chunk(std::uint32_t id) { return {relationship_kind::source_chunk_id, id, {}}; }
  static source_ref to_string(std::string s) { return {relationship_kind::source_string, 0, std::move(s)}; }
  /// How agents and the command line write a source: digits only ("1234")
  /// name a chunk id; anything else ("docs/a.md:12") is a source string.
  static source_ref parse(std::string_view text) {
    std::uint32_t id = 0;
    const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (!text.empty() && problem == std::errc{} && end == text.data() + text.size()) return to_chunk(id);
    return to_string(std::string(text));
  }
  friend bool operator==(const source_ref&, const source_ref&) = default;
};

/// One chunk (seed 000 section 7.1). Its embedding is row `index` of the
/// layer's embedding matrix.
struct chunk {
  std::uint32_t id = 0;
  std::string kind;
  std::string content;
  std::string author;  ///< "human" or "mcp"
  float confidence = 1.0f;
  std::uint64_t created_at_unix_ms = 0;
  std::vector<source_ref> sources;
  friend bool operator==(const chunk&, const chunk&) = default;
};

/// The embedding matrix: one row per chunk, row-major, `dim` values per row.
/// Exactly one of `f32_values` / `i8_values` is used, per `type`.
struct embedding_matrix {
  element_type type = element_type::f32;
  std::uint32_t dim = 0;
  float quant_scale = 1.0f;  ///< 1.0 for f32; the dequantisation factor for i8
  std::vector<float> f32_values;
  std::vector<std::int8_t> i8_values;
  friend bool operator==(const embedding_matrix&, const embedding_matrix&) = default;
};

struct layer_contents {
  std::vector<chunk> chunks;
  embedding_matrix embeddings;
  std::optional<std::string> metadata_json;  ///< the layer metadata blob, if any
  std::uint16_t version_minor = 0;
  friend bool operator==(const layer_contents&, const layer_contents&) = default;
};

}  // namespace agentctx::agdb
