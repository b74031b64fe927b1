// agentctx/agdb/layer_summary.hpp: what `agentsdb inspect` reports about a
// layer, computed by the library so every frontend shows the same facts.
//
// summarize_layer() walks the chunk table once (no embedding values are
// read); describe_chunk() resolves one chunk in full. Both return errors for
// damaged strings or relationships instead of guessing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/layer_reader.hpp"

namespace agentctx::agdb {

/// A name and how many chunks carry it.
struct name_count {
  std::string name;
  std::uint64_t count = 0;
  friend bool operator==(const name_count&, const name_count&) = default;
};

struct layer_summary {
  std::uint64_t file_size = 0;
  file_header header;
  std::vector<section_entry> sections;  ///< in file-table order
  std::uint64_t string_count = 0;
  std::uint64_t chunk_count = 0;
  std::uint64_t relationship_count = 0;
  std::vector<name_count> kinds;    ///< most frequent first, then by name
  std::vector<name_count> authors;  ///< most frequent first, then by name
  embedding_matrix_header embeddings;
  std::optional<std::string> metadata_json;
  /// The embedding profile parsed from the metadata; empty when the layer has
  /// no metadata or it does not parse (see profile_error).
  std::optional<embedding_profile> profile;
  std::string profile_error;
  /// Range of created_at_unix_ms over the chunks (both 0 for an empty layer).
  std::uint64_t created_min_unix_ms = 0;
  std::uint64_t created_max_unix_ms = 0;
};

/// One chunk resolved in full.
struct chunk_details {
  chunk_view chunk;
  std::vector<source_ref> sources;
  double embedding_norm = 0.0;  ///< L2 norm of the dequantised row
};

namespace detail {
inline std::vector<name_count> sorted_counts(const std::unordered_map<std::string_view, std::uint64_t>& counts) {
  std::vector<name_count> out;
  out.reserve(counts.size());
  for (const auto& [name, count] : counts) out.push_back({std::string(name), count});
  std::sort(out.begin(), out.end(), [](const name_count& a, const name_count& b) {
    return a.count != b.count ? a.count > b.count : a.name < b.name;
  });
  return out;
}
}  // namespace detail

/// Counts, kinds, authors, embedding schema and metadata of a layer.
/// Errors: the first damaged string reference (errc::invalid_id, out_of_bounds).
inline result<layer_summary> summarize_layer(const layer_reader& reader) {
  layer_summary s;
  s.file_size = reader.bytes().size();
  s.header = reader.header();
  s.sections.assign(reader.sections().begin(), reader.sections().end());
  s.string_count = reader.string_count();
  s.chunk_count = reader.chunk_count();
  s.relationship_count = reader.relationship_count();
  s.embeddings = reader.embedding_header();
  if (auto json = reader.metadata_json()) {
    s.metadata_json = std::string(*json);
    auto profile = parse_layer_metadata_profile(*json);
    if (profile) {
      s.profile = std::move(*profile);
    } else {
      s.profile_error = profile.error().message;
    }
  }
  // Count by string id first (no hashing of content), then resolve names once.
  std::unordered_map<std::uint32_t, std::uint64_t> kind_ids, author_ids;
  for (std::size_t i = 0; i < reader.chunk_count(); ++i) {
    const chunk_record r = reader.record(i);
    ++kind_ids[r.kind_str_id];
    ++author_ids[r.author_str_id];
    if (i == 0) {
      s.created_min_unix_ms = s.created_max_unix_ms = r.created_at_unix_ms;
    } else {
      s.created_min_unix_ms = std::min(s.created_min_unix_ms, r.created_at_unix_ms);
      s.created_max_unix_ms = std::max(s.created_max_unix_ms, r.created_at_unix_ms);
    }
  }
  auto resolve = [&](const std::unordered_map<std::uint32_t, std::uint64_t>& ids)
      -> result<std::vector<name_count>> {
    std::unordered_map<std::string_view, std::uint64_t> by_name;
    for (const auto& [id, count] : ids) {
      auto name = reader.string(id);
      if (!name) return unexpected(std::move(name).error());
      by_name[*name] += count;
    }
    return detail::sorted_counts(by_name);
  };
  auto kinds = resolve(kind_ids);
  if (!kinds) return unexpected(std::move(kinds).error());
  s.kinds = std::move(*kinds);
  auto authors = resolve(author_ids);
  if (!authors) return unexpected(std::move(authors).error());
  s.authors = std::move(*authors);
  return s;
}

/// The chunk with `id`, its sources and the norm of its embedding row.
/// Errors: errc::not_found when no chunk has that id; data errors otherwise.
inline result<chunk_details> describe_chunk(const layer_reader& reader, std::uint32_t id) {
  auto index = reader.find_chunk(id);
  if (!index) return fail(errc::not_found, "no chunk with id " + std::to_string(id), reader.path());
  chunk_details d;
  auto view = reader.chunk(*index);
  if (!view) return unexpected(std::move(view).error());
  d.chunk = *view;
  auto sources = reader.sources(*view);
  if (!sources) return unexpected(std::move(sources).error());
  d.sources = std::move(*sources);
  auto row = reader.row(view->embedding_row);
  if (!row) return unexpected(std::move(row).error());
  double sum = 0.0;
  for (std::uint32_t i = 0; i < row->dim(); ++i) {
    const double v = (*row)[i];
    sum += v * v;
  }
  d.embedding_norm = std::sqrt(sum);
  return d;
}

}  // namespace agentctx::agdb
