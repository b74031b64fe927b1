// Test helper: what must hold after several writers appended chunks to one
// layer at the same time (agent writes, agdb::append_chunk). Shared by the
// thread test (agdb/layer_append_concurrency_test.cpp) and the process test
// (cli/agentsdb_write_stress_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agentctx/agdb/layer_contents.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/io/file_system.hpp"

namespace agdb_test {

/// One write as its writer saw it succeed.
struct reported_write {
  std::string content;
  std::uint32_t id = 0;
  std::size_t chunk_count = 0;  ///< chunks in the layer right after this write, as reported
};

/// A distinct content for write `index` of writer `writer`, short like an
/// agent's note (short also keeps 800 rewrites cheap under the sanitizers).
inline std::string agent_note(std::size_t writer, std::size_t index) {
  return "Writer " + std::to_string(writer) + ", note " + std::to_string(index) +
         ": the release job reads its version from the top-level manifest (ops/release.md:14).";
}

/// The layer at `path` in `fs` opens and validates; it holds the chunks of
/// `before` unchanged, then one chunk per write of `writes` (one list per
/// writer, in the order that writer made them) and nothing else:
///   - every id is distinct, from each other and from the chunks before;
///   - every written content is present exactly once, authored by "mcp";
///   - each write's chunk sits at position `chunk_count` - 1 with the id the
///     write reported: every write saw all earlier ones, so none was lost
///     or overwritten by a writer that read the layer before it;
///   - each writer's chunks follow the order in which it wrote them.
/// Returns the layer's contents for further checks.
inline agentctx::agdb::layer_contents check_concurrent_writes(agentctx::io::file_system& fs, const std::string& path,
                                                              const agentctx::agdb::layer_contents& before,
                                                              const std::vector<std::vector<reported_write>>& writes) {
  namespace agdb = agentctx::agdb;
  auto reader = agdb::layer_reader::open(fs, path);
  if (!reader) FAIL(reader.error().describe());
  const std::vector<agdb::violation> problems = agdb::validate(*reader, 8);
  CHECK_MESSAGE(problems.empty(), (problems.empty() ? std::string() : problems.front().message));
  auto contents = agdb::read_layer_contents(*reader);
  if (!contents) FAIL(contents.error().describe());
  const std::vector<agdb::chunk>& chunks = contents->chunks;

  std::size_t write_count = 0;
  for (const auto& writer : writes) write_count += writer.size();
  REQUIRE(chunks.size() == before.chunks.size() + write_count);
  for (std::size_t i = 0; i < before.chunks.size(); ++i) {
    CAPTURE(i);
    CHECK(chunks[i] == before.chunks[i]);
  }
  if (!before.chunks.empty()) {  // the rows of the chunks before, unchanged
    const agdb::embedding_matrix& was = before.embeddings;
    const agdb::embedding_matrix& is = contents->embeddings;
    CHECK(is.dim == was.dim);
    CHECK(is.type == was.type);
    CHECK(is.quant_scale == was.quant_scale);
    const auto starts_with = [](const auto& values, const auto& prefix) {
      return values.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), values.begin());
    };
    CHECK(starts_with(is.f32_values, was.f32_values));
    CHECK(starts_with(is.i8_values, was.i8_values));
  }

  std::set<std::uint32_t> ids;
  std::map<std::string, std::size_t> content_counts;
  for (const agdb::chunk& c : chunks) {
    ids.insert(c.id);
    ++content_counts[c.content];
  }
  CHECK(ids.size() == chunks.size());

  std::set<std::size_t> positions;
  for (std::size_t w = 0; w < writes.size(); ++w) {
    std::size_t previous_position = before.chunks.size();
    for (const reported_write& write : writes[w]) {
      CAPTURE(w);
      CAPTURE(write.content);
      CHECK(content_counts[write.content] == 1);
      REQUIRE(write.chunk_count > before.chunks.size());
      REQUIRE(write.chunk_count <= chunks.size());
      const agdb::chunk& placed = chunks[write.chunk_count - 1];
      CHECK(placed.content == write.content);
      CHECK(placed.id == write.id);
      CHECK(placed.author == "mcp");
      CHECK(write.chunk_count > previous_position);
      previous_position = write.chunk_count;
      positions.insert(write.chunk_count);
    }
  }
  CHECK(positions.size() == write_count);
  return std::move(*contents);
}

}  // namespace agdb_test
