// agentctx/relay/search.hpp: pull mode=relevant (seed 001 section 8.2), and
// the similarity snippets of orchestrate, by the hybrid ranking AGDB search
// uses: the embedder's vectors ranked by cosine similarity (vector kernels of
// agentctx/vector), the texts ranked by BM25 (agdb/lexical_scorer.hpp), the
// two fused by reciprocal rank (agdb/rank_fusion.hpp).
//
// A package's searchable text is its title, description, decisions_made,
// open_questions, handoff_note and content_md, one per line. Quarantined
// packages are never candidates.
//
// Only packages related to the query are ranked. With the hash embedder (the
// relay CLIs' default) a package is related when it shares a word with the
// query: its text holds a term of the query as BM25 reads terms
// (lexical_scorer.hpp: runs of ASCII letters and digits, case-insensitive,
// or of bytes >= 0x80; the query's first 64 terms), or a word of the query as
// the hash embedder splits words (at Unicode white space, exact bytes), which
// BM25 may not see: it reads a word across non-ASCII white space (U+3000,
// U+00A0) and keeps 64 terms of a query. The hash embedder's vector of a text
// is nothing but those words hashed into `dim` buckets with a sign
// (hash_embedder.hpp): a positive cosine without a shared word is collisions,
// and a shared word's cosine may be cancelled by others, so the vectors only
// order the packages related so, whatever the sign of their cosine. With any
// other embedder a package is related when it holds a query term, or when
// its vector's cosine with the query's is above 0. Equal scores: the earlier
// deposit first, whatever the order of the candidates (packages tied in
// both rankings share each rank, so they fuse to equal scores).
//
// Vectors are computed per query through the embedder (wrap it in
// agdb::caching_embedder to keep them across calls and processes; the relay
// CLI does, in the store's folder). A process that ranks many times keeps a
// relevance_index: each package's vector and term counts are then computed
// once, not once per query.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/lexical_index.hpp"
#include "agentctx/agdb/lexical_scorer.hpp"
#include "agentctx/agdb/rank_fusion.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/store.hpp"
#include "agentctx/vector/similarity_kernels.hpp"
#include "agentctx/vector/top_k.hpp"

namespace agentctx::relay {

/// The most packages one pull (its limit) or orchestrate digest (its
/// snippets) takes: the relay CLIs' and relay serve's bound.
inline constexpr std::size_t max_pull_limit = 1000;

struct relevant_hit {
  const stored_package* package = nullptr;  ///< valid until the store's next write or refresh
  double score = 0.0;                       ///< fused reciprocal-rank score
  double vector_score = 0.0;                ///< cosine similarity with the query
  double lexical_score = 0.0;               ///< BM25 (0 when no query term occurs)
};

/// The text of a package that search ranks.
inline std::string searchable_text(const package& p) {
  std::string text = p.title;
  const auto line = [&text](std::string_view part) {
    if (part.empty()) return;
    text += '\n';
    text += part;
  };
  line(p.description);
  for (const std::string& d : p.decisions_made) line(d);
  for (const std::string& q : p.open_questions) line(q);
  line(p.handoff_note);
  line(p.content_md);
  return text;
}

namespace detail {

// Vectors of `dim` floats, one row per package, starting on a 64-byte
// boundary: dot_f32_rows picks its instructions by the rows' alignment, so
// both ranking paths (rank_relevant, relevance_index) hand it rows aligned
// alike and compute the same floats.
class vector_rows {
 public:
  vector_rows(std::size_t count, std::uint32_t dim) : dim_(dim), storage_(count * dim + 16) {
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    offset_ = ((64 - address % 64) % 64) / sizeof(float);
  }
  float* row(std::size_t i) noexcept { return storage_.data() + offset_ + i * dim_; }
  std::span<float> rows(std::size_t first, std::size_t count) noexcept { return {row(first), count * dim_}; }
  const std::byte* bytes() const noexcept { return reinterpret_cast<const std::byte*>(storage_.data() + offset_); }

 private:
  std::uint32_t dim_;
  std::vector<float> storage_;
  std::size_t offset_ = 0;
};

// True when a vector of `profile` relates a package to the query by itself
// (see the file comment): for every embedder but the hash one.
inline bool vector_alone_relates(const agdb::embedding_profile& profile) {
  return profile != agdb::hash_embedding_profile(profile.dim);
}

// The words of `text` as the hash embedder splits words, sorted, each once
// (views into `text`).
inline std::vector<std::string_view> hash_words(std::string_view text) {
  std::vector<std::string_view> out;
  agdb::any_token(text, [&](std::string_view word) {
    out.push_back(word);
    return false;
  });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Whether `text` holds a White_Space character outside ASCII (U+0085,
// U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000):
// where BM25 reads one word and the hash embedder two. ASCII text is passed
// over eight bytes at a time.
inline bool holds_non_ascii_space(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t at = 0;
  while (at < n) {
    if (n - at >= 8) {
      std::uint64_t word;
      std::memcpy(&word, s + at, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        at += 8;
        continue;
      }
    }
    if (s[at] >= 0x80 && agdb::detail::non_ascii_white_space_length(s + at, n - at) != 0) return true;
    ++at;
  }
  return false;
}

// Whether every word of `query`, as the hash embedder splits words, holds a
// term `lexical` (the query's BM25 terms) keeps. Then a package holds a word
// of the query only if it holds one of those terms too, unless its text has
// non-ASCII white space next to the word (holds_non_ascii_space): only then
// can a package share a word with the query that BM25 does not see.
inline bool every_word_holds_a_term(std::string_view query, const agdb::bm25_query& lexical) {
  std::string term;
  return !agdb::any_token(query, [&](std::string_view word) {
    bool kept = false;
    agdb::for_each_lexical_token(word, [&](std::string_view token) {
      if (kept) return;
      term.clear();
      agdb::lower_ascii_into(term, token);
      kept = std::find(lexical.terms().begin(), lexical.terms().end(), term) != lexical.terms().end();
    });
    return !kept;
  });
}

// Whether `text` holds one of the sorted `words` (hash_words of the query):
// a word it shares with the query, as the hash embedder splits words (at any
// Unicode white space, punctuation kept, byte for byte), which BM25 may not
// see (it joins words at non-ASCII white space, and takes a query's first 64
// terms only). Words, not their 32-bit hashes, are compared: two hashes may
// collide (w673879 and w1180600).
inline bool holds_query_word(std::string_view text, std::span<const std::string_view> words) {
  return agdb::any_token(text, [&](std::string_view word) { return std::binary_search(words.begin(), words.end(), word); });
}

// What rank_relevant and relevance_index share once they have, for each of
// the `live` packages (not quarantined, in deposit order), its vector (row i
// of `rows`), its counts of the query's terms (`frequencies`, live.size() x
// terms, and `lengths`) and whether its text holds non-ASCII white space
// (`spaced`), with `lexical` holding the statistics of exactly those
// packages: the cosine ranking, the BM25 ranking and their fusion, of the
// packages related to the query (`vector_relates`: whether a positive cosine
// relates by itself; else a package must share a word with `query`, see the
// file comment). Ties go to the smaller index (both rankings and the fusion
// break them so), which is the earlier deposit.
inline std::vector<relevant_hit> fuse_relevance(std::span<const stored_package* const> live, const std::byte* rows,
                                                std::span<const float> query_vector, const agdb::bm25_query& lexical,
                                                std::span<const std::uint32_t> frequencies,
                                                std::span<const std::uint32_t> lengths,
                                                std::span<const std::uint8_t> spaced, std::size_t limit,
                                                std::string_view query, bool vector_relates) {
  const std::size_t pool = agdb::hybrid_pool(limit);
  std::vector<double> bm25(live.size(), 0.0);
  std::vector<bool> holds_term(live.size(), false);
  vector::top_k<std::uint32_t> lexical_best(pool);
  if (!lexical.empty()) {
    const std::size_t terms = lexical.terms().size();
    const agdb::bm25_query::scorer scorer = lexical.scoring();
    for (std::size_t i = 0; i < live.size(); ++i) {
      const auto counts = frequencies.subspan(i * terms, terms);
      bool any = false;
      for (std::uint32_t f : counts) any = any || f != 0;
      if (!any) continue;
      holds_term[i] = true;
      bm25[i] = scorer.score(counts, lengths[i]);
      lexical_best.push(static_cast<float>(bm25[i]), static_cast<std::uint32_t>(i));
    }
  }

  float query_norm = 0.0f;
  for (float v : query_vector) query_norm += v * v;
  query_norm = std::sqrt(query_norm);
  std::vector<float> dots(live.size());
  std::vector<float> norms(live.size());
  vector::dot_f32_rows(query_vector, rows, live.size(), dots.data(), norms.data());
  std::vector<double> cosine(live.size());
  vector::top_k<std::uint32_t> vector_best(pool);
  // With the hash embedder, a package that holds no query term may still
  // hold a word of the query that BM25 does not see (every_word_holds_a_term,
  // holds_non_ascii_space): related only if it does, which means reading its
  // text. Such packages are read best cosine first, and only while one could
  // still enter the vector ranking's `pool`. When every word of the query
  // holds a term, only packages with non-ASCII white space are read at all.
  const bool any_word_unseen = !vector_relates && !every_word_holds_a_term(query, lexical);
  std::vector<std::uint32_t> unsure;
  std::vector<float> sure;  // the cosines of the others that enter, best first once sorted
  for (std::size_t i = 0; i < live.size(); ++i) {
    const float denominator = std::sqrt(norms[i]) * query_norm;
    cosine[i] = denominator > 0.0f ? dots[i] / denominator : 0.0;
    if (vector_relates) {
      // A package no closer to the query than an unrelated one (cosine <= 0)
      // is not "semantically related" (section 8.2).
      if (cosine[i] > 0.0) vector_best.push(static_cast<float>(cosine[i]), static_cast<std::uint32_t>(i));
      continue;
    }
    if (holds_term[i]) {
      vector_best.push(static_cast<float>(cosine[i]), static_cast<std::uint32_t>(i));
      sure.push_back(static_cast<float>(cosine[i]));
    } else if (any_word_unseen || spaced[i] != 0) {
      unsure.push_back(static_cast<std::uint32_t>(i));
    }
  }
  if (!unsure.empty()) {
    std::sort(unsure.begin(), unsure.end(), [&](std::uint32_t a, std::uint32_t b) {
      return static_cast<float>(cosine[a]) != static_cast<float>(cosine[b])
                 ? static_cast<float>(cosine[a]) > static_cast<float>(cosine[b])
                 : a < b;
    });
    std::sort(sure.begin(), sure.end(), std::greater<>());
    const std::vector<std::string_view> query_words = hash_words(query);
    std::size_t entered = 0;  // unsure packages found related
    std::size_t above = 0;    // sure packages with a cosine above the current one's
    for (const std::uint32_t i : unsure) {
      // Every package that entered ranks before this one (a higher cosine,
      // or an equal one and an earlier place), and so does every sure one
      // above it: when they fill the pool, this one and every later one
      // rank below it.
      const auto score = static_cast<float>(cosine[i]);
      while (above < sure.size() && sure[above] > score) ++above;
      if (entered + above >= pool) break;
      if (!holds_query_word(searchable_text(live[i]->package), query_words)) continue;
      vector_best.push(score, i);
      ++entered;
    }
  }

  const std::vector<vector::scored<std::uint32_t>> vector_ranking = vector_best.take_sorted();
  const std::vector<vector::scored<std::uint32_t>> lexical_ranking = lexical_best.take_sorted();
  std::vector<relevant_hit> hits;
  for (const auto& [i, score] : agdb::fuse_rankings<std::uint32_t>(vector_ranking, lexical_ranking, limit)) {
    hits.push_back({live[i], score, cosine[i], bm25[i]});
  }
  return hits;
}

inline result<void> check_relevant_request(std::string_view query, std::size_t limit) {
  if (query.empty()) return fail(errc::invalid_argument, "a relevant pull needs a query");
  if (limit == 0) return fail(errc::invalid_argument, "limit must be at least 1");
  return {};
}

// The candidates that are not quarantined, in deposit order (candidates of
// two stores that share a place keep their order): the order ties take.
inline std::vector<const stored_package*> unquarantined(std::span<const stored_package* const> candidates) {
  std::vector<const stored_package*> live;
  live.reserve(candidates.size());
  for (const stored_package* p : candidates) {
    if (!p->quarantined) live.push_back(p);
  }
  // One project's candidates come in deposit order already; a global
  // pull's are per project.
  if (!std::is_sorted(live.begin(), live.end(), deposited_earlier)) {
    std::stable_sort(live.begin(), live.end(), deposited_earlier);
  }
  return live;
}

}  // namespace detail

/// The `limit` packages most relevant to `query` among `candidates`, best
/// first (equal scores: the earlier deposit first, in whatever order the
/// candidates come); fewer, or none, when fewer are related to it at all (see
/// the file comment: with the hash embedder a word in common, with any other
/// a query term in its text or a cosine with the query above 0). Errors:
/// invalid_argument for an empty query or a limit of 0; the embedder's errors.
/// Builds every package's text, vector and term counts for this one query: a
/// process that ranks more than once keeps a relevance_index instead.
inline result<std::vector<relevant_hit>> rank_relevant(std::span<const stored_package* const> candidates,
                                                      std::string_view query, std::size_t limit,
                                                      agdb::embedder& embedder) {
  AGENTCTX_TRY(detail::check_relevant_request(query, limit));
  const std::vector<const stored_package*> live = detail::unquarantined(candidates);
  if (live.empty()) return std::vector<relevant_hit>();

  std::vector<std::string> texts;
  texts.reserve(live.size() + 1);
  for (const stored_package* p : live) texts.push_back(searchable_text(p->package));
  texts.emplace_back(query);
  std::vector<std::string_view> views(texts.begin(), texts.end());
  const std::uint32_t dim = embedder.profile().dim;
  detail::vector_rows vectors(views.size(), dim);
  AGENTCTX_TRY(embedder.embed(views, vectors.rows(0, views.size())));

  agdb::bm25_query lexical(query);
  const std::size_t terms = lexical.terms().size();
  std::vector<std::uint32_t> frequencies(live.size() * terms);
  std::vector<std::uint32_t> lengths(live.size());
  if (!lexical.empty()) {
    for (std::size_t i = 0; i < live.size(); ++i) {
      lengths[i] = lexical.add_document(views[i], std::span(frequencies).subspan(i * terms, terms));
    }
  }
  const bool vector_relates = detail::vector_alone_relates(embedder.profile());
  std::vector<std::uint8_t> spaced(live.size(), 0);
  if (!vector_relates) {
    for (std::size_t i = 0; i < live.size(); ++i) spaced[i] = detail::holds_non_ascii_space(views[i]) ? 1 : 0;
  }
  return detail::fuse_relevance(live, vectors.bytes(), vectors.rows(live.size(), 1), lexical, frequencies, lengths,
                                spaced, limit, query, vector_relates);
}

/// rank_relevant for a process that ranks many times (relay serve, an agent
/// holding a store open): each package's vector and its count of every term
/// are computed the first time it is a candidate and kept, so a later query
/// embeds only itself and looks up its terms' counts instead of reading every
/// package again. rank() returns exactly what rank_relevant returns for the
/// same candidates. Entries are keyed by the package's place in the store
/// (stored_package::sequence) and checked against its deposited hash, so an
/// index may outlive a refresh of the store, or a repair that moved packages:
/// an entry whose package changed is computed again. Candidates from two
/// stores whose places collide (one place, different bytes) are ranked
/// without the index (rank_relevant). A change of the embedder's profile
/// empties it. Not thread-safe. Memory: one vector, a hash and a byte per place up to
/// the highest place ranked (the store's size, for a store's packages), eight
/// bytes per distinct term of each package ranked, and each distinct term's
/// bytes; it never shrinks but by clear().
class relevance_index {
 public:
  /// rank_relevant(candidates, query, limit, embedder), from the index.
  result<std::vector<relevant_hit>> rank(std::span<const stored_package* const> candidates, std::string_view query,
                                         std::size_t limit, agdb::embedder& embedder) {
    AGENTCTX_TRY(detail::check_relevant_request(query, limit));
    const std::vector<const stored_package*> live = detail::unquarantined(candidates);
    if (live.empty()) return std::vector<relevant_hit>();
    // Candidates from more than one store can hold one place with different
    // bytes: the index, keyed by place, cannot hold both, so they are ranked
    // without it.
    if (places_collide(live)) return rank_relevant(candidates, query, limit, embedder);
    AGENTCTX_TRY(add_missing(live, embedder));

    const std::uint32_t dim = profile_->dim;
    detail::vector_rows vectors(live.size() + 1, dim);
    for (std::size_t i = 0; i < live.size(); ++i) {
      std::memcpy(vectors.row(i), vectors_.data() + live[i]->sequence * dim, dim * sizeof(float));
    }
    const std::string_view query_view[] = {query};
    AGENTCTX_TRY(embedder.embed(query_view, vectors.rows(live.size(), 1)));

    agdb::bm25_query lexical(query);
    const std::size_t terms = lexical.terms().size();
    std::vector<std::uint32_t> frequencies(live.size() * terms);
    std::vector<std::uint32_t> lengths(live.size());
    if (!lexical.empty()) {
      const std::vector<std::uint32_t> ids = lexical_.term_ids(lexical);
      for (std::size_t i = 0; i < live.size(); ++i) {
        const auto counts = std::span(frequencies).subspan(i * terms, terms);
        lengths[i] = lexical_.counts(live[i]->sequence, ids, counts);
        lexical.add_counts(counts, lengths[i]);
      }
    }
    std::vector<std::uint8_t> spaced(live.size());
    for (std::size_t i = 0; i < live.size(); ++i) spaced[i] = spaced_[live[i]->sequence];
    return detail::fuse_relevance(live, vectors.bytes(), vectors.rows(live.size(), 1), lexical, frequencies,
                                  lengths, spaced, limit, query, detail::vector_alone_relates(*profile_));
  }

  /// Packages whose vector and counts the index holds.
  std::size_t size() const noexcept {
    return static_cast<std::size_t>(
        std::count_if(hashes_.begin(), hashes_.end(), [](const std::string& h) { return !h.empty(); }));
  }

  /// Forgets everything (the next rank() computes every candidate again).
  void clear() {
    hashes_.clear();
    vectors_.clear();
    spaced_.clear();
    lexical_.clear();
    seen_.clear();
    profile_.reset();
  }

 private:
  // True when two packages of `live` have the same place in their store
  // (stored_package::sequence) but different deposited hashes: one store
  // numbers its packages apart, so only candidates from two stores do.
  bool places_collide(std::span<const stored_package* const> live) {
    ++call_;
    for (std::size_t i = 0; i < live.size(); ++i) {
      const std::uint64_t sequence = live[i]->sequence;
      if (sequence >= seen_.size()) seen_.resize(std::max<std::size_t>(sequence + 1, seen_.size() * 2));
      seen& place = seen_[sequence];
      if (place.call == call_ && live[place.at]->deposited_hash != live[i]->deposited_hash) return true;
      place = {call_, i};
    }
    return false;
  }

  // Computes what the index lacks for the packages of `live` (or holds for
  // other bytes). Nothing changes when the embedder fails.
  result<void> add_missing(std::span<const stored_package* const> live, agdb::embedder& embedder) {
    if (!profile_ || *profile_ != embedder.profile()) {
      clear();
      profile_ = embedder.profile();
    }
    const std::uint32_t dim = profile_->dim;
    std::vector<const stored_package*> missing;
    for (const stored_package* p : live) {
      if (p->sequence >= hashes_.size() || hashes_[p->sequence] != p->deposited_hash) missing.push_back(p);
    }
    if (missing.empty()) return {};
    std::vector<std::string> texts;
    texts.reserve(missing.size());
    for (const stored_package* p : missing) texts.push_back(searchable_text(p->package));
    // Only the hash embedder's relevance reads the flag (fuse_relevance).
    const bool hash_words = !detail::vector_alone_relates(*profile_);
    std::vector<float> fresh(missing.size() * dim);
    const std::vector<std::string_view> views(texts.begin(), texts.end());
    AGENTCTX_TRY(embedder.embed(views, fresh));

    std::uint64_t highest = 0;
    for (const stored_package* p : missing) highest = std::max(highest, p->sequence);
    if (highest >= hashes_.size()) {
      const std::size_t size = std::max<std::size_t>(highest + 1, hashes_.size() * 2);
      hashes_.resize(size);
      vectors_.resize(size * dim);
      spaced_.resize(size);
    }
    for (std::size_t k = 0; k < missing.size(); ++k) {
      const std::uint64_t sequence = missing[k]->sequence;
      lexical_.set(sequence, views[k]);
      spaced_[sequence] = hash_words && detail::holds_non_ascii_space(views[k]) ? 1 : 0;
      std::memcpy(vectors_.data() + sequence * dim, fresh.data() + k * dim, dim * sizeof(float));
      hashes_[sequence] = missing[k]->deposited_hash;
    }
    return {};
  }

  std::optional<agdb::embedding_profile> profile_;
  std::vector<std::string> hashes_;  // by stored_package::sequence: the deposited hash indexed, or empty
  std::vector<float> vectors_;        // by sequence, profile_->dim each
  std::vector<std::uint8_t> spaced_;  // by sequence: its text holds non-ASCII white space
  agdb::lexical_index lexical_;       // by sequence
  struct seen {
    std::uint64_t call = 0;  // the rank() call that last saw the place
    std::size_t at = 0;      // where in its `live`
  };
  std::vector<seen> seen_;  // by sequence
  std::uint64_t call_ = 0;
};

/// The projects a search or digest covers: the project `project_id` names,
/// archived or not, or, when it is empty (global), every project that is
/// not archived. Errors: not_found for an unknown project.
inline result<std::vector<const project*>> search_scope(const store& s, const std::string& project_id) {
  std::vector<const project*> scope;
  if (project_id.empty()) {
    for (const project* p : s.projects()) {
      if (!p->archived()) scope.push_back(p);
    }
  } else if (const project* p = s.find_project(project_id)) {
    scope.push_back(p);
  } else {
    return unexpected(project_not_found(project_id));
  }
  return scope;
}

/// The packages of the projects of `scope`, drafts too unless
/// `include_drafts` is false (quarantined ones are left to the ranking).
inline std::vector<const stored_package*> packages_in(const store& s, std::span<const project* const> scope,
                                                      bool include_drafts) {
  std::vector<const stored_package*> out;
  for (const project* p : scope) {
    auto all = s.packages_of(p->project_id);
    if (!all) continue;
    for (const stored_package* sp : *all) {
      if (include_drafts || sp->package.status != package_status::draft) out.push_back(sp);
    }
  }
  return out;
}

/// pull mode=relevant over one project, archived or not, or over every
/// project that is not archived when project_id is empty (search_scope);
/// drafts are searched. Errors: not_found for an unknown project;
/// invalid_argument for a query that is not UTF-8 (invalid_utf8_input); those
/// of rank_relevant. With `index`, ranks through it (relevance_index::rank;
/// the same result).
inline result<std::vector<relevant_hit>> pull_relevant(const store& s, const std::string& project_id,
                                                      std::string_view query, std::size_t limit,
                                                      agdb::embedder& embedder, relevance_index* index = nullptr) {
  AGENTCTX_TRY(detail::check_utf8_input("query", query));
  auto scope = search_scope(s, project_id);
  if (!scope) return unexpected(std::move(scope).error());
  const std::vector<const stored_package*> candidates = packages_in(s, *scope, true);
  if (index != nullptr) return index->rank(candidates, query, limit, embedder);
  return rank_relevant(candidates, query, limit, embedder);
}

}  // namespace agentctx::relay
