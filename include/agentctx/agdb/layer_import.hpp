// agentctx/agdb/layer_import.hpp: an export (layer_export.hpp) added to a
// local, delta or user layer.
//
//   auto bundle = agdb::parse_export(text);
//   agdb::import_request r;
//   r.target = agdb::layer_id::user;
//   r.layers = agdb::standard_layer_locations(dir);
//   auto report = agdb::import_export(fs, r, *bundle);  // report->imported, ->duplicates, ...
//
// The import follows the update protocol of layer_update.hpp: lock the
// target, open the four layers as they are then, refuse a damaged target,
// append, replace the file atomically in one write. Base is never a target
// (compile and compact make it). Rules:
//
//   - Contents: every chunk must carry its content (an export made with
//     --redact content or all cannot be imported; nothing is written).
//     Chunks of the kinds meta.* (review events) are not imported: the ids
//     their contents name belong to the layer they were recorded in.
//   - Dedupe (on by default): a chunk whose content has the SHA-256 of a
//     chunk already in the target, or of one imported before it, is skipped.
//   - Ids: by default every imported chunk gets a fresh id that no layer
//     holds (the scheme of agent writes, next_free_chunk_id), and chunk-id
//     sources that name a chunk of the same export are rewritten to its new
//     id (to the kept copy for a duplicate), so provenance survives. With
//     preserve_ids the exported ids are kept; one the target already holds,
//     or that two imported chunks share, is an error (duplicate_id); one
//     another layer holds is an override (seed 000 section 6.2), reported
//     as a warning.
//   - Embeddings: the exported vector is kept when the exported layer's
//     metadata records the target's embedding profile (the profile of the
//     layers, or of a new layer the embedder the layers or the caller
//     choose); otherwise, or when the export has no vectors, the content is
//     embedded again with that embedder. An i8 target quantises with its
//     existing quant_scale.
//   - Author, kind, confidence, created_at_unix_ms and string sources are
//     kept as exported.
//
// dry_run does everything but embed and write, and reports what would be
// done. Errors: invalid_argument (base target), invalid_value (a redacted
// content), duplicate_id, incompatible (profiles), the target's validation
// violation, the embedder's and the file system's errors. Nothing is
// written on any error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "agentctx/io/atomic_file.hpp"
#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/layer_embedder.hpp"
#include "agentctx/agdb/layer_export.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_update.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

struct import_request {
  layer_id target = layer_id::local;
  std::vector<layer_location> layers;  ///< all four standard layers (missing files are fine)
  bool dedupe = true;
  bool preserve_ids = false;
  bool dry_run = false;
  std::optional<embedder_config> embedder;  ///< nullopt: embedder_config_for_layers() picks it
};

struct import_report {
  std::string path;               ///< the target layer file
  bool created = false;           ///< the import creates (or would create) the file
  bool dry_run = false;
  std::size_t imported = 0;       ///< chunks added (or that would be)
  std::size_t duplicates = 0;     ///< skipped: content already in the target or earlier in the import
  std::size_t skipped_meta = 0;   ///< skipped: meta.* chunks
  std::size_t embedded = 0;       ///< imported chunks whose vector was computed (not taken from the export)
  std::size_t chunk_count = 0;    ///< chunks in the target afterwards (unchanged on a dry run)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ids;  ///< exported id -> id in the target, per imported chunk
  std::vector<std::string> warnings;  ///< one line each
};

namespace detail {

// Whether the vectors of `layer` were made with `profile`: its metadata must
// record exactly that profile.
inline bool vectors_match_profile(const exported_layer& layer, const embedding_profile& profile) {
  if (!layer.layer_metadata_json || layer.schema.dim != profile.dim) return false;
  auto recorded = parse_layer_metadata_profile(*layer.layer_metadata_json);
  return recorded && *recorded == profile;
}

inline std::string exported_name(const exported_layer& layer) {
  return layer.layer ? std::string(layer_name(*layer.layer)) + " layer '" + layer.path + "'"
                     : "layer '" + layer.path + "'";
}

}  // namespace detail

/// Imports `bundle` into layer `r.target`; see the file comment.
inline result<import_report> import_export(io::file_system& fs, const import_request& r, const export_bundle& bundle) {
  if (r.target == layer_id::base) {
    return fail(errc::invalid_argument,
                "import writes to the local, delta or user layer; the base layer is made by compile or compact");
  }
  for (const exported_layer& layer : bundle.layers) {
    for (const exported_chunk& c : layer.chunks) {
      if (!c.content_present) {
        return fail(errc::invalid_value, "chunk " + std::to_string(c.record.id) + " of the " +
                                             detail::exported_name(layer) +
                                             " was exported without its content (--redact), so it cannot be imported");
      }
    }
  }
  auto path = require_location(r.layers, r.target);
  if (!path) return unexpected(std::move(path).error());
  auto lock = lock_layer(fs, *path);
  if (!lock) return unexpected(std::move(lock).error());
  auto stack = open_for_update(fs, r.layers);
  if (!stack) return unexpected(std::move(stack).error());

  import_report report;
  report.path = *path;
  report.dry_run = r.dry_run;
  auto chosen = make_embedder_for_layers(fs, *stack, layer_set::all(), r.embedder);
  if (!chosen) return unexpected(std::move(chosen).error());
  report.warnings = std::move(chosen->warnings);
  embedder& embedder = *chosen->instance;
  const embedding_profile profile = embedder.profile();
  if (!stack->empty()) {
    auto resolved = resolve_embedding_profile(*stack, layer_set::all(), profile);
    if (!resolved) return unexpected(std::move(resolved).error());
  }
  const std::optional<std::size_t> target = stack->index_of(r.target);
  const layer_reader* existing = target ? &stack->layers()[*target].reader : nullptr;
  if (existing != nullptr) AGENTCTX_TRY(require_valid_for_update(*existing));
  report.created = existing == nullptr;

  // Content hash -> id of the chunk that has it, in the target and then in
  // the import.
  std::unordered_map<std::string, std::uint32_t> by_content;
  if (r.dedupe && existing != nullptr) {
    for (std::size_t i = 0; i < existing->chunk_count(); ++i) {
      auto c = existing->chunk(i);
      if (!c) return unexpected(std::move(c).error());
      by_content.emplace(content_sha256_hex(c->content), c->id);
    }
  }

  std::vector<chunk> added;
  std::vector<const exported_chunk*> origin;  // the exported chunk of each added one
  std::vector<std::size_t> origin_layer;
  std::unordered_set<std::uint32_t> taken;      // ids of `added`
  // (exported layer index, exported id) -> id in the target.
  std::map<std::pair<std::size_t, std::uint32_t>, std::uint32_t> new_id;
  std::size_t overrides = 0;
  for (std::size_t l = 0; l < bundle.layers.size(); ++l) {
    for (const exported_chunk& c : bundle.layers[l].chunks) {
      if (c.record.kind.starts_with("meta.")) {
        ++report.skipped_meta;
        continue;
      }
      std::string hash;
      if (r.dedupe) {
        hash = content_sha256_hex(c.record.content);
        if (const auto found = by_content.find(hash); found != by_content.end()) {
          ++report.duplicates;
          new_id.emplace(std::pair(l, c.record.id), found->second);
          continue;
        }
      }
      std::uint32_t id = 0;
      if (r.preserve_ids) {
        id = c.record.id;
        if (taken.contains(id) || (existing != nullptr && existing->find_chunk(id))) {
          return fail(errc::duplicate_id, "chunk id " + std::to_string(id) + " is already in the " +
                                              std::string(layer_name(r.target)) +
                                              " layer or earlier in the import (import without preserving ids to "
                                              "give it a fresh one)",
                      *path);
        }
        if (find_in_stack(*stack, id)) ++overrides;
      } else {
        id = next_free_chunk_id(*stack, c.record.content, [&](std::uint32_t candidate) {
          return taken.contains(candidate);
        });
      }
      taken.insert(id);
      if (r.dedupe) by_content.emplace(std::move(hash), id);
      new_id.emplace(std::pair(l, c.record.id), id);
      chunk copy = c.record;
      copy.id = id;
      added.push_back(std::move(copy));
      origin.push_back(&c);
      origin_layer.push_back(l);
      report.ids.emplace_back(c.record.id, id);
    }
  }
  if (overrides != 0) {
    report.warnings.push_back(std::to_string(overrides) +
                              " imported chunk(s) keep an id that another layer holds, so they override it");
  }

  // Chunk-id sources that name an exported chunk follow it to its new id:
  // first in its own exported layer, then in any other.
  std::size_t dangling = 0;
  for (std::size_t a = 0; a < added.size(); ++a) {
    for (source_ref& source : added[a].sources) {
      if (source.kind != relationship_kind::source_chunk_id) continue;
      auto found = new_id.find(std::pair(origin_layer[a], source.chunk_id));
      for (std::size_t l = 0; found == new_id.end() && l < bundle.layers.size(); ++l) {
        found = new_id.find(std::pair(l, source.chunk_id));
      }
      if (found != new_id.end()) {
        source.chunk_id = found->second;
      } else if (!find_in_stack(*stack, source.chunk_id)) {
        ++dangling;
      }
    }
  }
  if (dangling != 0) {
    report.warnings.push_back(std::to_string(dangling) +
                              " chunk-id source(s) name chunks in neither the import nor the layers; kept as they are");
  }

  // Vectors: taken from the export when its layer's profile is the target's.
  const std::size_t dim = profile.dim;
  std::vector<float> rows(added.size() * dim);
  std::vector<std::size_t> to_embed;
  for (std::size_t a = 0; a < added.size(); ++a) {
    const exported_chunk& c = *origin[a];
    if (c.embedding && detail::vectors_match_profile(bundle.layers[origin_layer[a]], profile)) {
      std::copy(c.embedding->begin(), c.embedding->end(), rows.begin() + static_cast<std::ptrdiff_t>(a * dim));
    } else {
      to_embed.push_back(a);
    }
  }
  report.imported = added.size();
  report.embedded = to_embed.size();
  report.chunk_count = existing != nullptr ? existing->chunk_count() : 0;
  if (r.dry_run || added.empty()) {
    if (added.empty()) report.created = false;
    // Everything is there already: what the target holds may be what a
    // killed import left in the page cache only, made durable before the
    // import is answered done.
    if (!r.dry_run && existing != nullptr) AGENTCTX_TRY(io::sync_file_and_directory(fs, *path));
    return report;
  }
  constexpr std::size_t batch = 256;
  std::vector<std::string_view> texts;
  std::vector<float> vectors;
  for (std::size_t begin = 0; begin < to_embed.size(); begin += batch) {
    const std::size_t end = std::min(to_embed.size(), begin + batch);
    texts.clear();
    for (std::size_t i = begin; i < end; ++i) texts.push_back(added[to_embed[i]].content);
    vectors.assign(texts.size() * dim, 0.0f);
    AGENTCTX_TRY(embedder.embed(texts, vectors));
    for (std::size_t i = begin; i < end; ++i) {
      std::copy_n(vectors.begin() + static_cast<std::ptrdiff_t>((i - begin) * dim), dim,
                  rows.begin() + static_cast<std::ptrdiff_t>(to_embed[i] * dim));
    }
  }
  auto count = write_added_records(fs, *path, existing, added, rows, profile);
  if (!count) return unexpected(std::move(count).error());
  report.chunk_count = *count;
  return report;
}

}  // namespace agentctx::agdb
