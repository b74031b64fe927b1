// agentctx/agdb/embedding_cache_key.hpp: deterministic embedding cache keys.
//
// Seed 000 section 9.1 keys an embedding cache by the profile and the exact
// text. This is the form the reference implementation uses (its cache_key_alg
// "sha256_profile_json_v2_null_content_utf8"), so caches are shared with it:
//
//   key = lowercase hex( sha256( profile_json_v2 || 0x00 || content_utf8 ) )
//   profile_json_v2 = {"v":2,"backend":..,"model":..,"revision":..,"dim":..,"output_norm":..}
//
// compact, keys in that order, null for an absent model or revision. The v2
// profile adds output_norm to the RFC's v1 list, because normalisation
// changes the vectors.
#pragma once

#include <string>
#include <string_view>

#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/json/writer.hpp"

namespace agentctx::agdb {

/// The profile_json_v2 that prefixes every cache key's input.
inline std::string cache_key_profile_json(const embedding_profile& profile) {
  std::string out;
  json::writer writer(out);
  writer.begin_object();
  writer.key("v").value(2);
  detail::write_embedding_profile_members(writer, profile);
  writer.end_object();
  return out;
}

/// The cache key of `content` given a profile already serialised by
/// cache_key_profile_json(); use this form to key many texts under one profile.
inline std::string embedding_cache_key(std::string_view profile_json_v2, std::string_view content) {
  sha256_hasher hasher;
  hasher.update(profile_json_v2);
  hasher.update(std::string_view("\0", 1));
  hasher.update(content);
  const sha256_digest digest = hasher.finish();
  return to_hex(digest);
}

/// The cache key of `content` embedded under `profile`: 64 lowercase hex digits.
inline std::string embedding_cache_key(const embedding_profile& profile, std::string_view content) {
  return embedding_cache_key(cache_key_profile_json(profile), content);
}

}  // namespace agentctx::agdb
