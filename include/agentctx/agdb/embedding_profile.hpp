// agentctx/agdb/embedding_profile.hpp: the embedding compatibility contract.
//
// An `embedding_profile` says how a layer's vectors were produced (seed 000
// section 8.4.8): backend, model, revision, dimension and output
// normalisation. Vectors from equal profiles are comparable; a reader that
// embeds queries should refuse layers whose profile differs from its own
// embedder's. This header also reads and writes the layer metadata JSON that
// carries the profile, in the exact form the reference implementation writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "agentctx/core/error.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::agdb {

struct embedding_profile {
  std::string backend;                  ///< e.g. "hash", "candle", "openai"
  std::optional<std::string> model;     ///< null for model-less backends such as "hash"
  std::optional<std::string> revision;  ///< model revision, or null
  std::uint32_t dim = 0;                ///< vector length
  std::string output_norm;              ///< "none" or "l2"; always explicit
  friend bool operator==(const embedding_profile&, const embedding_profile&) = default;
};

/// The `cache_key_alg` this library writes into layer metadata: the cache key
/// of embedding_cache_key.hpp.
inline constexpr std::string_view cache_key_algorithm = "sha256_profile_json_v2_null_content_utf8";

/// The layer metadata schema version this library writes and reads ("v").
inline constexpr std::uint64_t layer_metadata_schema_version = 1;

/// For error messages: "hash(dim=128, norm=none)",
/// "candle:all-minilm-l6-v2@main(dim=384, norm=none)".
inline std::string describe(const embedding_profile& profile) {
  std::string out = profile.backend;
  if (profile.model) out += ":" + *profile.model;
  if (profile.revision) out += "@" + *profile.revision;
  out += "(dim=" + std::to_string(profile.dim) + ", norm=" + profile.output_norm + ")";
  return out;
}

namespace detail {

// The profile's five fields as JSON members, in the reference's order.
inline void write_embedding_profile_members(json::writer& out, const embedding_profile& profile) {
  const auto string_or_null = [&out](std::string_view key, const std::optional<std::string>& text) {
    out.key(key);
    if (text) {
      out.value(*text);
    } else {
      out.value(nullptr);
    }
  };
  out.key("backend").value(profile.backend);
  string_or_null("model", profile.model);
  string_or_null("revision", profile.revision);
  out.key("dim").value(profile.dim);
  out.key("output_norm").value(profile.output_norm);
}

}  // namespace detail

/// Writes the profile as a JSON object where `out` expects a value, keys in
/// the reference's order (backend, model, revision, dim, output_norm).
inline void write_embedding_profile(json::writer& out, const embedding_profile& profile) {
  out.begin_object();
  detail::write_embedding_profile_members(out, profile);
  out.end_object();
}

/// The profile as compact JSON, keys in the reference's order:
/// {"backend":"hash","model":null,"revision":null,"dim":128,"output_norm":"none"}.
inline std::string profile_json(const embedding_profile& profile) {
  std::string out;
  json::writer writer(out);
  write_embedding_profile(writer, profile);
  return out;
}

/// The layer metadata blob (seed 000 section 8.4.8) exactly as the reference
/// writes it, compact, in this key order:
/// {"v":1,"embedding_profile":{...},"cache_key_alg":"sha256_profile_json_v2_null_content_utf8",
///  "embedder_metadata":{...},"tool_name":"...","tool_version":"..."}.
/// `embedder_metadata_json` is copied verbatim: the caller passes one compact
/// JSON object. No timestamps are written, so the blob is reproducible.
inline std::string layer_metadata_json(const embedding_profile& profile, std::string_view tool_name,
                                       std::string_view tool_version, std::string_view embedder_metadata_json = "{}") {
  std::string out;
  json::writer writer(out);
  writer.begin_object();
  writer.key("v").value(layer_metadata_schema_version);
  writer.key("embedding_profile");
  write_embedding_profile(writer, profile);
  writer.key("cache_key_alg").value(cache_key_algorithm);
  writer.key("embedder_metadata").raw(embedder_metadata_json);
  writer.key("tool_name").value(tool_name);
  writer.key("tool_version").value(tool_version);
  writer.end_object();
  return out;
}

namespace detail {

inline unexpected invalid_layer_metadata(std::string_view what) {
  return fail(errc::invalid_value, "layer metadata: " + std::string(what));
}

// A member that may be absent, null or a string.
inline result<std::optional<std::string>> optional_string_member(simdjson::dom::object object, std::string_view key) {
  simdjson::dom::element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) return std::optional<std::string>();
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    return invalid_layer_metadata("embedding_profile." + std::string(key) + " is neither a string nor null");
  }
  return std::optional<std::string>(std::string(text));
}

inline result<std::string> required_string_member(simdjson::dom::object object, std::string_view key) {
  auto value = optional_string_member(object, key);
  if (!value) return unexpected(std::move(value).error());
  if (!*value) return invalid_layer_metadata("embedding_profile." + std::string(key) + " is missing or null");
  return std::move(**value);
}

}  // namespace detail

/// Reads the `embedding_profile` of a layer metadata JSON blob. Members this
/// library does not know are ignored; "v", when present, must be 1; "model"
/// and "revision" may be null or absent.
///
/// Errors: invalid_value, naming the offending member, when the text is not
/// JSON, is not an object, has a "v" other than 1, lacks embedding_profile,
/// or when backend/output_norm are not strings or dim is not an integer in
/// 1..2^32-1. The error carries no path; callers add it with with_path().
inline result<embedding_profile> parse_layer_metadata_profile(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto parse_error = parser.parse(json.data(), json.size()).get(root); parse_error != simdjson::SUCCESS) {
    return detail::invalid_layer_metadata(std::string("not valid JSON: ") + simdjson::error_message(parse_error));
  }
  simdjson::dom::object metadata;
  if (root.get_object().get(metadata) != simdjson::SUCCESS) return detail::invalid_layer_metadata("not a JSON object");

  simdjson::dom::element version;
  if (metadata.at_key("v").get(version) == simdjson::SUCCESS) {
    std::uint64_t number = 0;
    if (version.get_uint64().get(number) != simdjson::SUCCESS || number != layer_metadata_schema_version) {
      return detail::invalid_layer_metadata("unsupported schema version v=" + simdjson::minify(version) +
                                            " (expected 1)");
    }
  }

  simdjson::dom::element profile_element;
  if (metadata.at_key("embedding_profile").get(profile_element) != simdjson::SUCCESS) {
    return detail::invalid_layer_metadata("embedding_profile is missing");
  }
  simdjson::dom::object profile_object;
  if (profile_element.get_object().get(profile_object) != simdjson::SUCCESS) {
    return detail::invalid_layer_metadata("embedding_profile is not an object");
  }

  embedding_profile profile;
  auto backend = detail::required_string_member(profile_object, "backend");
  if (!backend) return unexpected(std::move(backend).error());
  profile.backend = std::move(*backend);
  auto model = detail::optional_string_member(profile_object, "model");
  if (!model) return unexpected(std::move(model).error());
  profile.model = std::move(*model);
  auto revision = detail::optional_string_member(profile_object, "revision");
  if (!revision) return unexpected(std::move(revision).error());
  profile.revision = std::move(*revision);

  std::uint64_t dim = 0;
  if (profile_object.at_key("dim").get_uint64().get(dim) != simdjson::SUCCESS || dim == 0 || dim > UINT32_MAX) {
    return detail::invalid_layer_metadata("embedding_profile.dim is missing or not an integer in 1..4294967295");
  }
  profile.dim = static_cast<std::uint32_t>(dim);

  auto output_norm = detail::required_string_member(profile_object, "output_norm");
  if (!output_norm) return unexpected(std::move(output_norm).error());
  profile.output_norm = std::move(*output_norm);
  return profile;
}

}  // namespace agentctx::agdb
