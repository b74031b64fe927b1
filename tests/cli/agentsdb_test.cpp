// End-to-end tests of the agentsdb command-line tool: each case runs the real
// binary (AGENTSDB_BIN) and checks its exit code, standard output and
// standard error against docs/cli/agentsdb.md. Cases that need the shared
// AGDB fixtures skip, saying so, when they are absent.
#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/core/endian.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_agentsdb_test {

#ifndef AGENTSDB_BIN
TEST_CASE("agentsdb: end-to-end tests") {
  MESSAGE("skipping: AGENTSDB_BIN is not defined (the agentsdb target is not part of this build)");
}
#else

using cli_test::agentsdb;
using cli_test::array_of;
using cli_test::check_clean_success;
using cli_test::check_error;
using cli_test::contains;
using cli_test::joined;
using cli_test::line_count;
using cli_test::number_of;
using cli_test::parse_json;
using cli_test::real_of;
using cli_test::text_of;
using cli_test::read_file;
using cli_test::run_result;
using cli_test::write_file;
using io_test::temporary_directory;

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// A small documentation tree.

struct source_file {
  std::string path;
  std::string bytes;
};

const std::string agents_md = "# Agents\n\nAlways run the tests before committing.\n";

// Compiled by `--include 'docs/**/*.md' --exclude 'docs/drafts/**'`.
const std::vector<source_file> compiled_docs = {
    {"docs/guide/deep/details.md", "# Details\n\nThe deepest page of the guide.\n"},
    {"docs/guide/faq.md", "# FAQ\n\nWhy? Because.\n"},
    {"docs/guide/intro.md", "# Guide\n\nHow the project is laid out.\n\n## Building\n\nRun cmake, then make.\n"},
    {"docs/top.md", "# Top\n\nThe index of the docs.\n"},
};

// Matched by the same globs but skipped with a warning, in path order.
const std::vector<source_file> unreadable_docs = {
    {"docs/guide/blob.md", std::string("\x89PNG\0\x01\x02\x03", 8)},
    {"docs/guide/latin1.md", "caf\xe9 au lait\n"},
};

// Never compiled by the globs above.
const std::vector<source_file> other_files = {
    {"AGENTS.md", agents_md},
    {"docs/drafts/wip.md", "# Draft\n\nNot ready yet.\n"},
    {"notes/todo.txt", "not markdown\n"},
};

std::vector<source_file> whole_tree() {
  std::vector<source_file> files = compiled_docs;
  files.insert(files.end(), unreadable_docs.begin(), unreadable_docs.end());
  files.insert(files.end(), other_files.begin(), other_files.end());
  return files;
}

// Creates the tree under `root`, in the given order or reversed.
void write_tree(const std::string& root, bool reversed = false) {
  std::vector<source_file> files = whole_tree();
  if (reversed) std::reverse(files.begin(), files.end());
  for (const auto& f : files) write_file(fs::path(root) / f.path, f.bytes);
}

const std::vector<std::string> docs_globs = {"--include", "docs/**/*.md", "--exclude", "docs/drafts/**"};

// compile --root ROOT <docs globs> --out OUT <extra...>
run_result compile_docs(const std::string& root, const std::string& out, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"compile", "--root", root, "--out", out};
  args.insert(args.end(), docs_globs.begin(), docs_globs.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return agentsdb(args);
}

// A tree compiled into `<dir>/docs.db`, checked to have succeeded.
struct compiled_layer {
  temporary_directory dir;
  std::string path = dir.path() + "/docs.db";
  compiled_layer() {
    write_tree(dir.path() + "/tree");
    const run_result r = compile_docs(dir.path() + "/tree", path, {"--quiet"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }
};


// Runs a command that must succeed with nothing on stderr and parses the JSON
// it prints (the document lives in `parser`).
simdjson::dom::element run_json(simdjson::dom::parser& parser, const std::vector<std::string>& args,
                                const std::string& working_directory = {}) {
  const run_result r = agentsdb(args, working_directory);
  check_clean_success(r);
  return parse_json(parser, r.out);
}


using name_counts = std::vector<std::pair<std::string, std::uint64_t>>;

// {"name": count, ...} as a list sorted by name.
name_counts counts_of(simdjson::dom::element e, std::string_view key) {
  name_counts out;
  const simdjson::dom::object object = e[key].get_object().value();
  for (auto field : object) out.emplace_back(std::string(field.key), field.value.get_uint64().value());
  std::sort(out.begin(), out.end());
  return out;
}

struct section_row {
  std::string name;
  std::uint64_t kind = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

std::vector<section_row> sections_of(simdjson::dom::element root) {
  std::vector<section_row> out;
  for (simdjson::dom::element s : array_of(root, "sections")) {
    out.push_back({text_of(s, "name"), number_of(s, "kind"), number_of(s, "offset"), number_of(s, "length")});
  }
  return out;
}

// The offset of the section named `name`, as `inspect --json` reports it.
std::uint64_t section_offset(const std::string& layer, std::string_view name) {
  simdjson::dom::parser parser;
  for (const auto& s : sections_of(run_json(parser, {"inspect", "--json", layer}))) {
    if (s.name == name) return s.offset;
  }
  FAIL("no section " << name << " in " << layer);
  return 0;
}

bool is_rfc3339_utc_ms(const std::string& text) {
  static const std::regex pattern(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
  return std::regex_match(text, pattern);
}

// ---------------------------------------------------------------------------
// Damaging a layer.

// The file offset of chunk record 0, read from the chunk table header that
// `inspect --json` locates.
std::uint64_t chunk_records_offset(const std::string& layer) {
  const std::uint64_t table = section_offset(layer, "chunks");
  const std::string bytes = read_file(layer);
  REQUIRE(table + 16 <= bytes.size());
  return agentctx::load_u64(bytes.data() + table + 8);
}

constexpr std::uint64_t chunk_record_size = 52;

// Gives chunk records 1..copies the id of chunk record 0.
void repeat_first_chunk_id(const std::string& layer, std::size_t copies) {
  const std::uint64_t records = chunk_records_offset(layer);
  std::string bytes = read_file(layer);
  REQUIRE(records + (copies + 1) * chunk_record_size <= bytes.size());
  for (std::size_t i = 1; i <= copies; ++i) {
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(records), 4,
                bytes.begin() + static_cast<std::ptrdiff_t>(records + i * chunk_record_size));
  }
  write_file(layer, bytes);
}

std::uint64_t inode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<std::uint64_t>(st.st_ino);
}

}  // namespace

// ===========================================================================
// Usage

TEST_CASE("agentsdb: --help of the tool and of each subcommand names every subcommand and option") {
  struct help_case {
    std::vector<std::string> args;
    std::vector<std::string> mentions;
  };
  const std::vector<help_case> cases = {
      {{"--help"}, {"compile", "inspect", "validate", "Exit codes"}},
      {{"compile", "--help"},
       {"--root", "--include", "--exclude", "--text", "--kind", "--out", "--element-type", "--dim", "--max-chunk-bytes",
        "--json", "--quiet"}},
      {{"inspect", "--help"}, {"--layer", "--id", "--list", "--limit", "--json"}},
      {{"validate", "--help"}, {"files", "--max-violations", "--json"}},
      {{"--version"}, {"agentsdb"}},
  };
  for (const auto& c : cases) {
    CAPTURE(joined(c.args));
    const run_result r = agentsdb(c.args);
    check_clean_success(r);
    for (const auto& word : c.mentions) {
      CAPTURE(word);
      CHECK(contains(r.out, word));
    }
  }
}

TEST_CASE("agentsdb: usage errors exit 2 with one line on stderr and nothing on stdout") {
  struct usage_case {
    std::vector<std::string> args;
    std::string fragment;
  };
  const std::vector<usage_case> cases = {
      {{}, "a command is required: one of compile, inspect"},
      {{"bogus"}, "'bogus'"},
      {{"--bogus"}, "'--bogus'"},
      {{"compile", "--bogus", "--text", "# T", "--out", "out.db"}, "'--bogus'"},
      {{"compile", "--include", "*.md"}, "--out"},
      {{"compile", "--out", "out.db"},
       "agentsdb: nothing to compile: give --include GLOB or --text TEXT (run 'agentsdb compile --help' for usage)\n"},
      {{"compile", "--text", "# T", "--out", "out.db", "--element-type", "f16"},
       "--element-type must be f32 or i8, not 'f16' (run 'agentsdb compile --help' for usage)\n"},
      {{"compile", "--text", "# T", "--out", "out.db", "--dim", "0"}, "--dim"},
      {{"compile", "--text", "# T", "--out", "out.db", "--max-chunk-bytes", "0"}, "--max-chunk-bytes"},
      {{"compile", "--text", "# T", "--out", "out.db", "--kind", ""}, "kind"},
      {{"compile", "--include", "/etc/*.md", "--out", "out.db"}, "absolute"},
      {{"inspect"}, "--layer"},
      {{"inspect", "a.db", "--layer", "a.db"}, "--layer"},
      {{"inspect", "a.db", "b.db"}, "'b.db'"},
      {{"inspect", "a.db", "--id", "two"}, "--id"},
      {{"validate"}, "files"},
      {{"validate", "--max-violations", "0", "a.db"}, "--max-violations"},
  };
  temporary_directory cwd;
  for (const auto& c : cases) {
    CAPTURE(joined(c.args));
    check_error(agentsdb(c.args, cwd.path()), 2, c.fragment);
  }
  // Nothing was written by any of them.
  CHECK(cli_test::list_directory(cwd.path()).empty());
}

// ===========================================================================
// compile

TEST_CASE("agentsdb compile: nested folders, --include/--exclude, binary and non-UTF-8 files skipped with a warning") {
  temporary_directory dir;
  const std::string root = dir.path() + "/tree";
  const std::string out = dir.path() + "/docs.db";
  write_tree(root);

  const run_result r = compile_docs(root, out, {"--json"});
  REQUIRE(r.exit_code == 0);

  // One warning line per skipped file, in path order.
  const std::string expected_warnings =
      "agentsdb: warning: skipped docs/guide/blob.md: binary (NUL byte at offset 4)\n"
      "agentsdb: warning: skipped docs/guide/latin1.md: not valid UTF-8 (byte 3)\n";
  CHECK(r.err == expected_warnings);

  simdjson::dom::parser parser;
  const auto summary = parse_json(parser, r.out);
  CHECK(text_of(summary, "out") == out);
  CHECK(number_of(summary, "files") == compiled_docs.size());
  std::vector<std::string> skipped;
  for (simdjson::dom::element s : array_of(summary, "skipped")) {
    skipped.push_back(text_of(s, "path"));
    CHECK_FALSE(text_of(s, "reason").empty());
  }
  CHECK(skipped == std::vector<std::string>{"docs/guide/blob.md", "docs/guide/latin1.md"});
  std::uint64_t input_bytes = 0;
  for (const auto& f : compiled_docs) input_bytes += f.bytes.size();
  CHECK(number_of(summary, "input_bytes") == input_bytes);
  CHECK(number_of(summary, "output_bytes") == fs::file_size(out));
  CHECK(text_of(summary, "element_type") == "f32");
  CHECK(real_of(summary, "seconds") >= 0.0);
  const std::uint64_t chunks = number_of(summary, "chunks");
  CHECK(chunks >= compiled_docs.size());

  // The layer holds exactly the chunks of the compiled files, in path
  // order, each with one "PATH:LINE" source.
  simdjson::dom::parser list_parser;
  const auto layer = run_json(list_parser, {"inspect", out, "--list", "--json"});
  CHECK(number_of(layer, "chunk_count") == chunks);
  std::vector<std::string> source_files;
  for (simdjson::dom::element c : array_of(layer, "chunks")) {
    const auto sources = array_of(c, "sources");
    REQUIRE(sources.size() == 1);
    const simdjson::dom::element source = sources.at(0).value();
    CHECK(text_of(source, "type") == "source_string");
    const std::string value = text_of(source, "value");
    const std::size_t colon = value.rfind(':');
    REQUIRE(colon != std::string::npos);
    CHECK(std::stoul(value.substr(colon + 1)) >= 1);
    source_files.push_back(value.substr(0, colon));
  }
  CHECK(std::is_sorted(source_files.begin(), source_files.end()));
  const std::set<std::string> distinct(source_files.begin(), source_files.end());
  std::set<std::string> expected_files;
  for (const auto& f : compiled_docs) expected_files.insert(f.path);
  CHECK(distinct == expected_files);

  // Without --json: one summary line on stdout, the same warnings on stderr.
  const run_result text = compile_docs(root, dir.path() + "/again.db");
  CHECK(text.exit_code == 0);
  CHECK(text.err == expected_warnings);
  CHECK(text.out.rfind("compiled " + std::to_string(compiled_docs.size()) + " files (2 skipped) into " +
                           std::to_string(chunks) + " chunks",
                       0) == 0);
  CHECK(line_count(text.out) == 1);
}

TEST_CASE("agentsdb compile: the RFC form, run from inside the tree") {
  temporary_directory dir;
  write_tree(dir.path());

  const run_result r = agentsdb({"compile", "--root", ".", "--include", "AGENTS.md", "--out", "AGENTS.db"}, dir.path());
  check_clean_success(r);
  CHECK(r.out.rfind("compiled 1 files (0 skipped) into 1 chunks", 0) == 0);
  CHECK(contains(r.out, "-> AGENTS.db"));
  REQUIRE(fs::is_regular_file(dir.path() + "/AGENTS.db"));

  simdjson::dom::parser parser;
  const auto layer = run_json(parser, {"inspect", "--json", "--list", "AGENTS.db"}, dir.path());
  CHECK(number_of(layer, "chunk_count") == 1);
  const simdjson::dom::element chunk = array_of(layer, "chunks").at(0).value();
  CHECK(contains(text_of(chunk, "content"), "Always run the tests before committing."));
  CHECK(text_of(array_of(chunk, "sources").at(0).value(), "value") == "AGENTS.md:1");

  check_clean_success(agentsdb({"validate", "AGENTS.db"}, dir.path()));
}

TEST_CASE("agentsdb: a file name the user typed is escaped in the line that names it") {
  temporary_directory dir;
  write_tree(dir.path());
  const std::string name = "out\x1b[31m.db";
  const run_result compiled = agentsdb({"compile", "--root", ".", "--include", "AGENTS.md", "--out", name}, dir.path());
  check_clean_success(compiled);
  CHECK(contains(compiled.out, "-> out\\x1b[31m.db\n"));
  const run_result inspected = agentsdb({"inspect", name}, dir.path());
  check_clean_success(inspected);
  CHECK(contains(inspected.out, "layer          out\\x1b[31m.db\n"));
  const run_result keys = agentsdb({"keygen", "--out", "k\x1b", "--pub", "k\x07.pub"}, dir.path());
  check_clean_success(keys);
  CHECK(contains(keys.out, "wrote private key k\\x1b (mode 0600, keep it secret) and public key k\\x07.pub\n"));
}

TEST_CASE("agentsdb compile: --text chunks have no source and --kind sets every chunk's kind") {
  temporary_directory dir;
  write_tree(dir.path());
  const std::string inline_text = "# Inline\n\nAn inline note.";
  simdjson::dom::parser parser;
  const auto summary = run_json(parser, {"compile", "--root", dir.path(), "--include", "AGENTS.md", "--text",
                                         inline_text, "--kind", "note", "--out", dir.path() + "/out.db", "--json"});
  CHECK(number_of(summary, "files") == 1);
  CHECK(number_of(summary, "chunks") == 2);
  CHECK(number_of(summary, "input_bytes") == agents_md.size() + inline_text.size());

  simdjson::dom::parser list_parser;
  const auto layer = run_json(list_parser, {"inspect", dir.path() + "/out.db", "--list", "--json"});
  CHECK(counts_of(layer, "kinds") == name_counts{{"note", 2}});
  CHECK(counts_of(layer, "authors") == name_counts{{"human", 2}});
  const auto chunks = array_of(layer, "chunks");
  REQUIRE(chunks.size() == 2);
  CHECK(text_of(array_of(chunks.at(0).value(), "sources").at(0).value(), "value") == "AGENTS.md:1");
  CHECK(contains(text_of(chunks.at(1).value(), "content"), "An inline note."));
  CHECK(array_of(chunks.at(1).value(), "sources").size() == 0);

  // --text alone compiles no file.
  const run_result only_text = agentsdb({"compile", "--text", inline_text, "--out", dir.path() + "/text.db", "--json"});
  check_clean_success(only_text);
  simdjson::dom::parser text_parser;
  CHECK(number_of(parse_json(text_parser, only_text.out), "files") == 0);
}

TEST_CASE("agentsdb compile: byte-identical output for the same inputs") {
  temporary_directory first;
  temporary_directory second;
  temporary_directory out;
  write_tree(first.path());
  write_tree(second.path(), /*reversed=*/true);
  // Without the unreadable files, so that stderr stays empty.
  const std::vector<std::string> readable = {"--quiet", "--exclude", "**/blob.md", "--exclude", "**/latin1.md"};

  check_clean_success(compile_docs(first.path(), out.path() + "/a.db", readable));
  check_clean_success(compile_docs(first.path(), out.path() + "/b.db", readable));
  // Another absolute root holding files created in the opposite order, and a
  // relative root from inside it.
  std::vector<std::string> from_inside = {"compile", "--root", ".", "--out", out.path() + "/c.db"};
  from_inside.insert(from_inside.end(), docs_globs.begin(), docs_globs.end());
  from_inside.insert(from_inside.end(), readable.begin(), readable.end());
  check_clean_success(agentsdb(from_inside, second.path()));

  const std::string a = read_file(out.path() + "/a.db");
  CHECK(a.size() > 0);
  CHECK(read_file(out.path() + "/b.db") == a);
  CHECK(read_file(out.path() + "/c.db") == a);

  // Recompiling over an existing output gives the same bytes again.
  check_clean_success(compile_docs(first.path(), out.path() + "/a.db", readable));
  CHECK(read_file(out.path() + "/a.db") == a);
}

TEST_CASE("agentsdb compile: --element-type i8 stores i8 rows with a computed scale") {
  temporary_directory dir;
  write_tree(dir.path() + "/tree");
  const std::string out = dir.path() + "/i8.db";
  const run_result r = compile_docs(dir.path() + "/tree", out, {"--element-type", "i8", "--json", "--dim", "64"});
  REQUIRE(r.exit_code == 0);
  simdjson::dom::parser parser;
  CHECK(text_of(parse_json(parser, r.out), "element_type") == "i8");

  simdjson::dom::parser inspect_parser;
  const auto layer = run_json(inspect_parser, {"inspect", "--json", out});
  const simdjson::dom::element embeddings = layer["embeddings"].value();
  CHECK(text_of(embeddings, "element_type") == "i8");
  CHECK(number_of(embeddings, "dim") == 64);
  CHECK(number_of(embeddings, "row_count") == number_of(layer, "chunk_count"));
  CHECK(number_of(embeddings, "data_length") == number_of(embeddings, "row_count") * 64);
  // Unit-length hash vectors: the largest magnitude is at most 1, mapped to 127.
  const double scale = real_of(embeddings, "quant_scale");
  CHECK(scale > 0.0);
  CHECK(scale != 1.0);
  CHECK(scale <= 1.0001 / 127.0);

  const run_result text = agentsdb({"inspect", out});
  check_clean_success(text);
  CHECK(contains(text.out, " x 64 dims, i8, scale "));
  CHECK_FALSE(contains(text.out, "i8, scale 1,"));
  check_clean_success(agentsdb({"validate", out}));
}

TEST_CASE("agentsdb compile: globs that match nothing fail with exit 1 and write nothing") {
  temporary_directory dir;
  write_tree(dir.path() + "/tree");
  const std::string out = dir.path() + "/out.db";
  const std::vector<std::vector<std::string>> cases = {
      {"--include", "nothing/**/*.md"},
      {"--include", "**/*.rst"},
      {"--include", "docs/**/*.md", "--exclude", "docs/**"},
  };
  for (const auto& globs : cases) {
    CAPTURE(joined(globs));
    std::vector<std::string> args = {"compile", "--root", dir.path() + "/tree", "--out", out};
    args.insert(args.end(), globs.begin(), globs.end());
    check_error(agentsdb(args), 1, "no file matches the include patterns");
    CHECK_FALSE(fs::exists(out));
  }
  // A root that does not exist is an I/O error.
  check_error(agentsdb({"compile", "--root", dir.path() + "/missing", "--include", "*.md", "--out", out}), 2,
              dir.path() + "/missing");
}

TEST_CASE("agentsdb compile: the output file is replaced atomically") {
  temporary_directory dir;
  write_tree(dir.path() + "/tree");
  temporary_directory reference_dir;
  REQUIRE(compile_docs(dir.path() + "/tree", reference_dir.path() + "/docs.db", {"--quiet"}).exit_code == 0);
  const std::string reference = read_file(reference_dir.path() + "/docs.db");

  temporary_directory out_dir;
  const std::string out = out_dir.path() + "/docs.db";
  const std::string old_content(200000, 'x');  // longer than the layer: a truncating rewrite would show
  write_file(out, old_content);
  REQUIRE(::link(out.c_str(), (out_dir.path() + "/old-link").c_str()) == 0);
  const std::uint64_t old_inode = inode_of(out);

  // A failing compile leaves the existing file as it was.
  check_error(agentsdb({"compile", "--root", dir.path() + "/tree", "--include", "nothing.md", "--out", out}), 1,
              "no file matches");
  CHECK(read_file(out) == old_content);

  // A successful one puts a new file in place by rename: the old inode (still
  // reachable through the hard link) is untouched, and no temporary is left.
  const run_result r = compile_docs(dir.path() + "/tree", out, {"--quiet"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(read_file(out) == reference);
  CHECK(inode_of(out) != old_inode);
  CHECK(read_file(out_dir.path() + "/old-link") == old_content);
  CHECK(cli_test::list_directory(out_dir.path()) == std::vector<std::string>{"docs.db", "old-link"});

  // An output folder that does not exist is an I/O error naming the file.
  check_error(compile_docs(dir.path() + "/tree", out_dir.path() + "/missing/docs.db", {"--quiet"}), 2,
              out_dir.path() + "/missing/");
  CHECK(cli_test::list_directory(out_dir.path()) == std::vector<std::string>{"docs.db", "old-link"});
}

// ===========================================================================
// inspect

TEST_CASE("agentsdb inspect: summary of a compiled layer, as text and as JSON") {
  compiled_layer compiled;
  simdjson::dom::parser parser;
  const auto layer = run_json(parser, {"inspect", "--json", compiled.path});
  const std::uint64_t file_size = fs::file_size(compiled.path);
  CHECK(text_of(layer, "path") == compiled.path);
  CHECK(number_of(layer, "file_size") == file_size);
  CHECK(text_of(layer, "version") == "1.0");
  CHECK(number_of(layer, "flags") == 0);
  CHECK(number_of(layer, "sections_offset") == 40);

  // Sections in the reference writer's order, packed after the section table.
  const auto sections = sections_of(layer);
  std::vector<std::string> names;
  for (const auto& s : sections) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"strings", "chunks", "metadata", "relationships", "embeddings"});
  std::uint64_t expected_offset = 40 + 24 * sections.size();
  for (const auto& s : sections) {
    CAPTURE(s.name);
    CHECK(s.offset == expected_offset);
    expected_offset = s.offset + s.length;
  }
  CHECK(expected_offset == file_size);

  const std::uint64_t chunks = number_of(layer, "chunk_count");
  CHECK(chunks >= 3);
  CHECK(number_of(layer, "relationship_count") == chunks);
  CHECK(counts_of(layer, "kinds") == name_counts{{"canonical", chunks}});
  CHECK(counts_of(layer, "authors") == name_counts{{"human", chunks}});
  const simdjson::dom::element embeddings = layer["embeddings"].value();
  CHECK(number_of(embeddings, "row_count") == chunks);
  CHECK(number_of(embeddings, "dim") == 128);
  CHECK(text_of(embeddings, "element_type") == "f32");
  CHECK(real_of(embeddings, "quant_scale") == 1.0);
  CHECK(number_of(embeddings, "data_length") == chunks * 128 * 4);
  const simdjson::dom::element metadata = layer["metadata"].value();
  CHECK(text_of(metadata["embedding_profile"].value(), "backend") == "hash");
  CHECK(number_of(metadata["embedding_profile"].value(), "dim") == 128);
  CHECK(text_of(metadata, "tool_name") == "agentsdb");
  CHECK(text_of(layer["embedding_profile"].value(), "backend") == "hash");
  CHECK(text_of(layer, "created_at_max") == "1970-01-01T00:00:00.000Z");

  const run_result text = agentsdb({"inspect", compiled.path});
  check_clean_success(text);
  CHECK(text.out.rfind("layer          " + compiled.path + "\n", 0) == 0);
  CHECK(contains(text.out, "file           " + std::to_string(file_size) + " bytes, AGDB v1.0, flags 0\n"));
  CHECK(contains(text.out, "chunks         " + std::to_string(chunks) + "\n"));
  CHECK(contains(text.out, "kinds          canonical " + std::to_string(chunks) + "\n"));
  CHECK(contains(text.out, "authors        human " + std::to_string(chunks) + "\n"));
  CHECK(contains(text.out, "profile        hash(dim=128"));
  CHECK(contains(text.out, "created        no timestamps"));
}

TEST_CASE("agentsdb inspect: the reference fixtures") {
  struct fixture_facts {
    std::string name;
    std::uint64_t file_size;
    std::vector<std::uint64_t> section_kinds;
    std::vector<std::uint64_t> section_offsets;
    std::uint64_t strings;
    std::uint64_t chunks;
    std::uint64_t relationships;
    name_counts kinds;
    name_counts authors;
    std::uint64_t embedding_data_offset;
  };
  const std::vector<fixture_facts> facts = {
      {.name = "AGENTS.db",
       .file_size = 84808,
       .section_kinds = {1, 2, 4, 3},
       .section_offsets = {136, 65600, 66240, 66336},
       .strings = 24,
       .chunks = 12,
       .relationships = 10,
       .kinds = {{"canonical", 9}, {"options", 2}, {"tombstone", 1}},
       .authors = {{"human", 12}},
       .embedding_data_offset = 66376},
      {.name = "AGENTS.delta.db",
       .file_size = 63449,
       .section_kinds = {1, 2, 5, 4, 3},
       .section_offsets = {160, 49934, 50366, 51017, 51121},
       .strings = 26,
       .chunks = 8,
       .relationships = 11,
       .kinds = {{"bugfix", 2},
                 {"feature", 2},
                 {"note", 1},
                 {"technical-documentation", 1},
                 {"technical-note", 1},
                 {"tombstone", 1}},
       .authors = {{"human", 3}, {"mcp", 5}},
       .embedding_data_offset = 51161},
  };
  for (const auto& f : facts) {
    CAPTURE(f.name);
    const auto path = cli_test::agdb_fixture(f.name);
    if (!path) continue;
    simdjson::dom::parser parser;
    const auto layer = run_json(parser, {"inspect", "--json", *path});
    CHECK(number_of(layer, "file_size") == f.file_size);
    std::vector<std::uint64_t> kinds;
    std::vector<std::uint64_t> offsets;
    for (const auto& s : sections_of(layer)) {
      kinds.push_back(s.kind);
      offsets.push_back(s.offset);
    }
    CHECK(kinds == f.section_kinds);
    CHECK(offsets == f.section_offsets);
    CHECK(number_of(layer, "string_count") == f.strings);
    CHECK(number_of(layer, "chunk_count") == f.chunks);
    CHECK(number_of(layer, "relationship_count") == f.relationships);
    CHECK(counts_of(layer, "kinds") == f.kinds);
    CHECK(counts_of(layer, "authors") == f.authors);
    const simdjson::dom::element embeddings = layer["embeddings"].value();
    CHECK(number_of(embeddings, "row_count") == f.chunks);
    CHECK(number_of(embeddings, "dim") == 384);
    CHECK(text_of(embeddings, "element_type") == "f32");
    CHECK(real_of(embeddings, "quant_scale") == 1.0);
    CHECK(number_of(embeddings, "data_offset") == f.embedding_data_offset);
    CHECK(is_rfc3339_utc_ms(text_of(layer, "created_at_max")));
  }

  // Only the delta layer records layer metadata (and so an embedding profile).
  if (const auto base = cli_test::agdb_fixture("AGENTS.db")) {
    simdjson::dom::parser parser;
    const auto layer = run_json(parser, {"inspect", "--json", *base});
    CHECK(layer["metadata"].is_null());
    CHECK(layer["embedding_profile"].is_null());
  }
  if (const auto delta = cli_test::agdb_fixture("AGENTS.delta.db")) {
    simdjson::dom::parser parser;
    const auto layer = run_json(parser, {"inspect", "--json", *delta});
    const simdjson::dom::element metadata = layer["metadata"].value();
    const simdjson::dom::element profile = metadata["embedding_profile"].value();
    CHECK(text_of(profile, "backend") == "candle");
    CHECK(text_of(profile, "model") == "all-minilm-l6-v2");
    CHECK(text_of(profile, "revision") == "main");
    CHECK(number_of(profile, "dim") == 384);
    CHECK(text_of(metadata, "cache_key_alg") == "sha256_profile_json_v2_null_content_utf8");
    CHECK(text_of(metadata, "tool_name") == "agentsdb-web");
    CHECK(text_of(metadata, "tool_version") == "0.1.6");
    CHECK(text_of(layer["embedding_profile"].value(), "backend") == "candle");

    const run_result text = agentsdb({"inspect", *delta});
    check_clean_success(text);
    CHECK(contains(text.out, "authors        mcp 5, human 3\n"));
    CHECK(contains(text.out, "metadata       {\"v\":1,"));
  }
}

TEST_CASE("agentsdb inspect: --list and --limit") {
  const auto base = cli_test::agdb_fixture("AGENTS.db");
  if (!base) return;
  struct list_case {
    std::vector<std::string> extra;
    std::size_t count;
  };
  const std::vector<list_case> cases = {
      {{}, 12}, {{"--limit", "3"}, 3}, {{"--limit", "0"}, 12}, {{"--limit", "50"}, 12}};
  auto listed_ids = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"inspect", *base, "--list", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    simdjson::dom::parser parser;
    std::vector<std::uint64_t> ids;
    for (simdjson::dom::element chunk : array_of(run_json(parser, args), "chunks")) {
      ids.push_back(number_of(chunk, "id"));
    }
    return ids;
  };
  // The chunks come in file order: the first limit of them.
  const std::vector<std::uint64_t> all = listed_ids({});
  REQUIRE(all.size() == 12);
  CHECK(std::vector<std::uint64_t>(all.begin(), all.begin() + 3) == std::vector<std::uint64_t>{1, 2, 3});
  for (const auto& c : cases) {
    CAPTURE(joined(c.extra));
    CHECK(listed_ids(c.extra) ==
          std::vector<std::uint64_t>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(c.count)));
  }

  const run_result text = agentsdb({"inspect", *base, "--list", "--limit", "3"});
  check_clean_success(text);
  CHECK(contains(text.out, "docs/WORKFLOW.md:1"));
  CHECK(contains(text.out, "# The Mental Model"));
  CHECK(contains(text.out, "... 9 more (--limit)\n"));

  // Without --list there is no chunk table.
  simdjson::dom::parser parser;
  CHECK(run_json(parser, {"inspect", *base, "--json"})["chunks"].error() == simdjson::NO_SUCH_FIELD);
}

TEST_CASE("agentsdb inspect --id: one chunk in full, as text and as JSON") {
  const auto base = cli_test::agdb_fixture("AGENTS.db");
  const auto delta = cli_test::agdb_fixture("AGENTS.delta.db");

  if (base) {
    simdjson::dom::parser parser;
    const auto chunk = run_json(parser, {"inspect", "--layer", *base, "--id", "2", "--json"});
    CHECK(number_of(chunk, "id") == 2);
    CHECK(text_of(chunk, "kind") == "canonical");
    CHECK(text_of(chunk, "author") == "human");
    CHECK(real_of(chunk, "confidence") == 1.0);
    CHECK(number_of(chunk, "created_at_unix_ms") == 0);
    CHECK(text_of(chunk, "created_at") == "1970-01-01T00:00:00.000Z");
    const std::string content = text_of(chunk, "content");
    CHECK(content.rfind("# The Mental Model", 0) == 0);
    const auto sources = array_of(chunk, "sources");
    REQUIRE(sources.size() == 1);
    CHECK(text_of(sources.at(0).value(), "type") == "source_string");
    CHECK(text_of(sources.at(0).value(), "value") == "docs/WORKFLOW.md:1");
    CHECK(number_of(chunk, "embedding_row") == 2);
    CHECK(real_of(chunk, "embedding_norm") == doctest::Approx(1.0).epsilon(1e-5));

    const run_result text = agentsdb({"inspect", "--layer", *base, "--id", "2"});
    check_clean_success(text);
    CHECK(text.out.rfind("id             2\n", 0) == 0);
    for (const char* line : {"kind           canonical\n", "author         human\n", "confidence     1\n",
                             "created_at     1970-01-01T00:00:00.000Z (0 ms)\n", "sources        docs/WORKFLOW.md:1\n",
                             "embedding      row 2, L2 norm 1\n"}) {
      CAPTURE(line);
      CHECK(contains(text.out, line));
    }
    CHECK(contains(text.out, "content        " + std::to_string(content.size()) + " bytes\n----\n" + content));

    check_error(agentsdb({"inspect", *base, "--id", "999"}), 1, "no chunk with id 999");
    check_error(agentsdb({"inspect", *base, "--id", "999", "--json"}), 1, "no chunk with id 999");
  }

  if (delta) {
    // The tombstone's source is another chunk's id.
    simdjson::dom::parser list_parser;
    std::uint64_t tombstone_id = 0;
    for (simdjson::dom::element c :
         array_of(run_json(list_parser, {"inspect", *delta, "--list", "--json"}), "chunks")) {
      CHECK(is_rfc3339_utc_ms(text_of(c, "created_at")));
      if (text_of(c, "kind") == "tombstone") tombstone_id = number_of(c, "id");
    }
    REQUIRE(tombstone_id != 0);

    simdjson::dom::parser parser;
    const auto chunk = run_json(parser, {"inspect", *delta, "--id", std::to_string(tombstone_id), "--json"});
    CHECK(number_of(chunk, "id") == tombstone_id);
    CHECK(text_of(chunk, "kind") == "tombstone");
    CHECK(number_of(chunk, "created_at_unix_ms") == 1766110863396);
    CHECK(text_of(chunk, "created_at") == "2025-12-19T02:21:03.396Z");
    const auto sources = array_of(chunk, "sources");
    REQUIRE(sources.size() == 1);
    CHECK(text_of(sources.at(0).value(), "type") == "chunk_id");
    CHECK(number_of(sources.at(0).value(), "value") == 18);

    const run_result text = agentsdb({"inspect", *delta, "--id", std::to_string(tombstone_id)});
    check_clean_success(text);
    CHECK(contains(text.out, "kind           tombstone\n"));
    CHECK(contains(text.out, "sources        chunk 18\n"));
    CHECK(contains(text.out, "created_at     2025-12-19T02:21:03.396Z (1766110863396 ms)\n"));

    // A chunk written by an agent: author mcp, confidence below 1, two sources.
    simdjson::dom::parser note_parser;
    const auto five = run_json(note_parser, {"inspect", *delta, "--id", "5", "--json"});
    CHECK(text_of(five, "author") == "mcp");
    CHECK(text_of(five, "kind") == "technical-note");
    CHECK(real_of(five, "confidence") == doctest::Approx(0.95).epsilon(1e-6));
    CHECK(text_of(five, "created_at") == "2025-12-15T12:08:36.918Z");
    CHECK(array_of(five, "sources").size() == 2);
  }
}

TEST_CASE("agentsdb inspect: missing and damaged files") {
  compiled_layer compiled;
  check_error(agentsdb({"inspect", compiled.dir.path() + "/missing.db"}), 2, compiled.dir.path() + "/missing.db");
  check_error(agentsdb({"inspect", "--json", compiled.dir.path() + "/missing.db"}), 2, "missing.db");

  const std::string bytes = read_file(compiled.path);
  const std::string truncated = compiled.dir.path() + "/truncated.db";
  write_file(truncated, bytes.substr(0, bytes.size() / 2));
  std::string flipped_bytes = bytes;
  flipped_bytes[0] = static_cast<char>(flipped_bytes[0] ^ 0xFF);
  const std::string flipped = compiled.dir.path() + "/flipped.db";
  write_file(flipped, flipped_bytes);

  static const std::regex at_byte(R"(at byte \d+: )");
  for (const auto& path : {truncated, flipped}) {
    CAPTURE(path);
    const run_result r = agentsdb({"inspect", path});
    check_error(r, 1, path + ": at byte ");
    CHECK(std::regex_search(r.err, at_byte));
  }
  check_error(agentsdb({"inspect", flipped}), 1, "at byte 0: ");
  check_error(agentsdb({"inspect", "--id", "1", flipped}), 1, "at byte 0: ");
}

TEST_CASE("agentsdb inspect: --layer FILE and a positional FILE are the same") {
  compiled_layer compiled;
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, {"--json"}, {"--list"}}) {
    CAPTURE(joined(extra));
    std::vector<std::string> flag = {"inspect", "--layer", compiled.path};
    std::vector<std::string> positional = {"inspect", compiled.path};
    flag.insert(flag.end(), extra.begin(), extra.end());
    positional.insert(positional.end(), extra.begin(), extra.end());
    const run_result a = agentsdb(flag);
    const run_result b = agentsdb(positional);
    check_clean_success(a);
    CHECK(a.out == b.out);
    CHECK(b.exit_code == 0);
  }
  check_error(agentsdb({"inspect", "--layer", compiled.path, compiled.path}), 2, "--layer");
}

// ===========================================================================
// validate

TEST_CASE("agentsdb validate: valid layers") {
  compiled_layer compiled;
  std::vector<std::string> files = {compiled.path};
  for (const char* name : {"AGENTS.db", "AGENTS.delta.db"}) {
    if (auto path = cli_test::agdb_fixture(name)) files.push_back(*path);
  }
  std::vector<std::string> args = {"validate"};
  args.insert(args.end(), files.begin(), files.end());
  const run_result r = agentsdb(args);
  check_clean_success(r);
  std::string expected;
  for (const auto& f : files) expected += f + ": valid\n";
  CHECK(r.out == expected);

  args.push_back("--json");
  simdjson::dom::parser parser;
  const auto root = run_json(parser, args);
  CHECK(root["valid"].get_bool().value());
  const auto reports = array_of(root, "files");
  REQUIRE(reports.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    const simdjson::dom::element report = reports.at(i).value();
    CHECK(text_of(report, "path") == files[i]);
    CHECK(report["opened"].get_bool().value());
    CHECK(report["valid"].get_bool().value());
    CHECK(array_of(report, "violations").size() == 0);
  }
}

TEST_CASE("agentsdb validate: damaged layers exit 1 and list violations with byte offsets and code names") {
  compiled_layer compiled;
  const std::string bytes = read_file(compiled.path);
  const std::uint64_t records = chunk_records_offset(compiled.path);

  struct damage_case {
    std::string name;
    std::string bytes;
    std::string code;
    std::uint64_t offset;
    bool opened;
  };
  std::string flipped = bytes;
  flipped[0] = static_cast<char>(flipped[0] ^ 0xFF);
  std::vector<damage_case> cases = {
      {"flipped-magic.db", flipped, "bad_magic", 0, false},
      {"truncated.db", bytes.substr(0, bytes.size() - 100), "truncated", 8, false},
      {"duplicate-id.db", bytes, "duplicate_id", records + chunk_record_size, true},
  };

  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string path = compiled.dir.path() + "/" + c.name;
    write_file(path, c.bytes);
    if (c.code == "duplicate_id") repeat_first_chunk_id(path, 1);

    const run_result text = agentsdb({"validate", path});
    INFO("stdout: " << text.out);
    CHECK(text.exit_code == 1);
    CHECK(text.err.empty());
    CHECK(text.out.rfind(path + ": at byte " + std::to_string(c.offset) + ": ", 0) == 0);
    CHECK(contains(text.out, " [" + c.code + "]\n"));
    CHECK(contains(text.out, path + ": INVALID ("));

    const run_result json = agentsdb({"validate", "--json", path});
    CHECK(json.exit_code == 1);
    CHECK(json.err.empty());
    simdjson::dom::parser parser;
    const auto root = parse_json(parser, json.out);
    CHECK_FALSE(root["valid"].get_bool().value());
    const simdjson::dom::element report = array_of(root, "files").at(0).value();
    CHECK(text_of(report, "path") == path);
    CHECK(report["opened"].get_bool().value() == c.opened);
    CHECK_FALSE(report["valid"].get_bool().value());
    const auto violations = array_of(report, "violations");
    REQUIRE(violations.size() == 1);
    CHECK(text_of(violations.at(0).value(), "code") == c.code);
    CHECK(number_of(violations.at(0).value(), "offset") == c.offset);
    CHECK_FALSE(text_of(violations.at(0).value(), "message").empty());
  }

  // Several files, one of them damaged: exit 1, the others still reported valid.
  const std::string damaged = compiled.dir.path() + "/duplicate-id.db";
  const run_result mixed = agentsdb({"validate", compiled.path, damaged});
  CHECK(mixed.exit_code == 1);
  CHECK(mixed.out.rfind(compiled.path + ": valid\n", 0) == 0);
  CHECK(contains(mixed.out, damaged + ": INVALID (1 violations)\n"));
}

TEST_CASE("agentsdb validate: a file that cannot be read is an I/O error (exit 2)") {
  compiled_layer compiled;
  const std::string missing = compiled.dir.path() + "/missing.db";

  const run_result alone = agentsdb({"validate", missing});
  check_error(alone, 2, missing + ": ");

  const run_result mixed = agentsdb({"validate", compiled.path, missing});
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.out == compiled.path + ": valid\n");
  CHECK(mixed.err.rfind("agentsdb: " + missing + ": ", 0) == 0);
  CHECK(line_count(mixed.err) == 1);

  // An unreadable file outweighs a damaged one.
  const std::string flipped = compiled.dir.path() + "/flipped.db";
  std::string bytes = read_file(compiled.path);
  bytes[0] = 'X';
  write_file(flipped, bytes);
  CHECK(agentsdb({"validate", flipped, missing}).exit_code == 2);

  const run_result json = agentsdb({"validate", "--json", missing});
  CHECK(json.exit_code == 2);
  CHECK(line_count(json.err) == 1);
  simdjson::dom::parser parser;
  const auto root = parse_json(parser, json.out);
  CHECK_FALSE(root["valid"].get_bool().value());
  const simdjson::dom::element report = array_of(root, "files").at(0).value();
  CHECK_FALSE(report["opened"].get_bool().value());
  const simdjson::dom::element violation = array_of(report, "violations").at(0).value();
  CHECK(text_of(violation, "code") == "not_found");
  CHECK(violation["offset"].is_null());
}

TEST_CASE("agentsdb validate: --max-violations bounds the list of violations") {
  compiled_layer compiled;
  simdjson::dom::parser parser;
  REQUIRE(number_of(run_json(parser, {"inspect", "--json", compiled.path}), "chunk_count") >= 4);
  const std::uint64_t records = chunk_records_offset(compiled.path);
  repeat_first_chunk_id(compiled.path, 3);  // records 1, 2 and 3 repeat record 0's id

  auto violations_of = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"validate", "--json", compiled.path};
    args.insert(args.end(), extra.begin(), extra.end());
    const run_result r = agentsdb(args);
    CHECK(r.exit_code == 1);
    simdjson::dom::parser report_parser;
    const simdjson::dom::element report = array_of(parse_json(report_parser, r.out), "files").at(0).value();
    std::vector<std::uint64_t> offsets;
    for (simdjson::dom::element v : array_of(report, "violations")) {
      CHECK(text_of(v, "code") == "duplicate_id");
      offsets.push_back(number_of(v, "offset"));
    }
    return offsets;
  };
  const std::uint64_t size = chunk_record_size;
  CHECK(violations_of({}) == std::vector<std::uint64_t>{records + size, records + 2 * size, records + 3 * size});
  CHECK(violations_of({"--max-violations", "2"}) == std::vector<std::uint64_t>{records + size, records + 2 * size});
  CHECK(violations_of({"--max-violations", "1"}) == std::vector<std::uint64_t>{records + size});

  const run_result text = agentsdb({"validate", "--max-violations", "2", compiled.path});
  CHECK(text.exit_code == 1);
  CHECK(line_count(text.out) == 3);
  CHECK(contains(text.out, compiled.path + ": INVALID (2+ violations)\n"));
}

#endif  // AGENTSDB_BIN

}  // namespace cli_agentsdb_test
