// agentctx/agdb/layer_append.hpp: agent writes to the local and delta layers.
//
// `append_chunk` is seed 000 section 11.1 (agents_context_write): it appends
// one chunk, written by an agent, to AGENTS.local.db or AGENTS.delta.db.
//
//   - Scope: local or delta only; base and user are never written by agents.
//   - The chunk: author "mcp" always; the caller's kind (non-empty UTF-8, not
//     a reserved kind: "options", "tombstone" or "meta.*", see kind_filter),
//     content (non-empty UTF-8, at most limits.max_content_bytes), confidence
//     (finite, in [0, 1]) and sources (at most limits.max_sources): chunk ids
//     that exist in one of the four layers, or "file:line" strings (a
//     non-empty path without line breaks, ':', a line number from 1).
//   - The id: deterministic, never one that any of the four layers holds (an
//     equal id would override, seed 000 section 6.2): the first non-zero
//     candidate of the compiler's scheme, SHA-256("" || 0x00 || content
//     [|| 0x00 || K]) (layer_compiler.hpp), that no layer holds.
//   - The embedding: `embedder` embeds the content. Its profile must equal the
//     profile every present layer records (resolve_embedding_profile); a new
//     layer records it. An i8 layer quantises the row with its existing
//     quant_scale (values beyond it are clamped), so no stored row changes.
//   - The file: under an exclusive lock on "<layer file>.lock" (threads and
//     processes), the layer is read, checked with validate() (a damaged layer
//     is refused, never rewritten), extended by one record and replaced
//     atomically (write_added_records: temporary file, fsync, rename,
//     directory fsync; the existing records are copied from the mapping, not
//     decoded and encoded again). Every existing record, string and row is carried over unchanged
//     and in order; readers see the old file or the new one, never a mix.
//
// Errors: invalid_argument (one line) for a request that breaks a rule
// above; incompatible when the profiles differ; the layer's validation
// violation (with path and offset) for a damaged target; the file system's
// and the embedder's errors. Nothing is written on any error.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/agdb/layer_embedder.hpp"
#include "agentctx/agdb/layer_compiler.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_search.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/layer_update.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

/// One agent write (seed 000 section 11.1).
struct chunk_write {
  layer_id scope = layer_id::local;
  std::string content;
  std::string kind;
  float confidence = std::numeric_limits<float>::quiet_NaN();  ///< required: NaN until set
  std::vector<source_ref> sources;
  std::optional<std::uint64_t> created_at_unix_ms;  ///< default: now
};

struct write_limits {
  std::size_t max_content_bytes = 64 * 1024;
  std::size_t max_sources = 64;
};

struct write_outcome {
  std::uint32_t id = 0;
  std::string path;        ///< the layer file written
  bool created = false;    ///< the layer file did not exist before
  std::size_t chunk_count = 0;  ///< chunks in the layer after the write
  std::vector<std::string> warnings;  ///< from the embedder choice, one line each
};

/// The checks of the file comment that need no file: scope, kind, content,
/// confidence, source count and source string syntax. invalid_argument.
inline result<void> check_chunk_write(const chunk_write& w, const write_limits& limits = {}) {
  const auto invalid = [](std::string message) { return fail(errc::invalid_argument, std::move(message)); };
  if (w.scope != layer_id::local && w.scope != layer_id::delta) {
    return invalid("agents write to the local or delta layer, not " + std::string(layer_name(w.scope)));
  }
  if (w.kind.empty()) return invalid("the kind is empty");
  if (!is_valid_utf8(w.kind)) return invalid("the kind is not valid UTF-8");
  if (kind_filter::is_reserved(w.kind)) {
    return invalid("the kind '" + w.kind + "' is reserved (options, tombstone and meta.* are not agent writes)");
  }
  if (w.content.empty()) return invalid("the content is empty");
  if (w.content.size() > limits.max_content_bytes) {
    return invalid("the content has " + std::to_string(w.content.size()) + " bytes; at most " +
                   std::to_string(limits.max_content_bytes) + " are allowed");
  }
  if (!is_valid_utf8(w.content)) return invalid("the content is not valid UTF-8");
  if (!std::isfinite(w.confidence) || w.confidence < 0.0f || w.confidence > 1.0f) {
    return invalid("the confidence must be a number from 0 to 1");
  }
  if (w.sources.size() > limits.max_sources) {
    return invalid("there are " + std::to_string(w.sources.size()) + " sources; at most " +
                   std::to_string(limits.max_sources) + " are allowed");
  }
  for (const source_ref& source : w.sources) {
    if (source.kind == relationship_kind::source_chunk_id) {
      if (source.chunk_id == 0) return invalid("source chunk id 0 is not a chunk id");
      continue;
    }
    const std::string& text = source.text;
    const std::size_t colon = text.rfind(':');
    const bool line_ok = colon != std::string::npos && colon + 1 < text.size() && text[colon + 1] != '0' &&
                         text.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
                         text.size() - colon - 1 <= 9;
    if (colon == 0 || !line_ok || text.find_first_of("\r\n") != std::string::npos || !is_valid_utf8(text)) {
      return invalid("source '" + text + "' is neither a chunk id nor file:line");
    }
  }
  return {};
}

namespace detail {

// append_chunk with the embedder chosen under the lock: `choose(stack)` gives
// the embedder for the layers as they are then, or an error.
template <class ChooseEmbedder>
result<write_outcome> append_chunk_locked(io::file_system& fs, const std::vector<layer_location>& layers,
                                          const chunk_write& w, const write_limits& limits, ChooseEmbedder&& choose) {
  AGENTCTX_TRY(check_chunk_write(w, limits));
  auto path = require_location(layers, w.scope);
  if (!path) return unexpected(std::move(path).error());

  auto lock = lock_layer(fs, *path);
  if (!lock) return unexpected(std::move(lock).error());

  // Everything below reads the layers as they are under the lock.
  auto stack = open_for_update(fs, layers);
  if (!stack) return unexpected(std::move(stack).error());
  auto chosen = choose(*stack);
  if (!chosen) return unexpected(std::move(chosen).error());
  embedder& embedder = **chosen;
  const embedding_profile& profile = embedder.profile();
  if (!stack->empty()) {
    auto resolved = resolve_embedding_profile(*stack, layer_set::all(), profile);
    if (!resolved) return unexpected(std::move(resolved).error());
  }
  for (const source_ref& source : w.sources) {
    if (source.kind == relationship_kind::source_chunk_id && !find_in_stack(*stack, source.chunk_id)) {
      return fail(errc::invalid_argument, "source chunk " + std::to_string(source.chunk_id) + " is in none of the layers");
    }
  }

  // The target as it is under the lock; a damaged target is refused.
  const std::optional<std::size_t> target = stack->index_of(w.scope);
  const layer_reader* existing = target ? &stack->layers()[*target].reader : nullptr;
  if (existing != nullptr) AGENTCTX_TRY(require_valid_for_update(*existing));
  const std::uint32_t id = next_free_chunk_id(*stack, w.content);

  std::vector<float> row(profile.dim);
  const std::string_view text = w.content;
  AGENTCTX_TRY(embedder.embed(std::span(&text, 1), row));

  chunk added;
  added.id = id;
  added.kind = w.kind;
  added.content = w.content;
  added.author = "mcp";
  added.confidence = w.confidence;
  added.created_at_unix_ms = w.created_at_unix_ms.value_or(now_unix_ms());
  added.sources = w.sources;
  auto count = write_added_records(fs, *path, existing, std::span(&added, 1), row, profile);
  if (!count) return unexpected(std::move(count).error());
  return write_outcome{id, *path, existing == nullptr, *count, {}};
}

}  // namespace detail

/// Appends `w` to the layer of `w.scope` among `layers` (which should name
/// all four standard layers, for the id and profile checks; missing files
/// are fine), embedding the content with `embedder`. See the file comment.
inline result<write_outcome> append_chunk(io::file_system& fs, const std::vector<layer_location>& layers,
                                          const chunk_write& w, embedder& embedder, const write_limits& limits = {}) {
  return detail::append_chunk_locked(fs, layers, w, limits,
                                     [&](const layer_stack&) -> result<agdb::embedder*> { return &embedder; });
}

/// The same, with the embedder picked by embedder_config_for_layers() from
/// `configured` and the layers as they are under the lock (so a layer created
/// meanwhile by another writer decides the profile). The choice's warnings
/// are in the outcome.
inline result<write_outcome> append_chunk(io::file_system& fs, const std::vector<layer_location>& layers,
                                          const chunk_write& w, const std::optional<embedder_config>& configured,
                                          const write_limits& limits = {}) {
  std::vector<std::string> warnings;
  std::unique_ptr<embedder> made;
  auto written = detail::append_chunk_locked(
      fs, layers, w, limits, [&](const layer_stack& stack) -> result<agdb::embedder*> {
        auto chosen = make_embedder_for_layers(fs, stack, layer_set::all(), configured);
        if (!chosen) return unexpected(std::move(chosen).error());
        warnings = std::move(chosen->warnings);
        made = std::move(chosen->instance);
        return made.get();
      });
  if (written) written->warnings = std::move(warnings);
  return written;
}

}  // namespace agentctx::agdb
