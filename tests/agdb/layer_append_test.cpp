// Tests of agdb::append_chunk (agentctx/agdb/layer_append.hpp): agent writes
// to the local and delta layers, against the in-memory file system, and
// concurrent writers on the real disk.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "io/io_test_support.hpp"
#include "support/hash_layer.hpp"

namespace agdb_layer_append_test {

namespace agdb = agentctx::agdb;
using agdb::layer_id;
using agentctx::errc;

namespace {

const std::vector<agdb::layer_location> layers = agdb::standard_layer_locations("/repo");

agdb::chunk_write note(std::string content, layer_id scope = layer_id::local) {
  agdb::chunk_write w;
  w.scope = scope;
  w.content = std::move(content);
  w.kind = "derived-summary";
  w.confidence = 0.7f;
  w.sources = {agdb::source_ref::to_string("docs/ARCHITECTURE.md:12")};
  w.created_at_unix_ms = 1'700'000'000'000;
  return w;
}

using test_support::read_valid_layer;

// A layer at `path` holding `ids` (content "chunk <id>"), rows of the hash
// embedder at dim 128, with or without its metadata.
void write_layer_with(agentctx::io::file_system& fs, const std::string& path, const std::vector<std::uint32_t>& ids,
                      std::optional<agdb::embedding_profile> profile = agdb::hash_embedding_profile(128),
                      agdb::element_type type = agdb::element_type::f32) {
  agdb::hash_embedder embedder(128);
  agdb::layer_contents layer;
  if (profile) layer.metadata_json = agdb::layer_metadata_json(*profile, "test", "1");
  layer.embeddings.dim = 128;
  std::vector<float> values;
  for (const std::uint32_t id : ids) {
    agdb::chunk c;
    c.id = id;
    c.kind = "canonical";
    c.content = "chunk " + std::to_string(id);
    c.author = "human";
    layer.chunks.push_back(c);
    std::vector<float> row(128);
    const std::string_view text = layer.chunks.back().content;
    REQUIRE(embedder.embed(std::span(&text, 1), row).has_value());
    values.insert(values.end(), row.begin(), row.end());
  }
  if (type == agdb::element_type::i8) {
    layer.embeddings.type = type;
    layer.embeddings.quant_scale = agdb::choose_i8_scale(values);
    layer.embeddings.i8_values = agdb::quantize_i8(values, layer.embeddings.quant_scale);
  } else {
    layer.embeddings.f32_values = values;
  }
  REQUIRE(fs.create_dir("/repo").has_value());
  REQUIRE(agdb::write_layer(fs, path, layer).has_value());
}

std::uint32_t first_candidate(const std::string& content, std::uint64_t attempt = 0) {
  agentctx::sha256_hasher hasher;
  return agdb::detail::chunk_id_assigner::candidate(hasher, "", content, attempt);
}

}  // namespace

TEST_CASE("append_chunk: the first write creates the layer; later writes keep every record as it was") {
  agentctx::io::memory_file_system fs;
  REQUIRE(fs.create_dir("/repo").has_value());
  agdb::hash_embedder embedder(128);
  auto first = agdb::append_chunk(fs, layers, note("The repo uses X for Y; entrypoint is Z."), embedder);
  REQUIRE(first.has_value());
  CHECK(first->created);
  CHECK(first->path == "/repo/AGENTS.local.db");
  CHECK(first->chunk_count == 1);
  CHECK(first->id == first_candidate("The repo uses X for Y; entrypoint is Z."));

  const agdb::layer_contents after_first = read_valid_layer(fs, first->path);
  REQUIRE(after_first.chunks.size() == 1);
  const agdb::chunk& c = after_first.chunks[0];
  CHECK(c.id == first->id);
  CHECK(c.author == "mcp");
  CHECK(c.kind == "derived-summary");
  CHECK(c.confidence == 0.7f);
  CHECK(c.created_at_unix_ms == 1'700'000'000'000);
  CHECK(c.sources == std::vector<agdb::source_ref>{agdb::source_ref::to_string("docs/ARCHITECTURE.md:12")});
  REQUIRE(after_first.metadata_json.has_value());
  CHECK(*after_first.metadata_json == agdb::layer_metadata_json(embedder.profile(), "agentctx", "0.1.0"));
  std::vector<float> expected(128);
  const std::string_view text = c.content;
  REQUIRE(embedder.embed(std::span(&text, 1), expected).has_value());
  CHECK(after_first.embeddings.f32_values == expected);

  auto second = agdb::append_chunk(fs, layers, note("A second note, citing the first.", layer_id::local), embedder);
  REQUIRE(second.has_value());
  CHECK_FALSE(second->created);
  CHECK(second->chunk_count == 2);
  const agdb::layer_contents after_second = read_valid_layer(fs, first->path);
  REQUIRE(after_second.chunks.size() == 2);
  CHECK(after_second.chunks[0] == after_first.chunks[0]);
  CHECK(std::vector<float>(after_second.embeddings.f32_values.begin(), after_second.embeddings.f32_values.begin() + 128) ==
        after_first.embeddings.f32_values);
  CHECK(after_second.metadata_json == after_first.metadata_json);
}

TEST_CASE("append_chunk: ids never collide with an id in any of the four layers, and are deterministic") {
  agentctx::io::memory_file_system fs;
  const std::string content = "Invariant: requests to /foo MUST include header Bar.";
  const std::uint32_t taken = first_candidate(content);
  write_layer_with(fs, "/repo/AGENTS.db", {taken});  // base holds the first candidate
  agdb::hash_embedder embedder(128);
  auto written = agdb::append_chunk(fs, layers, note(content, layer_id::delta), embedder);
  REQUIRE(written.has_value());
  CHECK(written->id == first_candidate(content, 1));
  // The same content again gets the next free candidate, in the other layer too.
  auto again = agdb::append_chunk(fs, layers, note(content, layer_id::local), embedder);
  REQUIRE(again.has_value());
  CHECK(again->id == first_candidate(content, 2));
  // A chunk-id source must name a chunk of some layer.
  agdb::chunk_write citing = note("Derived from the invariant.");
  citing.sources = {agdb::source_ref::to_chunk(written->id), agdb::source_ref::to_chunk(taken)};
  CHECK(agdb::append_chunk(fs, layers, citing, embedder).has_value());
  citing.sources = {agdb::source_ref::to_chunk(12345)};
  auto missing = agdb::append_chunk(fs, layers, citing, embedder);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message == "source chunk 12345 is in none of the layers");
}

TEST_CASE("append_chunk: requests that break a rule are refused and write nothing") {
  agentctx::io::memory_file_system fs;
  REQUIRE(fs.create_dir("/repo").has_value());
  agdb::hash_embedder embedder(128);
  struct bad_case {
    const char* name;
    agdb::chunk_write write;
    std::string message;
  };
  const auto with = [](auto change) {
    agdb::chunk_write w = note("content");
    change(w);
    return w;
  };
  const std::vector<bad_case> cases = {
      {"base", with([](auto& w) { w.scope = layer_id::base; }), "agents write to the local or delta layer, not base"},
      {"user", with([](auto& w) { w.scope = layer_id::user; }), "agents write to the local or delta layer, not user"},
      {"no kind", with([](auto& w) { w.kind = ""; }), "the kind is empty"},
      {"options", with([](auto& w) { w.kind = "options"; }),
       "the kind 'options' is reserved (options, tombstone and meta.* are not agent writes)"},
      {"meta", with([](auto& w) { w.kind = "meta.proposal_event"; }),
       "the kind 'meta.proposal_event' is reserved (options, tombstone and meta.* are not agent writes)"},
      {"tombstone", with([](auto& w) { w.kind = "tombstone"; }),
       "the kind 'tombstone' is reserved (options, tombstone and meta.* are not agent writes)"},
      {"bad kind", with([](auto& w) { w.kind = "\xff"; }), "the kind is not valid UTF-8"},
      {"empty", with([](auto& w) { w.content = ""; }), "the content is empty"},
      {"too large", with([](auto& w) { w.content = std::string(64 * 1024 + 1, 'x'); }),
       "the content has 65537 bytes; at most 65536 are allowed"},
      {"not UTF-8", with([](auto& w) { w.content = "caf\xe9"; }), "the content is not valid UTF-8"},
      {"no confidence", with([](auto& w) { w.confidence = std::numeric_limits<float>::quiet_NaN(); }),
       "the confidence must be a number from 0 to 1"},
      {"negative", with([](auto& w) { w.confidence = -0.01f; }), "the confidence must be a number from 0 to 1"},
      {"above 1", with([](auto& w) { w.confidence = 1.01f; }), "the confidence must be a number from 0 to 1"},
      {"infinite", with([](auto& w) { w.confidence = INFINITY; }), "the confidence must be a number from 0 to 1"},
      {"too many sources", with([](auto& w) { w.sources.assign(65, agdb::source_ref::to_string("a.md:1")); }),
       "there are 65 sources; at most 64 are allowed"},
      {"chunk 0", with([](auto& w) { w.sources = {agdb::source_ref::to_chunk(0)}; }),
       "source chunk id 0 is not a chunk id"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.name);
    auto written = agdb::append_chunk(fs, layers, c.write, embedder);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().code == errc::invalid_argument);
    CHECK(written.error().message == c.message);
  }
  for (const char* source : {"README.md", ":3", "a.md:0", "a.md:", "a.md:x1", "a.md:1\n", "a\nb.md:1",
                             "a.md:1234567890", "a.md:-1"}) {
    CAPTURE(source);
    agdb::chunk_write w = note("content");
    w.sources = {agdb::source_ref::to_string(source)};
    auto written = agdb::append_chunk(fs, layers, w, embedder);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().message.find("is neither a chunk id nor file:line") != std::string::npos);
  }
  for (const char* source : {"a.md:1", "src/x/y.rs:88", "C:/w/a.md:7", "a b.md:123456789"}) {
    CAPTURE(source);
    agdb::chunk_write w = note("content");
    w.sources = {agdb::source_ref::to_string(source)};
    CHECK(agdb::check_chunk_write(w).has_value());
  }
  CHECK_FALSE(fs.exists("/repo/AGENTS.local.db").value());
}

TEST_CASE("append_chunk: the layers' profile must be the embedder's; a damaged layer is never rewritten") {
  agdb::hash_embedder embedder(128);
  SUBCASE("a layer embedded by another model") {
    agentctx::io::memory_file_system fs;
    write_layer_with(fs, "/repo/AGENTS.db", {7}, agdb::embedding_profile{"candle", "all-minilm-l6-v2", "main", 128, "none"});
    auto written = agdb::append_chunk(fs, layers, note("x"), embedder);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().code == errc::incompatible);
    CHECK(written.error().message.find("candle:all-minilm-l6-v2@main") != std::string::npos);
    CHECK_FALSE(fs.exists("/repo/AGENTS.local.db").value());
  }
  SUBCASE("another dimension") {
    agentctx::io::memory_file_system fs;
    write_layer_with(fs, "/repo/AGENTS.db", {7});
    agdb::hash_embedder other(64);
    auto written = agdb::append_chunk(fs, layers, note("x"), other);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().code == errc::incompatible);
  }
  SUBCASE("a damaged target") {
    agentctx::io::memory_file_system fs;
    write_layer_with(fs, "/repo/AGENTS.local.db", {7, 8});
    auto mapped = fs.map("/repo/AGENTS.local.db");
    REQUIRE(mapped.has_value());
    std::vector<std::byte> bytes(mapped->data(), mapped->data() + mapped->size());
    bytes[32] = std::byte{1};  // FileHeaderV1.flags, which must be 0
    {
      auto file = fs.open("/repo/AGENTS.local.db", {.write = true, .truncate = true});
      REQUIRE(file.has_value());
      REQUIRE((*file)->append(bytes).has_value());
    }
    auto written = agdb::append_chunk(fs, layers, note("x"), embedder);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().path == "/repo/AGENTS.local.db");
    auto after = fs.map("/repo/AGENTS.local.db");
    REQUIRE(after.has_value());
    CHECK(std::vector<std::byte>(after->data(), after->data() + after->size()) == bytes);
  }
}

TEST_CASE("append_chunk: an i8 layer quantises the new row with its own scale, old rows unchanged") {
  agentctx::io::memory_file_system fs;
  write_layer_with(fs, "/repo/AGENTS.delta.db", {1, 2, 3}, agdb::hash_embedding_profile(128), agdb::element_type::i8);
  const agdb::layer_contents before = read_valid_layer(fs, "/repo/AGENTS.delta.db");
  agdb::hash_embedder embedder(128);
  auto written = agdb::append_chunk(fs, layers, note("a new delta note", layer_id::delta), embedder);
  REQUIRE(written.has_value());
  const agdb::layer_contents after = read_valid_layer(fs, "/repo/AGENTS.delta.db");
  CHECK(after.embeddings.type == agdb::element_type::i8);
  CHECK(after.embeddings.quant_scale == before.embeddings.quant_scale);
  REQUIRE(after.embeddings.i8_values.size() == 4 * 128);
  CHECK(std::vector<std::int8_t>(after.embeddings.i8_values.begin(), after.embeddings.i8_values.begin() + 3 * 128) ==
        before.embeddings.i8_values);
  std::vector<float> row(128);
  const std::string_view text = "a new delta note";
  REQUIRE(embedder.embed(std::span(&text, 1), row).has_value());
  CHECK(std::vector<std::int8_t>(after.embeddings.i8_values.begin() + 3 * 128, after.embeddings.i8_values.end()) ==
        agdb::quantize_i8(row, before.embeddings.quant_scale));
}

TEST_CASE("append_chunk: concurrent writers on the real disk lose nothing") {
  io_test::temporary_directory dir;
  const std::vector<agdb::layer_location> disk_layers = agdb::standard_layer_locations(dir.path());
  constexpr int threads = 4;
  constexpr int writes_per_thread = 8;
  std::vector<std::thread> workers;
  std::vector<int> failures(threads, 0);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      agdb::hash_embedder embedder(128);
      for (int i = 0; i < writes_per_thread; ++i) {
        agdb::chunk_write w = note("note " + std::to_string(t) + "." + std::to_string(i));
        if (!agdb::append_chunk(agentctx::io::default_file_system(), disk_layers, w, embedder)) ++failures[t];
      }
    });
  }
  for (auto& worker : workers) worker.join();
  CHECK(failures == std::vector<int>(threads, 0));
  const agdb::layer_contents result = read_valid_layer(agentctx::io::default_file_system(), dir.path() + "/AGENTS.local.db");
  REQUIRE(result.chunks.size() == threads * writes_per_thread);
  std::set<std::uint32_t> ids;
  std::set<std::string> contents;
  for (const agdb::chunk& c : result.chunks) {
    ids.insert(c.id);
    contents.insert(c.content);
  }
  CHECK(ids.size() == result.chunks.size());
  CHECK(contents.size() == result.chunks.size());
}

}  // namespace agdb_layer_append_test
