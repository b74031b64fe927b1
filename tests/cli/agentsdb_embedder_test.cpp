// End-to-end tests of the embedder options of agentsdb compile (--embedder,
// --embed-*, --dim, --embedding-cache), with tests/agdb/scripts/test_embedder.pl
// as the embedding program: it answers v[j % dim] += byte j of the text.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_agentsdb_embedder_test {

#ifndef AGENTSDB_BIN
TEST_CASE("agentsdb embedder options: end-to-end tests") {
  MESSAGE("skipping: AGENTSDB_BIN is not defined (the agentsdb target is not part of this build)");
}
#else

using cli_test::agentsdb;
using cli_test::check_clean_success;
using cli_test::line_count;
using cli_test::run_result;
using io_test::temporary_directory;

namespace {

const std::string script = AGENTCTX_TEST_SOURCE_DIR "/agdb/scripts/test_embedder.pl";

// The shell command that runs the script at `dim`, counting its starts in `count_file`.
std::string script_command(std::uint32_t dim, const std::string& count_file) {
  return "perl '" + script + "' --dim " + std::to_string(dim) + " --count '" + count_file + "'";
}

std::size_t starts_in(const std::string& count_file) {
  if (!std::filesystem::exists(count_file)) return 0;
  return line_count(cli_test::read_file(count_file));
}

// compile of two inline texts into `out`, plus `extra`.
run_result compile_texts(const std::string& out, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"compile", "--text", "# One\n\nfirst text\n", "--text", "# Two\n\nsecond text\n",
                                   "--out", out, "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return agentsdb(args);
}

// `agentsdb inspect --json` of a layer, parsed into `parser`.
simdjson::dom::element inspect_json(simdjson::dom::parser& parser, const std::string& layer) {
  const run_result r = agentsdb({"inspect", "--json", layer});
  check_clean_success(r);
  return cli_test::parse_json(parser, r.out);
}

// The layer's metadata profile as compact JSON.
std::string recorded_profile(const std::string& layer) {
  simdjson::dom::parser parser;
  const simdjson::dom::element root = inspect_json(parser, layer);
  return simdjson::minify(root["metadata"]["embedding_profile"]);
}

}  // namespace

TEST_CASE("agentsdb compile --embedder command: the layer records the declared profile") {
  temporary_directory dir;
  const std::string out = dir.path() + "/docs.db";
  const std::string count_file = dir.path() + "/starts";
  check_clean_success(compile_texts(out, {"--embedder", "command", "--embed-command", script_command(6, count_file),
                                    "--embed-backend", "local", "--embed-model", "byte-sum", "--embed-revision",
                                    "r1", "--embed-norm", "l2", "--dim", "6"}));
  CHECK(recorded_profile(out) ==
        R"({"backend":"local","model":"byte-sum","revision":"r1","dim":6,"output_norm":"l2"})");
  CHECK(starts_in(count_file) == 1);

  // The rows are the program's vectors: whole numbers, as it computes them.
  simdjson::dom::parser parser;
  const simdjson::dom::element layer = inspect_json(parser, out);
  CHECK(layer["embeddings"]["dim"].get_uint64().value() == 6);
  CHECK(layer["embeddings"]["row_count"].get_uint64().value() == 2);

  // Model and revision not given: null.
  const std::string plain = dir.path() + "/plain.db";
  check_clean_success(compile_texts(plain, {"--embedder", "command", "--embed-command", script_command(3, count_file),
                                      "--dim", "3"}));
  CHECK(recorded_profile(plain) == R"({"backend":"command","model":null,"revision":null,"dim":3,"output_norm":"none"})");
}

TEST_CASE("agentsdb compile --embedding-cache: a second run embeds nothing") {
  temporary_directory dir;
  const std::string count_file = dir.path() + "/starts";
  const std::vector<std::string> flags = {"--embedder", "command", "--embed-command", script_command(4, count_file),
                                          "--dim", "4", "--embedding-cache", dir.path() + "/cache"};
  check_clean_success(compile_texts(dir.path() + "/first.db", flags));
  CHECK(starts_in(count_file) == 1);
  check_clean_success(compile_texts(dir.path() + "/second.db", flags));
  CHECK(starts_in(count_file) == 1);  // every text was cached: the program was not started
  CHECK(cli_test::read_file(dir.path() + "/first.db") == cli_test::read_file(dir.path() + "/second.db"));
  CHECK(cli_test::list_directory(dir.path() + "/cache").size() == 1);

  // A cached and an uncached compile give the same layer.
  check_clean_success(compile_texts(dir.path() + "/uncached.db", {"--embedder", "command", "--embed-command",
                                                            script_command(4, count_file), "--dim", "4"}));
  CHECK(cli_test::read_file(dir.path() + "/uncached.db") == cli_test::read_file(dir.path() + "/first.db"));

  // The hash embedder caches as well, and --dim alone selects it.
  const std::vector<std::string> hash_flags = {"--dim", "16", "--embedding-cache", dir.path() + "/cache"};
  check_clean_success(compile_texts(dir.path() + "/hash.db", hash_flags));
  CHECK(recorded_profile(dir.path() + "/hash.db") ==
        R"({"backend":"hash","model":null,"revision":null,"dim":16,"output_norm":"none"})");
  CHECK(cli_test::list_directory(dir.path() + "/cache").size() == 2);
}

TEST_CASE("agentsdb compile: without embedder options the hash embedder at dim 128 is used") {
  temporary_directory dir;
  check_clean_success(compile_texts(dir.path() + "/default.db", {}));
  CHECK(recorded_profile(dir.path() + "/default.db") ==
        R"({"backend":"hash","model":null,"revision":null,"dim":128,"output_norm":"none"})");
  check_clean_success(compile_texts(dir.path() + "/hash.db", {"--embedder", "hash"}));
  CHECK(cli_test::read_file(dir.path() + "/hash.db") == cli_test::read_file(dir.path() + "/default.db"));
}

TEST_CASE("agentsdb compile: bad embedder flags and failing programs exit 2 with one line") {
  temporary_directory dir;
  const std::string out = dir.path() + "/out.db";
  const std::string ok_command = script_command(4, dir.path() + "/starts");
  struct bad_case {
    std::vector<std::string> flags;
    std::string fragment;
  };
  const std::vector<bad_case> cases = {
      {{"--embedder", "onnx"}, "--embedder"},
      {{"--embed-command", ok_command}, "--embed-command applies to --embedder command only"},
      {{"--embedder", "hash", "--embed-model", "m"}, "--embed-model applies to --embedder command only"},
      {{"--embedder", "command", "--dim", "4"}, "needs --embed-command"},
      {{"--embedder", "command", "--embed-command", ok_command}, "needs --dim"},
      {{"--embedder", "command", "--embed-command", ok_command, "--dim", "4", "--embed-norm", "unit"}, "--embed-norm"},
      {{"--embedding-cache", dir.path() + "/cache"}, "--embedding-cache needs"},
      {{"--dim", "0"}, "--dim"},
      {{"--embedder", "command", "--embed-command", ok_command, "--dim", "5"}, "expected dim 5"},
      {{"--embedder", "command", "--embed-command", "exit 4", "--dim", "4"}, "exited with status 4"},
      {{"--embedder", "command", "--embed-command", "perl '" + script + "' --dim 4", "--dim", "4", "--text", "!error"},
       "the model refused"},
      {{"--dim", "8", "--embedding-cache", dir.path() + "/no/such/parent"}, "no/such/parent"},
  };
  for (const bad_case& c : cases) {
    std::string joined;
    for (const std::string& flag : c.flags) joined += flag + " ";
    CAPTURE(joined);
    const run_result r = compile_texts(out, c.flags);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("agentsdb: ", 0) == 0);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(c.fragment) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("agentsdb compile --help lists the embedder options") {
  const run_result r = agentsdb({"compile", "--help"});
  check_clean_success(r);
  for (const char* option : {"--embedder", "--embed-command", "--embed-backend", "--embed-model", "--embed-revision",
                             "--embed-norm", "--dim", "--embedding-cache"}) {
    CAPTURE(option);
    CHECK(r.out.find(option) != std::string::npos);
  }
}

#endif

}  // namespace cli_agentsdb_embedder_test
