// agentctx/agdb/layer_diff.hpp: what the delta (and user) layers change
// relative to the layers below them, for human review (seed 000 sections
// 13 and 15.5; `agentsdb diff`).
//
// diff_layers() compares the base, user and delta layers of a stack:
//   - added: delta chunks whose id no base or user chunk has (agent
//     learning awaiting review); meta.* records are review state, not
//     context, and are not listed;
//   - overrides: a delta chunk whose id the base layer holds, and a user
//     chunk whose id the base layer holds (seed 000 section 6.2: the higher
//     layer's copy is in effect), each with a line diff of the content, or
//     same_content when nothing changed;
//   - conflicts: ids that both the user and the delta layer hold with
//     different content (seed 000 section 12). The user copy is in effect;
//     the change is recorded with upper = delta (the agent's copy) and
//     lower = user, so its edits show what the delta copy would change;
//   - pending: the pending proposals folded from the delta layer.
// Lists are in file order of the higher layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/core/line_diff.hpp"
#include "agentctx/core/result.hpp"

namespace agentctx::agdb {

/// One chunk, as a diff shows it.
struct diff_chunk {
  std::uint32_t id = 0;
  std::string kind;
  std::string content;
  std::string author;
  float confidence = 0.0f;
};

/// A chunk of `upper` over the copy of the same id in `lower`.
struct chunk_change {
  layer_id upper = layer_id::delta;
  layer_id lower = layer_id::base;
  diff_chunk chunk;           ///< the upper copy
  std::string lower_kind;
  std::string lower_content;  ///< the lower copy's content
  bool same_content = false;
  /// The line diff from the lower to the upper content (views into
  /// lower_content and chunk.content of this object; recompute with
  /// diff_lines() after copying it).
  std::vector<line_edit> edits() const { return diff_lines(lower_content, chunk.content); }
};

struct layer_diff {
  std::vector<diff_chunk> added;
  std::vector<chunk_change> overrides;
  std::vector<chunk_change> conflicts;
  std::vector<proposal> pending;
  std::vector<std::string> warnings;  ///< skipped proposal events
};

namespace detail {

inline result<diff_chunk> diff_chunk_at(const layer_reader& reader, std::size_t index) {
  auto view = reader.chunk(index);
  if (!view) return unexpected(std::move(view).error());
  return diff_chunk{view->id, std::string(view->kind), std::string(view->content), std::string(view->author),
                    view->confidence};
}

}  // namespace detail

/// See the file comment. `stack` should hold the base and delta layers, and
/// the user layer when there is one; a missing layer contributes nothing.
/// Fails only when a chunk of a layer cannot be read.
inline result<layer_diff> diff_layers(const layer_stack& stack) {
  layer_diff out;
  const auto reader_of = [&](layer_id id) -> const layer_reader* {
    const auto index = stack.index_of(id);
    return index ? &stack.layers()[*index].reader : nullptr;
  };
  const layer_reader* base = reader_of(layer_id::base);
  const layer_reader* user = reader_of(layer_id::user);
  const layer_reader* delta = reader_of(layer_id::delta);

  // The changes of `upper` over `lower`: ids both hold.
  const auto compare = [&](const layer_reader& upper, layer_id upper_id, const layer_reader* lower, layer_id lower_id,
                           std::vector<chunk_change>& into, bool only_different) -> result<void> {
    if (lower == nullptr) return {};
    for (std::size_t i = 0; i < upper.chunk_count(); ++i) {
      auto chunk = detail::diff_chunk_at(upper, i);
      if (!chunk) return unexpected(std::move(chunk).error());
      if (chunk->kind.starts_with("meta.")) continue;
      const auto below = lower->find_chunk(chunk->id);
      if (!below) continue;
      auto lower_chunk = detail::diff_chunk_at(*lower, *below);
      if (!lower_chunk) return unexpected(std::move(lower_chunk).error());
      const bool same = lower_chunk->content == chunk->content && lower_chunk->kind == chunk->kind;
      if (same && only_different) continue;
      chunk_change change;
      change.upper = upper_id;
      change.lower = lower_id;
      change.chunk = std::move(*chunk);
      change.lower_kind = std::move(lower_chunk->kind);
      change.lower_content = std::move(lower_chunk->content);
      change.same_content = same;
      into.push_back(std::move(change));
    }
    return {};
  };

  if (delta != nullptr) {
    for (std::size_t i = 0; i < delta->chunk_count(); ++i) {
      auto chunk = detail::diff_chunk_at(*delta, i);
      if (!chunk) return unexpected(std::move(chunk).error());
      if (chunk->kind.starts_with("meta.")) continue;
      const bool known = (base != nullptr && base->find_chunk(chunk->id)) || (user != nullptr && user->find_chunk(chunk->id));
      if (!known) out.added.push_back(std::move(*chunk));
    }
    AGENTCTX_TRY(compare(*delta, layer_id::delta, base, layer_id::base, out.overrides, false));
    if (user != nullptr) AGENTCTX_TRY(compare(*delta, layer_id::delta, user, layer_id::user, out.conflicts, true));
    auto ledger = fold_proposals(*delta);
    if (!ledger) return unexpected(std::move(ledger).error());
    for (proposal& p : ledger->proposals) {
      if (p.status == proposal_status::pending) out.pending.push_back(std::move(p));
    }
    out.warnings = std::move(ledger->warnings);
  }
  if (user != nullptr) AGENTCTX_TRY(compare(*user, layer_id::user, base, layer_id::base, out.overrides, false));
  return out;
}

}  // namespace agentctx::agdb
