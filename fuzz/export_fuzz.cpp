// fuzz/export_fuzz.cpp: libFuzzer target for agdb::parse_export, which reads
// `agentsdb import` files (JSON or NDJSON exports from anywhere: untrusted).
//
// The parser may not crash, leak or trip a sanitizer; a refusal is
// invalid_value with a message; an accepted bundle has only valid values:
// chunk ids from 1, authors human or mcp, confidences in [0, 1], embeddings
// of the layer's dim, schema dims from 1, and every chunk-id source from 1.
//
// Seeds: fuzz/seeds/export_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target export_fuzz
//   build-fuzz/fuzz/export_fuzz -dict=fuzz/export_fuzz.dict corpus/ fuzz/seeds/export_fuzz/
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agentctx/agdb/layer_export.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace agdb = agentctx::agdb;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto bundle = agdb::parse_export(text);
  if (!bundle) {
    require(bundle.error().code == agentctx::errc::invalid_value);
    require(!bundle.error().message.empty());
    return 0;
  }
  for (const agdb::exported_layer& layer : bundle->layers) {
    require(layer.schema.dim >= 1);
    for (const agdb::exported_chunk& c : layer.chunks) {
      require(c.record.id != 0);
      require(c.record.author == "human" || c.record.author == "mcp");
      require(c.record.confidence >= 0.0f && c.record.confidence <= 1.0f);
      require(!c.record.kind.empty());
      require(c.content_present || c.record.content.empty());
      require(!c.embedding || c.embedding->size() == layer.schema.dim);
      for (const agdb::source_ref& s : c.record.sources) {
        require(s.kind != agdb::relationship_kind::source_chunk_id || s.chunk_id != 0);
      }
    }
  }
  return 0;
}
