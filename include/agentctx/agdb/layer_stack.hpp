// agentctx/agdb/layer_stack.hpp: the four standard layers read as one.
//
// Seed 000 section 6 defines four layers, each one file: base (AGENTS.db),
// user (AGENTS.user.db), delta (AGENTS.delta.db) and local (AGENTS.local.db),
// with precedence local > user > delta > base. A `layer_stack` holds the
// readers of the layers present (any subset, at most one per layer), checks
// that they can be searched together (one embedding dimension; a readable
// profile in each layer's metadata) and answers which chunk copies are in
// effect for a chosen subset of layers (`visibility`):
//
//   - override: a chunk id present in a higher layer hides every copy of that
//     id below it (seed 000 section 6.2); nothing below is changed;
//   - duplicates: within one layer only the first record of an id counts
//     (validate() reports the repeat as duplicate_id);
//   - tombstones: a chunk of kind "tombstone" (the legacy retraction record)
//     hides the chunks its chunk-id sources name, in its own layer and below.
//     A copy of that id in a higher layer stays in effect.
//
// Which chunks a *search* returns is further narrowed by kind: see
// kind_filter. Thread-safety: a built stack is immutable; const members may be
// called from several threads.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

/// The standard layers. The numeric value is the precedence: higher wins.
enum class layer_id : std::uint8_t { base = 0, delta = 1, user = 2, local = 3 };

inline constexpr std::size_t layer_id_count = 4;

/// The layers in the order seed 000 lists them (base, user, delta, local).
inline constexpr std::array<layer_id, layer_id_count> standard_layers = {layer_id::base, layer_id::user,
                                                                         layer_id::delta, layer_id::local};

/// "base", "user", "delta", "local".
constexpr std::string_view layer_name(layer_id layer) noexcept {
  switch (layer) {
    case layer_id::base: return "base";
    case layer_id::delta: return "delta";
    case layer_id::user: return "user";
    case layer_id::local: return "local";
  }
  return "unknown";
}

/// The file name seed 000 section 6.1 gives the layer: "AGENTS.db",
/// "AGENTS.user.db", "AGENTS.delta.db", "AGENTS.local.db".
constexpr std::string_view standard_file_name(layer_id layer) noexcept {
  switch (layer) {
    case layer_id::base: return "AGENTS.db";
    case layer_id::delta: return "AGENTS.delta.db";
    case layer_id::user: return "AGENTS.user.db";
    case layer_id::local: return "AGENTS.local.db";
  }
  return "";
}

/// The layer named `name` ("base", "user", "delta", "local"), if any.
constexpr std::optional<layer_id> parse_layer_name(std::string_view name) noexcept {
  for (const layer_id layer : standard_layers) {
    if (layer_name(layer) == name) return layer;
  }
  return std::nullopt;
}

/// A set of layers, as a 4-bit mask.
class layer_set {
 public:
  constexpr layer_set() noexcept = default;
  static constexpr layer_set all() noexcept { return layer_set(0xF); }
  constexpr layer_set& add(layer_id layer) noexcept {
    bits_ = static_cast<std::uint8_t>(bits_ | (1u << static_cast<unsigned>(layer)));
    return *this;
  }
  constexpr bool contains(layer_id layer) const noexcept { return (bits_ >> static_cast<unsigned>(layer)) & 1u; }
  constexpr bool empty() const noexcept { return bits_ == 0; }
  constexpr std::uint8_t bits() const noexcept { return bits_; }
  friend constexpr bool operator==(layer_set, layer_set) = default;

 private:
  constexpr explicit layer_set(std::uint8_t bits) noexcept : bits_(bits) {}
  std::uint8_t bits_ = 0;
};

/// One layer of a stack.
struct stacked_layer {
  layer_id id = layer_id::base;
  layer_reader reader;
  /// The profile recorded in the layer metadata; nullopt when the layer has
  /// no metadata section (files from older tools).
  std::optional<embedding_profile> profile;
};

/// Where a layer file is and whether it must exist.
struct layer_location {
  layer_id id = layer_id::base;
  std::string path;
  bool required = false;  ///< false: a missing file is skipped
};

/// The standard files of `directory` ("" = the current directory), none required.
inline std::vector<layer_location> standard_layer_locations(const std::string& directory = "") {
  std::vector<layer_location> out;
  for (const layer_id layer : standard_layers) {
    std::string path = directory.empty() ? std::string() : directory + "/";
    path += standard_file_name(layer);
    out.push_back({layer, std::move(path), false});
  }
  return out;
}

/// Which chunks of one layer are in effect for a chosen set of layers.
class layer_visibility {
 public:
  bool visible(std::size_t chunk_index) const noexcept { return (bits_[chunk_index >> 6] >> (chunk_index & 63)) & 1u; }
  std::size_t visible_count() const noexcept { return count_; }
  /// The words of the bitset: bit i of word i/64 is chunk i.
  const std::vector<std::uint64_t>& words() const noexcept { return bits_; }

 private:
  friend class layer_stack;
  std::vector<std::uint64_t> bits_;
  std::size_t count_ = 0;
};

/// A lower-layer copy of a chunk id whose content differs from the copy in
/// effect (a conflict, seed 000 section 12).
struct overridden_copy {
  layer_id layer = layer_id::base;
  std::size_t chunk_index = 0;
  std::string content_sha256;  ///< lowercase hex of the SHA-256 of the content
  friend bool operator==(const overridden_copy&, const overridden_copy&) = default;
};

class layer_stack {
 public:
  /// Kind strings with a meaning of their own.
  static constexpr std::string_view tombstone_kind = "tombstone";

  /// The largest embedding dimension a stack accepts: far above any embedding
  /// model's (384 to 4,096 are common), and a bound on what a query costs.
  /// Without it a layer of zero rows could declare any dim up to 2^32 - 1
  /// with no bytes to back it, and every query would allocate that many
  /// values.
  static constexpr std::uint32_t max_dim = 65536;

  layer_stack() = default;
  layer_stack(layer_stack&&) noexcept = default;
  layer_stack& operator=(layer_stack&&) noexcept = default;

  /// Builds a stack from readers (any order). Fails with invalid_argument when
  /// a layer appears twice; invalid_value when a matrix has dim 0 or above
  /// max_dim; incompatible when two layers' embedding dimensions differ, or a
  /// layer's metadata profile declares another dim than its matrix has; the
  /// metadata's parse error (invalid_value, with the layer's path) when a
  /// layer's metadata is not a readable profile; and data errors (with path
  /// and offset) when a chunk's kind string or embedding row is out of range.
  static result<layer_stack> build(std::vector<std::pair<layer_id, layer_reader>> readers);

  /// Opens the files through `fs`; a missing file that is not required is
  /// skipped. Fails with not_found for a missing required file, the reader's
  /// errors, and those of build(). An empty stack is not an error here.
  static result<layer_stack> open(io::file_system& fs, const std::vector<layer_location>& locations);

  /// The layers present, highest precedence first.
  const std::vector<stacked_layer>& layers() const noexcept { return layers_; }
  bool empty() const noexcept { return layers_.empty(); }
  /// Index into layers() of `layer`, if present.
  std::optional<std::size_t> index_of(layer_id layer) const noexcept {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      if (layers_[i].id == layer) return i;
    }
    return std::nullopt;
  }
  /// The layers present among `wanted`.
  layer_set present(layer_set wanted = layer_set::all()) const noexcept {
    layer_set out;
    for (const stacked_layer& layer : layers_) {
      if (wanted.contains(layer.id)) out.add(layer.id);
    }
    return out;
  }
  /// The common embedding dimension (0 for an empty stack).
  std::uint32_t dim() const noexcept { return dim_; }

  // ---- per-chunk facts, computed once by build() ---------------------------
  /// The distinct kinds of layers()[layer_index], in first-seen order.
  const std::vector<std::string_view>& kinds(std::size_t layer_index) const noexcept {
    return facts_[layer_index].kinds;
  }
  /// Index into kinds(layer_index) of the chunk's kind.
  std::uint32_t kind_index(std::size_t layer_index, std::size_t chunk_index) const noexcept {
    return facts_[layer_index].kind_of_chunk[chunk_index];
  }
  /// 0-based embedding row of the chunk.
  std::uint32_t row_index(std::size_t layer_index, std::size_t chunk_index) const noexcept {
    return facts_[layer_index].row_of_chunk[chunk_index];
  }

  /// Which chunks are in effect when searching the layers of `selected`
  /// (see the file comment), one entry per layers() element; layers not in
  /// `selected` get an empty bitset with visible_count() 0. O(total chunks).
  /// Fails with the reader's errors when a tombstone's sources are damaged.
  result<std::vector<layer_visibility>> visibility(layer_set selected) const;

  /// The copies of the id of chunk `chunk_index` of layers()[layer_index] in
  /// lower layers of `selected` whose content differs from it, highest layer
  /// first. Fails with the reader's string errors.
  result<std::vector<overridden_copy>> conflicts(std::size_t layer_index, std::size_t chunk_index,
                                                 layer_set selected) const;

 private:
  struct chunk_facts {
    std::vector<std::string_view> kinds;
    std::vector<std::uint32_t> kind_of_chunk;
    std::vector<std::uint32_t> row_of_chunk;
    std::optional<std::uint32_t> tombstone_kind_index;
  };

  static result<chunk_facts> gather_facts(const layer_reader& reader);

  std::vector<stacked_layer> layers_;
  std::vector<chunk_facts> facts_;
  std::uint32_t dim_ = 0;
};

/// The embedding profile text queries (and appends) over the layers of
/// `selected` must use, and what the caller should warn about.
struct resolved_profile {
  embedding_profile profile;
  bool configured = false;            ///< true: the caller's; false: taken from the layers
  std::vector<std::string> warnings;  ///< one line each, e.g. a layer that records no profile
};

/// Picks the active profile and checks every selected layer against it:
///   - `configured` (the embedder the user configured), when given;
///   - else the profile recorded by the highest selected layer that has one;
///   - else, when no selected layer records a profile (files from older
///     tools), the hash embedder's profile at the layers' dimension, with a
///     warning that the profile is unknown.
/// Every selected layer that records a profile must record exactly the active
/// one; a layer that records none is assumed to match, with a warning.
/// Errors: incompatible, naming both profiles and the layer's file, on a
/// mismatch (a configured profile whose dim differs from the layers'
/// included); not_found when no selected layer is present.
result<resolved_profile> resolve_embedding_profile(const layer_stack& stack, layer_set selected,
                                                   const std::optional<embedding_profile>& configured);

// ---- implementation ---------------------------------------------------------

inline result<layer_stack::chunk_facts> layer_stack::gather_facts(const layer_reader& reader) {
  chunk_facts facts;
  const std::size_t count = reader.chunk_count();
  facts.kind_of_chunk.resize(count);
  facts.row_of_chunk.resize(count);
  const std::uint64_t row_count = reader.embedding_header().row_count;
  // Layers hold a handful of kinds: remember the last string id seen and fall
  // back to a small map, so most chunks cost one compare.
  std::unordered_map<std::uint32_t, std::uint32_t> kind_by_string;
  std::uint32_t last_string = 0;
  std::uint32_t last_kind = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t at = reader.record_offset(i);
    const chunk_record record = reader.record(i);
    const std::uint32_t kind_string = record.kind_str_id;
    if (kind_string != last_string || i == 0) {
      auto [slot, inserted] = kind_by_string.try_emplace(kind_string, static_cast<std::uint32_t>(facts.kinds.size()));
      if (inserted) {
        auto name = reader.string(kind_string);
        if (!name) {
          error e = std::move(name).error();
          e.offset = at + 4;
          return unexpected(std::move(e));
        }
        if (*name == tombstone_kind) facts.tombstone_kind_index = slot->second;
        facts.kinds.push_back(*name);
      }
      last_string = kind_string;
      last_kind = slot->second;
    }
    facts.kind_of_chunk[i] = last_kind;
    const std::uint32_t row = record.embedding_row;
    if (row == 0 || row > row_count) {
      return fail(errc::invalid_id,
                  "chunk " + std::to_string(i) + " has embedding_row " + std::to_string(row) + " outside 1.." +
                      std::to_string(row_count),
                  reader.path(), at + 28);
    }
    facts.row_of_chunk[i] = row - 1;
  }
  return facts;
}

inline result<layer_stack> layer_stack::build(std::vector<std::pair<layer_id, layer_reader>> readers) {
  std::sort(readers.begin(), readers.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  layer_stack stack;
  for (auto& [id, reader] : readers) {
    if (!stack.layers_.empty() && stack.layers_.back().id == id) {
      return fail(errc::invalid_argument, "layer " + std::string(layer_name(id)) + " is given twice", reader.path());
    }
    stacked_layer layer{id, std::move(reader), std::nullopt};
    if (auto metadata = layer.reader.metadata_json()) {
      auto profile = parse_layer_metadata_profile(*metadata);
      if (!profile) {
        error e = std::move(profile).error();
        e.path = layer.reader.path();
        return unexpected(std::move(e));
      }
      layer.profile = std::move(*profile);
    }
    const std::uint32_t dim = layer.reader.embedding_header().dim;
    const std::uint64_t dim_offset =
        layer.reader.sections()[*layer.reader.find_section(section_kind::embedding_matrix)].offset + 8;
    if (dim == 0) return fail(errc::invalid_value, "the embedding matrix has dim 0", layer.reader.path(), dim_offset);
    if (dim > max_dim) {
      return fail(errc::invalid_value,
                  "the embedding matrix has dim " + std::to_string(dim) + "; search supports at most " +
                      std::to_string(max_dim),
                  layer.reader.path(), dim_offset);
    }
    if (layer.profile && layer.profile->dim != dim) {
      return fail(errc::incompatible,
                  "the layer metadata's embedding profile has dim " + std::to_string(layer.profile->dim) +
                      " but the embedding matrix has dim " + std::to_string(dim),
                  layer.reader.path());
    }
    if (stack.layers_.empty()) {
      stack.dim_ = dim;
    } else if (dim != stack.dim_) {
      const stacked_layer& first = stack.layers_.front();
      return fail(errc::incompatible, "layer " + std::string(layer_name(id)) + " has " + std::to_string(dim) +
                                          "-dimensional embeddings but layer " + std::string(layer_name(first.id)) +
                                          " (" + first.reader.path() + ") has " + std::to_string(stack.dim_),
                  layer.reader.path());
    }
    auto facts = gather_facts(layer.reader);
    if (!facts) return unexpected(std::move(facts).error());
    stack.facts_.push_back(std::move(*facts));
    stack.layers_.push_back(std::move(layer));
  }
  return stack;
}

inline result<layer_stack> layer_stack::open(io::file_system& fs, const std::vector<layer_location>& locations) {
  std::vector<std::pair<layer_id, layer_reader>> readers;
  for (const layer_location& location : locations) {
    auto reader = layer_reader::open(fs, location.path);
    if (!reader) {
      if (reader.error().code == errc::not_found && !location.required) continue;
      return unexpected(std::move(reader).error());
    }
    readers.emplace_back(location.id, std::move(*reader));
  }
  return build(std::move(readers));
}

inline result<std::vector<layer_visibility>> layer_stack::visibility(layer_set selected) const {
  std::vector<layer_visibility> out(layers_.size());
  // Ids claimed by a higher selected layer, and ids retracted by a tombstone
  // in a selected layer at or above the current one.
  std::unordered_set<std::uint32_t> claimed;
  std::unordered_set<std::uint32_t> retracted;
  std::size_t last_selected = 0;
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    if (selected.contains(layers_[l].id)) last_selected = l;
  }
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    if (!selected.contains(layers_[l].id)) continue;
    const layer_reader& reader = layers_[l].reader;
    const chunk_facts& facts = facts_[l];
    const std::size_t count = reader.chunk_count();
    if (facts.tombstone_kind_index) {
      for (std::size_t i = 0; i < count; ++i) {
        if (facts.kind_of_chunk[i] != *facts.tombstone_kind_index) continue;
        auto tombstone = reader.chunk(i);
        if (!tombstone) return unexpected(std::move(tombstone).error());
        auto sources = reader.sources(*tombstone);
        if (!sources) return unexpected(std::move(sources).error());
        for (const source_ref& source : *sources) {
          if (source.kind == relationship_kind::source_chunk_id) retracted.insert(source.chunk_id);
        }
      }
    }
    layer_visibility& visibility = out[l];
    visibility.bits_.assign((count + 63) / 64, 0);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t id = load_u32(reader.bytes().data() + reader.record_offset(i));
      if (id == 0 || reader.find_chunk(id) != i) continue;  // invalid, or a repeat within the layer
      if (claimed.contains(id) || retracted.contains(id)) continue;
      visibility.bits_[i >> 6] |= std::uint64_t{1} << (i & 63);
      ++visibility.count_;
    }
    // Only now, so copies within this layer do not hide each other; the
    // lowest selected layer hides nothing.
    if (l == last_selected) break;
    claimed.reserve(claimed.size() + count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t id = load_u32(reader.bytes().data() + reader.record_offset(i));
      if (id != 0) claimed.insert(id);
    }
  }
  return out;
}

inline result<std::vector<overridden_copy>> layer_stack::conflicts(std::size_t layer_index, std::size_t chunk_index,
                                                                   layer_set selected) const {
  std::vector<overridden_copy> out;
  const layer_reader& top = layers_[layer_index].reader;
  auto chunk = top.chunk(chunk_index);
  if (!chunk) return unexpected(std::move(chunk).error());
  for (std::size_t l = layer_index + 1; l < layers_.size(); ++l) {
    if (!selected.contains(layers_[l].id)) continue;
    const layer_reader& reader = layers_[l].reader;
    const auto below = reader.find_chunk(chunk->id);
    if (!below) continue;
    auto copy = reader.chunk(*below);
    if (!copy) return unexpected(std::move(copy).error());
    if (copy->content == chunk->content) continue;
    out.push_back({layers_[l].id, *below, to_hex(sha256(copy->content))});
  }
  return out;
}

inline result<resolved_profile> resolve_embedding_profile(const layer_stack& stack, layer_set selected,
                                                          const std::optional<embedding_profile>& configured) {
  const layer_set present = stack.present(selected);
  if (present.empty()) return fail(errc::not_found, "none of the selected layers is present");
  resolved_profile out;
  const stacked_layer* source = nullptr;  // the layer the active profile came from
  if (configured) {
    out.profile = *configured;
    out.configured = true;
  } else {
    for (const stacked_layer& layer : stack.layers()) {
      if (present.contains(layer.id) && layer.profile) {
        source = &layer;
        out.profile = *layer.profile;
        break;
      }
    }
    if (!source) {
      out.profile = embedding_profile{"hash", std::nullopt, std::nullopt, stack.dim(), "none"};
      out.warnings.push_back("no selected layer records an embedding profile; assuming " + describe(out.profile));
      return out;
    }
  }
  for (const stacked_layer& layer : stack.layers()) {
    if (!present.contains(layer.id)) continue;
    const std::string label = "layer " + std::string(layer_name(layer.id)) + " (" + layer.reader.path() + ")";
    if (!layer.profile) {
      if (layer.reader.embedding_header().dim != out.profile.dim) {
        return fail(errc::incompatible, label + " has " + std::to_string(layer.reader.embedding_header().dim) +
                                            "-dimensional embeddings but the query embedder is " +
                                            describe(out.profile),
                    layer.reader.path());
      }
      if (configured || source) {
        out.warnings.push_back(label + " records no embedding profile; assuming " + describe(out.profile));
      }
      continue;
    }
    if (*layer.profile == out.profile) continue;
    const std::string active = configured ? "the configured embedder " + describe(out.profile)
                                          : describe(out.profile) + " of layer " +
                                                std::string(layer_name(source->id)) + " (" + source->reader.path() +
                                                ")";
    return fail(errc::incompatible,
                label + " was embedded with " + describe(*layer.profile) + ", which differs from " + active,
                layer.reader.path());
  }
  return out;
}

}  // namespace agentctx::agdb
