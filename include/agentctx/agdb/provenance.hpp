// agentctx/agdb/provenance.hpp: a chunk's provenance chain across layers
// (seed 000 sections 7.2 and 15.5: "inspecting provenance").
//
// provenance_chain() starts at one chunk of one layer and follows its
// chunk-id sources, depth first, in source order:
//   - a source naming another id resolves to the copy in effect: the layer
//     of highest precedence that holds the id;
//   - a source naming the chunk's own id (a promoted chunk points at the
//     delta copy it came from, docs/review.md) resolves to the next lower
//     layer that holds the id;
//   - a source no layer holds is reported unresolved;
//   - a chunk reached a second time (a cycle, or two paths to one chunk) is
//     reported once more with `repeated` set and not followed again, so the
//     walk always ends; depth is bounded by `max_depth` as well.
// String sources ("docs/a.md:12") are the leaves; they appear in each
// step's `sources`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/core/result.hpp"

namespace agentctx::agdb {

/// One layer of the walk, named for display. Layers are given lowest
/// precedence first (base, user, delta, local).
struct provenance_layer {
  std::string name;
  const layer_reader* reader = nullptr;
};

struct provenance_step {
  std::size_t depth = 0;
  std::uint32_t id = 0;
  std::optional<std::size_t> layer;  ///< index into the layers; nullopt: unresolved
  std::string kind;
  std::string author;
  float confidence = 0.0f;
  std::string content;
  std::vector<source_ref> sources;
  bool repeated = false;     ///< reached before: not followed again
  bool depth_limit = false;  ///< at max_depth: its sources are not followed
};

/// See the file comment. Fails with not_found when `layers[start]` does not
/// hold `id`, invalid_argument for a bad start index, and with the reader's
/// error when a chunk or its sources cannot be read.
inline result<std::vector<provenance_step>> provenance_chain(std::span<const provenance_layer> layers,
                                                             std::size_t start, std::uint32_t id,
                                                             std::size_t max_depth = 32) {
  if (start >= layers.size() || layers[start].reader == nullptr) {
    return fail(errc::invalid_argument, "the start layer is not one of the layers");
  }
  if (!layers[start].reader->find_chunk(id)) {
    return fail(errc::not_found, "chunk " + std::to_string(id) + " is not in " + layers[start].name);
  }
  std::vector<provenance_step> steps;
  std::set<std::pair<std::size_t, std::uint32_t>> seen;

  // The highest layer below `below` (exclusive; layers.size() for all) holding `chunk_id`.
  const auto resolve = [&](std::uint32_t chunk_id, std::size_t below) -> std::optional<std::size_t> {
    for (std::size_t l = below; l-- > 0;) {
      if (layers[l].reader != nullptr && layers[l].reader->find_chunk(chunk_id)) return l;
    }
    return std::nullopt;
  };

  // Iterative depth-first walk: (layer, id, depth) in the order to visit.
  struct pending {
    std::optional<std::size_t> layer;
    std::uint32_t id;
    std::size_t depth;
  };
  std::vector<pending> stack = {{start, id, 0}};
  while (!stack.empty()) {
    const pending next = stack.back();
    stack.pop_back();
    provenance_step step;
    step.depth = next.depth;
    step.id = next.id;
    step.layer = next.layer;
    if (!next.layer) {
      steps.push_back(std::move(step));
      continue;
    }
    const layer_reader& reader = *layers[*next.layer].reader;
    auto view = reader.chunk(*reader.find_chunk(next.id));
    if (!view) return unexpected(std::move(view).error());
    auto sources = reader.sources(*view);
    if (!sources) return unexpected(std::move(sources).error());
    step.kind = std::string(view->kind);
    step.author = std::string(view->author);
    step.confidence = view->confidence;
    step.content = std::string(view->content);
    step.sources = std::move(*sources);
    step.repeated = !seen.insert({*next.layer, next.id}).second;
    step.depth_limit = !step.repeated && next.depth >= max_depth;
    const bool follow = !step.repeated && !step.depth_limit;
    const std::size_t here = *next.layer;
    const std::uint32_t here_id = next.id;
    std::vector<pending> children;
    if (follow) {
      for (const source_ref& source : step.sources) {
        if (source.kind != relationship_kind::source_chunk_id) continue;
        const std::size_t below = source.chunk_id == here_id ? here : layers.size();
        children.push_back({resolve(source.chunk_id, below), source.chunk_id, next.depth + 1});
      }
    }
    steps.push_back(std::move(step));
    stack.insert(stack.end(), children.rbegin(), children.rend());  // visit in source order
  }
  return steps;
}

}  // namespace agentctx::agdb
