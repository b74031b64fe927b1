// fuzz/markdown_chunker_fuzz.cpp: libFuzzer target for agdb::chunk_markdown,
// which reads every markdown file `agentsdb compile` is pointed at.
//
// The first two input bytes pick max_chunk_bytes (4 + their little-endian
// value % 4096, so small limits that force line and code-point cuts are
// common); the rest is the document. chunk_markdown must never crash, hang,
// leak or trip a sanitizer, and its output must keep the contract of
// agdb/markdown_chunker.hpp:
//   - every chunk is non-empty, not only blank bytes, and at most
//     max_chunk_bytes long;
//   - first_line is between 1 and the document's line count, and never
//     decreases from one chunk to the next;
//   - a valid UTF-8 document gives valid UTF-8 chunks (cuts fall on code
//     point boundaries);
//   - chunks hold no more non-LF bytes than the document;
//   - the same input gives the same chunks (no hidden state).
// A broken rule traps (__builtin_trap), so libFuzzer keeps the input.
//
// Seeds: fuzz/seeds/markdown_chunker_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target markdown_chunker_fuzz
//   build-fuzz/fuzz/markdown_chunker_fuzz -dict=fuzz/markdown_chunker_fuzz.dict corpus/ fuzz/seeds/markdown_chunker_fuzz/
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "agentctx/agdb/markdown_chunker.hpp"
#include "agentctx/core/utf8.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  agentctx::agdb::chunking_options options;
  options.max_chunk_bytes = 4 + (std::size_t{data[0]} | std::size_t{data[1]} << 8) % 4096;
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

  const std::vector<agentctx::agdb::text_chunk> chunks = agentctx::agdb::chunk_markdown(text, options);
  const auto line_count = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  const bool valid_utf8 = agentctx::is_valid_utf8(text);
  std::size_t previous_line = 1;
  std::size_t content_bytes = 0;
  for (const auto& chunk : chunks) {
    require(!chunk.content.empty() && chunk.content.size() <= options.max_chunk_bytes);
    require(!agentctx::agdb::detail::is_blank_text(chunk.content));
    require(chunk.first_line >= previous_line && chunk.first_line <= line_count);
    previous_line = chunk.first_line;
    if (valid_utf8) require(agentctx::is_valid_utf8(chunk.content));
    content_bytes += chunk.content.size() - static_cast<std::size_t>(std::count(chunk.content.begin(), chunk.content.end(), '\n'));
  }
  require(content_bytes <= text.size());
  require(agentctx::agdb::chunk_markdown(text, options) == chunks);
  return 0;
}
