// agentctx/agdb/layer_export.hpp: layers as JSON documents and back
// (docs/format/export.md).
//
// The interchange format is the reference implementation's
// `agentsdb.export.v1`, in its two spellings:
//
//   - JSON: one object {"format": "agentsdb.export.v1", "tool": {name,
//     version}, "layers": [layer...]}, each layer {path, layer, schema: {dim,
//     element_type, quant_scale}, layer_metadata_json, chunks: [chunk...]},
//     each chunk {id, kind, content, author, confidence, created_at_unix_ms,
//     sources: [{"type": "chunk_id", "id": N} | {"type": "source_string",
//     "value": S}], embedding: [f32...], content_sha256};
//   - NDJSON: one record per line, a header {"type": "header", "format":
//     "agentsdb.export.ndjson.v1", tool}, then per layer a record {"type":
//     "layer", path, layer, schema, layer_metadata_json} followed by its
//     chunks {"type": "chunk", "layer_path": P, "chunk": chunk}.
//
// write_export() streams either spelling from open layers (a 100k-chunk
// layer is never held as one string); redaction drops contents, embeddings
// or both. parse_export() reads either spelling (told apart by the first
// line) from untrusted text: every member is type- and range-checked, a
// member given twice is refused (simdjson would silently keep the first),
// unknown members are ignored (newer writers may add some), and a
// content_sha256 that does not match its content is refused. Errors name the
// offending member by path ("line 4: chunk.sources[1].id must be ...").
#pragma once

#include <simdjson.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/core/lines.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/json/f32_array.hpp"
#include "agentctx/json/json_type.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::agdb {

inline constexpr std::string_view export_format_json = "agentsdb.export.v1";
inline constexpr std::string_view export_format_ndjson = "agentsdb.export.ndjson.v1";

enum class export_spelling { json, ndjson };

/// What an export leaves out: nothing, the contents, the embeddings, or both.
enum class redaction { none, content, embeddings, all };

inline std::optional<redaction> parse_redaction(std::string_view name) noexcept {
  if (name == "none") return redaction::none;
  if (name == "content") return redaction::content;
  if (name == "embeddings") return redaction::embeddings;
  if (name == "all") return redaction::all;
  return std::nullopt;
}

struct export_schema {
  std::uint32_t dim = 0;
  element_type type = element_type::f32;
  float quant_scale = 1.0f;
};

struct exported_chunk {
  chunk record;                ///< record.content is empty when the content was redacted
  bool content_present = true;  ///< false: exported with the content redacted
  std::optional<std::vector<float>> embedding;  ///< dequantised; absent when redacted
};

struct exported_layer {
  std::string path;                  ///< the file name the exporter gave
  std::optional<layer_id> layer;     ///< base, user, delta or local, when named
  export_schema schema;
  std::optional<std::string> layer_metadata_json;
  std::vector<exported_chunk> chunks;
};

struct export_bundle {
  export_spelling spelling = export_spelling::json;
  std::string tool_name;
  std::string tool_version;
  std::vector<exported_layer> layers;
  std::size_t chunk_count() const noexcept {
    std::size_t n = 0;
    for (const exported_layer& l : layers) n += l.chunks.size();
    return n;
  }
};

/// The lowercase hex SHA-256 of a chunk's content: the export's
/// content_sha256, and the key import dedupes by.
inline std::string content_sha256_hex(std::string_view content) { return to_hex(sha256(content)); }

// ---- writing -------------------------------------------------------------------------

struct export_input {
  const layer_reader* reader = nullptr;
  std::string path;               ///< written as the layer's "path" (the reference writes the file name)
  std::optional<layer_id> layer;  ///< written as "layer" (null when absent)
};

struct export_options {
  export_spelling spelling = export_spelling::json;
  redaction redact = redaction::none;
  std::string tool_name = "agentctx";
  std::string tool_version = "0.1.0";
};

/// Receives the export text piece by piece (a piece ends at a chunk
/// boundary, a line in NDJSON); an error stops the export.
using export_sink = std::function<result<void>(std::string_view)>;

namespace detail {

inline std::string_view element_type_name(element_type type) noexcept {
  return type == element_type::i8 ? "i8" : "f32";
}

inline void write_tool(json::writer& w, const export_options& o) {
  w.key("tool").begin_object();
  w.key("name").value(o.tool_name);
  w.key("version").value(o.tool_version);
  w.end_object();
}

// The members a JSON layer object and an NDJSON layer record share.
inline void write_layer_members(json::writer& w, const export_input& in) {
  const embedding_matrix_header& matrix = in.reader->embedding_header();
  w.key("path").value(in.path);
  if (in.layer) {
    w.key("layer").value(layer_name(*in.layer));
  } else {
    w.key("layer").value(nullptr);
  }
  w.key("schema").begin_object();
  w.key("dim").value(matrix.dim);
  w.key("element_type").value(element_type_name(static_cast<element_type>(matrix.element_type)));
  w.key("quant_scale").value(matrix.quant_scale);
  w.end_object();
  if (const std::optional<std::string_view> metadata = in.reader->metadata_json()) {
    w.key("layer_metadata_json").value(*metadata);
  } else {
    w.key("layer_metadata_json").value(nullptr);
  }
}

inline result<void> write_chunk_object(json::writer& w, const layer_reader& reader, std::size_t index,
                                       redaction redact, std::vector<float>& row) {
  auto c = reader.chunk(index);
  if (!c) return unexpected(std::move(c).error());
  const bool with_content = redact == redaction::none || redact == redaction::embeddings;
  const bool with_embedding = redact == redaction::none || redact == redaction::content;
  w.begin_object();
  w.key("id").value(c->id);
  w.key("kind").value(c->kind);
  if (with_content) {
    w.key("content").value(c->content);
  } else {
    w.key("content").value(nullptr);
  }
  w.key("author").value(c->author);
  w.key("confidence").value(c->confidence);
  w.key("created_at_unix_ms").value(c->created_at_unix_ms);
  w.key("sources").begin_array();
  AGENTCTX_TRY(reader.for_each_source(*c, [&](const source_view& s) -> result<void> {
    w.begin_object();
    if (s.kind == relationship_kind::source_chunk_id) {
      w.key("type").value("chunk_id");
      w.key("id").value(s.chunk_id);
    } else {
      w.key("type").value("source_string");
      w.key("value").value(s.text);
    }
    w.end_object();
    return {};
  }));
  w.end_array();
  if (with_embedding) {
    auto view = reader.row(c->embedding_row);
    if (!view) return unexpected(std::move(view).error());
    row.resize(view->dim());
    view->to_f32(row);
    w.key("embedding").begin_array();
    for (const float value : row) w.value(value);
    w.end_array();
  } else {
    w.key("embedding").value(nullptr);
  }
  if (with_content) {
    w.key("content_sha256").value(content_sha256_hex(c->content));
  } else {
    w.key("content_sha256").value(nullptr);
  }
  w.end_object();
  return {};
}

}  // namespace detail

/// Streams the export of `inputs`, in order, to `sink`. Every input is
/// validated first (validate(), first violation), so a damaged layer fails
/// before a byte is written. Errors: the violation, the sink's error.
inline result<void> write_export(std::span<const export_input> inputs, const export_options& options,
                                 const export_sink& sink) {
  for (const export_input& in : inputs) {
    const std::vector<violation> problems = validate(*in.reader, 1);
    if (!problems.empty()) {
      return fail(problems.front().code, problems.front().message, in.reader->path(), problems.front().offset);
    }
  }
  std::string out;
  std::vector<float> row;
  const auto flush = [&]() -> result<void> {
    if (out.empty()) return {};
    AGENTCTX_TRY(sink(out));
    out.clear();
    return {};
  };

  if (options.spelling == export_spelling::ndjson) {
    {
      json::writer w(out);
      w.begin_object();
      w.key("type").value("header");
      w.key("format").value(export_format_ndjson);
      detail::write_tool(w, options);
      w.end_object();
    }
    out.push_back('\n');
    for (const export_input& in : inputs) {
      {
        json::writer w(out);
        w.begin_object();
        w.key("type").value("layer");
        detail::write_layer_members(w, in);
        w.end_object();
      }
      out.push_back('\n');
      AGENTCTX_TRY(flush());
      for (std::size_t i = 0; i < in.reader->chunk_count(); ++i) {
        json::writer w(out);
        w.begin_object();
        w.key("type").value("chunk");
        w.key("layer_path").value(in.path);
        w.key("chunk");
        AGENTCTX_TRY(detail::write_chunk_object(w, *in.reader, i, options.redact, row));
        w.end_object();
        out.push_back('\n');
        AGENTCTX_TRY(flush());
      }
    }
    return flush();
  }

  // One JSON document, written in pieces: the writer keeps its nesting state
  // while the text it appended is handed to the sink and cleared.
  json::writer w(out);
  w.begin_object();
  w.key("format").value(export_format_json);
  detail::write_tool(w, options);
  w.key("layers").begin_array();
  for (const export_input& in : inputs) {
    w.begin_object();
    detail::write_layer_members(w, in);
    w.key("chunks").begin_array();
    for (std::size_t i = 0; i < in.reader->chunk_count(); ++i) {
      AGENTCTX_TRY(detail::write_chunk_object(w, *in.reader, i, options.redact, row));
      AGENTCTX_TRY(flush());
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out.push_back('\n');
  return flush();
}

// ---- reading -------------------------------------------------------------------------

namespace detail {

// Reads one JSON object member by member: iterates the members of `object`,
// calling `take(key, value, ordinal)` for
// each declared key (ordinal = its index in `keys`); a declared key given
// twice is an error (simdjson would keep the first silently); undeclared keys
// are ignored. Returns which keys were seen.
template <std::size_t N, class Take>
result<std::array<bool, N>> read_members(simdjson::dom::object object, const std::array<std::string_view, N>& keys,
                                         const std::string& where, Take&& take) {
  std::array<bool, N> seen{};
  for (const simdjson::dom::key_value_pair member : object) {
    for (std::size_t k = 0; k < N; ++k) {
      if (member.key != keys[k]) continue;
      if (seen[k]) return fail(errc::invalid_value, where + std::string(keys[k]) + " is given twice");
      seen[k] = true;
      AGENTCTX_TRY(take(k, member.value));
      break;
    }
  }
  return seen;
}

inline unexpected export_problem(const std::string& where, std::string_view member, std::string what) {
  return fail(errc::invalid_value, where + std::string(member) + " " + std::move(what));
}

inline result<std::string> export_string(simdjson::dom::element value, const std::string& where,
                                         std::string_view member) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    return export_problem(where, member, "must be a string, not " + std::string(json::describe_type(value)));
  }
  return std::string(text);  // simdjson has checked the UTF-8
}

inline result<std::uint64_t> export_unsigned(simdjson::dom::element value, const std::string& where,
                                             std::string_view member, std::uint64_t low, std::uint64_t high) {
  std::uint64_t number = 0;
  if (value.get_uint64().get(number) != simdjson::SUCCESS || number < low || number > high) {
    return export_problem(where, member,
                          "must be a whole number from " + std::to_string(low) + " to " + std::to_string(high));
  }
  return number;
}

inline result<float> export_f32(simdjson::dom::element value, const std::string& where, std::string_view member) {
  double number = 0;
  if (value.get_double().get(number) != simdjson::SUCCESS || !std::isfinite(number) ||
      std::fabs(number) > std::numeric_limits<float>::max()) {
    return export_problem(where, member, "must be a finite number");
  }
  return static_cast<float>(number);
}

inline result<export_schema> parse_export_schema(simdjson::dom::element value, const std::string& where) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return export_problem(where, "schema", "must be an object");
  }
  const std::string inner = where + "schema.";
  export_schema schema;
  static constexpr std::array<std::string_view, 3> keys{"dim", "element_type", "quant_scale"};
  auto seen = read_members(object, keys, inner, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
    if (k == 0) {
      auto dim = export_unsigned(v, inner, "dim", 1, layer_stack::max_dim);
      if (!dim) return unexpected(std::move(dim).error());
      schema.dim = static_cast<std::uint32_t>(*dim);
    } else if (k == 1) {
      auto name = export_string(v, inner, "element_type");
      if (!name) return unexpected(std::move(name).error());
      if (*name == "f32") {
        schema.type = element_type::f32;
      } else if (*name == "i8") {
        schema.type = element_type::i8;
      } else {
        return export_problem(inner, "element_type", "must be \"f32\" or \"i8\"");
      }
    } else {
      auto scale = export_f32(v, inner, "quant_scale");
      if (!scale) return unexpected(std::move(scale).error());
      schema.quant_scale = *scale;
    }
    return {};
  });
  if (!seen) return unexpected(std::move(seen).error());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (!(*seen)[k]) return export_problem(inner, keys[k], "is required");
  }
  if (schema.type == element_type::f32 ? schema.quant_scale != 1.0f : !(schema.quant_scale > 0.0f)) {
    return export_problem(inner, "quant_scale",
                          schema.type == element_type::f32 ? "must be 1 for f32" : "must be above 0 for i8");
  }
  return schema;
}

inline result<source_ref> parse_export_source(simdjson::dom::element value, const std::string& where) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return fail(errc::invalid_value, where.substr(0, where.size() - 1) + " must be an object");
  }
  static constexpr std::array<std::string_view, 3> keys{"type", "id", "value"};
  std::string type;
  std::uint32_t id = 0;
  std::string text;
  auto seen = read_members(object, keys, where, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
    if (k == 0) {
      auto t = export_string(v, where, "type");
      if (!t) return unexpected(std::move(t).error());
      type = std::move(*t);
    } else if (k == 1) {
      auto n = export_unsigned(v, where, "id", 1, std::numeric_limits<std::uint32_t>::max());
      if (!n) return unexpected(std::move(n).error());
      id = static_cast<std::uint32_t>(*n);
    } else {
      auto t = export_string(v, where, "value");
      if (!t) return unexpected(std::move(t).error());
      text = std::move(*t);
    }
    return {};
  });
  if (!seen) return unexpected(std::move(seen).error());
  if (!(*seen)[0]) return export_problem(where, "type", "is required");
  if (type == "chunk_id") {
    if (!(*seen)[1]) return export_problem(where, "id", "is required for a chunk_id source");
    return source_ref::to_chunk(id);
  }
  if (type == "source_string") {
    if (!(*seen)[2]) return export_problem(where, "value", "is required for a source_string source");
    return source_ref::to_string(std::move(text));
  }
  return export_problem(where, "type", "must be \"chunk_id\" or \"source_string\"");
}

inline result<exported_chunk> parse_exported_chunk(simdjson::dom::element value, const std::string& where) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return fail(errc::invalid_value, where.substr(0, where.size() - 1) + " must be an object");
  }
  static constexpr std::array<std::string_view, 9> keys{
      "id", "kind", "content", "author", "confidence", "created_at_unix_ms", "sources", "embedding", "content_sha256"};
  exported_chunk out;
  chunk& c = out.record;
  out.content_present = false;
  std::optional<std::string> claimed_hash;
  auto seen = read_members(object, keys, where, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
    switch (k) {
      case 0: {
        auto id = export_unsigned(v, where, "id", 1, std::numeric_limits<std::uint32_t>::max());
        if (!id) return unexpected(std::move(id).error());
        c.id = static_cast<std::uint32_t>(*id);
        return {};
      }
      case 1: {
        auto kind = export_string(v, where, "kind");
        if (!kind) return unexpected(std::move(kind).error());
        if (kind->empty()) return export_problem(where, "kind", "must not be empty");
        c.kind = std::move(*kind);
        return {};
      }
      case 2: {
        if (v.is_null()) return {};
        auto content = export_string(v, where, "content");
        if (!content) return unexpected(std::move(content).error());
        c.content = std::move(*content);
        out.content_present = true;
        return {};
      }
      case 3: {
        auto author = export_string(v, where, "author");
        if (!author) return unexpected(std::move(author).error());
        if (*author != "human" && *author != "mcp") return export_problem(where, "author", "must be \"human\" or \"mcp\"");
        c.author = std::move(*author);
        return {};
      }
      case 4: {
        auto confidence = export_f32(v, where, "confidence");
        if (!confidence || *confidence < 0.0f || *confidence > 1.0f) {
          return export_problem(where, "confidence", "must be a number from 0 to 1");
        }
        c.confidence = *confidence;
        return {};
      }
      case 5: {
        auto ms = export_unsigned(v, where, "created_at_unix_ms", 0, std::numeric_limits<std::uint64_t>::max());
        if (!ms) return unexpected(std::move(ms).error());
        c.created_at_unix_ms = *ms;
        return {};
      }
      case 6: {
        simdjson::dom::array sources;
        if (v.get_array().get(sources) != simdjson::SUCCESS) return export_problem(where, "sources", "must be an array");
        std::size_t i = 0;
        for (const simdjson::dom::element s : sources) {
          auto source = parse_export_source(s, where + "sources[" + std::to_string(i++) + "].");
          if (!source) return unexpected(std::move(source).error());
          c.sources.push_back(std::move(*source));
        }
        return {};
      }
      case 7: {
        if (v.is_null()) return {};
        simdjson::dom::array values;
        if (v.get_array().get(values) != simdjson::SUCCESS) {
          return export_problem(where, "embedding", "must be an array of numbers or null");
        }
        std::vector<float> row(values.size());
        if (auto read = json::read_f32_values(values, row); !read) {
          return export_problem(where, "embedding", read.error().message);
        }
        out.embedding = std::move(row);
        return {};
      }
      default: {
        if (v.is_null()) return {};
        auto hash = export_string(v, where, "content_sha256");
        if (!hash) return unexpected(std::move(hash).error());
        if (hash->size() != 64 || hash->find_first_not_of("0123456789abcdef") != std::string::npos) {
          return export_problem(where, "content_sha256", "must be 64 lowercase hex digits");
        }
        claimed_hash = std::move(*hash);
        return {};
      }
    }
  });
  if (!seen) return unexpected(std::move(seen).error());
  for (const std::size_t k : {0, 1, 3, 4, 5, 6}) {
    if (!(*seen)[k]) return export_problem(where, keys[k], "is required");
  }
  if (claimed_hash && out.content_present && *claimed_hash != content_sha256_hex(c.content)) {
    return export_problem(where, "content_sha256", "does not match the content");
  }
  return out;
}

// The members of a layer object (JSON) or layer record (NDJSON), "chunks"
// excepted. `keys` holds path, layer, schema, layer_metadata_json first.
inline result<void> take_layer_member(exported_layer& layer, std::size_t k, simdjson::dom::element v,
                                      const std::string& where) {
  switch (k) {
    case 0: {
      auto path = export_string(v, where, "path");
      if (!path) return unexpected(std::move(path).error());
      layer.path = std::move(*path);
      return {};
    }
    case 1: {
      if (v.is_null()) return {};
      auto name = export_string(v, where, "layer");
      if (!name) return unexpected(std::move(name).error());
      layer.layer = parse_layer_name(*name);
      if (!layer.layer) return export_problem(where, "layer", "must be base, user, delta, local or null");
      return {};
    }
    case 2: {
      auto schema = parse_export_schema(v, where);
      if (!schema) return unexpected(std::move(schema).error());
      layer.schema = *schema;
      return {};
    }
    default: {
      if (v.is_null()) return {};
      auto metadata = export_string(v, where, "layer_metadata_json");
      if (!metadata) return unexpected(std::move(metadata).error());
      layer.layer_metadata_json = std::move(*metadata);
      return {};
    }
  }
}

inline result<void> check_embedding_dims(const exported_layer& layer, const std::string& where) {
  for (std::size_t i = 0; i < layer.chunks.size(); ++i) {
    const auto& embedding = layer.chunks[i].embedding;
    if (embedding && embedding->size() != layer.schema.dim) {
      return fail(errc::invalid_value, where + "chunk " + std::to_string(layer.chunks[i].record.id) + " has " +
                                           std::to_string(embedding->size()) + " embedding values; the layer's dim is " +
                                           std::to_string(layer.schema.dim));
    }
  }
  return {};
}

inline result<void> parse_tool(simdjson::dom::element value, const std::string& where, export_bundle& out) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) return export_problem(where, "tool", "must be an object");
  const std::string inner = where + "tool.";
  static constexpr std::array<std::string_view, 2> keys{"name", "version"};
  auto seen = read_members(object, keys, inner, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
    auto text = export_string(v, inner, keys[k]);
    if (!text) return unexpected(std::move(text).error());
    (k == 0 ? out.tool_name : out.tool_version) = std::move(*text);
    return {};
  });
  if (!seen) return unexpected(std::move(seen).error());
  return {};
}

inline result<export_bundle> parse_export_json(simdjson::dom::element root) {
  export_bundle out;
  out.spelling = export_spelling::json;
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return fail(errc::invalid_value, "an export is a JSON object or NDJSON records, not " +
                                         std::string(json::describe_type(root)));
  }
  static constexpr std::array<std::string_view, 3> keys{"format", "tool", "layers"};
  const std::string where;
  simdjson::dom::array layers;
  auto seen = read_members(object, keys, where, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
    if (k == 0) {
      auto format = export_string(v, where, "format");
      if (!format) return unexpected(std::move(format).error());
      if (*format != export_format_json) {
        return export_problem(where, "format", "is \"" + *format + "\"; this reader reads \"" +
                                                   std::string(export_format_json) + "\"");
      }
      return {};
    }
    if (k == 1) return parse_tool(v, where, out);
    if (v.get_array().get(layers) != simdjson::SUCCESS) return export_problem(where, "layers", "must be an array");
    return {};
  });
  if (!seen) return unexpected(std::move(seen).error());
  if (!(*seen)[0]) return export_problem(where, "format", "is required");
  if (!(*seen)[2]) return export_problem(where, "layers", "is required");
  std::size_t l = 0;
  for (const simdjson::dom::element value : layers) {
    const std::string at = "layers[" + std::to_string(l++) + "].";
    simdjson::dom::object layer_object;
    if (value.get_object().get(layer_object) != simdjson::SUCCESS) {
      return fail(errc::invalid_value, at.substr(0, at.size() - 1) + " must be an object");
    }
    exported_layer layer;
    static constexpr std::array<std::string_view, 5> layer_keys{"path", "layer", "schema", "layer_metadata_json",
                                                                "chunks"};
    simdjson::dom::array chunks;
    auto layer_seen =
        read_members(layer_object, layer_keys, at, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
          if (k < 4) return take_layer_member(layer, k, v, at);
          if (v.get_array().get(chunks) != simdjson::SUCCESS) return export_problem(at, "chunks", "must be an array");
          return {};
        });
    if (!layer_seen) return unexpected(std::move(layer_seen).error());
    for (const std::size_t k : {0, 2, 4}) {
      if (!(*layer_seen)[k]) return export_problem(at, layer_keys[k], "is required");
    }
    std::size_t c = 0;
    for (const simdjson::dom::element value_chunk : chunks) {
      auto parsed = parse_exported_chunk(value_chunk, at + "chunks[" + std::to_string(c++) + "].");
      if (!parsed) return unexpected(std::move(parsed).error());
      layer.chunks.push_back(std::move(*parsed));
    }
    AGENTCTX_TRY(check_embedding_dims(layer, at));
    out.layers.push_back(std::move(layer));
  }
  return out;
}

inline result<export_bundle> parse_export_ndjson(std::string_view text, simdjson::dom::parser& parser) {
  export_bundle out;
  out.spelling = export_spelling::ndjson;
  bool header_seen = false;
  line_cursor lines(text);
  std::string_view line;
  while (lines.next(line)) {
    const std::size_t line_number = lines.number();
    const std::string where = "line " + std::to_string(line_number) + ": ";
    simdjson::dom::element root;
    if (const auto code = parser.parse(line.data(), line.size(), true).get(root); code != simdjson::SUCCESS) {
      return fail(errc::invalid_value, where + "not JSON: " + simdjson::error_message(code));
    }
    simdjson::dom::object object;
    if (root.get_object().get(object) != simdjson::SUCCESS) {
      return fail(errc::invalid_value, where + "a record is a JSON object, not " + std::string(json::describe_type(root)));
    }
    std::string_view type;
    if (object["type"].get_string().get(type) != simdjson::SUCCESS) {
      return fail(errc::invalid_value, where + "type must be \"header\", \"layer\" or \"chunk\"");
    }
    if (!header_seen && type != "header") {
      return fail(errc::invalid_value, where + "the first record must be the header, not a " + std::string(type));
    }
    if (type == "header") {
      if (header_seen) return fail(errc::invalid_value, where + "a second header");
      header_seen = true;
      static constexpr std::array<std::string_view, 3> keys{"type", "format", "tool"};
      auto seen = read_members(object, keys, where, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
        if (k == 1) {
          auto format = export_string(v, where, "format");
          if (!format) return unexpected(std::move(format).error());
          if (*format != export_format_ndjson) {
            return export_problem(where, "format", "is \"" + *format + "\"; this reader reads \"" +
                                                       std::string(export_format_ndjson) + "\"");
          }
        } else if (k == 2) {
          return parse_tool(v, where, out);
        }
        return {};
      });
      if (!seen) return unexpected(std::move(seen).error());
      if (!(*seen)[1]) return export_problem(where, "format", "is required");
    } else if (type == "layer") {
      exported_layer layer;
      static constexpr std::array<std::string_view, 5> keys{"path", "layer", "schema", "layer_metadata_json", "type"};
      auto seen = read_members(object, keys, where, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
        return k < 4 ? take_layer_member(layer, k, v, where) : result<void>{};
      });
      if (!seen) return unexpected(std::move(seen).error());
      for (const std::size_t k : {0, 2}) {
        if (!(*seen)[k]) return export_problem(where, keys[k], "is required");
      }
      for (const exported_layer& earlier : out.layers) {
        if (earlier.path == layer.path) {
          return export_problem(where, "path", "\"" + layer.path + "\" names a layer that an earlier record names");
        }
      }
      out.layers.push_back(std::move(layer));
    } else if (type == "chunk") {
      static constexpr std::array<std::string_view, 3> keys{"type", "layer_path", "chunk"};
      std::string layer_path;
      std::optional<exported_chunk> parsed;
      auto seen = read_members(object, keys, where, [&](std::size_t k, simdjson::dom::element v) -> result<void> {
        if (k == 1) {
          auto path = export_string(v, where, "layer_path");
          if (!path) return unexpected(std::move(path).error());
          layer_path = std::move(*path);
        } else if (k == 2) {
          auto c = parse_exported_chunk(v, where + "chunk.");
          if (!c) return unexpected(std::move(c).error());
          parsed = std::move(*c);
        }
        return {};
      });
      if (!seen) return unexpected(std::move(seen).error());
      if (!(*seen)[1]) return export_problem(where, "layer_path", "is required");
      if (!(*seen)[2]) return export_problem(where, "chunk", "is required");
      exported_layer* owner = nullptr;
      for (exported_layer& layer : out.layers) {
        if (layer.path == layer_path) owner = &layer;
      }
      if (owner == nullptr) {
        return export_problem(where, "layer_path", "\"" + layer_path + "\" names no layer record before it");
      }
      if (parsed->embedding && parsed->embedding->size() != owner->schema.dim) {
        return export_problem(where, "chunk.embedding", "has " + std::to_string(parsed->embedding->size()) +
                                                            " values; the layer's dim is " +
                                                            std::to_string(owner->schema.dim));
      }
      owner->chunks.push_back(std::move(*parsed));
    } else {
      return fail(errc::invalid_value, where + "type must be \"header\", \"layer\" or \"chunk\", not \"" +
                                           std::string(type) + "\"");
    }
  }
  if (!header_seen) return fail(errc::invalid_value, "the export is empty");
  return out;
}

}  // namespace detail

/// Parses an export in either spelling (see the file comment). The text is
/// NDJSON when its first non-blank line is a JSON object whose "type" is
/// "header"; otherwise it must be one JSON document.
/// Errors: invalid_value naming the line (NDJSON) and the member.
inline result<export_bundle> parse_export(std::string_view text) {
  simdjson::dom::parser parser;
  std::size_t first = 0;
  while (first < text.size()) {
    std::size_t end = text.find('\n', first);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(first, end - first);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      simdjson::dom::element root;
      std::string_view type;
      if (parser.parse(line.data(), line.size(), true).get(root) == simdjson::SUCCESS &&
          root["type"].get_string().get(type) == simdjson::SUCCESS && type == "header") {
        return detail::parse_export_ndjson(text, parser);
      }
      break;
    }
    first = end + 1;
  }
  if (first >= text.size()) return fail(errc::invalid_value, "the export is empty");
  simdjson::dom::element root;
  if (const auto code = parser.parse(text.data(), text.size(), true).get(root); code != simdjson::SUCCESS) {
    return fail(errc::invalid_value, std::string("the export is not JSON: ") + simdjson::error_message(code));
  }
  return detail::parse_export_json(root);
}

}  // namespace agentctx::agdb
