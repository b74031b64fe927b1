#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "agdb/source_tree.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_compiler.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/result_checks.hpp"

namespace agdb_layer_compiler_test {

using agentctx::errc;
using agentctx::agdb::compile_layer;
using agentctx::agdb::compile_options;
using agentctx::agdb::compile_summary;
using agentctx::agdb::element_type;
using agentctx::agdb::hash_embedder;
using agentctx::agdb::layer_contents;
using agentctx::agdb::source_ref;

using agdb_test::temporary_directory;
using agdb_test::write_source;

namespace {

using source_file = std::pair<std::string, std::string>;

const std::vector<source_file>& corpus() {
  static const std::vector<source_file> files = {
      {"AGENTS.md", "# Agents\n\nRead the docs first.\n\n## Build\n\nRun `cmake --build build`.\n"},
      {"docs/guide.md", "# Guide\r\nIntro text.\r\n\r\n```sh\r\n# not a heading\r\n```\r\n\r\n# Second\r\nMore.\r\n"},
      {"docs/notes/deep.md", "Setext title\n============\n\nBody with \xC3\xA9\xE2\x82\xAC.\n"},
      {"docs/empty.md", ""},
      {"README.txt", "not included\n"},
  };
  return files;
}

compile_options options_for(const std::string& root) {
  compile_options options;
  options.root = root;
  options.includes = {"AGENTS.md", "docs/**/*.md"};
  options.tool_version = "0.1.0";
  return options;
}

std::vector<std::byte> compile_to_bytes(const compile_options& options, compile_summary* summary = nullptr) {
  agentctx::io::memory_file_system fs;
  hash_embedder embedder(64);
  auto compiled = compile_layer(fs, options, embedder, "AGENTS.db");
  REQUIRE_MESSAGE(compiled.has_value(), test_support::error_text(compiled));
  if (summary != nullptr) *summary = *compiled;
  auto bytes = fs.read_whole("AGENTS.db");
  REQUIRE(bytes.has_value());
  CHECK(compiled->output_bytes == bytes->size());
  return *bytes;
}

layer_contents read_valid_layer(const std::vector<std::byte>& bytes) {
  auto reader = agentctx::agdb::layer_reader::from_bytes(bytes, "AGENTS.db");
  REQUIRE_MESSAGE(reader.has_value(), test_support::error_text(reader));
  const auto violations = agentctx::agdb::validate(*reader);
  for (const auto& v : violations) FAIL_CHECK(v.message);
  auto contents = agentctx::agdb::read_layer_contents(*reader);
  REQUIRE(contents.has_value());
  return std::move(*contents);
}

std::uint32_t expected_id(std::string_view path, std::string_view content) {
  std::string message(path);
  message.push_back('\0');
  message.append(content);
  return agentctx::load_u32(agentctx::sha256(message).data());
}

}  // namespace

TEST_CASE("compile_layer: chunks, sources, ids, embeddings and metadata") {
  temporary_directory dir;
  for (const auto& [path, text] : corpus()) write_source(dir.path(), path, text);
  compile_summary summary;
  const layer_contents layer = read_valid_layer(compile_to_bytes(options_for(dir.path()), &summary));

  struct expected_chunk {
    std::string source;
    std::string content;
  };
  const std::vector<expected_chunk> expected = {
      {"AGENTS.md:1", "# Agents\n\nRead the docs first."},
      {"AGENTS.md:5", "## Build\n\nRun `cmake --build build`."},
      {"docs/guide.md:1", "# Guide\nIntro text.\n\n```sh\n# not a heading\n```"},
      {"docs/guide.md:8", "# Second\nMore."},
      {"docs/notes/deep.md:1", "Setext title\n============\n\nBody with \xC3\xA9\xE2\x82\xAC."},
  };
  REQUIRE(layer.chunks.size() == expected.size());
  hash_embedder embedder(64);
  std::vector<float> row(64);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    const auto& c = layer.chunks[i];
    CHECK(c.content == expected[i].content);
    REQUIRE(c.sources.size() == 1);
    CHECK(c.sources[0] == source_ref::to_string(expected[i].source));
    CHECK(c.kind == "canonical");
    CHECK(c.author == "human");
    CHECK(c.confidence == 1.0f);
    CHECK(c.created_at_unix_ms == 0);
    const std::string path = expected[i].source.substr(0, expected[i].source.rfind(':'));
    CHECK(c.id == expected_id(path, c.content));
    agentctx::agdb::hash_embed(c.content, row);
    for (std::size_t k = 0; k < row.size(); ++k) CHECK(layer.embeddings.f32_values[i * 64 + k] == row[k]);
  }
  CHECK(layer.embeddings.type == element_type::f32);
  CHECK(layer.embeddings.quant_scale == 1.0f);
  REQUIRE(layer.metadata_json.has_value());
  CHECK(*layer.metadata_json ==
        agentctx::agdb::layer_metadata_json(agentctx::agdb::hash_embedding_profile(64), "agentsdb", "0.1.0"));

  CHECK(summary.files == 4);
  CHECK(summary.skipped.empty());
  CHECK(summary.chunks == expected.size());
  std::uint64_t input = 0;
  for (const auto& [path, text] : corpus()) {
    if (path != "README.txt") input += text.size();
  }
  CHECK(summary.input_bytes == input);
}

TEST_CASE("compile_layer: the output is byte-identical across runs and file creation orders") {
  temporary_directory first;
  temporary_directory second;
  const auto& files = corpus();
  for (auto it = files.begin(); it != files.end(); ++it) write_source(first.path(), it->first, it->second);
  for (auto it = files.rbegin(); it != files.rend(); ++it) write_source(second.path(), it->first, it->second);
  // More files than a directory lists in creation order, created in opposite orders.
  auto write_numbered = [](const temporary_directory& dir, int i) {
    write_source(dir.path(), "docs/many/" + std::to_string(i) + ".md", "# File " + std::to_string(i) + "\n\ntext\n");
  };
  for (int i = 0; i < 40; ++i) {
    write_numbered(first, i);
    write_numbered(second, 39 - i);
  }
  const auto a = compile_to_bytes(options_for(first.path()));
  const auto b = compile_to_bytes(options_for(first.path()));
  const auto c = compile_to_bytes(options_for(second.path()));
  CHECK(a == b);
  CHECK(a == c);
  // The root's own path leaves no trace, and neither does the pattern order.
  compile_options reordered = options_for(second.path() + "/");
  reordered.includes = {"docs/**/*.md", "AGENTS.md", "**/AGENTS.md"};
  CHECK(compile_to_bytes(reordered) == a);
}

TEST_CASE("compile_layer: i8 output uses a scale computed from the data") {
  temporary_directory dir;
  for (const auto& [path, text] : corpus()) write_source(dir.path(), path, text);
  compile_options options = options_for(dir.path());
  const layer_contents f32 = read_valid_layer(compile_to_bytes(options));
  options.element = element_type::i8;
  const layer_contents i8 = read_valid_layer(compile_to_bytes(options));

  REQUIRE(i8.embeddings.type == element_type::i8);
  const float scale = i8.embeddings.quant_scale;
  CHECK(scale == agentctx::agdb::choose_i8_scale(f32.embeddings.f32_values));
  CHECK(scale < 1.0f / 100.0f);  // unit vectors: max |x| / 127, never 1.0
  REQUIRE(i8.embeddings.i8_values.size() == f32.embeddings.f32_values.size());
  CHECK(i8.embeddings.i8_values == agentctx::agdb::quantize_i8(f32.embeddings.f32_values, scale));
  int largest = 0;
  for (std::size_t k = 0; k < i8.embeddings.i8_values.size(); ++k) {
    const float restored = static_cast<float>(i8.embeddings.i8_values[k]) * scale;
    CHECK(std::fabs(restored - f32.embeddings.f32_values[k]) <= scale * 0.5f + 1e-6f);
    largest = std::max(largest, std::abs(static_cast<int>(i8.embeddings.i8_values[k])));
  }
  CHECK(largest == 127);
  REQUIRE(i8.chunks.size() == f32.chunks.size());
  for (std::size_t i = 0; i < i8.chunks.size(); ++i) CHECK(i8.chunks[i] == f32.chunks[i]);
}

TEST_CASE("compile_layer: binary and non-UTF-8 files are skipped and reported") {
  temporary_directory dir;
  const std::string fine = "# Fine\ntext\n";
  const std::string binary("PK\x03\x04\0\0binary", 12);
  const std::string bad_utf8 = "caf\xC3\xA9 ok, then \xFF bad\n";
  const std::string also_fine = "# Also fine\n";
  write_source(dir.path(), "a.md", fine);
  write_source(dir.path(), "b.md", binary);
  write_source(dir.path(), "c.md", bad_utf8);
  write_source(dir.path(), "d.md", also_fine);
  compile_options options;
  options.root = dir.path();
  options.includes = {"*.md"};
  std::vector<std::tuple<std::size_t, std::size_t, std::uint64_t>> progress;
  agentctx::io::memory_file_system fs;
  hash_embedder embedder(32);
  auto summary = compile_layer(fs, options, embedder, "out.db",
                               [&](std::size_t done, std::size_t total, std::uint64_t bytes) {
                                 progress.emplace_back(done, total, bytes);
                               });
  REQUIRE_MESSAGE(summary.has_value(), test_support::error_text(summary));
  CHECK(summary->files == 2);
  CHECK(summary->chunks == 2);
  REQUIRE(summary->skipped.size() == 2);
  CHECK(summary->skipped[0].path == "b.md");
  CHECK(summary->skipped[0].reason == "binary (NUL byte at offset 4)");
  CHECK(summary->skipped[1].path == "c.md");
  CHECK(summary->skipped[1].reason == "not valid UTF-8 (byte 15)");
  CHECK(summary->input_bytes == fine.size() + also_fine.size());
  const std::size_t after_b = fine.size() + binary.size();
  const std::vector<std::tuple<std::size_t, std::size_t, std::uint64_t>> expected_progress = {
      {1, 4, fine.size()},
      {2, 4, after_b},
      {3, 4, after_b + bad_utf8.size()},
      {4, 4, after_b + bad_utf8.size() + also_fine.size()}};
  CHECK(progress == expected_progress);

  auto bytes = fs.read_whole("out.db");
  REQUIRE(bytes.has_value());
  const layer_contents layer = read_valid_layer(*bytes);
  REQUIRE(layer.chunks.size() == 2);
  CHECK(layer.chunks[0].sources[0].text == "a.md:1");
  CHECK(layer.chunks[1].sources[0].text == "d.md:1");
}

TEST_CASE("compile_layer: inline texts, kind and chunk size") {
  temporary_directory dir;
  write_source(dir.path(), "AGENTS.md", "# One\n\nfirst paragraph\n\nsecond paragraph\n");
  compile_options options;
  options.root = dir.path();
  options.includes = {"AGENTS.md"};
  options.texts = {"an inline note", "an inline note", "   "};
  options.kind = "options";
  options.chunking.max_chunk_bytes = 24;
  options.embed_batch_size = 1;
  const layer_contents layer = read_valid_layer(compile_to_bytes(options));
  REQUIRE(layer.chunks.size() == 4);
  CHECK(layer.chunks[0].content == "# One\n\nfirst paragraph");
  CHECK(layer.chunks[0].sources[0].text == "AGENTS.md:1");
  CHECK(layer.chunks[1].content == "second paragraph");
  CHECK(layer.chunks[1].sources[0].text == "AGENTS.md:5");
  for (const auto& c : layer.chunks) CHECK(c.kind == "options");
  // Inline texts name no file: no source; equal texts get distinct ids, the
  // second one by the documented rehash.
  CHECK(layer.chunks[2].content == "an inline note");
  CHECK(layer.chunks[2].sources.empty());
  CHECK(layer.chunks[2].id == expected_id("", "an inline note"));
  CHECK(layer.chunks[3].content == "an inline note");
  CHECK(layer.chunks[3].id == expected_id("", std::string("an inline note\0" "1", 16)));
}

TEST_CASE("compile_layer: an existing output is replaced whole") {
  temporary_directory dir;
  write_source(dir.path(), "AGENTS.md", "# Agents\n");
  agentctx::io::memory_file_system fs;
  REQUIRE(fs.write_whole("AGENTS.db", std::string_view("old contents that are not a layer")).has_value());
  hash_embedder embedder(16);
  compile_options options;
  options.root = dir.path();
  options.includes = {"AGENTS.md"};
  REQUIRE(compile_layer(fs, options, embedder, "AGENTS.db").has_value());
  auto bytes = fs.read_whole("AGENTS.db");
  REQUIRE(bytes.has_value());
  const layer_contents layer = read_valid_layer(*bytes);
  REQUIRE(layer.chunks.size() == 1);
  CHECK(layer.chunks[0].content == "# Agents");
  auto names = fs.list_dir(".");
  REQUIRE(names.has_value());
  CHECK(*names == std::vector<std::string>{"AGENTS.db"});
}

TEST_CASE("compile_layer: errors") {
  temporary_directory dir;
  write_source(dir.path(), "AGENTS.md", "# Agents\n");
  agentctx::io::memory_file_system fs;
  hash_embedder embedder(16);
  auto error_of = [&](const compile_options& options) {
    auto compiled = compile_layer(fs, options, embedder, "AGENTS.db");
    REQUIRE_FALSE(compiled.has_value());
    return compiled.error().code;
  };
  compile_options options;
  options.root = dir.path();
  CHECK(error_of(options) == errc::invalid_argument);  // nothing to compile
  options.includes = {"missing.md"};
  CHECK(error_of(options) == errc::not_found);
  options.includes = {"/abs.md"};
  CHECK(error_of(options) == errc::invalid_argument);
  options.includes = {"AGENTS.md"};
  options.kind = "";
  CHECK(error_of(options) == errc::invalid_argument);
  options.kind = "canonical";
  options.chunking.max_chunk_bytes = 3;
  CHECK(error_of(options) == errc::invalid_argument);
  options.chunking.max_chunk_bytes = 2048;
  options.embed_batch_size = 0;
  CHECK(error_of(options) == errc::invalid_argument);
  options.embed_batch_size = 8;
  options.texts = {"bad \xFF text"};
  CHECK(error_of(options) == errc::invalid_utf8);
  options.texts.clear();
  options.root = dir.path() + "/absent";
  CHECK(error_of(options) == errc::not_found);
  CHECK_FALSE(*fs.exists("AGENTS.db"));

  // Only inline texts: no root needed.
  compile_options texts_only;
  texts_only.root = dir.path() + "/absent";
  texts_only.texts = {"hello"};
  REQUIRE(compile_layer(fs, texts_only, embedder, "AGENTS.db").has_value());
}

namespace {

// An embedder that is not a hash_embedder: compile_layer must call it from
// the calling thread only, one batch at a time. It fails at batch `fail_at`.
class recording_embedder final : public agentctx::agdb::embedder {
 public:
  explicit recording_embedder(std::size_t fail_at = 0) : inner_(32), fail_at_(fail_at) {}
  const agentctx::agdb::embedding_profile& profile() const override { return inner_.profile(); }
  agentctx::result<void> embed(std::span<const std::string_view> texts, std::span<float> out) override {
    CHECK(std::this_thread::get_id() == caller_);
    if (++calls_ == fail_at_) return agentctx::fail(errc::io_error, "embedding service unavailable");
    return inner_.embed(texts, out);
  }
  std::size_t calls() const noexcept { return calls_; }

 private:
  hash_embedder inner_;
  std::size_t fail_at_;
  std::size_t calls_ = 0;
  std::thread::id caller_ = std::this_thread::get_id();
};

}  // namespace

TEST_CASE("compile_layer: the output does not depend on threads or batch size") {
  temporary_directory dir;
  for (const auto& [path, text] : corpus()) write_source(dir.path(), path, text);
  write_source(dir.path(), "docs/binary.md", std::string("\x89PNG\0\0", 6));
  for (int i = 0; i < 60; ++i) {
    std::string text = "# Part " + std::to_string(i) + "\n\n";
    for (int k = 0; k <= i % 7; ++k) {
      text += "## Step " + std::to_string(k) + "\n\nDo thing " + std::to_string(i * k) + ".\n\n";
    }
    write_source(dir.path(), "docs/parts/" + std::to_string(i) + ".md", text);
  }
  compile_options options = options_for(dir.path());
  options.threads = 1;
  compile_summary reference_summary;
  const auto reference = compile_to_bytes(options, &reference_summary);
  CHECK(reference_summary.files == 64);  // docs/empty.md counts, with no chunk
  REQUIRE(reference_summary.skipped.size() == 1);
  CHECK(reference_summary.skipped[0].path == "docs/binary.md");

  struct variant {
    std::size_t threads;
    std::size_t batch;
  };
  for (const variant v : {variant{2, 256}, variant{3, 1}, variant{8, 7}, variant{0, 64}}) {
    CAPTURE(v.threads);
    CAPTURE(v.batch);
    options.threads = v.threads;
    options.embed_batch_size = v.batch;
    std::vector<std::size_t> reported;
    const std::thread::id caller = std::this_thread::get_id();
    agentctx::io::memory_file_system fs;
    hash_embedder embedder(64);
    auto compiled = compile_layer(fs, options, embedder, "AGENTS.db",
                                  [&](std::size_t done, std::size_t total, std::uint64_t) {
                                    CHECK(std::this_thread::get_id() == caller);
                                    CHECK(total == 65);
                                    reported.push_back(done);
                                  });
    REQUIRE(compiled.has_value());
    CHECK(*fs.read_whole("AGENTS.db") == reference);
    CHECK(compiled->skipped == reference_summary.skipped);
    REQUIRE(reported.size() == 65);
    for (std::size_t i = 0; i < reported.size(); ++i) CHECK(reported[i] == i + 1);
  }
}

TEST_CASE("compile_layer: other embedders run on the calling thread, and their errors stop the compile") {
  temporary_directory dir;
  for (int i = 0; i < 30; ++i) write_source(dir.path(), "docs/" + std::to_string(i) + ".md", "# T\n\nbody\n");
  compile_options options = options_for(dir.path());
  options.threads = 4;
  options.embed_batch_size = 4;
  agentctx::io::memory_file_system fs;

  recording_embedder working;
  REQUIRE(compile_layer(fs, options, working, "AGENTS.db").has_value());
  CHECK(working.calls() == 8);  // 30 chunks in batches of 4
  hash_embedder same(32);
  options.threads = 1;
  agentctx::io::memory_file_system reference_fs;
  REQUIRE(compile_layer(reference_fs, options, same, "AGENTS.db").has_value());
  CHECK(*fs.read_whole("AGENTS.db") == *reference_fs.read_whole("AGENTS.db"));

  options.threads = 4;
  recording_embedder failing(3);
  auto compiled = compile_layer(fs, options, failing, "other.db");
  REQUIRE_FALSE(compiled.has_value());
  CHECK(compiled.error().code == errc::io_error);
  CHECK(failing.calls() == 3);
  CHECK_FALSE(*fs.exists("other.db"));
}

TEST_CASE("chunk ids: a taken first candidate moves on to the next candidates") {
  using agentctx::agdb::detail::chunk_id_assigner;
  agentctx::sha256_hasher hasher;
  const std::uint32_t first = chunk_id_assigner::candidate(hasher, "a.md", "alpha", 0);
  CHECK(first == expected_id("a.md", "alpha"));
  std::string retry("b.md");
  retry.push_back('\0');
  retry += "beta";
  retry.push_back('\0');
  retry += "1";
  const std::uint32_t second = chunk_id_assigner::candidate(hasher, "b.md", "beta", 1);
  CHECK(second == agentctx::load_u32(agentctx::sha256(retry).data()));

  chunk_id_assigner ids;
  CHECK(ids.assign("a.md", "alpha") == first);
  CHECK(ids.assign("b.md", "beta", first) == second);  // as if b.md's first candidate collided
  CHECK(ids.assign("b.md", "beta", 0) == chunk_id_assigner::candidate(hasher, "b.md", "beta", 2));  // 0 is never an id
}

}  // namespace agdb_layer_compiler_test
