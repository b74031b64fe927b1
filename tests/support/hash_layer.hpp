// Test helpers for the hash embedder: a layer file whose rows are the hash
// embedding (dim 128) of the chunks' contents, as `agentsdb compile` would
// embed them, so that a text query finds the chunk with the same text first;
// and a word that cancels another in one text's embedding.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/file_system.hpp"

namespace test_support {

struct layer_entry {
  std::uint32_t id;
  std::string kind;
  std::string content;
  std::vector<agentctx::agdb::source_ref> sources = {};
};

/// Writes `entries` (author human, confidence 1) to `path` in `fs`, with the
/// hash embedder's profile in the metadata unless `with_metadata` is false.
inline void write_hash_layer(agentctx::io::file_system& fs, const std::string& path,
                             const std::vector<layer_entry>& entries, bool with_metadata = true) {
  namespace agdb = agentctx::agdb;
  agdb::hash_embedder embedder(128);
  agdb::layer_contents layer;
  if (with_metadata) layer.metadata_json = agdb::layer_metadata_json(embedder.profile(), "test", "1");
  layer.embeddings.dim = 128;
  std::vector<std::string_view> texts;
  for (const layer_entry& e : entries) {
    agdb::chunk chunk;
    chunk.id = e.id;
    chunk.kind = e.kind;
    chunk.content = e.content;
    chunk.author = "human";
    chunk.sources = e.sources;
    layer.chunks.push_back(chunk);
    texts.push_back(e.content);
  }
  layer.embeddings.f32_values.resize(texts.size() * 128);
  REQUIRE(embedder.embed(texts, layer.embeddings.f32_values).has_value());
  auto written = agdb::write_layer(fs, path, layer);
  INFO((written ? std::string() : written.error().describe()));
  REQUIRE(written.has_value());
}

/// The contents of the layer at `path`, which must validate.
inline agentctx::agdb::layer_contents read_valid_layer(agentctx::io::file_system& fs, const std::string& path) {
  namespace agdb = agentctx::agdb;
  auto reader = agdb::layer_reader::open(fs, path);
  REQUIRE(reader.has_value());
  CHECK(agdb::validate(*reader, 8).empty());
  auto contents = agdb::read_layer_contents(*reader);
  REQUIRE(contents.has_value());
  return std::move(*contents);
}

/// The bytes of the file at `path`.
inline std::vector<std::byte> file_bytes(agentctx::io::file_system& fs, const std::string& path) {
  auto mapped = fs.map(path);
  REQUIRE(mapped.has_value());
  return {mapped->bytes().begin(), mapped->bytes().end()};
}

/// A word ("c0", "c1", ...) whose hash embedder bucket at `dim` is `word`'s,
/// with the other sign: in one text the two cancel out.
inline std::string cancelling_word(std::string_view word, std::size_t dim = 128) {
  const agentctx::agdb::detail::bucket_of_hash bucket(dim);
  const std::uint32_t h = agentctx::agdb::fnv1a32(word);
  for (int i = 0;; ++i) {
    std::string candidate = "c" + std::to_string(i);
    const std::uint32_t c = agentctx::agdb::fnv1a32(candidate);
    if (bucket(c) == bucket(h) && ((c ^ h) & 0x80000000u) != 0) return candidate;
  }
}

}  // namespace test_support
