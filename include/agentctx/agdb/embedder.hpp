// agentctx/agdb/embedder.hpp: the interface of a text-to-vector embedder.
//
// An embedder turns texts into fixed-size f32 vectors. Its `profile()` is the
// compatibility contract of seed 000 section 8.4.8: two embedders with equal
// profiles produce interchangeable vectors, and the profile is what a layer's
// metadata records and what embedding cache keys hash (embedding_cache_key.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/core/result.hpp"

namespace agentctx::agdb {

class embedder {
 public:
  virtual ~embedder() = default;

  /// The profile of the vectors this embedder produces. The reference stays
  /// valid, and its value unchanged, for the lifetime of the embedder.
  virtual const embedding_profile& profile() const = 0;

  /// Embeds `texts[i]` into row i of `out`, which is row-major:
  /// row i is out[i * dim, (i + 1) * dim) with dim = profile().dim, so
  /// out.size() must be texts.size() * dim.
  ///
  /// Errors: invalid_argument when out.size() does not match; implementations
  /// may add their own (io_error for a remote provider, for example). On error
  /// the contents of `out` are unspecified.
  ///
  /// Thread safety: calls on one embedder must not overlap unless the
  /// implementation documents otherwise; hash_embedder is stateless and may be
  /// called from any number of threads at once.
  virtual result<void> embed(std::span<const std::string_view> texts, std::span<float> out) = 0;

 protected:
  embedder() = default;
  embedder(const embedder&) = default;
  embedder& operator=(const embedder&) = default;
};

/// For implementations of embed(): invalid_argument unless `dim` is nonzero
/// and out_size == text_count * dim.
inline result<void> check_embedding_output_size(std::size_t text_count, std::uint32_t dim, std::size_t out_size) {
  if (dim == 0) return fail(errc::invalid_argument, "embedding dimension is 0");
  if (out_size % dim != 0 || out_size / dim != text_count) {
    return fail(errc::invalid_argument, "embedding output holds " + std::to_string(out_size) + " values, expected " +
                                            std::to_string(text_count) + " texts x " + std::to_string(dim) + " dims");
  }
  return {};
}

}  // namespace agentctx::agdb
