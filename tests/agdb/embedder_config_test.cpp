// embedder_config: hash_config, make_embedder (with and without a cache) and
// config_for_profile.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/embedder_config.hpp"
#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace agdb_embedder_config_test {

using agentctx::errc;
using namespace agentctx::agdb;
using agentctx::io::memory_file_system;

namespace {

const std::string script = AGENTCTX_TEST_SOURCE_DIR "/agdb/scripts/test_embedder.pl";

embedder_config command_config(std::uint32_t dim) {
  embedder_config config;
  config.kind = embedder_config::backend_kind::command;
  config.profile = {"command", "byte-sum", std::nullopt, dim, "l2"};
  config.command = {"perl", script, "--dim", std::to_string(dim)};
  return config;
}

}  // namespace

TEST_CASE("embedder_config: the hash configuration builds the hash embedder") {
  const embedder_config config = hash_config(16);
  CHECK(config.kind == embedder_config::backend_kind::hash);
  CHECK(config.profile == hash_embedding_profile(16));
  CHECK_FALSE(config.cache_directory.has_value());
  CHECK(embedder_config{}.profile == hash_embedding_profile(hash_embedder::default_dim));

  memory_file_system fs;
  auto made = make_embedder(config, fs);
  REQUIRE_MESSAGE(made.has_value(), test_support::error_text(made));
  CHECK((*made)->profile() == hash_embedding_profile(16));
  const std::vector<std::string_view> texts = {"hello world", "x y z"};
  std::vector<float> out(2 * 16);
  std::vector<float> expected(2 * 16);
  REQUIRE((*made)->embed(texts, out).has_value());
  REQUIRE(hash_embedder(16).embed(texts, expected).has_value());
  CHECK(out == expected);
}

TEST_CASE("embedder_config: the command configuration builds a command embedder with the declared profile") {
  memory_file_system fs;
  auto made = make_embedder(command_config(3), fs);
  REQUIRE_MESSAGE(made.has_value(), test_support::error_text(made));
  CHECK((*made)->profile() == embedding_profile{"command", "byte-sum", std::nullopt, 3, "l2"});
  const std::vector<std::string_view> texts = {"abcd"};
  std::vector<float> out(3);
  REQUIRE((*made)->embed(texts, out).has_value());
  CHECK(out == std::vector<float>{97 + 100, 98, 99});  // not renormalised although the profile says l2
}

TEST_CASE("embedder_config: a cache directory wraps the embedder in a caching_embedder") {
  memory_file_system fs;
  embedder_config config = command_config(3);
  config.cache_directory = "/embeddings";
  auto made = make_embedder(config, fs);
  REQUIRE_MESSAGE(made.has_value(), test_support::error_text(made));
  auto* cached = dynamic_cast<caching_embedder*>(made->get());
  REQUIRE(cached != nullptr);
  CHECK(cached->profile() == config.profile);
  const std::vector<std::string_view> texts = {"abcd", "abcd"};
  std::vector<float> out(6);
  REQUIRE((*made)->embed(texts, out).has_value());
  CHECK(cached->statistics().misses == 1);
  CHECK(fs.exists("/embeddings/" + embedding_cache::file_name(config.profile)).value());

  config.cache_directory = "/no/such/parent/embeddings";
  CHECK(make_embedder(config, fs).error().code == errc::not_found);
}

TEST_CASE("embedder_config: inconsistent configurations are invalid_argument") {
  struct bad_case {
    std::string name;
    embedder_config config;
  };
  std::vector<bad_case> cases;
  cases.push_back({"hash dim 0", hash_config(0)});
  embedder_config hash_with_model = hash_config(8);
  hash_with_model.profile.model = "m";
  cases.push_back({"hash profile with a model", hash_with_model});
  embedder_config no_command = command_config(8);
  no_command.command.clear();
  cases.push_back({"command without a command", no_command});
  embedder_config no_backend = command_config(8);
  no_backend.profile.backend.clear();
  cases.push_back({"command without a backend", no_backend});
  embedder_config bad_norm = command_config(8);
  bad_norm.profile.output_norm = "unit";
  cases.push_back({"output_norm unit", bad_norm});
  embedder_config command_dim_zero = command_config(8);
  command_dim_zero.profile.dim = 0;
  cases.push_back({"command dim 0", command_dim_zero});

  memory_file_system fs;
  for (const bad_case& c : cases) {
    CAPTURE(c.name);
    auto made = make_embedder(c.config, fs);
    REQUIRE_FALSE(made.has_value());
    CHECK(made.error().code == errc::invalid_argument);
  }
}

TEST_CASE("embedder_config: config_for_profile runs hash profiles and explains the others") {
  auto hash = config_for_profile(hash_embedding_profile(384));
  REQUIRE(hash.has_value());
  CHECK(hash->kind == embedder_config::backend_kind::hash);
  CHECK(hash->profile == hash_embedding_profile(384));

  const std::vector<embedding_profile> foreign = {
      {"candle", "all-minilm-l6-v2", "main", 384, "none"},
      {"hash", std::nullopt, std::nullopt, 128, "l2"},
      {"hash", "model", std::nullopt, 128, "none"},
      {"hash", std::nullopt, std::nullopt, 0, "none"},
  };
  for (const embedding_profile& profile : foreign) {
    CAPTURE(describe(profile));
    auto config = config_for_profile(profile);
    REQUIRE_FALSE(config.has_value());
    CHECK(config.error().code == errc::unsupported);
    CHECK(config.error().message.find(describe(profile)) != std::string::npos);
    CHECK(config.error().message.find("--embedder command") != std::string::npos);
  }
  CHECK(config_for_profile(foreign[0]).error().message ==
        "layer profile candle:all-minilm-l6-v2@main(dim=384, norm=none) needs an embedder this build cannot run; "
        "configure one with --embedder command ... or search with --query-vec");
}

}  // namespace agdb_embedder_config_test
