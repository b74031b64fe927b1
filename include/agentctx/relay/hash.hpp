// agentctx/relay/hash.hpp: package content hashes (seed 001 section 6.6),
// generated ids and session callsigns.
//
// A package's content hash is SHA-256 over the Appendix A canonical form of
// the package object as deposited (json::canonical_form::relay), written
// "sha256:<64 lowercase hex digits>". Defaults are not filled in before
// hashing, so every conformant implementation that receives the same wire
// object computes the same hash. The hash is stored beside the package, never
// inside it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/json/value.hpp"

namespace agentctx::relay {

/// The prefix of every content hash this library writes.
inline constexpr std::string_view content_hash_prefix = sha256_text_prefix;

/// "sha256:<hex>" of bytes that are already canonical.
inline std::string content_hash_of_canonical(std::string_view canonical_bytes) { return sha256_text(canonical_bytes); }

/// The content hash of a package (or any JSON value): SHA-256 over its
/// Appendix A canonical form. Errors: those of json::canonicalizer::serialize.
/// The canonical form is hashed as it is written, never held whole.
inline result<std::string> content_hash(const json::value& package, json::canonicalizer& canonicalizer) {
  thread_local sha256_hasher hasher;
  hasher.reset();  // an exception may have left a message part way (a failed allocation)
  auto written = canonicalizer.serialize_to(package, json::canonical_form::relay,
                                            [](std::string_view bytes) { hasher.update(bytes); });
  if (!written) return unexpected(std::move(written).error());
  std::string out(content_hash_prefix);
  out += to_hex(hasher.finish());
  return out;
}

inline result<std::string> content_hash(const json::value& package) {
  json::canonicalizer canonicalizer;
  return content_hash(package, canonicalizer);
}

/// True for "sha256:" followed by exactly 64 lowercase hex digits.
inline bool is_sha256_content_hash(std::string_view text) noexcept { return is_sha256_text(text); }

/// `prefix` followed by 32 lowercase hex digits of 128 random bits
/// ("pkg_", "fact_", "sess_"), the format section 6.1 recommends.
inline std::string generate_id(std::string_view prefix, const std::function<std::uint64_t()>& random) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(prefix);
  for (int word = 0; word < 2; ++word) {
    std::uint64_t bits = random();
    for (int i = 0; i < 16; ++i, bits >>= 4) out.push_back(hex[bits & 0xF]);
  }
  return out;
}

/// An adjective-noun callsign ("coral-heron", section 5.5): a memorability
/// aid, not a unique key (64 x 64 combinations).
inline std::string generate_callsign(std::uint64_t random_bits) {
  static constexpr std::string_view adjectives[64] = {
      "amber",  "ashen",  "azure",  "bold",   "brisk",  "calm",   "cedar",  "civic",  "clear",  "coral",  "crisp",
      "dusky",  "eager",  "early",  "fable",  "fern",   "fleet",  "frosty", "gentle", "gilded", "glad",   "golden",
      "grand",  "hazel",  "humble", "ivory",  "jade",   "jolly",  "keen",   "kind",   "lively", "lucid",  "lunar",
      "merry",  "misty",  "noble",  "oaken",  "olive",  "opal",   "polar",  "proud",  "quiet",  "rapid",  "ruby",
      "rustic", "sage",   "silent", "silver", "sleek",  "solar",  "steady", "stone",  "sunny",  "swift",  "tidal",
      "topaz",  "tranquil", "umber", "vivid", "warm",   "wild",   "windy",  "young",  "zesty"};
  static constexpr std::string_view nouns[64] = {
      "badger", "bison",  "crane",  "cricket", "dingo",  "dove",   "eagle",  "egret",  "falcon", "ferret", "finch",
      "fox",    "gecko",  "gull",   "hare",    "hawk",   "heron",  "ibis",   "jackal", "jay",    "kestrel", "kite",
      "koala",  "lark",   "lemur",  "lynx",    "magpie", "marten", "mink",   "moose",  "newt",   "ocelot", "orca",
      "osprey", "otter",  "owl",    "panda",   "pelican", "petrel", "pika",   "plover", "puffin", "quail",  "raven",
      "robin",  "salmon", "seal",   "shrike",  "sparrow", "stoat",  "swan",   "swift",  "tapir",  "tern",   "thrush",
      "toucan", "trout",  "vole",   "walrus",  "weasel", "whale",  "wren",   "yak",    "zebra"};
  std::string out(adjectives[random_bits & 63]);
  out += '-';
  out += nouns[(random_bits >> 6) & 63];
  return out;
}

}  // namespace agentctx::relay
