// End-to-end tests of `agentsdb serve`: the real binary speaking MCP over its
// stdin and stdout. A lock-step session over pipes (handshake, tools, a write
// that the next search sees, a proposal), a scripted session of good and bad
// lines (stdout carries exactly one answer per request, in order, and
// nothing else; end of input exits 0), and start-up errors.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/io/subprocess.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"
#include "mcp/mcp_test_support.hpp"
#include "support/hash_layer.hpp"

namespace cli_agentsdb_serve_test {

#ifndef AGENTSDB_BIN
#error "AGENTSDB_BIN must name the agentsdb binary under test"
#endif

namespace agdb = agentctx::agdb;
using cli_test::contains;
using mcp_test::call;
using mcp_test::initialize;
using mcp_test::request;

namespace {

// A running `agentsdb serve` in `directory`, talked to one line at a time.
class serve_process {
 public:
  explicit serve_process(const std::string& directory, std::vector<std::string> extra_arguments = {}) {
    // /bin/sh sets the working directory; stderr goes to a file so that the
    // test can check what was logged.
    std::string command = "cd \"$0\" && exec \"$1\" serve";
    for (std::size_t i = 0; i < extra_arguments.size(); ++i) command += " \"$" + std::to_string(i + 3) + "\"";
    command += " 2>\"$2\"";
    std::vector<std::string> argv = {"/bin/sh", "-c", command, directory, AGENTSDB_BIN, directory + "/serve.log"};
    argv.insert(argv.end(), extra_arguments.begin(), extra_arguments.end());
    agentctx::io::spawn_options options;
    options.timeout = std::chrono::seconds(60);
    options.name = "agentsdb serve";
    auto child = agentctx::io::child_process::spawn(argv, options);
    INFO((child ? std::string() : child.error().describe()));
    REQUIRE(child.has_value());
    child_.emplace(std::move(*child));
    log_path_ = directory + "/serve.log";
  }

  // Sends `line` and returns the next line of output.
  std::string ask(std::string_view line) {
    const std::string framed = std::string(line) + "\n";
    auto exchanged = child_->exchange(framed, received_, [](std::string& received) -> agentctx::result<bool> {
      return received.find('\n') != std::string::npos;
    });
    INFO((exchanged ? std::string() : exchanged.error().describe()));
    REQUIRE(exchanged.has_value());
    const std::size_t end = received_.find('\n');
    std::string answer = received_.substr(0, end);
    received_.erase(0, end + 1);
    return answer;
  }

  // Sends `line`, expecting no answer: the next ping's answer must be the next line.
  void tell(std::string_view line) {
    const std::string framed = std::string(line) + "\n";
    REQUIRE(child_->write_all(framed, received_).has_value());
    CHECK(ask(request(999999, "ping")) == R"({"jsonrpc":"2.0","id":999999,"result":{}})");
  }

  // Closes stdin and returns the exit code; nothing may be left unread.
  int finish() {
    CHECK(received_.empty());
    auto code = child_->wait();
    REQUIRE(code.has_value());
    return *code;
  }

  std::string log() const { return cli_test::read_file(log_path_); }

 private:
  std::optional<agentctx::io::child_process> child_;
  std::string received_;
  std::string log_path_;
};

simdjson::dom::element parse(simdjson::dom::parser& parser, const std::string& text) {
  return cli_test::parse_json(parser, text);
}

// Base and delta layers in `dir` (hash embedder, dim 128).
void write_layers(const std::string& dir) {
  auto& fs = agentctx::io::default_file_system();
  test_support::write_hash_layer(fs, dir + "/AGENTS.db",
                                 {{1, "canonical", "Releases are cut from the release branch on Tuesdays."},
                                  {2, "note", "The CLI lives in cli/."}});
  test_support::write_hash_layer(fs, dir + "/AGENTS.delta.db",
                                 {{1, "canonical", "Releases are cut on Wednesdays."}});
}

}  // namespace

TEST_CASE("agentsdb serve: handshake, tools, a write the next search sees, a proposal, then EOF exits 0") {
  io_test::temporary_directory dir;
  write_layers(dir.path());
  serve_process server(dir.path());
  simdjson::dom::parser parser;

  const std::string hello = server.ask(initialize(1, "2025-06-18"));
  const auto init = parse(parser, hello);
  CHECK(cli_test::text_of(init["result"].value(), "protocolVersion") == "2025-06-18");
  CHECK(cli_test::text_of(init["result"]["serverInfo"].value(), "name") == "agentsdb");
  CHECK(simdjson::minify(init["result"]["capabilities"].value()) == R"({"tools":{}})");
  server.tell(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");

  std::vector<std::string> names;
  const auto listed = parse(parser, server.ask(request(2, "tools/list")));
  for (const auto tool : cli_test::array_of(listed["result"].value(), "tools")) {
    names.push_back(cli_test::text_of(tool, "name"));
    CHECK(tool["inputSchema"]["type"].get_string().value() == "object");
    CHECK(tool["outputSchema"]["type"].get_string().value() == "object");
  }
  CHECK(names == std::vector<std::string>{"agents_search", "agents_context_write", "agents_context_propose"});

  // The delta copy of 1 overrides the base copy and reports the conflict.
  const auto found = parse(parser, server.ask(call(3, "agents_search", R"({"query":"Releases are cut on Wednesdays.","k":1})")));
  const simdjson::dom::element hit = found["result"]["structuredContent"]["results"].at(0).value();
  CHECK(cli_test::text_of(hit, "layer") == "delta");
  CHECK(cli_test::number_of(hit, "id") == 1);
  CHECK(cli_test::text_of(hit["conflicts"].at(0).value(), "layer") == "base");

  const auto written = parse(parser, server.ask(call(4, "agents_context_write",
                                                     R"({"content":"Invariant: requests to /foo MUST include header )"
                                                     R"(Bar.","kind":"invariant","confidence":0.8,"sources":)"
                                                     R"(["src/server/router.ts:88"],"scope":"delta"})")));
  CHECK_FALSE(written["result"]["isError"].get_bool().value());
  const std::uint64_t id = cli_test::number_of(written["result"]["structuredContent"].value(), "context_id");

  const auto again = parse(parser, server.ask(call(5, "agents_search", R"({"query":"Invariant: requests to /foo )"
                                                                     R"(MUST include header Bar.","k":1})")));
  const simdjson::dom::element new_hit = again["result"]["structuredContent"]["results"].at(0).value();
  CHECK(cli_test::number_of(new_hit, "id") == id);
  CHECK(cli_test::text_of(new_hit, "author") == "mcp");

  const auto proposed = parse(parser, server.ask(call(6, "agents_context_propose",
                                                      R"({"context_id":)" + std::to_string(id) + R"(,"target":"user"})")));
  CHECK_FALSE(proposed["result"]["isError"].get_bool().value());
  CHECK_FALSE(proposed["result"]["structuredContent"]["already_pending"].get_bool().value());

  // Tool errors are results; protocol errors are errors; the server goes on.
  const auto refused = parse(parser, server.ask(call(7, "agents_context_write", R"({"content":"x","kind":"note",)"
                                                                              R"("confidence":0.5,"scope":"base"})")));
  CHECK(refused["result"]["isError"].get_bool().value());
  CHECK(parse(parser, server.ask(call(8, "agents_drop_table", "{}")))["error"]["code"].get_int64().value() == -32602);
  CHECK(parse(parser, server.ask("{oops"))["error"]["code"].get_int64().value() == -32700);
  CHECK(server.ask(request(9, "ping")) == R"({"jsonrpc":"2.0","id":9,"result":{}})");

  CHECK(server.finish() == 0);
  const std::string log = server.log();
  CHECK(contains(log, "agentsdb serve: base layer: AGENTS.db (2 chunks)\n"));
  CHECK(contains(log, "agentsdb serve: local layer: AGENTS.local.db (absent)\n"));
  CHECK(contains(log, "agentsdb serve: agents_context_write: invalid arguments"));
  for (std::size_t at = 0; at < log.size(); at = log.find('\n', at) + 1) {
    CHECK(log.compare(at, 16, "agentsdb serve: ") == 0);
  }

  // The proposal is in the delta layer.
  auto delta = agdb::layer_reader::open(agentctx::io::default_file_system(), dir.path() + "/AGENTS.delta.db");
  REQUIRE(delta.has_value());
  auto ledger = agdb::fold_proposals(*delta);
  REQUIRE(ledger.has_value());
  REQUIRE(ledger->proposals.size() == 1);
  CHECK(ledger->proposals[0].context_id == id);
}

TEST_CASE("agentsdb serve: a scripted session of good and bad lines; stdout holds the answers only") {
  io_test::temporary_directory dir;
  write_layers(dir.path());
  const std::vector<std::string> lines = {
      initialize(1),
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
      "",
      "not json",
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})",
      R"({"jsonrpc":"1.0","id":3,"method":"ping"})",
      call(4, "agents_search", R"({"query":")" + std::string(3 << 20, 'q') + R"("})"),
      call(5, "agents.search", R"({"query":"CLI","layers":["base"],"k":1})"),
      R"([{"jsonrpc":"2.0","id":6,"method":"ping"}])",
      request(7, "prompts/list"),
      call(8, "agents_context_write", R"({"content":"Local note.","kind":"note","confidence":1,"scope":"local"})"),
      R"({"jsonrpc":"2.0","id":"last","method":"ping"})",  // no newline at the end of input
  };
  std::string input;
  for (const std::string& line : lines) input += line + "\n";
  input.pop_back();
  cli_test::write_file(dir.path() + "/session.jsonl", input);

  const cli_test::run_result r = cli_test::agentsdb({"serve", "--max-line-bytes", "1048576"}, dir.path(),
                                                    dir.path() + "/session.jsonl");
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  std::vector<std::string> answers;
  for (std::size_t at = 0; at < r.out.size();) {
    const std::size_t end = r.out.find('\n', at);
    REQUIRE(end != std::string::npos);  // every answer ends with a newline
    answers.push_back(r.out.substr(at, end - at));
    at = end + 1;
  }
  // One answer per line but the notification and the blank line, in order.
  struct expected_answer {
    const char* id_json;
    int error_code;  // 0: a result
  };
  const std::vector<expected_answer> expected = {{"1", 0},      {"null", -32700}, {"2", 0},      {"3", -32600},
                                                 {"null", -32600}, {"5", 0},     {"null", -32600}, {"7", -32601},
                                                 {"8", 0},      {"\"last\"", 0}};
  REQUIRE(answers.size() == expected.size());
  for (std::size_t i = 0; i < answers.size(); ++i) {
    CAPTURE(answers[i].substr(0, 300));
    simdjson::dom::parser parser;
    const auto answer = parse(parser, answers[i]);
    CHECK(simdjson::minify(answer["id"].value()) == expected[i].id_json);
    if (expected[i].error_code == 0) {
      CHECK(answer["result"].error() == simdjson::SUCCESS);
    } else {
      CHECK(answer["error"]["code"].get_int64().value() == expected[i].error_code);
    }
  }
  const std::string too_long = "the message has " + std::to_string(lines[6].size()) + " bytes";
  CHECK(contains(answers[4], too_long + "; the limit is 1048576 bytes per line"));
  CHECK(contains(answers[5], R"(The CLI lives in cli/.)"));
  CHECK(contains(r.err, "agentsdb serve: " + too_long));
  CHECK(std::filesystem::exists(dir.path() + "/AGENTS.local.db"));
}

TEST_CASE("agentsdb serve: what the client sends reaches the log on stderr escaped") {
  io_test::temporary_directory dir;
  write_layers(dir.path());
  cli_test::write_file(dir.path() + "/session.jsonl",
                       initialize(1) + "\n" + call(2, "agents_nothing\\u001b]0;t\\u0007", "{}") + "\n");
  const cli_test::run_result r = cli_test::agentsdb({"serve"}, dir.path(), dir.path() + "/session.jsonl");
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\x07') == std::string::npos);
  CHECK(contains(r.err, "agents_nothing\\x1b]0;t\\x07"));
}

TEST_CASE("agentsdb serve: start-up errors are one line on stderr with the documented exit code") {
  io_test::temporary_directory dir;
  cli_test::write_file(dir.path() + "/AGENTS.db", "not a layer");
  cli_test::check_error(cli_test::agentsdb({"serve"}, dir.path()), 1, "AGENTS.db");
  cli_test::check_error(cli_test::agentsdb({"serve", "--max-line-bytes", "0"}, dir.path()), 2, "--max-line-bytes");
  cli_test::check_error(cli_test::agentsdb({"serve", "--embed-command", "cat"}, dir.path()), 2,
                        "--embed-command applies to --embedder command only");

  // Layers that do not exist yet are fine: the server starts and reports them absent.
  io_test::temporary_directory empty;
  cli_test::write_file(empty.path() + "/in.jsonl", request(1, "ping") + "\n");
  const cli_test::run_result r =
      cli_test::agentsdb({"serve", "--base", "missing.db"}, empty.path(), empty.path() + "/in.jsonl");
  CHECK(r.exit_code == 0);
  CHECK(r.out == R"({"jsonrpc":"2.0","id":1,"result":{}})"
                 "\n");
  CHECK(contains(r.err, "agentsdb serve: base layer: missing.db (absent)"));
}

}  // namespace cli_agentsdb_serve_test
