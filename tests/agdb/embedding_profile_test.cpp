#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/embedding_profile.hpp"
#include "support/result_checks.hpp"

namespace agdb_embedding_profile_test {

namespace agdb = agentctx::agdb;

namespace {

const agdb::embedding_profile hash_128{"hash", std::nullopt, std::nullopt, 128, "none"};
const agdb::embedding_profile candle_384{"candle", "all-minilm-l6-v2", "main", 384, "none"};

// Verbatim from the reference (fixtures README, "The reference hash embedder").
constexpr std::string_view reference_hash_metadata =
    R"({"v":1,"embedding_profile":{"backend":"hash","model":null,"revision":null,"dim":128,"output_norm":"none"},)"
    R"("cache_key_alg":"sha256_profile_json_v2_null_content_utf8","embedder_metadata":{},)"
    R"("tool_name":"agentsdb-cli","tool_version":"0.1.9"})";

}  // namespace

TEST_CASE("profiles compare member by member") {
  CHECK(hash_128 == agdb::embedding_profile{"hash", std::nullopt, std::nullopt, 128, "none"});
  agdb::embedding_profile other = hash_128;
  other.dim = 384;
  CHECK(other != hash_128);
  other = hash_128;
  other.output_norm = "l2";
  CHECK(other != hash_128);
  other = hash_128;
  other.model = "";  // an empty model is not a null model
  CHECK(other != hash_128);
}

TEST_CASE("profile_json writes the reference's compact key order") {
  CHECK(agdb::profile_json(hash_128) ==
        R"({"backend":"hash","model":null,"revision":null,"dim":128,"output_norm":"none"})");
  CHECK(agdb::profile_json(candle_384) ==
        R"({"backend":"candle","model":"all-minilm-l6-v2","revision":"main","dim":384,"output_norm":"none"})");
  const agdb::embedding_profile odd{"b\"\\", "m\n", std::nullopt, 4294967295u, "l2"};
  CHECK(agdb::profile_json(odd) ==
        R"({"backend":"b\"\\","model":"m\n","revision":null,"dim":4294967295,"output_norm":"l2"})");
}

TEST_CASE("layer_metadata_json writes exactly what the reference writes") {
  CHECK(agdb::layer_metadata_json(hash_128, "agentsdb-cli", "0.1.9") == reference_hash_metadata);
  CHECK(agdb::layer_metadata_json(candle_384, "agentctx", "0.1.0", R"({"runtime":"x"})") ==
        R"({"v":1,"embedding_profile":{"backend":"candle","model":"all-minilm-l6-v2","revision":"main","dim":384,)"
        R"("output_norm":"none"},"cache_key_alg":"sha256_profile_json_v2_null_content_utf8",)"
        R"("embedder_metadata":{"runtime":"x"},"tool_name":"agentctx","tool_version":"0.1.0"})");
}

TEST_CASE("describe names a profile for error messages") {
  CHECK(agdb::describe(hash_128) == "hash(dim=128, norm=none)");
  CHECK(agdb::describe(candle_384) == "candle:all-minilm-l6-v2@main(dim=384, norm=none)");
  CHECK(agdb::describe({"openai", "text-embedding-3-small", std::nullopt, 1536, "l2"}) ==
        "openai:text-embedding-3-small(dim=1536, norm=l2)");
}

TEST_CASE("parse_layer_metadata_profile reads what layer_metadata_json writes") {
  const auto parsed = agdb::parse_layer_metadata_profile(reference_hash_metadata);
  REQUIRE_MESSAGE(parsed.has_value(), test_support::error_text(parsed));
  CHECK(*parsed == hash_128);

  for (const agdb::embedding_profile& profile :
       {hash_128, candle_384, agdb::embedding_profile{"x\"y", "caf\xC3\xA9", "r", 1, "l2"}}) {
    CAPTURE(agdb::describe(profile));
    const auto round_trip = agdb::parse_layer_metadata_profile(agdb::layer_metadata_json(profile, "t", "1"));
    REQUIRE_MESSAGE(round_trip.has_value(), test_support::error_text(round_trip));
    CHECK(*round_trip == profile);
  }
}

TEST_CASE("parse_layer_metadata_profile tolerates what it does not need") {
  // Unknown members anywhere, no "v", absent model and revision, any key order.
  const auto parsed = agdb::parse_layer_metadata_profile(
      R"({"future":[1,{"a":null}],"embedding_profile":{"output_norm":"l2","dim":7,"extra":true,"backend":"hash"}})");
  REQUIRE_MESSAGE(parsed.has_value(), test_support::error_text(parsed));
  CHECK(*parsed == agdb::embedding_profile{"hash", std::nullopt, std::nullopt, 7, "l2"});
}

TEST_CASE("parse_layer_metadata_profile rejects malformed metadata as invalid_value") {
  struct row {
    std::string_view json;
    std::string_view message_mentions;
  };
  const std::vector<row> rows = {
      {"", "not valid JSON"},
      {"{\"v\":1,", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"v":2,"embedding_profile":{"backend":"hash","dim":1,"output_norm":"none"}})", "v=2"},
      {R"({"v":"1","embedding_profile":{"backend":"hash","dim":1,"output_norm":"none"}})", "v=\"1\""},
      {R"({"v":1})", "embedding_profile is missing"},
      {R"({"embedding_profile":null})", "embedding_profile is not an object"},
      {R"({"embedding_profile":{"dim":1,"output_norm":"none"}})", "embedding_profile.backend"},
      {R"({"embedding_profile":{"backend":null,"dim":1,"output_norm":"none"}})", "embedding_profile.backend"},
      {R"({"embedding_profile":{"backend":3,"dim":1,"output_norm":"none"}})", "embedding_profile.backend"},
      {R"({"embedding_profile":{"backend":"h","model":1,"dim":1,"output_norm":"none"}})", "embedding_profile.model"},
      {R"({"embedding_profile":{"backend":"h","revision":[],"dim":1,"output_norm":"none"}})",
       "embedding_profile.revision"},
      {R"({"embedding_profile":{"backend":"h","output_norm":"none"}})", "embedding_profile.dim"},
      {R"({"embedding_profile":{"backend":"h","dim":0,"output_norm":"none"}})", "embedding_profile.dim"},
      {R"({"embedding_profile":{"backend":"h","dim":-1,"output_norm":"none"}})", "embedding_profile.dim"},
      {R"({"embedding_profile":{"backend":"h","dim":1.5,"output_norm":"none"}})", "embedding_profile.dim"},
      {R"({"embedding_profile":{"backend":"h","dim":4294967296,"output_norm":"none"}})", "embedding_profile.dim"},
      {R"({"embedding_profile":{"backend":"h","dim":"8","output_norm":"none"}})", "embedding_profile.dim"},
      {R"({"embedding_profile":{"backend":"h","dim":8}})", "embedding_profile.output_norm"},
      {R"({"embedding_profile":{"backend":"h","dim":8,"output_norm":false}})", "embedding_profile.output_norm"},
  };
  for (const row& r : rows) {
    CAPTURE(r.json);
    const auto parsed = agdb::parse_layer_metadata_profile(r.json);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == agentctx::errc::invalid_value);
    CHECK(parsed.error().message.find(r.message_mentions) != std::string::npos);
    CHECK(parsed.error().message.rfind("layer metadata: ", 0) == 0);
  }
}

}  // namespace agdb_embedding_profile_test
