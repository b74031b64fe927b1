// fuzz/lexical_scorer_fuzz.cpp: libFuzzer target for the lexical half of
// hybrid search (agdb/lexical_scorer.hpp), which reads every chunk's content
// (bytes from layer files, anything at all) and every query text.
//
// The first input byte splits the rest: the query is the next (byte % 64)
// bytes, the document is what follows. bm25_query::count_terms must never
// crash or trip a sanitizer, and must count exactly what the definition
// counts: each token of for_each_lexical_token, lowercased, compared with
// each term (the terms of a query are its distinct lowercased tokens). The
// document is counted after 0 to 63 leading spaces, so that its bytes meet
// the 64-byte blocks at every offset. A difference traps
// (__builtin_trap), so libFuzzer keeps the input.
//
// Seeds: fuzz/seeds/lexical_scorer_fuzz/. Build and run (clang only):
//   cmake --build build-fuzz --target lexical_scorer_fuzz
//   build-fuzz/fuzz/lexical_scorer_fuzz -dict=fuzz/lexical_scorer_fuzz.dict corpus/ fuzz/seeds/lexical_scorer_fuzz/
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/lexical_scorer.hpp"

namespace {

namespace agdb = agentctx::agdb;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t query_size = std::min<std::size_t>(data[0] % 64, size - 1);
  const std::string_view query_text(reinterpret_cast<const char*>(data + 1), query_size);
  const std::string_view document(reinterpret_cast<const char*>(data + 1 + query_size), size - 1 - query_size);

  const agdb::bm25_query query(query_text);
  std::vector<std::uint32_t> want(query.terms().size());
  const std::uint32_t want_length = query.count_terms_by_definition(document, want);
  std::vector<std::uint32_t> got(query.terms().size());
  std::vector<char> text;
  for (std::size_t spaces = 0; spaces < 64; ++spaces) {
    // Leading spaces make no token, so the counts stay the same while the
    // document's bytes move across the 64-byte blocks. The text is held in a
    // buffer of exactly its size, so that ASan sees any read past its end.
    text.assign(spaces, ' ');
    text.insert(text.end(), document.begin(), document.end());
    require(query.count_terms(std::string_view(text.data(), text.size()), got) == want_length);
    require(got == want);
  }
  return 0;
}
