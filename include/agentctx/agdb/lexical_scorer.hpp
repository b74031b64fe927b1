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
// per query, which for layer files of a few megabytes is cheaper than
// building one.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace agentctx::agdb {

struct bm25_parameters {
  double k1 = 1.2;
  double b = 0.75;
};

/// Calls f(token) for each token of `text` (see the file comment), in order.
template <class F>
void for_each_lexical_token(std::string_view text, F&& f) {
  const auto is_word_byte = [](unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c >= 0x80;
  };
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    while (i < n && !is_word_byte(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < n && is_word_byte(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) f(text.substr(start, i - start));
  }
}

/// One query's terms, and the per-document counting and scoring.
class bm25_query {
 public:
  static constexpr std::size_t max_terms = 64;

  explicit bm25_query(std::string_view query, bm25_parameters parameters = {}) : parameters_(parameters) {
    for_each_lexical_token(query, [this](std::string_view token) {
      if (terms_.size() == max_terms) return;
      std::string term = lower_ascii(token);
      for (const std::string& seen : terms_) {
        if (seen == term) return;
      }
      terms_.push_back(std::move(term));
    });
    document_frequency_.assign(terms_.size(), 0);
  }

  /// The distinct lowercased terms, in query order.
  const std::vector<std::string>& terms() const noexcept { return terms_; }
  bool empty() const noexcept { return terms_.empty(); }

  /// Counts the terms in `document` into `frequencies` (size terms().size(),
  /// overwritten), adds the document to the collection statistics, and
  /// returns its length in tokens.
  std::uint32_t add_document(std::string_view document, std::span<std::uint32_t> frequencies) {
    for (auto& f : frequencies) f = 0;
    std::uint32_t length = 0;
    for_each_lexical_token(document, [&](std::string_view token) {
      ++length;
      for (std::size_t t = 0; t < terms_.size(); ++t) {
        if (equal_ignoring_ascii_case(token, terms_[t])) {
          ++frequencies[t];
          break;
        }
      }
    });
    ++document_count_;
    total_length_ += length;
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      if (frequencies[t] != 0) ++document_frequency_[t];
    }
    return length;
  }

  std::uint64_t document_count() const noexcept { return document_count_; }

  /// The BM25 score of a document added earlier, from its frequencies and
  /// length, against the statistics of all documents added so far.
  double score(std::span<const std::uint32_t> frequencies, std::uint32_t length) const noexcept {
    if (document_count_ == 0) return 0.0;
    const double n = static_cast<double>(document_count_);
    const double average_length = static_cast<double>(total_length_) / n;
    const double norm =
        parameters_.k1 * (1.0 - parameters_.b +
                          parameters_.b * (average_length > 0 ? static_cast<double>(length) / average_length : 0.0));
    double total = 0.0;
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      if (frequencies[t] == 0) continue;
      const double df = static_cast<double>(document_frequency_[t]);
      const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
      const double tf = static_cast<double>(frequencies[t]);
      total += idf * tf * (parameters_.k1 + 1.0) / (tf + norm);
    }
    return total;
  }

 private:
  static std::string lower_ascii(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
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

  bm25_parameters parameters_;
  std::vector<std::string> terms_;
  std::vector<std::uint64_t> document_frequency_;
  std::uint64_t document_count_ = 0;
  std::uint64_t total_length_ = 0;
};

}  // namespace agentctx::agdb
