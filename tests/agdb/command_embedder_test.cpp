// command_embedder: the line protocol against tests/agdb/scripts/test_embedder.pl,
// which answers v[j % dim] += byte j of the text, and misbehaves on request.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/command_embedder.hpp"
#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"

namespace agdb_command_embedder_test {

using agentctx::errc;
using agentctx::agdb::command_embedder;
using agentctx::agdb::command_embedder_options;
using agentctx::agdb::embedding_profile;

namespace {

const std::string script = AGENTCTX_TEST_SOURCE_DIR "/agdb/scripts/test_embedder.pl";

embedding_profile test_profile(std::uint32_t dim) { return {"command", "byte-sum", "1", dim, "none"}; }

command_embedder_options script_options(std::uint32_t dim, std::vector<std::string> extra = {},
                                        std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
  std::vector<std::string> command = {"perl", script, "--dim", std::to_string(dim)};
  command.insert(command.end(), extra.begin(), extra.end());
  return {command, test_profile(dim), timeout};
}

// What the script answers for `text`.
std::vector<float> expected_vector(std::string_view text, std::uint32_t dim) {
  std::vector<float> v(dim, 0.0f);
  for (std::size_t j = 0; j < text.size(); ++j) v[j % dim] += static_cast<float>(static_cast<unsigned char>(text[j]));
  return v;
}

std::vector<float> embed_or_fail(command_embedder& embedder, const std::vector<std::string_view>& texts) {
  std::vector<float> out(texts.size() * embedder.profile().dim, -1.0f);
  auto done = embedder.embed(texts, out);
  REQUIRE_MESSAGE(done.has_value(), test_support::error_text(done));
  return out;
}

std::size_t lines_in(const std::string& path) {
  std::ifstream in(path);
  return static_cast<std::size_t>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

}  // namespace

TEST_CASE("command_embedder: vectors come from the program, in order, for any text") {
  constexpr std::uint32_t dim = 5;
  command_embedder embedder(script_options(dim));
  CHECK(embedder.profile() == test_profile(dim));
  const std::vector<std::string_view> texts = {
      "hello world",
      "",
      "quotes \" and \\ backslashes",
      "new\nlines\r\nand\ttabs and \x01 control",
      "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80",
      "!object answered as an object",
      "{\"text\":\"a request inside a text\"}",
  };
  const std::vector<float> out = embed_or_fail(embedder, texts);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(texts[i]);
    const std::vector<float> row(out.begin() + static_cast<std::ptrdiff_t>(i * dim),
                                 out.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
    CHECK(row == expected_vector(texts[i], dim));
  }
}

TEST_CASE("command_embedder: the program starts on the first embed and lives as long as the embedder") {
  io_test::temporary_directory dir;
  const std::string count_file = dir.path() + "/starts";
  {
    command_embedder embedder(script_options(3, {"--count", count_file}));
    CHECK_FALSE(std::filesystem::exists(count_file));
    std::vector<float> none;
    REQUIRE(embedder.embed({}, none).has_value());  // nothing to embed: nothing started
    CHECK_FALSE(std::filesystem::exists(count_file));
    for (int round = 0; round < 3; ++round) embed_or_fail(embedder, {"one", "two"});
    CHECK(lines_in(count_file) == 1);
  }
  CHECK(lines_in(count_file) == 1);
}

TEST_CASE("command_embedder: a large batch is pipelined without deadlock") {
  // Far more request and answer bytes than two pipes hold.
  constexpr std::uint32_t dim = 64;
  std::vector<std::string> storage;
  for (int i = 0; i < 3000; ++i) storage.push_back("text number " + std::to_string(i) + std::string(200, 'x'));
  const std::vector<std::string_view> texts(storage.begin(), storage.end());
  command_embedder embedder(script_options(dim));
  const std::vector<float> out = embed_or_fail(embedder, texts);
  for (std::size_t i : {std::size_t{0}, std::size_t{1234}, texts.size() - 1}) {
    const std::vector<float> row(out.begin() + static_cast<std::ptrdiff_t>(i * dim),
                                 out.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
    CHECK(row == expected_vector(texts[i], dim));
  }
}

TEST_CASE("command_embedder: protocol violations are one-line io_errors naming the program") {
  struct violation_case {
    std::string text;
    std::vector<std::string> extra_flags;
    std::chrono::milliseconds timeout;
    std::string fragment;
  };
  const std::vector<violation_case> cases = {
      {"!error please", {}, std::chrono::milliseconds(20000), "embedding text 2 failed: the model refused"},
      {"!short", {}, std::chrono::milliseconds(20000), "answer 2 has 3 values, expected dim 4"},
      {"!garbage", {}, std::chrono::milliseconds(20000), "answer 2 is not JSON: \"this is not json\""},
      {"!infinite", {}, std::chrono::milliseconds(20000), "answer 2 value 1 is not a finite f32"},
      {"!exit", {}, std::chrono::milliseconds(20000), "exited with status 3 before answering"},
      {"!slow", {}, std::chrono::milliseconds(300), "no progress within 300 ms (timeout)"},
      {"fine", {"--exit-at-start", "7"}, std::chrono::milliseconds(20000), "perl"},
  };
  for (const violation_case& c : cases) {
    CAPTURE(c.text);
    command_embedder embedder(script_options(4, c.extra_flags, c.timeout));
    const std::vector<std::string_view> texts = {"first", c.text, "third"};
    std::vector<float> out(texts.size() * 4);
    auto done = embedder.embed(texts, out);
    REQUIRE_FALSE(done.has_value());
    const std::string line = done.error().describe();
    CAPTURE(line);
    CHECK(done.error().code == errc::io_error);
    CHECK(line.find('\n') == std::string::npos);
    CHECK(line.rfind("perl " + script + " --dim 4", 0) == 0);
    CHECK(line.find(c.fragment) != std::string::npos);

    // The program is restarted by the next call.
    if (c.extra_flags.empty()) {
      std::vector<float> again(4);
      const std::vector<std::string_view> good = {"good"};
      auto retried = embedder.embed(good, again);
      REQUIRE_MESSAGE(retried.has_value(), test_support::error_text(retried));
      CHECK(again == expected_vector("good", 4));
    }
  }
}

TEST_CASE("command_embedder: argument errors") {
  command_embedder embedder(script_options(4));
  std::vector<float> wrong_size(5);
  const std::vector<std::string_view> one = {"x"};
  CHECK(embedder.embed(one, wrong_size).error().code == errc::invalid_argument);

  command_embedder no_command(command_embedder_options{{}, test_profile(4), std::chrono::milliseconds(1000)});
  std::vector<float> out(4);
  CHECK(no_command.embed(one, out).error().code == errc::invalid_argument);

  command_embedder missing({{"/nonexistent/embedder"}, test_profile(4), std::chrono::milliseconds(1000)});
  auto started = missing.embed(one, out);
  REQUIRE_FALSE(started.has_value());
  CHECK(started.error().code == errc::io_error);
  CHECK(started.error().describe().rfind("/nonexistent/embedder: cannot start program", 0) == 0);
}

}  // namespace agdb_command_embedder_test
