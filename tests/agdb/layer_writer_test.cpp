#include <doctest/doctest.h>

#include "support/fixture_paths.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace agdb_layer_writer_test {

namespace agdb = agentctx::agdb;
namespace io = agentctx::io;
using agentctx::errc;

namespace {

agdb::chunk make_chunk(std::uint32_t id, std::string kind, std::string content, std::string author,
                       float confidence, std::uint64_t created_at, std::vector<agdb::source_ref> sources = {}) {
  return agdb::chunk{id, std::move(kind), std::move(content), std::move(author), confidence, created_at,
                     std::move(sources)};
}

// Deterministic, distinct embedding values without a random generator.
std::vector<float> test_values(std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = std::sin(static_cast<float>(i) * 0.37f) * 0.5f;
  return values;
}

struct layer_shape {
  agdb::element_type type = agdb::element_type::f32;
  bool sources = false;
  bool metadata = false;
};

agdb::layer_contents make_layer(layer_shape shape) {
  agdb::layer_contents layer;
  layer.chunks.push_back(make_chunk(11, "canonical", "# Title\n\nSome text.", "human", 1.0f, 0));
  layer.chunks.push_back(make_chunk(12, "note", "Caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", "mcp",
                                    0.75f, 1765799252375ull));
  layer.chunks.push_back(make_chunk(13, "canonical", "", "human", 0.0f, 42));
  layer.chunks.push_back(make_chunk(4000000000u, "note", "# Title\n\nSome text.", "mcp", 0.5f, 7));
  if (shape.sources) {
    layer.chunks[0].sources = {agdb::source_ref::to_string("docs/a.md:1")};
    layer.chunks[1].sources = {agdb::source_ref::to_chunk(11), agdb::source_ref::to_string("src/x.cpp:9"),
                               agdb::source_ref::to_string("docs/a.md:1")};
    layer.chunks[3].sources = {agdb::source_ref::to_chunk(999)};  // a chunk of another layer
  }
  if (shape.metadata) {
    layer.metadata_json =
        R"({"v":1,"embedding_profile":{"backend":"hash","model":null,"revision":null,"dim":8,"output_norm":"none"}})";
  }
  layer.embeddings.type = shape.type;
  layer.embeddings.dim = 8;
  const std::vector<float> values = test_values(layer.chunks.size() * 8);
  if (shape.type == agdb::element_type::f32) {
    layer.embeddings.f32_values = values;
  } else {
    layer.embeddings.quant_scale = agdb::choose_i8_scale(values);
    layer.embeddings.i8_values = agdb::quantize_i8(values, layer.embeddings.quant_scale);
  }
  return layer;
}

std::vector<std::byte> encode(const agdb::layer_contents& layer) {
  auto bytes = agdb::encode_layer(layer);
  REQUIRE_MESSAGE(bytes.has_value(), test_support::error_text(bytes));
  return std::move(*bytes);
}

// Decodes `bytes`, checking first that the validator finds nothing wrong.
agdb::layer_contents decode(std::span<const std::byte> bytes) {
  auto reader = agdb::layer_reader::from_bytes(bytes, "encoded");
  REQUIRE_MESSAGE(reader.has_value(), test_support::error_text(reader));
  for (const agdb::violation& v : agdb::validate(*reader)) {
    FAIL_CHECK("violation at byte " << v.offset << ": " << v.message);
  }
  auto contents = agdb::read_layer_contents(*reader);
  REQUIRE_MESSAGE(contents.has_value(), test_support::error_text(contents));
  return std::move(*contents);
}

std::vector<std::byte> file_bytes(const io::memory_file_system& fs, const std::string& path) {
  auto bytes = fs.read_whole(path);
  REQUIRE_MESSAGE(bytes.has_value(), test_support::error_text(bytes));
  return std::move(*bytes);
}

std::vector<std::string> directory_entries(io::memory_file_system& fs, const std::string& dir) {
  auto entries = fs.list_dir(dir);
  REQUIRE_MESSAGE(entries.has_value(), test_support::error_text(entries));
  return std::move(*entries);
}

// A durable directory: created, and its entry synced in the parent.
void make_durable_directory(io::memory_file_system& fs, const std::string& dir) {
  REQUIRE(fs.create_dir(dir).has_value());
  REQUIRE(fs.sync_dir(io::parent_directory(dir)).has_value());
}

std::vector<std::uint32_t> section_kinds(const agdb::layer_reader& reader) {
  std::vector<std::uint32_t> kinds;
  for (const auto& s : reader.sections()) kinds.push_back(s.kind);
  return kinds;
}

std::vector<std::string> all_strings(const agdb::layer_reader& reader) {
  std::vector<std::string> strings;
  for (std::uint32_t id = 1; id <= reader.string_count(); ++id) strings.emplace_back(*reader.string(id));
  return strings;
}

std::string fixtures_folder() { return test_support::agdb_fixture_dir(); }

}  // namespace

TEST_CASE("encode_layer round-trips every field through the reader") {
  const layer_shape shapes[] = {
      {agdb::element_type::f32, false, false}, {agdb::element_type::f32, true, false},
      {agdb::element_type::f32, false, true},  {agdb::element_type::f32, true, true},
      {agdb::element_type::i8, false, false},  {agdb::element_type::i8, true, false},
      {agdb::element_type::i8, false, true},   {agdb::element_type::i8, true, true},
  };
  for (const layer_shape& shape : shapes) {
    CAPTURE(static_cast<int>(shape.type));
    CAPTURE(shape.sources);
    CAPTURE(shape.metadata);
    const agdb::layer_contents layer = make_layer(shape);
    const std::vector<std::byte> bytes = encode(layer);

    auto reader = agdb::layer_reader::from_bytes(bytes, "encoded");
    REQUIRE_MESSAGE(reader.has_value(), test_support::error_text(reader));
    const agdb::file_header& header = reader->header();
    CHECK(header.magic == agdb::magic);
    CHECK(header.version_major == 1);
    CHECK(header.version_minor == 0);
    CHECK(header.file_length_bytes == bytes.size());
    CHECK(header.sections_offset == 40);
    CHECK(header.flags == 0);

    std::vector<std::uint32_t> expected_kinds = {1, 2};
    if (shape.metadata) expected_kinds.push_back(5);
    if (shape.sources) expected_kinds.push_back(4);
    expected_kinds.push_back(3);
    CHECK(section_kinds(*reader) == expected_kinds);
    // Sections are back to back after the table, and the last one ends the file.
    std::uint64_t cursor = 40 + 24 * reader->sections().size();
    for (const auto& s : reader->sections()) {
      CHECK(s.offset == cursor);
      CHECK(s.reserved == 0);
      cursor += s.length;
    }
    CHECK(cursor == bytes.size());

    REQUIRE(reader->chunk_count() == layer.chunks.size());
    for (std::size_t i = 0; i < layer.chunks.size(); ++i) {
      const agdb::chunk_record record = reader->record(i);
      CHECK(record.id == layer.chunks[i].id);
      CHECK(record.embedding_row == i + 1);
      CHECK(record.reserved0 == 0);
      CHECK(record.reserved1 == 0);
      CHECK(record.content_str_id != 0);
      auto view = reader->chunk(i);
      REQUIRE(view.has_value());
      CHECK(view->kind == layer.chunks[i].kind);
      CHECK(view->content == layer.chunks[i].content);
      CHECK(view->author == layer.chunks[i].author);
      CHECK(view->confidence == layer.chunks[i].confidence);
      CHECK(view->created_at_unix_ms == layer.chunks[i].created_at_unix_ms);
      auto sources = reader->sources(*view);
      REQUIRE(sources.has_value());
      CHECK(*sources == layer.chunks[i].sources);
    }

    const agdb::embedding_matrix_header& matrix = reader->embedding_header();
    CHECK(matrix.row_count == layer.chunks.size());
    CHECK(matrix.dim == 8);
    CHECK(matrix.element_type == static_cast<std::uint32_t>(shape.type));
    CHECK(matrix.quant_scale == layer.embeddings.quant_scale);
    CHECK(std::bit_cast<std::uint32_t>(matrix.reserved0) == 0);
    CHECK(reader->has_relationships() == shape.sources);
    CHECK(reader->metadata_json().has_value() == shape.metadata);
    if (auto metadata = reader->metadata_header()) {
      CHECK(metadata->version == 1);
      CHECK(metadata->format == 1);
    }

    CHECK(decode(bytes) == layer);
  }
}

TEST_CASE("strings are interned in first-seen order: kind, content, author, then string sources") {
  const agdb::layer_contents layer = make_layer({agdb::element_type::f32, true, false});
  const std::vector<std::byte> bytes = encode(layer);
  auto reader = agdb::layer_reader::from_bytes(bytes, "encoded");
  REQUIRE(reader.has_value());
  const std::vector<std::string> expected = {
      "canonical",   "# Title\n\nSome text.", "human", "docs/a.md:1",  // chunk 11
      "note",        "Caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", "mcp",
      "src/x.cpp:9",  // chunk 12 (docs/a.md:1 reused)
      "",             // chunk 13: the empty content is still a string entry
  };
  CHECK(all_strings(*reader) == expected);
  CHECK(reader->record(2).content_str_id == 9);
  CHECK(reader->record(3).content_str_id == 2);  // same content as chunk 11
  // The blob holds the strings back to back, in id order.
  std::uint64_t offset = 0;
  for (std::uint32_t id = 1; id <= reader->string_count(); ++id) {
    const agdb::string_entry entry = agdb::decode_string_entry(bytes.data() + reader->string_entry_offset(id));
    CHECK(entry.byte_offset == offset);
    offset += entry.byte_length;
  }
  CHECK(offset == reader->string_dictionary().bytes_length);
}

TEST_CASE("interning keeps first-seen ids while its table grows") {
  // Far more distinct strings than two per chunk, so the table is rebuilt
  // several times; ids and deduplication must survive every rebuild.
  agdb::layer_contents layer;
  layer.embeddings.dim = 2;
  std::vector<std::string> expected;
  for (std::uint32_t id = 1; id <= 10; ++id) {
    agdb::chunk c = make_chunk(id, "kind" + std::to_string(id % 3), "content " + std::to_string(id), "mcp", 0.5f, 0);
    for (int s = 0; s < 100; ++s) {
      c.sources.push_back(agdb::source_ref::to_string("file" + std::to_string(s) + ".md:" + std::to_string(id % 2)));
    }
    for (const std::string& text : {c.kind, c.content, c.author}) {
      if (std::find(expected.begin(), expected.end(), text) == expected.end()) expected.push_back(text);
    }
    for (const agdb::source_ref& source : c.sources) {
      if (std::find(expected.begin(), expected.end(), source.text) == expected.end()) expected.push_back(source.text);
    }
    layer.chunks.push_back(std::move(c));
  }
  layer.embeddings.f32_values = test_values(20);
  const std::vector<std::byte> bytes = encode(layer);
  auto reader = agdb::layer_reader::from_bytes(bytes, "encoded");
  REQUIRE(reader.has_value());
  CHECK(expected.size() == 3 + 10 + 1 + 200);
  CHECK(all_strings(*reader) == expected);
  CHECK(decode(bytes) == layer);
}

TEST_CASE("the interner's string hash reads every byte and the length, at every length") {
  // Strings of 0 to 100 bytes cover each of its paths (up to 3, up to 16, up
  // to 32 bytes, longer); flipping any one byte or adding a zero byte must
  // change the hash, and the same bytes must always give the same hash.
  std::string text;
  for (std::size_t length = 0; length <= 100; ++length) {
    CAPTURE(length);
    const std::uint64_t hash = agdb::detail::string_table_hash(text);
    CHECK(agdb::detail::string_table_hash(std::string(text)) == hash);
    CHECK(agdb::detail::string_table_hash(text + '\0') != hash);
    for (std::size_t at = 0; at < length; ++at) {
      std::string changed = text;
      changed[at] = static_cast<char>(changed[at] ^ 0x01);
      CHECK(agdb::detail::string_table_hash(changed) != hash);
    }
    text.push_back(static_cast<char>('a' + length % 26));
  }
}

TEST_CASE("rel_start counts the relationships written before the chunk, with or without sources") {
  agdb::layer_contents layer = make_layer({agdb::element_type::f32, true, false});
  auto bytes = encode(layer);
  auto reader = agdb::layer_reader::from_bytes(bytes, "encoded");
  REQUIRE(reader.has_value());
  const std::uint64_t starts[] = {0, 1, 4, 4};
  const std::uint32_t counts[] = {1, 3, 0, 1};
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(reader->record(i).rel_start == starts[i]);
    CHECK(reader->record(i).rel_count == counts[i]);
  }
  CHECK(reader->relationship_count() == 5);

  // Without any source there is no relationships section and every rel_start is 0.
  for (auto& c : layer.chunks) c.sources.clear();
  bytes = encode(layer);
  reader = agdb::layer_reader::from_bytes(bytes, "encoded");
  REQUIRE(reader.has_value());
  CHECK_FALSE(reader->has_relationships());
  for (std::size_t i = 0; i < 4; ++i) CHECK(reader->record(i).rel_start == 0);
}

TEST_CASE("the worked example of docs/format/agdb.md is what encode_layer produces") {
  // Golden bytes: a change here changes the format document and breaks
  // byte-compatibility with files already written.
  agdb::layer_contents layer;
  layer.chunks.push_back(make_chunk(1, "note", "hello", "human", 1.0f, 1700000000000ull));
  layer.chunks.push_back(
      make_chunk(7, "note", "world", "mcp", 0.5f, 1700000001000ull, {agdb::source_ref::to_string("a.md:3")}));
  layer.embeddings.dim = 4;
  layer.embeddings.f32_values = {1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.6f, -0.8f, 0.0f};
  const std::string_view expected_hex =
      "4147444201000000fc010000000000000400000000000000280000000000000000000000000000000100000000000000"
      "88000000000000009c000000000000000200000000000000240100000000000078000000000000000400000000000000"
      "9c0100000000000018000000000000000300000000000000b40100000000000048000000000000000600000000000000"
      "a80000000000000008010000000000001c00000000000000000000000000000004000000000000000400000000000000"
      "0500000000000000090000000000000005000000000000000e0000000000000005000000000000001300000000000000"
      "0300000000000000160000000000000006000000000000006e6f746568656c6c6f68756d616e776f726c646d6370612e"
      "6d643a3302000000000000003401000000000000010000000100000002000000030000000000803f0068e5cf8b010000"
      "010000000000000000000000000000000000000000000000070000000100000004000000050000000000003fe86be5cf"
      "8b0100000200000000000000000000000000000001000000000000000100000000000000ac0100000000000002000000"
      "0600000002000000000000000400000001000000dc0100000000000020000000000000000000803f000000000000803f"
      "000000000000000000000000000000009a99193fcdcc4cbf00000000";
  std::vector<std::byte> expected;
  for (std::size_t i = 0; i + 1 < expected_hex.size(); i += 2) {
    expected.push_back(static_cast<std::byte>(std::stoi(std::string(expected_hex.substr(i, 2)), nullptr, 16)));
  }
  REQUIRE(expected.size() == 508);
  CHECK(encode(layer) == expected);
}

TEST_CASE("encode_layer is deterministic and stable under decode and re-encode") {
  const agdb::layer_contents layer = make_layer({agdb::element_type::i8, true, true});
  const std::vector<std::byte> first = encode(layer);
  CHECK(encode(layer) == first);
  CHECK(encode(decode(first)) == first);

  agdb::layer_contents with_minor = layer;
  with_minor.version_minor = 3;
  const std::vector<std::byte> bytes = encode(with_minor);
  CHECK(decode(bytes).version_minor == 3);
  CHECK(encode(decode(bytes)) == bytes);
}

TEST_CASE("encode_layer writes an empty layer") {
  agdb::layer_contents layer;
  layer.embeddings.dim = 16;
  layer.metadata_json = "{}";
  const std::vector<std::byte> bytes = encode(layer);
  CHECK(bytes.size() == 40 + 4 * 24 + 32 + 16 + (24 + 2) + 40);
  CHECK(decode(bytes) == layer);
}

TEST_CASE("the staging buffer is bypassed and refilled correctly around large strings and matrices") {
  // Over 1 MiB of strings and of embeddings, with one string larger than the
  // staging buffer, so every path of the buffered output is taken.
  agdb::layer_contents layer;
  layer.embeddings.dim = 384;
  for (std::uint32_t id = 1; id <= 1500; ++id) {
    layer.chunks.push_back(make_chunk(id, id % 2 ? "note" : "canonical", std::string(900, char('a' + id % 26)) +
                                                                              std::to_string(id),
                                      "mcp", 0.5f, id, {agdb::source_ref::to_string("f.md:" + std::to_string(id))}));
  }
  layer.chunks[700].content = std::string(3u << 20, 'z');
  layer.embeddings.f32_values = test_values(layer.chunks.size() * 384);
  const std::vector<std::byte> bytes = encode(layer);
  CHECK(decode(bytes) == layer);

  io::memory_file_system fs;
  REQUIRE(agdb::write_layer(fs, "big.db", layer).has_value());
  CHECK(file_bytes(fs, "big.db") == bytes);
}

TEST_CASE("encode_layer rejects invalid contents before producing anything") {
  struct invalid_case {
    const char* name;
    std::function<void(agdb::layer_contents&)> damage;
    errc code;
    const char* message_part;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const invalid_case cases[] = {
      {"zero chunk id", [](auto& l) { l.chunks[1].id = 0; }, errc::invalid_id, "chunk id 0"},
      {"duplicate chunk id", [](auto& l) { l.chunks[3].id = 11; }, errc::duplicate_id, "chunk id 11"},
      {"unknown author", [](auto& l) { l.chunks[1].author = "bot"; }, errc::invalid_value, "chunk 12: author"},
      {"author differs in case", [](auto& l) { l.chunks[0].author = "Human"; }, errc::invalid_value, "chunk 11"},
      {"confidence above 1", [](auto& l) { l.chunks[2].confidence = 1.5f; }, errc::invalid_value,
       "chunk 13: confidence"},
      {"confidence below 0", [](auto& l) { l.chunks[2].confidence = -0.01f; }, errc::invalid_value, "chunk 13"},
      {"confidence NaN", [nan](auto& l) { l.chunks[2].confidence = nan; }, errc::invalid_value, "chunk 13"},
      {"confidence infinite", [inf](auto& l) { l.chunks[2].confidence = inf; }, errc::invalid_value, "chunk 13"},
      {"kind not UTF-8", [](auto& l) { l.chunks[1].kind = "n\xffte"; }, errc::invalid_utf8, "chunk 12: kind"},
      {"content not UTF-8", [](auto& l) { l.chunks[2].content = "ok \xc0\xaf"; }, errc::invalid_utf8,
       "chunk 13: content"},
      {"content with a surrogate", [](auto& l) { l.chunks[2].content = "\xed\xa0\x80"; }, errc::invalid_utf8,
       "chunk 13: content"},
      {"string source not UTF-8", [](auto& l) { l.chunks[1].sources = {agdb::source_ref::to_string("a\x80")}; },
       errc::invalid_utf8, "chunk 12: source"},
      {"chunk-id source zero", [](auto& l) { l.chunks[3].sources = {agdb::source_ref::to_chunk(0)}; },
       errc::invalid_id, "chunk 4000000000"},
      {"unknown source kind",
       [](auto& l) { l.chunks[0].sources = {{static_cast<agdb::relationship_kind>(9), 1, {}}}; },
       errc::invalid_value, "chunk 11: source kind 9"},
      {"metadata not UTF-8", [](auto& l) { l.metadata_json = "{\"v\":\xfe}"; }, errc::invalid_utf8,
       "layer metadata"},
      {"metadata not JSON", [](auto& l) { l.metadata_json = "{\"v\":1,"; }, errc::invalid_value,
       "layer metadata is not JSON"},
      {"metadata empty", [](auto& l) { l.metadata_json = ""; }, errc::invalid_value, "layer metadata is not JSON"},
      {"dim zero",
       [](auto& l) {
         l.embeddings.dim = 0;
         l.embeddings.f32_values.clear();
       },
       errc::invalid_argument, "dim"},
      {"too few values", [](auto& l) { l.embeddings.f32_values.pop_back(); }, errc::invalid_argument,
       "expected 4 chunks x dim 8 = 32"},
      {"too many values", [](auto& l) { l.embeddings.f32_values.push_back(0.0f); }, errc::invalid_argument,
       "holds 33 values"},
      {"values of both types", [](auto& l) { l.embeddings.i8_values = {1}; }, errc::invalid_argument,
       "i8_values must be empty"},
      {"f32 scale not 1", [](auto& l) { l.embeddings.quant_scale = 0.5f; }, errc::invalid_value, "quant_scale"},
      {"i8 scale zero",
       [](auto& l) {
         l.embeddings.type = agdb::element_type::i8;
         l.embeddings.i8_values.assign(32, 1);
         l.embeddings.f32_values.clear();
         l.embeddings.quant_scale = 0.0f;
       },
       errc::invalid_value, "non-zero"},
      {"i8 scale infinite",
       [inf](auto& l) {
         l.embeddings.type = agdb::element_type::i8;
         l.embeddings.i8_values.assign(32, 1);
         l.embeddings.f32_values.clear();
         l.embeddings.quant_scale = inf;
       },
       errc::invalid_value, "finite"},
      {"unknown element type", [](auto& l) { l.embeddings.type = static_cast<agdb::element_type>(3); },
       errc::invalid_value, "element type 3"},
  };
  for (const invalid_case& c : cases) {
    CAPTURE(c.name);
    agdb::layer_contents layer = make_layer({agdb::element_type::f32, true, true});
    c.damage(layer);
    auto bytes = agdb::encode_layer(layer);
    REQUIRE_FALSE(bytes.has_value());
    CHECK(bytes.error().code == c.code);
    CHECK_MESSAGE(bytes.error().message.find(c.message_part) != std::string::npos, bytes.error().message);

    io::memory_file_system fs;
    auto written = agdb::write_layer(fs, "dir/AGENTS.db", layer);
    REQUIRE_FALSE(written.has_value());
    CHECK(written.error().code == c.code);
    CHECK(written.error().path == "dir/AGENTS.db");
    CHECK(directory_entries(fs, "/") == std::vector<std::string>{});  // nothing was created
  }
}

TEST_CASE("quantize_i8 rounds to nearest, saturates, and inverts choose_i8_scale") {
  const std::vector<float> values = {0.0f, 1.0f, -1.0f, 0.25f, -0.25f, 0.2f, 63.4f, 100.0f, -100.0f};
  CHECK(agdb::quantize_i8(values, 0.5f) == std::vector<std::int8_t>{0, 2, -2, 1, -1, 0, 127, 127, -127});
  CHECK(agdb::quantize_i8(std::vector<float>{1.5f, 2.5f, -1.5f, -2.5f, 0.49f}, 1.0f) ==
        std::vector<std::int8_t>{2, 3, -2, -3, 0});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(agdb::quantize_i8(std::vector<float>{nan, inf, -inf, 1000.0f}, 1.0f) ==
        std::vector<std::int8_t>{0, 127, -127, 127});

  CHECK(agdb::choose_i8_scale(std::vector<float>{}) == 1.0f);
  CHECK(agdb::choose_i8_scale(std::vector<float>{0.0f, -0.0f}) == 1.0f);
  CHECK(agdb::choose_i8_scale(std::vector<float>{0.5f, -2.54f, 1.0f}) == 2.54f / 127.0f);
  CHECK(agdb::choose_i8_scale(std::vector<float>{nan, inf, 0.127f}) == 0.127f / 127.0f);
  CHECK(agdb::choose_i8_scale(std::vector<float>{std::numeric_limits<float>::denorm_min()}) > 0.0f);

  // The largest magnitude maps to +-127 and every value comes back within half a step.
  const std::vector<float> embedding = test_values(1000);
  const float scale = agdb::choose_i8_scale(embedding);
  const std::vector<std::int8_t> q = agdb::quantize_i8(embedding, scale);
  int extremes = 0;
  for (std::size_t i = 0; i < embedding.size(); ++i) {
    CHECK(std::fabs(static_cast<float>(q[i]) * scale - embedding[i]) <= scale * 0.5f + 1e-7f);
    if (q[i] == 127 || q[i] == -127) ++extremes;
  }
  CHECK(extremes > 0);
}

TEST_CASE("re-encoding the reference fixtures reproduces them byte for byte") {
  const std::string folder = fixtures_folder();
  for (const char* name : {"AGENTS.db", "AGENTS.delta.db"}) {
    CAPTURE(name);
    const std::string path = folder + "/" + name;
    if (!std::filesystem::exists(path)) {
      MESSAGE("skipping: fixture " << path << " not found (set AGENTCTX_AGDB_FIXTURES)");
      continue;
    }
    io::posix_file_system& fs = io::default_file_system();
    auto reader = agdb::layer_reader::open(fs, path);
    REQUIRE_MESSAGE(reader.has_value(), test_support::error_text(reader));
    auto contents = agdb::read_layer_contents(*reader);
    REQUIRE_MESSAGE(contents.has_value(), test_support::error_text(contents));
    auto bytes = agdb::encode_layer(*contents);
    REQUIRE_MESSAGE(bytes.has_value(), test_support::error_text(bytes));
    const std::span<const std::byte> original = reader->bytes();
    REQUIRE(bytes->size() == original.size());
    CHECK(std::equal(bytes->begin(), bytes->end(), original.begin()));
  }
}

TEST_CASE("write_layer writes through the memory file system and replaces an existing file") {
  io::memory_file_system fs;
  make_durable_directory(fs, "layers");
  const agdb::layer_contents first = make_layer({agdb::element_type::f32, true, true});
  REQUIRE(agdb::write_layer(fs, "layers/AGENTS.db", first).has_value());
  CHECK(file_bytes(fs, "layers/AGENTS.db") == encode(first));
  {
    auto reader = agdb::layer_reader::open(fs, "layers/AGENTS.db");
    REQUIRE_MESSAGE(reader.has_value(), test_support::error_text(reader));
    auto contents = agdb::read_layer_contents(*reader);
    REQUIRE(contents.has_value());
    CHECK(*contents == first);
  }

  const agdb::layer_contents second = make_layer({agdb::element_type::i8, false, false});
  REQUIRE(agdb::write_layer(fs, "layers/AGENTS.db", second).has_value());
  CHECK(file_bytes(fs, "layers/AGENTS.db") == encode(second));
  // No temporary file is left behind, and the result is durable.
  CHECK(directory_entries(fs, "layers") == std::vector<std::string>{"AGENTS.db"});
  fs.simulate_crash(io::crash_mode::drop_unsynced());
  CHECK(file_bytes(fs, "layers/AGENTS.db") == encode(second));
}

TEST_CASE("write_layer writes a file on disk that the reader opens") {
  io_test::temporary_directory dir;
  const std::string path = dir.path() + "/AGENTS.delta.db";
  const agdb::layer_contents layer = make_layer({agdb::element_type::i8, true, true});
  REQUIRE(agdb::write_layer(io::default_file_system(), path, layer).has_value());
  auto reader = agdb::layer_reader::open(path);
  REQUIRE_MESSAGE(reader.has_value(), test_support::error_text(reader));
  auto contents = agdb::read_layer_contents(*reader);
  REQUIRE(contents.has_value());
  CHECK(*contents == layer);
  const std::vector<std::byte> expected = encode(layer);
  CHECK(std::equal(expected.begin(), expected.end(), reader->bytes().begin(), reader->bytes().end()));
}

TEST_CASE("a failed write_layer leaves the previous file untouched and no partial file") {
  const agdb::layer_contents old_layer = make_layer({agdb::element_type::f32, false, false});
  const std::vector<std::byte> old_bytes = encode(old_layer);

  // Writes beyond 4 KiB fail (EFBIG), part-way through a larger layer.
  io::memory_file_system fs(io::memory_file_system_options{4096});
  REQUIRE(fs.write_whole("AGENTS.db", old_bytes).has_value());
  agdb::layer_contents big = old_layer;
  big.embeddings.dim = 256;
  big.embeddings.f32_values = test_values(big.chunks.size() * 256);
  REQUIRE(encode(big).size() > 4096);

  auto written = agdb::write_layer(fs, "AGENTS.db", big);
  REQUIRE_FALSE(written.has_value());
  CHECK(written.error().code == errc::io_error);
  CHECK(file_bytes(fs, "AGENTS.db") == old_bytes);
  CHECK(directory_entries(fs, "/") == std::vector<std::string>{"AGENTS.db"});

  // The same failure when no file existed leaves no file at all.
  written = agdb::write_layer(fs, "AGENTS.user.db", big);
  REQUIRE_FALSE(written.has_value());
  CHECK(fs.exists("AGENTS.user.db").value_or(true) == false);
  CHECK(directory_entries(fs, "/") == std::vector<std::string>{"AGENTS.db"});
}

TEST_CASE("write_layer under an injected fault at every operation leaves the old or the new file, never a mix") {
  const agdb::layer_contents old_layer = make_layer({agdb::element_type::f32, false, false});
  const std::vector<std::byte> old_bytes = encode(old_layer);
  // More than one staging buffer of data, so the file takes several appends.
  agdb::layer_contents new_layer = make_layer({agdb::element_type::f32, true, true});
  for (std::uint32_t id = 100001; id <= 100800; ++id) {
    new_layer.chunks.push_back(make_chunk(id, "note", std::string(2000, 'x') + std::to_string(id), "mcp", 0.5f, id));
  }
  new_layer.embeddings.f32_values = test_values(new_layer.chunks.size() * new_layer.embeddings.dim);
  const std::vector<std::byte> new_bytes = encode(new_layer);

  io::memory_file_system memory;
  make_durable_directory(memory, "layers");
  REQUIRE(memory.write_whole("layers/AGENTS.db", old_bytes).has_value());
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  REQUIRE(agdb::write_layer(faulty, "layers/AGENTS.db", new_layer).has_value());
  const std::uint64_t operations = faulty.operation_count();
  REQUIRE(faulty.operation_count(io::operation_kind::write) > 1);

  for (std::uint64_t n = 1; n <= operations; ++n) {
    CAPTURE(n);
    memory.restore(initial);
    faulty.reset();
    faulty.fail_operation(n);
    auto written = agdb::write_layer(faulty, "layers/AGENTS.db", new_layer);
    CHECK_FALSE(written.has_value());
    const std::vector<std::byte> now = file_bytes(memory, "layers/AGENTS.db");
    CHECK((now == old_bytes || now == new_bytes));
    CHECK(directory_entries(memory, "layers") == std::vector<std::string>{"AGENTS.db"});

    const io::memory_file_system_state failed = memory.snapshot();
    for (const io::crash_mode& mode : {io::crash_mode::drop_unsynced(), io::crash_mode::keep_all_unsynced()}) {
      memory.restore(failed);
      memory.simulate_crash(mode);
      const std::vector<std::byte> after_crash = file_bytes(memory, "layers/AGENTS.db");
      CHECK((after_crash == old_bytes || after_crash == new_bytes));
    }
  }
}

}  // namespace agdb_layer_writer_test
