// agdb/lexical_index.hpp: term counts kept between queries give exactly the
// counts, lengths and BM25 scores bm25_query finds by reading each text.
#include "agentctx/agdb/lexical_index.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "support/random.hpp"

namespace agdb_lexical_index_test {

namespace agdb = agentctx::agdb;

TEST_CASE("the term table numbers each distinct term once") {
  agdb::detail::term_table table;
  CHECK_FALSE(table.find("x").has_value());
  std::vector<std::string> terms;
  // Every length from 0 to 19 (the hash reads 8-byte words and a tail of
  // 1..7), terms that differ only in their last byte, and enough of them to
  // grow the table several times.
  for (int i = 0; i < 5000; ++i) {
    std::string term(static_cast<std::size_t>(i % 20), 'a');
    if (!term.empty()) term.back() = static_cast<char>('a' + i / 20 % 26);
    term += std::to_string(i / 520);
    terms.push_back(term);
  }
  std::vector<std::uint32_t> ids;
  for (const std::string& t : terms) ids.push_back(table.intern(t));
  for (std::size_t i = 0; i < terms.size(); ++i) {
    CAPTURE(terms[i]);
    CHECK(table.intern(terms[i]) == ids[i]);
    CHECK(table.find(terms[i]) == ids[i]);
    // A term seen earlier keeps the id it was given then.
    const auto first = std::find(terms.begin(), terms.end(), terms[i]) - terms.begin();
    CHECK(ids[static_cast<std::size_t>(first)] == ids[i]);
  }
  CHECK(table.size() == std::set<std::string>(terms.begin(), terms.end()).size());
  CHECK_FALSE(table.find("not interned").has_value());
  table.clear();
  CHECK(table.size() == 0);
  CHECK_FALSE(table.find(terms[0]).has_value());
  CHECK(table.intern("again") == 0);
}

TEST_CASE("a lexical index counts each query's terms as bm25_query reads them") {
  // Words in both cases, non-ASCII words, digits, punctuation and runs of
  // separators, so that tokens differ by case and by bytes above 0x7F.
  static const char* const words[] = {"Archive", "archive", "ARCHIVE", "index", "café", "CAFÉ", "日本語", "v2",
                                      "2026",    "x",       "handoff", "--",    "  ",   "\n",  "résumé", "Q"};
  test_support::random_stream random(0x853C49E6748FEA9Bull);
  const auto next = [&random] { return random.next(); };
  std::vector<std::string> texts;
  for (int d = 0; d < 300; ++d) {
    std::string text;
    const std::size_t count = next() % 40;
    for (std::size_t k = 0; k < count; ++k) text += std::string(words[next() % std::size(words)]) + (next() % 3 ? " " : "");
    texts.push_back(text);
  }
  agdb::lexical_index index;
  // Slots in another order than the texts, with gaps.
  for (std::size_t d = texts.size(); d-- > 0;) index.set(2 * d + 1, texts[d]);
  for (const char* query : {"archive", "ARCHIVE café", "index v2 2026 handoff", "résumé 日本語 x q", "absent words",
                            "Archive archive index"}) {
    CAPTURE(query);
    agdb::bm25_query read(query), looked_up(query);
    const std::size_t terms = read.terms().size();
    const std::vector<std::uint32_t> ids = index.term_ids(looked_up);
    REQUIRE(ids.size() == terms);
    std::vector<std::uint32_t> by_reading(terms), by_index(terms, 99);
    for (std::size_t d = 0; d < texts.size(); ++d) {
      CAPTURE(texts[d]);
      const std::uint32_t length = read.add_document(texts[d], by_reading);
      CHECK(index.counts(2 * d + 1, ids, by_index) == length);
      CHECK(by_index == by_reading);
      looked_up.add_counts(by_index, length);
      CHECK(looked_up.score(by_index, length) == read.score(by_reading, length));
    }
  }
  // A slot set again holds its new text's counts only.
  index.set(1, "fresh fresh words");
  agdb::bm25_query query("fresh archive");
  std::vector<std::uint32_t> counts(2);
  CHECK(index.counts(1, index.term_ids(query), counts) == 3);
  CHECK(counts == std::vector<std::uint32_t>{2, 0});
  index.clear();
  CHECK(index.distinct_terms() == 0);
  CHECK(index.term_ids(query) == std::vector<std::uint32_t>{agdb::lexical_index::absent_term,
                                                           agdb::lexical_index::absent_term});
}

}  // namespace agdb_lexical_index_test
