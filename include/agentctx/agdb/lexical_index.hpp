// agentctx/agdb/lexical_index.hpp: documents' term counts, kept between
// queries.
//
// bm25_query reads every document once per query (lexical_scorer.hpp). A
// process that scores many queries over the same documents keeps a
// lexical_index instead: each document is tokenized once
// (for_each_lexical_token, terms lowercased as the scorer compares them) into
// its length and its distinct terms' counts, and a query then looks its
// terms' counts up per document. The counts are exactly those
// bm25_query::add_document finds, so bm25_query::add_counts and score give
// the same scores from them.
//
//   agdb::lexical_index index;
//   index.set(0, "Dashboard archive filter");   // slots: the caller's numbers
//   agdb::bm25_query query("archive dashboard");
//   const auto ids = index.term_ids(query);
//   std::uint32_t counts[2];
//   const std::uint32_t length = index.counts(0, ids, counts);  // 3; {1, 1}
//   query.add_counts(counts, length);
//
// Memory: eight bytes per distinct term of each document, plus each distinct
// term's bytes once. Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/detail/string_hash.hpp"
#include "agentctx/agdb/lexical_scorer.hpp"

namespace agentctx::agdb {

namespace detail {

// Term ids: each distinct term (bytes) numbered from 0 in the order first
// interned. Open addressing over a power-of-two table of {hash, id} slots,
// the terms' bytes in one pool: a lookup touches one slot and, when the
// hashes match, the term's bytes (a node per term, as std::unordered_map
// keeps, costs a cache miss per lookup over millions of tokens). Unlike
// layer_writer.hpp's string_interner, which keeps views into its caller's
// strings, it owns its terms: they outlive the texts they came from. Both
// hash with string_table_hash.
class term_table {
 public:
  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(starts_.size() - 1); }

  std::optional<std::uint32_t> find(std::string_view term) const noexcept {
    if (slots_.empty()) return std::nullopt;
    const std::uint64_t h = string_table_hash(term);
    for (std::size_t at = h & mask_;; at = (at + 1) & mask_) {
      const slot& s = slots_[at];
      if (s.id == empty) return std::nullopt;
      if (s.hash == h && text(s.id) == term) return s.id;
    }
  }

  /// The id of `term`, numbered now when new.
  std::uint32_t intern(std::string_view term) {
    if (2 * (std::size_t{size()} + 1) > slots_.size()) grow();
    const std::uint64_t h = string_table_hash(term);
    std::size_t at = h & mask_;
    for (;; at = (at + 1) & mask_) {
      const slot& s = slots_[at];
      if (s.id == empty) break;
      if (s.hash == h && text(s.id) == term) return s.id;
    }
    const std::uint32_t id = size();
    slots_[at] = {h, id};
    pool_.append(term);
    starts_.push_back(pool_.size());
    return id;
  }

  void clear() {
    slots_.clear();
    pool_.clear();
    starts_.assign(1, 0);
    mask_ = 0;
  }

 private:
  static constexpr std::uint32_t empty = UINT32_MAX;
  struct slot {
    std::uint64_t hash = 0;
    std::uint32_t id = empty;
  };

  std::string_view text(std::uint32_t id) const noexcept {
    return std::string_view(pool_).substr(starts_[id], starts_[id + 1] - starts_[id]);
  }

  void grow() {
    std::vector<slot> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(1024, old.size() * 2), slot{});
    mask_ = slots_.size() - 1;
    for (const slot& s : old) {
      if (s.id == empty) continue;
      std::size_t at = s.hash & mask_;
      while (slots_[at].id != empty) at = (at + 1) & mask_;
      slots_[at] = s;
    }
  }

  std::vector<slot> slots_;
  std::string pool_;
  std::vector<std::size_t> starts_ = {0};  // term id's bytes: pool_[starts_[id], starts_[id + 1])
  std::size_t mask_ = 0;
};

}  // namespace detail

class lexical_index {
 public:
  /// A term of a query that no document of the index holds.
  static constexpr std::uint32_t absent_term = UINT32_MAX;

  /// Document `slot` (a number the caller chooses; slots need not be dense,
  /// but the index keeps one entry per slot up to the highest) now holds the
  /// counts of `text`, replacing what it held.
  void set(std::size_t slot, std::string_view text) {
    if (slot >= documents_.size()) documents_.resize(std::max(slot + 1, documents_.size() * 2));
    document& d = documents_[slot];
    // Lowercasing keeps every token's bounds (letters stay letters): the
    // tokens of the lowercased text are the terms, without a copy each.
    // Counted by id in counts_ (zero between documents), the distinct ids in
    // touched_.
    std::uint32_t length = 0;
    touched_.clear();
    lower_ascii_into(lowered_, text);
    for_each_lexical_token(lowered_, [&](std::string_view token) {
      const std::uint32_t id = term_id(token);
      if (counts_[id]++ == 0) touched_.push_back(id);
      ++length;
    });
    std::sort(touched_.begin(), touched_.end());
    d.terms.clear();
    d.terms.reserve(touched_.size());
    for (const std::uint32_t id : touched_) {
      d.terms.push_back({id, counts_[id]});
      counts_[id] = 0;
    }
    d.length = length;
  }

  /// The ids of `query`'s terms (in the order of query.terms()), absent_term
  /// for a term no document holds.
  std::vector<std::uint32_t> term_ids(const bm25_query& query) const {
    std::vector<std::uint32_t> ids;
    ids.reserve(query.terms().size());
    for (const std::string& term : query.terms()) ids.push_back(terms_.find(term).value_or(absent_term));
    return ids;
  }

  /// The counts in document `slot` (set() before) of the terms `ids` (from
  /// term_ids()) into `frequencies` (the same size; overwritten); returns the
  /// document's length in tokens: what bm25_query::add_document returns and
  /// writes for its text.
  std::uint32_t counts(std::size_t slot, std::span<const std::uint32_t> ids,
                       std::span<std::uint32_t> frequencies) const noexcept {
    const document& d = documents_[slot];
    for (std::size_t t = 0; t < ids.size(); ++t) {
      frequencies[t] = 0;
      if (ids[t] == absent_term) continue;
      const auto at = std::lower_bound(d.terms.begin(), d.terms.end(), ids[t],
                                       [](const term_count& c, std::uint32_t id) { return c.id < id; });
      if (at != d.terms.end() && at->id == ids[t]) frequencies[t] = at->count;
    }
    return d.length;
  }

  /// Distinct terms over every document set.
  std::size_t distinct_terms() const noexcept { return terms_.size(); }

  void clear() {
    documents_.clear();
    terms_.clear();
    counts_.clear();
  }

 private:
  struct term_count {
    std::uint32_t id;
    std::uint32_t count;
  };
  struct document {
    std::uint32_t length = 0;
    std::vector<term_count> terms;  // by id
  };

  std::uint32_t term_id(std::string_view lowered) {
    const std::uint32_t before = terms_.size();
    const std::uint32_t id = terms_.intern(lowered);
    if (id == before) counts_.push_back(0);
    return id;
  }

  detail::term_table terms_;
  std::vector<document> documents_;     // by slot
  std::string lowered_;                 // the text being set, lowercased
  std::vector<std::uint32_t> counts_;   // by term id: the document being set
  std::vector<std::uint32_t> touched_;  // the ids it holds
};

}  // namespace agentctx::agdb
