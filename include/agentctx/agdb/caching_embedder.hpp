// agentctx/agdb/caching_embedder.hpp: an embedder that remembers.
//
// `caching_embedder` wraps any embedder with an embedding_cache of the same
// profile: embed() looks every text up, asks the wrapped embedder for the
// misses only, in one batch (a text repeated in the batch is embedded once),
// stores what it got and returns hits and misses in order. Its profile is the
// wrapped embedder's, so layers compiled with or without a cache are
// identical.
//
//   auto cached = caching_embedder::open(std::make_unique<hash_embedder>(384), fs, ".cache/embeddings");
//   if (!cached) return unexpected(cached.error());
//   AGENTCTX_TRY((*cached)->embed(texts, out));
//
// Thread-safety: calls must not overlap (the cache is not thread-safe).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/embedding_cache.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/io/file_system.hpp"

namespace agentctx::agdb {

/// How a caching_embedder's lookups went, summed over its embed() calls.
struct embedding_cache_statistics {
  std::size_t hits = 0;    ///< texts answered from the cache (or repeated within a call)
  std::size_t misses = 0;  ///< texts the wrapped embedder embedded
};

class caching_embedder final : public embedder {
 public:
  /// Wraps `inner` (not null) with the cache of its profile in `directory`.
  /// Errors: invalid_argument for a null inner; those of embedding_cache::open().
  static result<std::unique_ptr<caching_embedder>> open(std::unique_ptr<embedder> inner, io::file_system& fs,
                                                        const std::string& directory) {
    if (!inner) return fail(errc::invalid_argument, "caching_embedder: no embedder to wrap");
    auto cache = embedding_cache::open(fs, directory, inner->profile());
    if (!cache) return unexpected(std::move(cache).error());
    return std::unique_ptr<caching_embedder>(new caching_embedder(std::move(inner), std::move(*cache)));
  }

  const embedding_profile& profile() const override { return inner_->profile(); }

  /// Errors: invalid_argument when out.size() != texts.size() * dim; the
  /// wrapped embedder's errors; the cache's insert() errors (the vectors in
  /// `out` are complete then, but could not be stored).
  result<void> embed(std::span<const std::string_view> texts, std::span<float> out) override {
    const std::size_t dim = profile().dim;
    AGENTCTX_TRY(check_embedding_output_size(texts.size(), profile().dim, out.size()));
    std::vector<std::string_view> miss_texts;
    std::vector<embedding_cache_digest> miss_keys;
    std::vector<std::size_t> miss_of_text(texts.size(), no_miss);  // text index -> miss index
    std::unordered_map<embedding_cache_digest, std::size_t, detail::digest_hash> miss_index;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const embedding_cache_digest key = cache_.key_of(texts[i]);
      if (const auto row = cache_.find(key)) {
        std::copy(row->begin(), row->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
        ++statistics_.hits;
        continue;
      }
      const auto [entry, added] = miss_index.emplace(key, miss_keys.size());
      if (added) {
        miss_keys.push_back(key);
        miss_texts.push_back(texts[i]);
        ++statistics_.misses;
      } else {
        ++statistics_.hits;
      }
      miss_of_text[i] = entry->second;
    }
    if (miss_keys.empty()) return {};

    std::vector<float> miss_rows(miss_keys.size() * dim);
    AGENTCTX_TRY(inner_->embed(miss_texts, miss_rows));
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (miss_of_text[i] == no_miss) continue;
      const auto row = std::span<const float>(miss_rows).subspan(miss_of_text[i] * dim, dim);
      std::copy(row.begin(), row.end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
    }
    return cache_.insert(miss_keys, miss_rows);
  }

  const embedding_cache& cache() const noexcept { return cache_; }
  const embedding_cache_statistics& statistics() const noexcept { return statistics_; }

 private:
  static constexpr std::size_t no_miss = ~std::size_t{0};

  caching_embedder(std::unique_ptr<embedder> inner, embedding_cache cache)
      : inner_(std::move(inner)), cache_(std::move(cache)) {}

  std::unique_ptr<embedder> inner_;
  embedding_cache cache_;
  embedding_cache_statistics statistics_;
};

}  // namespace agentctx::agdb
