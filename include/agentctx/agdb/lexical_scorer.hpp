// agentctx/agdb/lexical_scorer.hpp: BM25 relevance of chunk contents to a query.
//
// The lexical half of hybrid search. Text is split into tokens, each a
// maximal run of ASCII letters and digits or of bytes >= 0x80 (so words in any
// script stay whole); ASCII letters compare case-insensitively, other bytes
// exactly. A query's distinct tokens are its terms (at most max_terms; the
// rest are ignored). Documents are scored with Okapi BM25:
//
//   score(d) = sum over terms t of  idf(t) * tf(t,d) * (k1 + 1)
//                                   / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
//   idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//
// where |d| is the document's token count, and N, avgdl and df count the
// documents the caller presents (for search: the chunks in effect that pass
// the kind filter). The scorer keeps no index: it reads each document once
// per query (count_terms: 64-byte blocks, a term compared only where a token
// starts with its first two bytes), which for layer files of a few megabytes
// is cheaper than building one. A process that scores many queries over the
// same documents keeps their counts in an agdb::lexical_index
// (lexical_index.hpp) and feeds them to add_counts().
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace agentctx::agdb {

struct bm25_parameters {
  double k1 = 1.2;
  double b = 0.75;
};

namespace detail {

/// A word byte (see the file comment): an ASCII letter or digit, or a byte >= 0x80.
inline bool is_word_byte(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z') || u >= 0x80;
}

/// Bit i set when byte i of the 64 at `p` is a word byte (see the file
/// comment), byte by byte; word_byte_mask is the same, 16 bytes at a time.
inline std::uint64_t word_byte_mask_scalar(const char* p) noexcept {
  std::uint64_t mask = 0;
  for (unsigned i = 0; i < 64; ++i) {
    const bool word = is_word_byte(p[i]);
    mask |= static_cast<std::uint64_t>(word) << i;
  }
  return mask;
}

inline std::uint64_t word_byte_mask(const char* p) noexcept {
#if defined(__SSE2__)
  std::uint64_t mask = 0;
  for (unsigned k = 0; k < 4; ++k) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    // c - '0' <= 9 and (c | 0x20) - 'a' <= 25, unsigned; c >= 0x80 is the sign bit.
    const __m128i digit = _mm_sub_epi8(b, _mm_set1_epi8('0'));
    const __m128i letter = _mm_sub_epi8(_mm_or_si128(b, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
    const __m128i ascii_word = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(digit, _mm_set1_epi8(9)), digit),
                                            _mm_cmpeq_epi8(_mm_min_epu8(letter, _mm_set1_epi8(25)), letter));
    const auto bits = static_cast<unsigned>(_mm_movemask_epi8(ascii_word) | _mm_movemask_epi8(b));
    mask |= static_cast<std::uint64_t>(bits) << (16 * k);
  }
  return mask;
#else
  return word_byte_mask_scalar(p);
#endif
}

/// Bit i set when byte i of the 64 at `p` is `c`, or (`fold`, for a
/// lowercase ASCII letter `c`) its uppercase form.
inline std::uint64_t byte_match_mask(const char* p, char c, bool fold) noexcept {
#if defined(__SSE2__)
  const __m128i target = _mm_set1_epi8(c);
  const __m128i case_bit = _mm_set1_epi8(fold ? 0x20 : 0);
  std::uint64_t mask = 0;
  for (unsigned k = 0; k < 4; ++k) {
    const __m128i b = _mm_or_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k)), case_bit);
    mask |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, target)))) << (16 * k);
  }
  return mask;
#else
  const char case_bit = fold ? 0x20 : 0;
  std::uint64_t mask = 0;
  for (unsigned i = 0; i < 64; ++i) mask |= static_cast<std::uint64_t>((p[i] | case_bit) == c) << i;
  return mask;
#endif
}

}  // namespace detail

/// `text` with ASCII letters lowercased (other bytes as they are), into
/// `out`: the form of a term the scorer compares.
inline void lower_ascii_into(std::string& out, std::string_view text) {
  out.assign(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
}

/// Calls f(token) for each token of `text` (see the file comment), in order.
/// Reads 64 bytes at a time: a mask of the word bytes, whose edges (where a
/// run starts or ends) are the token boundaries.
template <class F>
void for_each_lexical_token(std::string_view text, F&& f) {
  const std::size_t n = text.size();
  std::size_t start = 0;
  bool in_token = false;
  std::uint64_t before = 0;  // 1 when the byte before the block is a word byte
  char last[64];
  for (std::size_t base = 0; base < n; base += 64) {
    const char* block = text.data() + base;
    if (n - base < 64) {  // the last, short block, padded with a byte that is not a word byte
      std::memset(last, ' ', sizeof last);
      std::memcpy(last, block, n - base);
      block = last;
    }
    const std::uint64_t words = detail::word_byte_mask(block);
    std::uint64_t edges = words ^ ((words << 1) | before);
    before = words >> 63;
    for (; edges != 0; edges &= edges - 1) {
      const std::size_t at = base + static_cast<std::size_t>(std::countr_zero(edges));
      if (in_token) f(text.substr(start, at - start));
      start = at;
      in_token = !in_token;
    }
  }
  if (in_token) f(text.substr(start, n - start));
}

/// One query's terms, and the per-document counting and scoring.
class bm25_query {
 public:
  static constexpr std::size_t max_terms = 64;

  explicit bm25_query(std::string_view query, bm25_parameters parameters = {}) : parameters_(parameters) {
    for_each_lexical_token(query, [this](std::string_view token) {
      if (terms_.size() == max_terms) return;
      std::string term;
      lower_ascii_into(term, token);
      for (const std::string& seen : terms_) {
        if (seen == term) return;
      }
      terms_.push_back(std::move(term));
    });
    document_frequency_.assign(terms_.size(), 0);
    for (const std::string& term : terms_) {
      const auto folds = [](char c) { return c >= 'a' && c <= 'z'; };
      probes_.push_back({term[0], folds(term[0]), term.size() > 1 ? term[1] : '\0',
                         term.size() > 1 && folds(term[1]), term.size() == 1});
    }
  }

  /// The distinct lowercased terms, in query order.
  const std::vector<std::string>& terms() const noexcept { return terms_; }
  bool empty() const noexcept { return terms_.empty(); }

  /// Counts the terms in `document` into `frequencies` (size terms().size(),
  /// overwritten), adds the document to the collection statistics, and
  /// returns its length in tokens.
  std::uint32_t add_document(std::string_view document, std::span<std::uint32_t> frequencies) {
    const std::uint32_t length = count_terms(document, frequencies);
    add_counts(frequencies, length);
    return length;
  }

  /// What add_document() counts, without adding the document to the
  /// statistics: the terms' counts in `document` into `frequencies` (size
  /// terms().size(), overwritten), and its length in tokens.
  ///
  /// Reads 64 bytes at a time, with no call per token: the token starts are
  /// the rising edges of the word-byte mask (their count is the length);
  /// a term can only begin at a start whose byte is the term's first byte
  /// and whose next byte is its second (a mask per term from the same
  /// block), and only those few places are compared whole, with the byte
  /// after them, which must end the token.
  std::uint32_t count_terms(std::string_view document, std::span<std::uint32_t> frequencies) const noexcept {
    for (auto& f : frequencies) f = 0;
    const std::size_t n = document.size();
    const std::size_t term_count = terms_.size();
    std::uint32_t length = 0;
    std::uint64_t before = 0;  // 1 when the byte before the block is a word byte
    char last[64 + 1];         // the last block and the byte after it, padded with non-word bytes
    for (std::size_t base = 0; base < n; base += 64) {
      const char* block = document.data() + base;
      if (n - base < 64 + 1) {  // the second-byte mask reads one byte past the block
        std::memset(last, ' ', sizeof last);
        std::memcpy(last, block, n - base);
        block = last;
      }
      const std::uint64_t words = detail::word_byte_mask(block);
      const std::uint64_t starts = words & ~((words << 1) | before);
      before = words >> 63;
      length += static_cast<std::uint32_t>(std::popcount(starts));
      if (starts == 0) continue;
      for (std::size_t t = 0; t < term_count; ++t) {
        const probe& p = probes_[t];
        // Both masks, then one branch: places where only the first byte
        // matches are common, and a branch on them would be unpredictable.
        const std::uint64_t second =
            p.one_byte ? ~std::uint64_t{0} : detail::byte_match_mask(block + 1, p.second, p.second_folds);
        std::uint64_t candidates = starts & detail::byte_match_mask(block, p.first, p.first_folds) & second;
        if (candidates == 0) continue;
        const std::string& term = terms_[t];
        for (; candidates != 0; candidates &= candidates - 1) {
          const std::size_t at = base + static_cast<std::size_t>(std::countr_zero(candidates));
          const std::size_t end = at + term.size();
          if (end <= n && (end == n || !detail::is_word_byte(document[end])) &&
              equal_ignoring_ascii_case(document.substr(at, term.size()), term)) {
            ++frequencies[t];
          }
        }
      }
    }
    return length;
  }

  /// What count_terms() counts, as the definition reads: each token of
  /// for_each_lexical_token, ASCII-lowercased, compared with each term. The
  /// reference the tests, the fuzz target and the benchmark hold the block
  /// scan to (it is several times slower).
  std::uint32_t count_terms_by_definition(std::string_view document, std::span<std::uint32_t> frequencies) const noexcept {
    for (auto& f : frequencies) f = 0;
    std::uint32_t length = 0;
    for_each_lexical_token(document, [&](std::string_view token) {
      ++length;
      for (std::size_t t = 0; t < terms_.size(); ++t) {
        if (equal_ignoring_ascii_case(token, terms_[t])) ++frequencies[t];
      }
    });
    return length;
  }

  /// Adds a document to the collection statistics from counts made
  /// elsewhere: `frequencies` (size terms().size()) and `length` as
  /// add_document would have found them (an index that keeps each
  /// document's tokens counts them once, not once per query).
  void add_counts(std::span<const std::uint32_t> frequencies, std::uint32_t length) noexcept {
    ++document_count_;
    total_length_ += length;
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      if (frequencies[t] != 0) ++document_frequency_[t];
    }
  }

  std::uint64_t document_count() const noexcept { return document_count_; }

  /// Scores documents against the statistics of the documents added so far,
  /// with each term's idf computed once (score() computes them per call).
  /// Holds its own copy: documents added to the query later do not change it.
  class scorer {
   public:
    /// The BM25 score of a document from its frequencies (size
    /// terms().size()) and length.
    double score(std::span<const std::uint32_t> frequencies, std::uint32_t length) const noexcept {
      if (document_count_ == 0) return 0.0;
      const double norm =
          k1_ * (1.0 - b_ + b_ * (average_length_ > 0 ? static_cast<double>(length) / average_length_ : 0.0));
      double total = 0.0;
      for (std::size_t t = 0; t < idf_.size(); ++t) {
        if (frequencies[t] == 0) continue;
        const double tf = static_cast<double>(frequencies[t]);
        total += idf_[t] * tf * (k1_ + 1.0) / (tf + norm);
      }
      return total;
    }

   private:
    friend class bm25_query;
    std::uint64_t document_count_ = 0;
    double average_length_ = 0;
    double k1_ = 0;
    double b_ = 0;
    std::vector<double> idf_;
  };

  /// A scorer for the statistics as they are now.
  scorer scoring() const {
    scorer s;
    s.document_count_ = document_count_;
    s.k1_ = parameters_.k1;
    s.b_ = parameters_.b;
    if (document_count_ == 0) return s;
    const double n = static_cast<double>(document_count_);
    s.average_length_ = static_cast<double>(total_length_) / n;
    s.idf_.reserve(terms_.size());
    for (const std::uint64_t frequency : document_frequency_) {
      const double df = static_cast<double>(frequency);
      s.idf_.push_back(std::log(1.0 + (n - df + 0.5) / (df + 0.5)));
    }
    return s;
  }

  /// The BM25 score of a document added earlier, from its frequencies and
  /// length, against the statistics of all documents added so far:
  /// scoring().score(), for a single document.
  double score(std::span<const std::uint32_t> frequencies, std::uint32_t length) const {
    return scoring().score(frequencies, length);
  }

 private:
  // `lower` is already lowercased.
  static bool equal_ignoring_ascii_case(std::string_view text, std::string_view lower) noexcept {
    if (text.size() != lower.size()) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != lower[i]) return false;
    }
    return true;
  }

  // A term's first two bytes, and whether each is a letter (matched in
  // either case); the second is unused for a term of one byte.
  struct probe {
    char first;
    bool first_folds;
    char second;
    bool second_folds;
    bool one_byte;
  };

  bm25_parameters parameters_;
  std::vector<std::string> terms_;
  std::vector<probe> probes_;
  std::vector<std::uint64_t> document_frequency_;
  std::uint64_t document_count_ = 0;
  std::uint64_t total_length_ = 0;
};

}  // namespace agentctx::agdb
