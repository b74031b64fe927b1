// agentctx/agdb/layer_update.hpp: the pieces every rewrite of a layer file
// shares (agent writes, proposals, review decisions, promotion, import).
//
// A layer update follows one protocol:
//   1. take the exclusive lock "<layer file>.lock" (layer_lock) of every
//      file it will rewrite, always in the order delta, then user (see
//      lock_order), so two updates never wait on each other in a cycle;
//   2. open the four layers as they are under the lock (open_for_update);
//   3. read each target's contents, refusing a damaged layer
//      (read_valid_contents): a file that does not validate is never
//      rewritten, so an update cannot turn damage into silent loss;
//   4. add records; new ids come from next_free_chunk_id, which never returns
//      an id that any layer (or the records being added) holds;
//   5. replace each file atomically with write_layer, or, when records are
//      only appended to an existing file, write_layer_appending, which gives
//      the same bytes at about the cost of a file copy (layer_writer.hpp).
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/layer_compiler.hpp"
#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

/// Takes the exclusive lock that serialises every rewrite of `layer_path`
/// (threads and processes), waiting for it.
inline result<std::unique_ptr<io::file_lock>> lock_layer(io::file_system& fs, const std::string& layer_path) {
  return fs.lock(layer_path + ".lock", io::lock_mode::exclusive, true);
}

/// The location given for `layer`, or null.
inline const layer_location* find_location(const std::vector<layer_location>& layers, layer_id layer) noexcept {
  for (const layer_location& location : layers) {
    if (location.id == layer) return &location;
  }
  return nullptr;
}

/// The location given for `layer`, or invalid_argument naming the layer.
inline result<std::string> require_location(const std::vector<layer_location>& layers, layer_id layer) {
  const layer_location* location = find_location(layers, layer);
  if (location == nullptr || location->path.empty()) {
    return fail(errc::invalid_argument, "no file is given for the " + std::string(layer_name(layer)) + " layer");
  }
  return location->path;
}

/// Opens the given layers with every file optional (a layer an update creates
/// does not exist yet).
inline result<layer_stack> open_for_update(io::file_system& fs, const std::vector<layer_location>& layers) {
  std::vector<layer_location> optional_layers;
  optional_layers.reserve(layers.size());
  for (const layer_location& location : layers) optional_layers.push_back({location.id, location.path, false});
  return layer_stack::open(fs, optional_layers);
}

/// Refuses a layer that does not validate, with its first violation: a
/// damaged file is never rewritten.
inline result<void> require_valid_for_update(const layer_reader& reader) {
  const std::vector<violation> problems = validate(reader, 1);
  if (!problems.empty()) {
    return fail(problems.front().code, "the layer is damaged, so it is not rewritten: " + problems.front().message,
                reader.path(), problems.front().offset);
  }
  return {};
}

/// The contents of layer `layer` of `stack`; nullopt when the file is absent.
/// A layer that does not validate is refused (require_valid_for_update).
inline result<std::optional<layer_contents>> read_valid_contents(const layer_stack& stack, layer_id layer) {
  const auto index = stack.index_of(layer);
  if (!index) return std::optional<layer_contents>();
  const layer_reader& reader = stack.layers()[*index].reader;
  AGENTCTX_TRY(require_valid_for_update(reader));
  auto contents = read_layer_contents(reader);
  if (!contents) return unexpected(std::move(contents).error());
  return std::optional<layer_contents>(std::move(*contents));
}

/// The layer holding `id` with the highest precedence, and the chunk's index there.
struct chunk_location {
  std::size_t layer_index = 0;
  std::size_t chunk_index = 0;
};

inline std::optional<chunk_location> find_in_stack(const layer_stack& stack, std::uint32_t id) {
  const auto& layers = stack.layers();
  for (std::size_t l = layers.size(); l-- > 0;) {
    if (const auto index = layers[l].reader.find_chunk(id)) return chunk_location{l, *index};
  }
  return std::nullopt;
}

/// The first non-zero candidate id for `content` (the compiler's scheme,
/// layer_compiler.hpp, with an empty source) that no layer of `stack` holds
/// and for which `also_taken(id)` (ids of records about to be added) is false.
template <class AlsoTaken>
  requires std::predicate<AlsoTaken&, std::uint32_t>
std::uint32_t next_free_chunk_id(const layer_stack& stack, std::string_view content, AlsoTaken&& also_taken) {
  sha256_hasher hasher;
  for (std::uint64_t attempt = 0;; ++attempt) {
    const std::uint32_t candidate = detail::chunk_id_assigner::candidate(hasher, "", content, attempt);
    if (candidate != 0 && !find_in_stack(stack, candidate).has_value() && !also_taken(candidate)) return candidate;
  }
}

/// The same, with the ids of `pending` (records about to be added) taken.
inline std::uint32_t next_free_chunk_id(const layer_stack& stack, std::string_view content,
                                        std::span<const chunk> pending = {}) {
  return next_free_chunk_id(stack, content, [pending](std::uint32_t candidate) {
    for (const chunk& c : pending) {
      if (c.id == candidate) return true;
    }
    return false;
  });
}

/// Appends one row to `matrix`: an i8 matrix quantises it with its existing
/// quant_scale (values beyond it are clamped), so no stored row changes.
inline void append_row(embedding_matrix& matrix, std::span<const float> row) {
  if (matrix.type == element_type::i8) {
    const std::vector<std::int8_t> quantized = quantize_i8(row, matrix.quant_scale);
    matrix.i8_values.insert(matrix.i8_values.end(), quantized.begin(), quantized.end());
  } else {
    matrix.f32_values.insert(matrix.f32_values.end(), row.begin(), row.end());
  }
}

/// Step 5 for an update that only adds records: writes `added` to the layer
/// file `path`. With `existing` (the file as read under the lock, validated)
/// its records are copied as they are and `added` appended
/// (write_layer_appending); without, a new layer is written that records
/// `profile` in its metadata. `rows` holds added.size() x profile.dim f32
/// values, row i for added[i]; an i8 layer quantises them with its
/// quant_scale (append_row). Returns the layer's chunk count afterwards.
inline result<std::size_t> write_added_records(io::file_system& fs, const std::string& path,
                                               const layer_reader* existing, std::span<const chunk> added,
                                               std::span<const float> rows, const embedding_profile& profile) {
  const std::size_t dim = profile.dim;
  if (dim == 0 || rows.size() != added.size() * dim) {
    return fail(errc::invalid_argument, "the rows to add do not hold one row of the profile's dim per record");
  }
  embedding_matrix matrix;
  if (existing != nullptr) {
    const embedding_matrix_header& stored = existing->embedding_header();
    if (stored.dim != profile.dim) {
      return fail(errc::incompatible, "the layer's rows have " + std::to_string(stored.dim) + " values, not " +
                                          std::to_string(profile.dim),
                  path);
    }
    matrix.type = static_cast<element_type>(stored.element_type);
    matrix.quant_scale = stored.quant_scale;
  }
  matrix.dim = profile.dim;
  for (std::size_t i = 0; i < added.size(); ++i) append_row(matrix, rows.subspan(i * dim, dim));
  if (existing != nullptr) {
    AGENTCTX_TRY(write_layer_appending(fs, path, *existing, added, matrix));
    return existing->chunk_count() + added.size();
  }
  layer_contents contents;
  contents.metadata_json = layer_metadata_json(profile, "agentctx", "0.1.0");
  contents.chunks.assign(added.begin(), added.end());
  contents.embeddings = std::move(matrix);
  AGENTCTX_TRY(write_layer(fs, path, contents));
  return added.size();
}

}  // namespace agentctx::agdb
