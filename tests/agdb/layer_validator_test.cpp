#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "agdb/hand_built_layer.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/io/posix_file_system.hpp"

namespace agdb_layer_validator_test {

using agentctx::errc;
using agentctx::agdb::layer_reader;

namespace {

std::vector<agentctx::agdb::violation> violations_of(const agdb_test::layer_spec& spec, std::size_t max = 1000) {
  const auto layer = agdb_test::build(spec);
  auto reader = layer_reader::from_bytes(layer.bytes, "v.db");
  INFO((reader ? std::string() : reader.error().describe()));
  REQUIRE(reader.has_value());
  return agentctx::agdb::validate(*reader, max);
}

}  // namespace

TEST_CASE("valid layers of every shape validate clean") {
  auto base = agdb_test::base_spec();
  CHECK(violations_of(base).empty());

  auto i8 = base;
  i8.type = agdb_test::element_type::i8;
  i8.quant_scale = 0.0078125f;
  CHECK(violations_of(i8).empty());

  auto bare = base;
  bare.order = {3, 2, 1};  // any section order is legal
  bare.metadata.reset();
  for (auto& c : bare.chunks) c.rel_start = c.rel_count = 0;
  CHECK(violations_of(bare).empty());

  auto empty = bare;
  empty.strings.clear();
  empty.chunks.clear();
  empty.rows = 0;
  CHECK(violations_of(empty).empty());

  auto shared_rows = base;  // rows may be shared and need not match the chunk count
  shared_rows.rows = 5;
  shared_rows.chunks[2].embedding_row = 1;
  shared_rows.version_minor = 3;
  CHECK(violations_of(shared_rows).empty());
}

TEST_CASE("validate lists every violation up to the limit") {
  auto spec = agdb_test::base_spec();
  for (auto& c : spec.chunks) {
    c.id = 0;
    c.reserved0 = 1;
  }
  const auto all = violations_of(spec);
  REQUIRE(all.size() == 6);
  CHECK(all[0].code == errc::invalid_id);
  CHECK(all[1].code == errc::reserved_nonzero);
  CHECK(all[1].offset == all[0].offset + 32);
  CHECK(violations_of(spec, 4).size() == 4);
  CHECK(violations_of(spec, 1).size() == 1);
  CHECK(violations_of(spec, 0).empty());
}

TEST_CASE("open errors and violations become uniform reports") {
  auto spec = agdb_test::base_spec();
  spec.order = {1, 2, 5, 4, 3, 77};
  const auto layer = agdb_test::build(spec);

  SUBCASE("an unknown section is reported but the layer still opens") {
    auto report = agentctx::agdb::make_validation_report(layer_reader::from_bytes(layer.bytes, "u.db"));
    CHECK(report.opened);
    CHECK(report.path == "u.db");
    CHECK_FALSE(report.ok());
    REQUIRE(report.violations.size() == 1);
    CHECK(report.violations[0].code == errc::unknown_section);
    CHECK(report.violations[0].offset == layer.entry_at[5]);
    const auto e = agentctx::agdb::to_error(report.violations[0], report.path);
    CHECK(e.describe() == "u.db: at byte " + std::to_string(layer.entry_at[5]) + ": " + report.violations[0].message);
  }

  SUBCASE("an open error is a one-violation report") {
    auto bytes = layer.bytes;
    bytes[0] = std::byte{'X'};
    auto report = agentctx::agdb::make_validation_report(layer_reader::from_bytes(bytes, "x.db"));
    CHECK_FALSE(report.opened);
    CHECK_FALSE(report.ok());
    CHECK(report.path == "x.db");
    REQUIRE(report.violations.size() == 1);
    CHECK(report.violations[0].code == errc::bad_magic);
    CHECK(report.violations[0].offset == 0);
  }

  SUBCASE("validate_file opens through the file system") {
    const std::string path = "/tmp/agentctx_layer_validator_test_" + std::to_string(::getpid()) + ".db";
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(layer.bytes.data()), static_cast<std::streamsize>(layer.bytes.size()));
    }
    auto report = agentctx::agdb::validate_file(agentctx::io::default_file_system(), path);
    CHECK(report.opened);
    CHECK(report.path == path);
    CHECK(report.violations.size() == 1);
    std::remove(path.c_str());

    auto missing = agentctx::agdb::validate_file(path);
    CHECK_FALSE(missing.opened);
    CHECK(missing.path == path);
    REQUIRE(missing.violations.size() == 1);
    CHECK(missing.violations[0].code == errc::not_found);
    CHECK(missing.violations[0].offset == agentctx::error::no_offset);
  }
}

TEST_CASE("the author check accepts exactly \"human\" and \"mcp\"") {
  for (const char* author : {"Human", "human ", "MCP", "", "hum"}) {
    CAPTURE(author);
    auto spec = agdb_test::base_spec();
    spec.strings[6] = author;  // string 7, the second chunk's author
    const auto layer = agdb_test::build(spec);
    auto reader = layer_reader::from_bytes(layer.bytes, "a.db");
    REQUIRE(reader);
    const auto violations = agentctx::agdb::validate(*reader);
    REQUIRE(violations.size() == 1);
    CHECK(violations[0].code == errc::invalid_value);
    CHECK(violations[0].offset == layer.record(1) + 12);
  }
}

}  // namespace agdb_layer_validator_test
