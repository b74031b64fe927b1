// Tests of agentctx/agdb/layer_export.hpp: both spellings round-trip every
// field, redaction, the reference's member names, and a table of bad inputs
// that parse_export() must refuse with a message naming the member.
#include <doctest/doctest.h>

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/layer_export.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/hash_layer.hpp"

namespace agdb_layer_export_test {

namespace agdb = agentctx::agdb;
using agentctx::errc;

namespace {

struct exported_text {
  agentctx::io::memory_file_system fs;
  std::vector<agdb::layer_reader> readers;

  exported_text() {
    REQUIRE(fs.create_dir("/r").has_value());
    test_support::write_hash_layer(fs, "/r/AGENTS.db",
                                   {{1, "canonical", "One \"quoted\"\nline."},
                                    {2, "canonical", "Two: ünïcödé ✓", {agdb::source_ref::to_string("docs/a.md:3")}}});
    test_support::write_hash_layer(fs, "/r/AGENTS.local.db",
                                   {{7, "note", "Seven.", {agdb::source_ref::to_chunk(1)}}});
    for (const char* path : {"/r/AGENTS.db", "/r/AGENTS.local.db"}) {
      auto reader = agdb::layer_reader::open(fs, path);
      REQUIRE(reader.has_value());
      readers.push_back(std::move(*reader));
    }
  }

  std::string run(agdb::export_spelling spelling, agdb::redaction redact = agdb::redaction::none) {
    std::vector<agdb::export_input> inputs{{&readers[0], "AGENTS.db", agdb::layer_id::base},
                                           {&readers[1], "AGENTS.local.db", agdb::layer_id::local}};
    agdb::export_options options;
    options.spelling = spelling;
    options.redact = redact;
    std::string text;
    std::size_t pieces = 0;
    auto written = agdb::write_export(inputs, options, [&](std::string_view piece) -> agentctx::result<void> {
      text += piece;
      ++pieces;
      return {};
    });
    REQUIRE(written.has_value());
    CHECK(pieces >= 3);  // streamed chunk by chunk, not as one string
    return text;
  }
};

agdb::export_bundle parse_ok(std::string_view text) {
  auto bundle = agdb::parse_export(text);
  INFO((bundle ? std::string() : bundle.error().describe()));
  REQUIRE(bundle.has_value());
  return std::move(*bundle);
}

void check_round_trip(const agdb::export_bundle& bundle, const exported_text& source) {
  REQUIRE(bundle.layers.size() == 2);
  CHECK(bundle.tool_name == "agentctx");
  for (std::size_t l = 0; l < 2; ++l) {
    auto contents = agdb::read_layer_contents(source.readers[l]);
    REQUIRE(contents.has_value());
    const agdb::exported_layer& layer = bundle.layers[l];
    CHECK(layer.schema.dim == 128);
    CHECK(layer.schema.type == agdb::element_type::f32);
    CHECK(layer.layer_metadata_json == contents->metadata_json);
    REQUIRE(layer.chunks.size() == contents->chunks.size());
    for (std::size_t i = 0; i < layer.chunks.size(); ++i) {
      CHECK(layer.chunks[i].record == contents->chunks[i]);  // every field, sources included
      CHECK(layer.chunks[i].content_present);
      REQUIRE(layer.chunks[i].embedding.has_value());
      const std::vector<float> row(contents->embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>(i * 128),
                                   contents->embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>(i * 128 + 128));
      CHECK(*layer.chunks[i].embedding == row);  // bit-exact through the shortest f32 text
    }
  }
  CHECK(bundle.layers[0].layer == agdb::layer_id::base);
  CHECK(bundle.layers[1].path == "AGENTS.local.db");
}

}  // namespace

TEST_CASE("export: JSON and NDJSON both round-trip every field and every vector bit") {
  exported_text source;
  const std::string json = source.run(agdb::export_spelling::json);
  const agdb::export_bundle from_json = parse_ok(json);
  CHECK(from_json.spelling == agdb::export_spelling::json);
  check_round_trip(from_json, source);

  const std::string ndjson = source.run(agdb::export_spelling::ndjson);
  const agdb::export_bundle from_ndjson = parse_ok(ndjson);
  CHECK(from_ndjson.spelling == agdb::export_spelling::ndjson);
  check_round_trip(from_ndjson, source);
  // header + 2 layer records + 3 chunk records, one per line
  CHECK(std::count(ndjson.begin(), ndjson.end(), '\n') == 6);
}

TEST_CASE("export: the reference's member names and shapes") {
  exported_text source;
  const std::string json = source.run(agdb::export_spelling::json);
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(json);
  CHECK(std::string_view(root["format"]) == "agentsdb.export.v1");
  CHECK(std::string_view(root["tool"]["name"]) == "agentctx");
  simdjson::dom::element layer = root["layers"].at(0);
  CHECK(std::string_view(layer["path"]) == "AGENTS.db");
  CHECK(std::string_view(layer["layer"]) == "base");
  CHECK(std::uint64_t(layer["schema"]["dim"]) == 128);
  CHECK(std::string_view(layer["schema"]["element_type"]) == "f32");
  CHECK(double(layer["schema"]["quant_scale"]) == 1.0);
  CHECK(layer["layer_metadata_json"].is_string());
  simdjson::dom::element second = layer["chunks"].at(1);
  CHECK(std::uint64_t(second["id"]) == 2);
  CHECK(std::string_view(second["author"]) == "human");
  CHECK(std::string_view(second["sources"].at(0)["type"]) == "source_string");
  CHECK(std::string_view(second["sources"].at(0)["value"]) == "docs/a.md:3");
  CHECK(std::string_view(second["content_sha256"]) == agdb::content_sha256_hex("Two: ünïcödé ✓"));
  CHECK(second["embedding"].get_array().size() == 128);
  simdjson::dom::element local_chunk = root["layers"].at(1)["chunks"].at(0);
  CHECK(std::string_view(local_chunk["sources"].at(0)["type"]) == "chunk_id");
  CHECK(std::uint64_t(local_chunk["sources"].at(0)["id"]) == 1);

  const std::string ndjson = source.run(agdb::export_spelling::ndjson);
  const std::string first_line = ndjson.substr(0, ndjson.find('\n'));
  simdjson::dom::element header = parser.parse(first_line);
  CHECK(std::string_view(header["type"]) == "header");
  CHECK(std::string_view(header["format"]) == "agentsdb.export.ndjson.v1");
}

TEST_CASE("export: redaction leaves out contents, embeddings or both") {
  exported_text source;
  const agdb::export_bundle content = parse_ok(source.run(agdb::export_spelling::json, agdb::redaction::content));
  CHECK_FALSE(content.layers[0].chunks[0].content_present);
  CHECK(content.layers[0].chunks[0].record.content.empty());
  CHECK(content.layers[0].chunks[0].embedding.has_value());

  const agdb::export_bundle vectors = parse_ok(source.run(agdb::export_spelling::ndjson, agdb::redaction::embeddings));
  CHECK(vectors.layers[0].chunks[0].content_present);
  CHECK_FALSE(vectors.layers[0].chunks[0].embedding.has_value());

  const std::string all = source.run(agdb::export_spelling::json, agdb::redaction::all);
  CHECK(all.find("One") == std::string::npos);
  const agdb::export_bundle none = parse_ok(all);
  CHECK_FALSE(none.layers[1].chunks[0].content_present);
  CHECK_FALSE(none.layers[1].chunks[0].embedding.has_value());

  CHECK(agdb::parse_redaction("embeddings") == agdb::redaction::embeddings);
  CHECK_FALSE(agdb::parse_redaction("vectors").has_value());
}

TEST_CASE("export: an i8 layer exports dequantised vectors and its schema") {
  agentctx::io::memory_file_system fs;
  agdb::layer_contents layer;
  layer.embeddings.type = agdb::element_type::i8;
  layer.embeddings.dim = 2;
  layer.embeddings.quant_scale = 0.5f;
  layer.embeddings.i8_values = {4, -2};
  layer.chunks.push_back({5, "note", "Five.", "mcp", 0.7f, 12, {}});
  REQUIRE(agdb::write_layer(fs, "/i8.db", layer).has_value());
  auto reader = agdb::layer_reader::open(fs, "/i8.db");
  REQUIRE(reader.has_value());
  std::vector<agdb::export_input> inputs{{&*reader, "i8.db", std::nullopt}};
  std::string text;
  REQUIRE(agdb::write_export(inputs, {}, [&](std::string_view piece) -> agentctx::result<void> {
            text += piece;
            return {};
          }).has_value());
  CHECK(text.find("\"confidence\":0.7,") != std::string::npos);  // the f32's shortest text
  CHECK(text.find("\"layer\":null") != std::string::npos);
  const agdb::export_bundle bundle = parse_ok(text);
  CHECK(bundle.layers[0].schema.type == agdb::element_type::i8);
  CHECK(bundle.layers[0].schema.quant_scale == 0.5f);
  CHECK(*bundle.layers[0].chunks[0].embedding == std::vector<float>{2.0f, -1.0f});
  CHECK(bundle.layers[0].chunks[0].record.confidence == 0.7f);
}

TEST_CASE("export: a sink error stops the export and is returned") {
  exported_text source;
  std::vector<agdb::export_input> inputs{{&source.readers[0], "AGENTS.db", agdb::layer_id::base}};
  int calls = 0;
  auto written = agdb::write_export(inputs, {}, [&](std::string_view) -> agentctx::result<void> {
    ++calls;
    return agentctx::fail(errc::no_space, "disk full");
  });
  REQUIRE_FALSE(written.has_value());
  CHECK(written.error().code == errc::no_space);
  CHECK(calls == 1);
}

TEST_CASE("export: parse_export refuses bad input, naming the member") {
  const std::string chunk =
      R"({"id":1,"kind":"note","content":"A","author":"human","confidence":1,"created_at_unix_ms":0,"sources":[]})";
  const auto bundle_with = [](const std::string& c) {
    return R"({"format":"agentsdb.export.v1","tool":{"name":"t","version":"1"},"layers":[{"path":"a.db","layer":null,)"
           R"("schema":{"dim":2,"element_type":"f32","quant_scale":1},"chunks":[)" +
           c + "]}]}";
  };
  const auto replace = [&](const std::string& from, const std::string& to) {
    std::string c = chunk;
    c.replace(c.find(from), from.size(), to);
    return bundle_with(c);
  };
  const std::string header = R"({"type":"header","format":"agentsdb.export.ndjson.v1","tool":{"name":"t","version":"1"}})";
  const std::string layer_record =
      R"({"type":"layer","path":"a.db","schema":{"dim":2,"element_type":"f32","quant_scale":1}})";
  struct bad_case {
    std::string name;
    std::string text;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {"empty", "", "empty"},
      {"blank lines", "\n \n", "empty"},
      {"not JSON", "{\"format\":", "not JSON"},
      {"an array", "[1,2]", "not an array"},
      {"other format", R"({"format":"agentsdb.export.v2","layers":[]})", "format is \"agentsdb.export.v2\""},
      {"no format", R"({"layers":[]})", "format is required"},
      {"no layers", R"({"format":"agentsdb.export.v1"})", "layers is required"},
      {"format twice", R"({"format":"agentsdb.export.v1","format":"agentsdb.export.v1","layers":[]})",
       "format is given twice"},
      {"layer not object", R"({"format":"agentsdb.export.v1","layers":[3]})", "layers[0] must be an object"},
      {"no schema", R"({"format":"agentsdb.export.v1","layers":[{"path":"a","chunks":[]}]})",
       "layers[0].schema is required"},
      {"dim 0", R"({"format":"agentsdb.export.v1","layers":[{"path":"a","schema":{"dim":0,"element_type":"f32","quant_scale":1},"chunks":[]}]})",
       "schema.dim must be a whole number from 1"},
      {"element type", R"({"format":"agentsdb.export.v1","layers":[{"path":"a","schema":{"dim":2,"element_type":"f16","quant_scale":1},"chunks":[]}]})",
       "element_type must be \"f32\" or \"i8\""},
      {"f32 scale", R"({"format":"agentsdb.export.v1","layers":[{"path":"a","schema":{"dim":2,"element_type":"f32","quant_scale":2},"chunks":[]}]})",
       "quant_scale must be 1 for f32"},
      {"bad layer name", R"({"format":"agentsdb.export.v1","layers":[{"path":"a","layer":"top","schema":{"dim":2,"element_type":"f32","quant_scale":1},"chunks":[]}]})",
       "layer must be base, user, delta, local or null"},
      {"chunk id 0", replace("\"id\":1", "\"id\":0"), "chunks[0].id must be a whole number from 1 to 4294967295"},
      {"chunk id too big", replace("\"id\":1", "\"id\":4294967296"), "chunks[0].id must be"},
      {"chunk id fraction", replace("\"id\":1", "\"id\":1.5"), "chunks[0].id must be"},
      {"no kind", replace("\"kind\":\"note\",", ""), "chunks[0].kind is required"},
      {"empty kind", replace("\"kind\":\"note\"", "\"kind\":\"\""), "kind must not be empty"},
      {"author", replace("\"author\":\"human\"", "\"author\":\"robot\""), "author must be \"human\" or \"mcp\""},
      {"confidence high", replace("\"confidence\":1", "\"confidence\":1.5"), "confidence must be a number from 0 to 1"},
      {"confidence string", replace("\"confidence\":1", "\"confidence\":\"1\""), "confidence must be"},
      {"negative time", replace("\"created_at_unix_ms\":0", "\"created_at_unix_ms\":-1"), "created_at_unix_ms must be"},
      {"sources missing", replace(",\"sources\":[]", ""), "sources is required"},
      {"source type", replace("\"sources\":[]", "\"sources\":[{\"type\":\"url\",\"value\":\"x\"}]"),
       "sources[0].type must be \"chunk_id\" or \"source_string\""},
      {"source id missing", replace("\"sources\":[]", "\"sources\":[{\"type\":\"chunk_id\"}]"),
       "sources[0].id is required"},
      {"source not object", replace("\"sources\":[]", "\"sources\":[7]"), "sources[0] must be an object"},
      {"embedding length", replace("\"sources\":[]", "\"sources\":[],\"embedding\":[1,2,3]"),
       "has 3 embedding values; the layer's dim is 2"},
      {"embedding value", replace("\"sources\":[]", "\"sources\":[],\"embedding\":[1,\"x\"]"),
       "embedding value 2 is not a number"},
      {"embedding huge", replace("\"sources\":[]", "\"sources\":[],\"embedding\":[1,1e300]"),
       "embedding value 2 is not a finite f32"},
      {"hash shape", replace("\"sources\":[]", "\"sources\":[],\"content_sha256\":\"ABC\""),
       "content_sha256 must be 64 lowercase hex digits"},
      {"hash mismatch",
       replace("\"sources\":[]", "\"sources\":[],\"content_sha256\":\"" + std::string(64, '0') + "\""),
       "content_sha256 does not match the content"},
      {"member twice", replace("\"kind\":\"note\"", "\"kind\":\"note\",\"kind\":\"other\""), "kind is given twice"},
      {"ndjson no header", layer_record + "\n", "format is required"},
      {"ndjson chunk first", header + "\n" + R"({"type":"chunk","layer_path":"a.db","chunk":)" + chunk + "}\n",
       "line 2: layer_path \"a.db\" names no layer record before it"},
      {"ndjson bad line", header + "\n{oops\n", "line 2: not JSON"},
      {"ndjson second header", header + "\n" + header + "\n", "line 2: a second header"},
      {"ndjson unknown type", header + "\n{\"type\":\"footer\"}\n", "line 2: type must be"},
      {"ndjson no type", header + "\n{\"path\":\"a\"}\n", "line 2: type must be"},
      {"ndjson same layer twice", header + "\n" + layer_record + "\n" + layer_record + "\n",
       "line 3: path \"a.db\" names a layer that an earlier record names"},
      {"ndjson chunk error", header + "\n" + layer_record + "\n" + R"({"type":"chunk","layer_path":"a.db","chunk":)" +
                                 std::string(R"({"id":1})") + "}\n",
       "line 3: chunk.kind is required"},
      {"ndjson other format", R"({"type":"header","format":"x"})" "\n", "format is \"x\""},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.name);
    auto parsed = agdb::parse_export(c.text);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == errc::invalid_value);
    INFO(parsed.error().message);
    CHECK(parsed.error().message.find(c.message) != std::string::npos);
  }
}

TEST_CASE("export: parse_export accepts what newer writers may add and what the reference leaves out") {
  const std::string text =
      R"({"format":"agentsdb.export.v1","tool":{"name":"agentsdb-cli","version":"0.3.0","extra":1},"future":true,)"
      R"("layers":[{"path":"AGENTS.db","schema":{"dim":2,"element_type":"i8","quant_scale":0.25},"chunks":[)"
      R"({"id":3,"kind":"note","content":"Three.","author":"mcp","confidence":0.5,"created_at_unix_ms":17,)"
      R"("sources":[{"type":"chunk_id","id":9},{"type":"source_string","value":"a.md:1"}],"new_member":[1]}]}]})";
  const agdb::export_bundle bundle = parse_ok(text);
  CHECK(bundle.tool_name == "agentsdb-cli");
  REQUIRE(bundle.layers.size() == 1);
  CHECK_FALSE(bundle.layers[0].layer.has_value());
  CHECK_FALSE(bundle.layers[0].layer_metadata_json.has_value());
  const agdb::exported_chunk& c = bundle.layers[0].chunks[0];
  CHECK(c.record.sources == std::vector{agdb::source_ref::to_chunk(9), agdb::source_ref::to_string("a.md:1")});
  CHECK_FALSE(c.embedding.has_value());
  // A pretty-printed bundle (the reference pretty-prints) parses too.
  const agdb::export_bundle pretty = parse_ok("{\n  \"format\": \"agentsdb.export.v1\",\n  \"layers\": []\n}\n");
  CHECK(pretty.layers.empty());
}

}  // namespace agdb_layer_export_test
