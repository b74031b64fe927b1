// End-to-end tests of `agentsdb export` and `agentsdb import`: both spellings
// through files and pipes, redaction, the round trip into a fresh repository
// (same contents, vectors and provenance), dedupe on a second import, and the
// refusals as one-line errors with the documented exit codes.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_agentsdb_export_test {

#ifndef AGENTSDB_BIN
TEST_CASE("agentsdb export/import: end-to-end tests") {
  MESSAGE("skipping: AGENTSDB_BIN is not defined (the agentsdb target is not part of this build)");
}
#else

using cli_test::agentsdb;
using cli_test::array_of;
using cli_test::check_clean_success;
using cli_test::check_error;
using cli_test::contains;
using cli_test::number_of;
using cli_test::run_result;

namespace {

namespace agdb = agentctx::agdb;

// A repository with a compiled base and one agent write in the local layer
// whose source is a base chunk.
struct export_repo {
  io_test::temporary_directory dir;
  std::uint64_t base_id = 0;
  std::uint64_t local_id = 0;

  export_repo() {
    cli_test::write_file(dir.path() + "/AGENTS.md", "# Guide\n\nReleases are cut on Fridays.\n\n## Build\n\nRun make.\n");
    check_clean_success(agentsdb({"compile", "--root", ".", "--include", "AGENTS.md", "--out", "AGENTS.db"}, dir.path()));
    simdjson::dom::parser parser;
    const run_result found = run({"search", "--query", "Fridays", "--json"});
    check_clean_success(found);
    const simdjson::dom::element best = array_of(cli_test::parse_json(parser, found.out), "results").at(0).value();
    base_id = number_of(best["chunk"].value(), "id");
    CHECK(contains(cli_test::text_of(best["chunk"].value(), "content"), "Fridays"));
    const run_result wrote = run({"write", "--scope", "local", "--content", "Release notes live in CHANGES.md.",
                                  "--kind", "note", "--confidence", "0.7", "--source", std::to_string(base_id), "--json"});
    check_clean_success(wrote);
    local_id = number_of(cli_test::parse_json(parser, wrote.out), "id");
  }
  run_result run(const std::vector<std::string>& arguments, const std::string& input = "/dev/null") const {
    return agentsdb(arguments, dir.path(), input);
  }
};

std::vector<agdb::chunk> chunks_of(const std::string& path) {
  auto reader = agdb::layer_reader::open(agentctx::io::default_file_system(), path);
  REQUIRE(reader.has_value());
  auto contents = agdb::read_layer_contents(*reader);
  REQUIRE(contents.has_value());
  return contents->chunks;
}

}  // namespace

TEST_CASE("agentsdb export: JSON on stdout, NDJSON to a file, the reference's members") {
  export_repo repo;
  const run_result json = repo.run({"export"});
  check_clean_success(json);
  simdjson::dom::parser parser;
  const auto root = cli_test::parse_json(parser, json.out);
  CHECK(cli_test::text_of(root, "format") == "agentsdb.export.v1");
  const auto layers = array_of(root, "layers");
  REQUIRE(layers.size() == 2);  // base and local; the others do not exist
  CHECK(cli_test::text_of(layers.at(0), "layer") == "base");
  CHECK(cli_test::text_of(layers.at(1), "path") == "AGENTS.local.db");
  const simdjson::dom::element local_chunk = array_of(layers.at(1), "chunks").at(0).value();
  CHECK(number_of(local_chunk, "id") == repo.local_id);
  CHECK(cli_test::text_of(local_chunk, "author") == "mcp");
  CHECK(number_of(array_of(local_chunk, "sources").at(0), "id") == repo.base_id);

  const run_result ndjson = repo.run({"export", "--format", "ndjson", "--layers", "local", "--out", "local.ndjson"});
  check_clean_success(ndjson);
  CHECK(ndjson.out == "exported 1 chunk from 1 layer to local.ndjson\n");
  const std::string text = cli_test::read_file(repo.dir.path() + "/local.ndjson");
  CHECK(cli_test::line_count(text) == 3);  // header, layer, chunk
  CHECK(contains(text, "\"format\":\"agentsdb.export.ndjson.v1\""));

  const run_result redacted = repo.run({"export", "--redact", "all", "--layers", "base"});
  check_clean_success(redacted);
  CHECK_FALSE(contains(redacted.out, "Fridays"));
  CHECK(contains(redacted.out, "\"content\":null"));
  CHECK(contains(redacted.out, "\"embedding\":null"));
}

TEST_CASE("agentsdb import: a round trip into a fresh repository keeps contents, vectors and provenance") {
  export_repo repo;
  check_clean_success(repo.run({"export", "--format", "ndjson", "--out", "all.ndjson"}, "/dev/null"));
  io_test::temporary_directory other;
  const std::string in = repo.dir.path() + "/all.ndjson";
  const run_result first = agentsdb({"import", "--in", in, "--target", "user", "--json"}, other.path());
  check_clean_success(first);
  simdjson::dom::parser parser;
  const auto report = cli_test::parse_json(parser, first.out);
  CHECK(number_of(report, "imported") == 3);
  CHECK(number_of(report, "duplicates") == 0);
  CHECK(number_of(report, "embedded") == 0);
  CHECK(report["created"].get_bool().value());
  const auto ids = array_of(report, "ids");
  REQUIRE(ids.size() == 3);

  const std::vector<agdb::chunk> source_base = chunks_of(repo.dir.path() + "/AGENTS.db");
  const std::vector<agdb::chunk> user = chunks_of(other.path() + "/AGENTS.user.db");
  REQUIRE(user.size() == 3);
  CHECK(user[0].content == source_base[0].content);
  CHECK(user[0].sources == source_base[0].sources);
  // The local chunk's source named a base chunk of the export: it now names that chunk's copy.
  std::uint64_t copy_of_base = 0;
  for (const auto entry : ids) {
    if (number_of(entry, "from") == repo.base_id) copy_of_base = number_of(entry, "to");
  }
  REQUIRE(copy_of_base != 0);
  CHECK(user[2].content == "Release notes live in CHANGES.md.");
  CHECK(user[2].author == "mcp");
  CHECK(user[2].sources == std::vector{agdb::source_ref::to_chunk(static_cast<std::uint32_t>(copy_of_base))});

  // A search in the new repository finds the imported text with the imported vectors.
  const run_result found = agentsdb({"search", "--query", "Fridays", "--json"}, other.path());
  check_clean_success(found);
  CHECK(contains(found.out, "Releases are cut on Fridays."));

  // The second import of the same file adds nothing (dedupe by content).
  const run_result second = agentsdb({"import", "--in", in, "--target", "user"}, other.path());
  check_clean_success(second);
  CHECK(contains(second.out, "imported 0 chunks"));
  CHECK(contains(second.out, "3 duplicates skipped"));
  CHECK(chunks_of(other.path() + "/AGENTS.user.db").size() == 3);
}

TEST_CASE("agentsdb import: standard input, dry runs, JSON bundles") {
  export_repo repo;
  check_clean_success(repo.run({"export", "--layers", "local", "--out", "local.json"}));
  io_test::temporary_directory other;
  const run_result dry = agentsdb({"import", "--in", "-", "--target", "delta", "--dry-run"}, other.path(),
                                  repo.dir.path() + "/local.json");
  REQUIRE(dry.exit_code == 0);
  CHECK(contains(dry.out, "would import 1 chunk into the delta layer"));
  CHECK(contains(dry.err, "warning: 1 chunk-id source(s) name chunks in neither"));
  CHECK_FALSE(std::filesystem::exists(other.path() + "/AGENTS.delta.db"));
  const run_result real = agentsdb({"import", "--in", "-", "--target", "delta", "--preserve-ids"}, other.path(),
                                   repo.dir.path() + "/local.json");
  INFO(real.err);
  REQUIRE(real.exit_code == 0);
  CHECK(contains(real.err, "name chunks in neither the import nor the layers"));  // the base chunk was not exported
  const std::vector<agdb::chunk> delta = chunks_of(other.path() + "/AGENTS.delta.db");
  REQUIRE(delta.size() == 1);
  CHECK(delta[0].id == repo.local_id);
}

TEST_CASE("agentsdb export/import: bad requests are one-line errors with the documented exit codes") {
  export_repo repo;
  check_clean_success(repo.run({"export", "--redact", "content", "--out", "redacted.json"}));
  cli_test::write_file(repo.dir.path() + "/broken.json", "{\"format\":\"agentsdb.export.v1\",\"layers\":[{]}");
  cli_test::write_file(repo.dir.path() + "/future.json", "{\"format\":\"agentsdb.export.v9\",\"layers\":[]}");
  check_error(repo.run({"export", "--format", "xml"}), 2, "--format must be json or ndjson");
  check_error(repo.run({"export", "--redact", "secrets"}), 2, "--redact must be none, content, embeddings or all");
  check_error(repo.run({"export", "--layers", "top"}), 2, "--layers takes base, user, delta and local");
  check_error(repo.run({"export", "--layers", "user"}), 1, "none of the layers to export exists");
  check_error(repo.run({"export", "--user", "missing.db"}), 2, "missing.db does not exist");
  check_error(repo.run({"import", "--in", "redacted.json", "--target", "user"}), 1, "without its content");
  check_error(repo.run({"import", "--in", "broken.json", "--target", "user"}), 1, "broken.json");
  check_error(repo.run({"import", "--in", "future.json", "--target", "user"}), 1, "agentsdb.export.v9");
  check_error(repo.run({"import", "--in", "nothing.json", "--target", "user"}), 2, "nothing.json: open failed: No such file or directory");
  check_error(repo.run({"import", "--in", "redacted.json", "--target", "base"}), 2, "--target must be local, delta or user");
  CHECK_FALSE(std::filesystem::exists(repo.dir.path() + "/AGENTS.user.db"));
}

TEST_CASE("agentsdb --out replaces only a regular file, writes through a symbolic link and keeps the file's mode") {
  export_repo repo;
  const std::string dir = repo.dir.path();
  REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);
  std::filesystem::create_directories(dir + "/folder");
  for (const std::string& out : {std::string("/dev/null"), dir + "/fifo"}) {
    CAPTURE(out);
    check_error(repo.run({"export", "--out", out}), 2, "--out " + out + ": not a regular file");
    check_error(repo.run({"compile", "--root", ".", "--include", "AGENTS.md", "--out", out}), 2, "not a regular file");
    check_error(repo.run({"compact", "--base", "AGENTS.db", "--user", "AGENTS.user.db", "--out", out}), 2,
                "not a regular file");
  }
  check_error(repo.run({"export", "--out", dir + "/folder"}), 2, "is a folder, not a file");
  check_error(repo.run({"export", "--out", ""}), 2, "--out: the file must be named (it is empty)");
  check_error(repo.run({"compile", "--root", ".", "--include", "AGENTS.md", "--out", "folder/"}), 2, "names a folder");
  check_error(repo.run({"sign", "--in", "AGENTS.db", "--key", "none.key", "--out", ""}), 2,
              "--out: the file must be named (it is empty)");
  check_error(repo.run({"sign", "--in", "AGENTS.db", "--key", "none.key", "--out", "/dev/null"}), 2,
              "--out /dev/null: not a regular file");
  check_error(repo.run({"export", "--out", "/dev/null"}), 2, "leave out --out to write to standard output");
  CHECK(std::filesystem::is_fifo(dir + "/fifo"));

  // A link to a file: the file gets the export, the link stays, the mode is kept.
  cli_test::write_file(dir + "/target.json", "old");
  std::filesystem::permissions(dir + "/target.json", std::filesystem::perms(0640));
  std::filesystem::create_symlink("target.json", dir + "/link.json");
  check_clean_success(repo.run({"export", "--out", "link.json"}));
  CHECK(std::filesystem::is_symlink(dir + "/link.json"));
  CHECK(contains(cli_test::read_file(dir + "/target.json"), "agentsdb.export.v1"));
  CHECK((std::filesystem::status(dir + "/target.json").permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms(0640));
  check_clean_success(repo.run({"compile", "--root", ".", "--include", "AGENTS.md", "--out", "AGENTS.db"}));
}

#endif

}  // namespace cli_agentsdb_export_test
