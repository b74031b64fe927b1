// fuzz/embedding_answer_fuzz.cpp: libFuzzer target for the JSON vectors that
// cross agentctx's boundaries: a command embedder's answer lines
// (agdb::detail::parse_embedding_answer) and query vectors
// (json::parse_f32_array, behind `agentsdb search --query-vec`).
//
// The first input byte picks the declared dim (0..15); the rest is one answer
// line. Neither parser may crash, leak or trip a sanitizer, and they must
// agree with each other: when the line is a plain array, the answer parser
// accepts it exactly when parse_f32_array does and the length equals dim, and
// then both produce the same floats, every one finite. Failures are
// invalid_value with a non-empty message.
//
// Seeds: fuzz/seeds/embedding_answer_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target embedding_answer_fuzz
//   build-fuzz/fuzz/embedding_answer_fuzz -dict=fuzz/embedding_answer_fuzz.dict corpus/ fuzz/seeds/embedding_answer_fuzz/
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "agentctx/agdb/command_embedder.hpp"
#include "agentctx/json/f32_array.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t dim = data[0] % 16;
  const std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);

  static simdjson::dom::parser parser;
  std::vector<float> row(dim, -7.0f);
  const auto answer = agentctx::agdb::detail::parse_embedding_answer(parser, line, 0, row);
  if (!answer) {
    require(answer.error().code == agentctx::errc::invalid_value);
    require(!answer.error().message.empty());
  } else {
    for (const float value : row) require(std::isfinite(value));
  }

  const auto vector = agentctx::json::parse_f32_array(line);
  if (!vector) {
    require(vector.error().code == agentctx::errc::invalid_value);
  } else {
    for (const float value : *vector) require(std::isfinite(value));
    // A plain array: the answer parser must agree.
    require(answer.has_value() == (vector->size() == dim));
    if (answer) require(std::equal(vector->begin(), vector->end(), row.begin(), row.end()));
  }
  return 0;
}
