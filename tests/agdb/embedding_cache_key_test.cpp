#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

#include "agentctx/agdb/embedding_cache_key.hpp"
#include "agentctx/core/sha256.hpp"

namespace agdb_embedding_cache_key_test {

namespace agdb = agentctx::agdb;

namespace {

const agdb::embedding_profile hash_128{"hash", std::nullopt, std::nullopt, 128, "none"};

}  // namespace

TEST_CASE("cache_key_profile_json is the reference's v2 profile") {
  CHECK(agdb::cache_key_profile_json(hash_128) ==
        R"({"v":2,"backend":"hash","model":null,"revision":null,"dim":128,"output_norm":"none"})");
  CHECK(agdb::cache_key_profile_json({"candle", "all-minilm-l6-v2", "main", 384, "none"}) ==
        R"({"v":2,"backend":"candle","model":"all-minilm-l6-v2","revision":"main","dim":384,"output_norm":"none"})");
}

TEST_CASE("embedding_cache_key reproduces the reference's key") {
  const std::string key = agdb::embedding_cache_key(hash_128, "hello world");
  CHECK(key == "2f4ee35877ff9d466841acd49817271f76448aa392b8d8833f88b8d46cd895ec");
  CHECK(agdb::embedding_cache_key(agdb::cache_key_profile_json(hash_128), "hello world") == key);
  // The definition spelled out: sha256(profile_json_v2 || 0x00 || content).
  const std::string input = agdb::cache_key_profile_json(hash_128) + std::string(1, '\0') + "hello world";
  CHECK(agentctx::to_hex(agentctx::sha256(input)) == key);
}

TEST_CASE("every part of the profile and the exact content change the key") {
  const std::string base = agdb::embedding_cache_key(hash_128, "text");
  agdb::embedding_profile changed = hash_128;
  changed.dim = 384;
  CHECK(agdb::embedding_cache_key(changed, "text") != base);
  changed = hash_128;
  changed.output_norm = "l2";
  CHECK(agdb::embedding_cache_key(changed, "text") != base);
  changed = hash_128;
  changed.model = "m";
  CHECK(agdb::embedding_cache_key(changed, "text") != base);
  changed = hash_128;
  changed.revision = "r";
  CHECK(agdb::embedding_cache_key(changed, "text") != base);
  CHECK(agdb::embedding_cache_key(hash_128, "text ") != base);
  CHECK(agdb::embedding_cache_key(hash_128, "Text") != base);
  CHECK(agdb::embedding_cache_key(hash_128, std::string_view("text\0", 5)) != base);
  CHECK(agdb::embedding_cache_key(hash_128, "") != base);
  CHECK(base.size() == 64u);
  CHECK(base.find_first_not_of("0123456789abcdef") == std::string::npos);
}

}  // namespace agdb_embedding_cache_key_test
