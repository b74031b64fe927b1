// fuzz/context_loader_fuzz.cpp: libFuzzer target for the context loader
// (context/loader.hpp), which reads taste, notes and JSONL logs that any
// process or person may have written, and for its shortening rules
// (context/excerpt.hpp) and reverse line reader (context/jsonl_tail.hpp).
//
// The input's first byte picks small policies; the rest is one file's bytes,
// written as taste.md, it/notes.md, it/log.jsonl and it/vocabulary_gaps.jsonl.
// The rules (a broken one traps, so libFuzzer keeps the input):
//   - read_context and read_full_notes never crash, hang or trip a sanitizer,
//     and with a budget the bodies and entries never cost more than it;
//   - the reverse line reader returns the file's lines, newest first: joined
//     back in order they are the file (its last '\n' aside);
//   - elide_middle keeps at most head + tail + 1 lines; truncate_sections
//     keeps every section heading in order; cut_to_budget fits its budget.
//
// Seeds: fuzz/seeds/context_loader_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target context_loader_fuzz
//   build-fuzz/fuzz/context_loader_fuzz -dict=fuzz/context_loader_fuzz.dict corpus/ fuzz/seeds/context_loader_fuzz/
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/context/excerpt.hpp"
#include "agentctx/context/jsonl_tail.hpp"
#include "agentctx/context/loader.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/memory_file_system.hpp"

namespace {

namespace context = agentctx::context;
namespace io = agentctx::io;

void put(io::file_system& fs, const std::string& path, std::string_view text) {
  if (!io::write_file_atomically(fs, path, std::as_bytes(std::span(text.data(), text.size())))) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t knobs = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  io::memory_file_system fs;
  if (!fs.create_dir("it")) __builtin_trap();
  for (const char* path : {"taste.md", "it/notes.md", "it/log.jsonl", "it/vocabulary_gaps.jsonl"}) put(fs, path, text);

  // The reverse reader gives the file back, newest line first.
  auto reader = context::reverse_line_reader::open(fs, "it/log.jsonl", 4096);
  if (!reader) __builtin_trap();
  std::vector<std::string> lines;
  std::string line;
  bool too_long = false;
  while (true) {
    auto more = reader->previous(line);
    if (!more) {
      too_long = true;
      break;
    }
    if (!*more) break;
    lines.push_back(line);
  }
  if (!too_long) {
    std::string joined;
    for (std::size_t i = lines.size(); i-- > 0;) {
      joined += lines[i];
      if (i > 0) joined += '\n';
    }
    if (!text.empty() && !reader->partial_last_line()) joined += '\n';
    if (joined != text) __builtin_trap();
  }

  context::loader_options options;
  options.clock = [] { return std::uint64_t{1'777'300'000'000}; };
  options.notes = {static_cast<std::size_t>(knobs & 7) + 3, static_cast<std::size_t>(knobs & 3),
                   static_cast<std::size_t>((knobs >> 2) & 3)};
  options.taste = {static_cast<std::size_t>((knobs >> 4) & 7) + 1, 2};
  options.recent_sessions = knobs & 3;
  options.max_log_entries = (knobs & 15) + 1;
  options.max_bytes = knobs & 0x80 ? 64 + knobs : 0;
  options.max_tokens = knobs & 0x40 ? 16 + (knobs & 31) : 0;
  context::loader loader(fs, options);
  auto bundle = loader.read_context("it");
  if (bundle && options.max_bytes != 0 && bundle->used.bytes > options.max_bytes) __builtin_trap();
  if (bundle && options.max_tokens != 0 && bundle->used.tokens > options.max_tokens) __builtin_trap();
  static_cast<void>(loader.read_full_notes("it", (knobs & 7) + 1, knobs >> 5));

  const context::excerpt elided = context::elide_middle(text, options.notes, "x");
  if (elided.summarized() &&
      agentctx::split_lines(elided.text).size() > options.notes.head_lines + options.notes.tail_lines + 1) {
    __builtin_trap();
  }
  const context::excerpt truncated = context::truncate_sections(text, options.taste, "x");
  // Every section heading is kept, in order.
  const std::vector<std::string_view> in_lines = agentctx::split_lines(text);
  const std::vector<std::string_view> out_lines = agentctx::split_lines(truncated.text);
  std::size_t at = 0;
  for (std::size_t heading : context::section_heading_lines(in_lines)) {
    while (at < out_lines.size() && out_lines[at] != in_lines[heading]) ++at;
    if (at == out_lines.size()) __builtin_trap();
    ++at;
  }
  const context::text_cost budget{static_cast<std::size_t>(knobs) * 2, static_cast<std::size_t>(knobs)};
  const context::excerpt cut = context::cut_to_budget(text, budget, "x");
  const context::text_cost used = context::cost_of(cut.text);
  if (used.bytes > budget.bytes || used.tokens > budget.tokens) __builtin_trap();
  return 0;
}
