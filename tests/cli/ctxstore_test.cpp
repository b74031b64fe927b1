// End-to-end tests of ctxstore through the real binary: every command in text
// and JSON, a session that appends, forks and pages back to the root, payloads
// byte-exact (binary, from --file and standard input), dedup in stats, fsck
// before and after damage, a store locked by another process, and every
// refused input as one line with its documented exit code.
#include <doctest/doctest.h>
#include <simdjson.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "agentctx/core/base64.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/turns/turn_store.hpp"
#include "cli/cli_test_support.hpp"
#include "io/io_test_support.hpp"

namespace cli_ctxstore_test {

#ifndef CTXSTORE_BIN
TEST_CASE("ctxstore: end-to-end tests") {
  MESSAGE("skipping: CTXSTORE_BIN is not defined (the ctxstore target is not part of this build)");
}
#else

using cli_test::array_of;
using cli_test::check_clean_success;
using cli_test::contains;
using cli_test::number_of;
using cli_test::run_result;
using cli_test::text_of;

namespace {

/// A temporary folder with a store in its "store" subfolder; run() passes
/// --store to every command and runs it in the temporary folder.
struct store_fixture {
  io_test::temporary_directory dir;
  std::string store = dir.path() + "/store";

  run_result run(std::vector<std::string> args, const std::string& input_file = "/dev/null") const {
    args.push_back("--store");
    args.push_back(store);
    return cli_test::ctxstore(args, dir.path(), input_file);
  }

  /// The JSON a successful `args --json` printed (nothing on stderr).
  simdjson::dom::element json(simdjson::dom::parser& parser, std::vector<std::string> args,
                              const std::string& input_file = "/dev/null") const {
    args.push_back("--json");
    const run_result r = run(args, input_file);
    CAPTURE(cli_test::joined(args));
    check_clean_success(r);
    return cli_test::parse_json(parser, r.out);
  }

  void init() const { check_clean_success(run({"init"})); }

  std::string create(std::vector<std::string> extra = {}) const {
    simdjson::dom::parser parser;
    extra.insert(extra.begin(), "create");
    return text_of(json(parser, extra), "id");
  }

  std::uint64_t append(const std::string& context, const std::string& data, std::vector<std::string> extra = {}) const {
    simdjson::dom::parser parser;
    std::vector<std::string> args = {"append", "--context", context, "--data", data};
    args.insert(args.end(), extra.begin(), extra.end());
    return number_of(json(parser, args)["turn"].value(), "id");
  }
};

/// The command failed with `exit_code` and one "ctxstore: ..." line naming `fragment`.
void check_failure(const run_result& r, int exit_code, std::string_view fragment) {
  cli_test::check_error(r, exit_code, fragment, "ctxstore");
}

std::string hash_of(std::string_view bytes) { return agentctx::to_hex(agentctx::sha256(bytes)); }

std::string decoded_payload(simdjson::dom::element turn) {
  auto bytes = agentctx::base64_decode(text_of(turn, "payload_base64"));
  REQUIRE(bytes.has_value());
  return {reinterpret_cast<const char*>(bytes->data()), bytes->size()};
}

std::vector<std::uint64_t> turn_ids(simdjson::dom::element listing) {
  std::vector<std::uint64_t> ids;
  for (simdjson::dom::element t : array_of(listing, "turns")) ids.push_back(number_of(t, "id"));
  return ids;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

const std::regex context_id_pattern("[0-9a-f]{16}");
const std::string rfc3339_pattern = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";

}  // namespace

TEST_CASE("ctxstore: init, create, append and contexts, in text and JSON") {
  store_fixture f;
  const run_result init = f.run({"init"});
  check_clean_success(init);
  CHECK(init.out == "initialized an empty turn store in " + f.store + "\n");
  for (const char* name : {"blobs.pack", "turns.log", "heads.log"}) CHECK(std::filesystem::exists(f.store + "/" + name));
  check_failure(f.run({"init"}), 2, f.store + ": a turn store already exists here");

  simdjson::dom::parser init_parser;
  const std::string second = f.dir.path() + "/second";
  const run_result init_json = cli_test::ctxstore({"init", "--store", second, "--json"});
  check_clean_success(init_json);
  CHECK(text_of(cli_test::parse_json(init_parser, init_json.out), "store") == second);
  // A folder name holding ESC is escaped in the line that names it.
  const std::string odd = f.dir.path() + "/odd\x1b[31m";
  const run_result init_odd = cli_test::ctxstore({"init", "--store", odd});
  check_clean_success(init_odd);
  CHECK(init_odd.out == "initialized an empty turn store in " + f.dir.path() + "/odd\\x1b[31m\n");

  const run_result created = f.run({"create"});
  check_clean_success(created);
  CHECK(std::regex_match(created.out, std::regex("created context [0-9a-f]{16} \\(empty\\)\n")));
  const std::string empty_context = created.out.substr(16, 16);

  simdjson::dom::parser create_parser;
  const auto context = f.json(create_parser, {"create"});
  const std::string id = text_of(context, "id");
  CHECK(std::regex_match(id, context_id_pattern));
  CHECK(number_of(context, "head") == 0);
  CHECK(number_of(context, "depth") == 0);
  CHECK(text_of(context, "created_at") == agentctx::format_rfc3339_utc_ms(number_of(context, "created_at_unix_ms")));

  const run_result first = f.run({"append", "--context", id, "--data", "hello"});
  check_clean_success(first);
  CHECK(first.out == "appended turn 1 to context " + id + " (parent 0, depth 0, 5 bytes, sha256 " +
                         hash_of("hello").substr(0, 12) + ")\n");

  simdjson::dom::parser append_parser;
  const auto appended = f.json(append_parser, {"append", "--context", "0x" + id, "--data", "world", "--type", "0x10",
                                               "--codec", "7"});
  CHECK(text_of(appended, "context") == id);
  const simdjson::dom::element turn = appended["turn"].value();
  CHECK(number_of(turn, "id") == 2);
  CHECK(number_of(turn, "parent") == 1);
  CHECK(number_of(turn, "depth") == 1);
  CHECK(number_of(turn, "type") == 16);
  CHECK(number_of(turn, "codec") == 7);
  CHECK(number_of(turn, "flags") == 0);
  CHECK(number_of(turn, "size") == 5);
  CHECK(text_of(turn, "hash") == hash_of("world"));
  CHECK(text_of(turn, "created_at") == agentctx::format_rfc3339_utc_ms(number_of(turn, "created_at_unix_ms")));
  CHECK(turn["payload_base64"].error() == simdjson::NO_SUCH_FIELD);  // only listings with --payloads carry it

  // --parent branches off an earlier turn; the head moves to the new turn.
  simdjson::dom::parser branch_parser;
  const auto branch = f.json(branch_parser, {"append", "--context", id, "--data", "again", "--parent", "1", "--type",
                                             "18446744073709551615"});
  CHECK(number_of(branch["turn"].value(), "parent") == 1);
  CHECK(number_of(branch["turn"].value(), "depth") == 1);
  CHECK(number_of(branch["turn"].value(), "type") == UINT64_MAX);

  simdjson::dom::parser contexts_parser;
  const auto contexts = f.json(contexts_parser, {"contexts"});
  std::vector<std::string> ids;
  for (simdjson::dom::element c : array_of(contexts, "contexts")) {
    ids.push_back(text_of(c, "id"));
    if (text_of(c, "id") == id) {
      CHECK(number_of(c, "head") == 3);
      CHECK(number_of(c, "depth") == 1);
    } else {
      CHECK(number_of(c, "head") == 0);
    }
  }
  CHECK(ids == std::vector<std::string>{std::min(id, empty_context), std::max(id, empty_context)});  // by id

  const run_result listed = f.run({"contexts"});
  check_clean_success(listed);
  const std::vector<std::string> lines = lines_of(listed.out);
  REQUIRE(lines.size() == 2);
  const bool id_first = id < empty_context;  // lines are ordered by id
  CHECK(std::regex_match(lines[id_first ? 0 : 1], std::regex(id + " head 3 depth 1 created " + rfc3339_pattern)));
  CHECK(std::regex_match(lines[id_first ? 1 : 0], std::regex(empty_context + " head 0 depth 0 created " + rfc3339_pattern)));

  // --store defaults to the current directory.
  const run_result here = cli_test::ctxstore({"contexts"}, f.store);
  check_clean_success(here);
  CHECK(here.out == listed.out);
}

TEST_CASE("ctxstore: a session pages back with last and before to the root, forks, ranges and replays") {
  store_fixture f;
  f.init();
  const std::string context = f.create();
  for (int i = 1; i <= 10; ++i) CHECK(f.append(context, "turn-" + std::to_string(i)) == static_cast<std::uint64_t>(i));

  // last, then before with each page's cursor until it is 0: every turn once, in order.
  simdjson::dom::parser last_parser;
  const auto last = f.json(last_parser, {"last", "--context", context, "-n", "4", "--payloads"});
  CHECK(text_of(last, "context") == context);
  CHECK(number_of(last, "head") == 10);
  CHECK(number_of(last, "head_depth") == 9);
  CHECK(turn_ids(last) == std::vector<std::uint64_t>{7, 8, 9, 10});
  std::vector<std::uint64_t> seen = turn_ids(last);
  std::vector<std::string> payloads;
  for (simdjson::dom::element t : array_of(last, "turns")) payloads.push_back(decoded_payload(t));
  std::uint64_t cursor = number_of(last, "next_cursor");
  CHECK(cursor == 7);
  int pages = 1;
  while (cursor != 0) {
    simdjson::dom::parser parser;
    const auto page = f.json(parser, {"before", "--context", context, "--turn", std::to_string(cursor), "-n", "4",
                                      "--payloads"});
    CHECK(number_of(page, "head") == 10);
    std::vector<std::uint64_t> ids = turn_ids(page);
    REQUIRE_FALSE(ids.empty());
    CHECK(ids.back() + 1 == cursor);
    seen.insert(seen.begin(), ids.begin(), ids.end());
    std::vector<std::string> texts;
    for (simdjson::dom::element t : array_of(page, "turns")) texts.push_back(decoded_payload(t));
    payloads.insert(payloads.begin(), texts.begin(), texts.end());
    cursor = number_of(page, "next_cursor");
    REQUIRE(++pages <= 4);
  }
  CHECK(pages == 3);
  CHECK(seen == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  for (std::size_t i = 0; i < payloads.size(); ++i) CHECK(payloads[i] == "turn-" + std::to_string(i + 1));

  // The same pages in text: a header, one line per turn, the cursor.
  const run_result last_text = f.run({"last", "--context", context, "-n", "2"});
  check_clean_success(last_text);
  const std::vector<std::string> lines = lines_of(last_text.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "context " + context + ": head turn 10 at depth 9, 2 turns here");
  CHECK(std::regex_match(lines[1], std::regex("turn 9 parent 8 depth 8 type 0 codec 0 size 6 sha256 " +
                                              hash_of("turn-9").substr(0, 12) + " " + rfc3339_pattern)));
  CHECK(lines[2].rfind("turn 10 parent 9 depth 9 type 0 codec 0 size 7 sha256 " + hash_of("turn-10").substr(0, 12), 0) == 0);
  CHECK(lines[3] == "next cursor 9");
  const run_result root_text = f.run({"before", "--context", context, "--turn", "3"});
  check_clean_success(root_text);
  const std::vector<std::string> root_lines = lines_of(root_text.out);
  REQUIRE(root_lines.size() == 4);
  CHECK(root_lines[1].rfind("turn 1 parent 0 depth 0 ", 0) == 0);
  CHECK(root_lines[3] == "next cursor 0 (nothing before these turns)");
  const run_result with_payloads = f.run({"last", "--context", context, "-n", "1", "--payloads"});
  check_clean_success(with_payloads);
  CHECK(lines_of(with_payloads.out).at(2) == "turn-10");

  // range: depths [3, 5) are turns 4 and 5; past the head, nothing.
  simdjson::dom::parser range_parser;
  const auto range = f.json(range_parser, {"range", "--context", context, "--start", "3", "-n", "2"});
  CHECK(turn_ids(range) == std::vector<std::uint64_t>{4, 5});
  std::vector<std::uint64_t> depths;
  for (simdjson::dom::element t : array_of(range, "turns")) depths.push_back(number_of(t, "depth"));
  CHECK(depths == std::vector<std::uint64_t>{3, 4});
  simdjson::dom::parser beyond_parser;
  CHECK(turn_ids(f.json(beyond_parser, {"range", "--context", context, "--start", "20"})).empty());
  const run_result range_text = f.run({"range", "--context", context, "--start", "9"});
  check_clean_success(range_text);
  CHECK(lines_of(range_text.out).size() == 3);
  CHECK(lines_of(range_text.out)[1].rfind("turn 10 parent 9 depth 9 ", 0) == 0);

  // fork: a new context at turn 5; appends to it leave the original alone.
  const run_result forked_text = f.run({"fork", "--from-turn", "5"});
  check_clean_success(forked_text);
  CHECK(std::regex_match(forked_text.out, std::regex("forked context [0-9a-f]{16} at turn 5 \\(depth 4\\)\n")));
  simdjson::dom::parser fork_parser;
  const auto fork = f.json(fork_parser, {"fork", "--from-turn", "5"});
  const std::string forked = text_of(fork, "id");
  CHECK(number_of(fork, "head") == 5);
  CHECK(number_of(fork, "depth") == 4);
  CHECK(f.append(forked, "branch") == 11);
  simdjson::dom::parser forked_parser;
  const auto forked_last = f.json(forked_parser, {"last", "--context", forked});
  CHECK(turn_ids(forked_last) == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 11});
  CHECK(number_of(forked_last, "next_cursor") == 0);
  simdjson::dom::parser original_parser;
  CHECK(number_of(f.json(original_parser, {"last", "--context", context, "-n", "1"}), "head") == 10);
  simdjson::dom::parser created_parser;
  const auto created_at = f.json(created_parser, {"create", "--from-turn", "11"});
  CHECK(number_of(created_at, "head") == 11);
  CHECK(number_of(created_at, "depth") == 5);

  // replay: root .. turn, with payloads.
  simdjson::dom::parser replay_parser;
  const auto replay = f.json(replay_parser, {"replay", "--turn", "11", "--payloads"});
  CHECK(number_of(replay, "turn") == 11);
  CHECK(turn_ids(replay) == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 11});
  CHECK(decoded_payload(array_of(replay, "turns").at(5).value()) == "branch");
  const run_result replay_text = f.run({"replay", "--turn", "3"});
  check_clean_success(replay_text);
  const std::vector<std::string> replay_lines = lines_of(replay_text.out);
  REQUIRE(replay_lines.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(replay_lines[i].rfind("turn " + std::to_string(i + 1) + " parent ", 0) == 0);
}

TEST_CASE("ctxstore: binary payloads from --file and stdin come back byte-exact; dedup shows in stats") {
  store_fixture f;
  f.init();
  const std::string context = f.create();
  std::string binary;
  for (int round = 0; round < 3; ++round) {
    for (int b = 0; b < 256; ++b) binary += static_cast<char>(b);
  }
  binary += std::string(5, '\0');
  const std::string binary_path = f.dir.path() + "/payload.bin";
  cli_test::write_file(binary_path, binary);

  simdjson::dom::parser file_parser;
  const auto from_file = f.json(file_parser, {"append", "--context", context, "--file", binary_path})["turn"].value();
  simdjson::dom::parser stdin_parser;
  const auto from_stdin = f.json(stdin_parser, {"append", "--context", context}, binary_path)["turn"].value();
  CHECK(number_of(from_file, "size") == binary.size());
  CHECK(text_of(from_file, "hash") == hash_of(binary));
  CHECK(text_of(from_stdin, "hash") == hash_of(binary));
  CHECK(number_of(from_stdin, "parent") == number_of(from_file, "id"));
  f.append(context, "small text");

  // blob get: to stdout, to a file (replacing it), and as JSON.
  const run_result raw = f.run({"blob", "get", hash_of(binary)});
  check_clean_success(raw);
  CHECK(raw.out == binary);
  const std::string out_path = f.dir.path() + "/out.bin";
  cli_test::write_file(out_path, "old contents");
  const run_result to_file = f.run({"blob", "get", hash_of(binary), "--out", out_path});
  check_clean_success(to_file);
  CHECK(to_file.out == "wrote 773 bytes to " + out_path + "\n");
  CHECK(cli_test::read_file(out_path) == binary);
  for (const std::string& name : cli_test::list_directory(f.dir.path())) CHECK(name.find(".tmp.") == std::string::npos);
  // Only a regular file is replaced: not a device, nor a folder.
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", "/dev/null"}), 2, "--out /dev/null: not a regular file");
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", f.dir.path()}), 2, "is a folder, not a file");
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", f.store + "/blobs.pack"}), 2,
                "is one of the store's own files");
  // The blob index's runs too, and through a link to one not made yet.
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", f.store + "/blobs.idx.1"}), 2,
                "is one of the store's own files");
  std::filesystem::create_symlink(f.store + "/blobs.idx.7", f.dir.path() + "/to_run");
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", f.dir.path() + "/to_run"}), 2,
                "is one of the store's own files");
  CHECK_FALSE(std::filesystem::exists(f.store + "/blobs.idx.7"));
  // And their temporaries, which the store removes.
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", f.store + "/.turns.idx.tmp.999999.0"}), 2,
                "is one of the store's own files");
  // A user's file beside them is written.
  check_clean_success(f.run({"blob", "get", hash_of(binary), "--out", f.store + "/blobs.idx.backup"}));
  // A link whose target names a folder is refused as one.
  std::filesystem::create_symlink("newdir/", f.dir.path() + "/to_folder");
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", f.dir.path() + "/to_folder"}), 2,
                "names a folder, not a file (through its symbolic link)");
  // A folder that does not exist is named as the file asked for.
  check_failure(f.run({"blob", "get", hash_of(binary), "--out", f.dir.path() + "/nodir/x.bin"}), 2,
                "/nodir/x.bin: ");
  simdjson::dom::parser blob_parser;
  const auto blob = f.json(blob_parser, {"blob", "get", hash_of(binary)});
  CHECK(text_of(blob, "hash") == hash_of(binary));
  CHECK(number_of(blob, "size") == binary.size());
  CHECK(decoded_payload(blob) == binary);
  simdjson::dom::parser blob_out_parser;
  const auto blob_out = f.json(blob_out_parser, {"blob", "get", hash_of("small text"), "--out", out_path});
  CHECK(text_of(blob_out, "out") == out_path);
  CHECK(blob_out["payload_base64"].error() == simdjson::NO_SUCH_FIELD);
  CHECK(cli_test::read_file(out_path) == "small text");

  // The payloads in listings: raw in text, base64 in JSON.
  const run_result listed = f.run({"last", "--context", context, "--payloads"});
  check_clean_success(listed);
  CHECK(contains(listed.out, "\n" + binary + "\nturn 2 "));
  simdjson::dom::parser replay_parser;
  const auto replay = f.json(replay_parser, {"replay", "--turn", "2", "--payloads"});
  for (simdjson::dom::element t : array_of(replay, "turns")) CHECK(decoded_payload(t) == binary);

  // Two turns share one blob.
  simdjson::dom::parser stats_parser;
  const auto stats = f.json(stats_parser, {"stats"});
  CHECK(number_of(stats, "turns") == 3);
  CHECK(number_of(stats, "contexts") == 1);
  CHECK(number_of(stats, "blobs") == 2);
  CHECK(number_of(stats, "payload_bytes") == 2 * binary.size() + 10);
  CHECK(number_of(stats, "blob_raw_bytes") == binary.size() + 10);
  CHECK(number_of(stats, "blob_stored_bytes") <= binary.size() + 10);
  const double dedup = static_cast<double>(2 * binary.size() + 10) / static_cast<double>(binary.size() + 10);
  CHECK(cli_test::real_of(stats, "dedup_ratio") == doctest::Approx(dedup));
  CHECK(number_of(stats, "pack_bytes") == std::filesystem::file_size(f.store + "/blobs.pack"));
  CHECK(number_of(stats, "turn_log_bytes") == 32 + 3 * 80);
  const run_result stats_text = f.run({"stats"});
  check_clean_success(stats_text);
  CHECK(contains(stats_text.out, "turns              3\n"));
  CHECK(contains(stats_text.out, "blobs              2\n"));
  CHECK(contains(stats_text.out, "payload bytes      1556 (all turns, before dedup)\n"));
  CHECK(contains(stats_text.out, "bytes raw          783 (distinct blobs)\n"));
  CHECK(contains(stats_text.out, "dedup ratio        1.99\n"));
}

TEST_CASE("ctxstore: fsck finds garbage after blobs.pack's last record, --repair cuts it, then all is clean") {
  store_fixture f;
  f.init();
  const std::string context = f.create();
  f.append(context, "one");
  f.append(context, "two");
  const std::string pack = f.store + "/blobs.pack";
  const std::uintmax_t pack_size = std::filesystem::file_size(pack);

  const run_result clean = f.run({"fsck"});
  check_clean_success(clean);
  CHECK(clean.out == "clean: checked 2 turns, 2 blobs and 1 context\n");
  simdjson::dom::parser clean_parser;
  const auto clean_json = f.json(clean_parser, {"fsck"});
  CHECK(clean_json["ok"].get_bool().value());
  CHECK_FALSE(clean_json["repaired"].get_bool().value());
  CHECK(number_of(clean_json, "turns_checked") == 2);
  CHECK(number_of(clean_json, "blobs_checked") == 2);
  CHECK(number_of(clean_json, "contexts_checked") == 1);
  CHECK(clean_json["recovery"]["clean"].get_bool().value());
  CHECK(array_of(clean_json, "problems").size() == 0);

  const auto damage = [&] {
    std::ofstream out(pack, std::ios::binary | std::ios::app);
    out << "garbage!";
  };
  damage();
  const run_result found = f.run({"fsck"});
  INFO("stdout: " << found.out);
  CHECK(found.exit_code == 1);
  CHECK(found.err.empty());
  const std::vector<std::string> lines = lines_of(found.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "recovery would cut 8 bytes from the end of blobs.pack; first damage: " + pack + ": at byte " +
                        std::to_string(pack_size) + ": blob record cut short");
  CHECK(lines[1] == "DAMAGED: 1 problem; checked 2 turns, 2 blobs and 1 context "
                    "(ctxstore fsck --repair fixes what recovery can cut)");
  CHECK(std::filesystem::file_size(pack) == pack_size + 8);  // fsck alone writes nothing

  const run_result found_json = f.run({"fsck", "--json"});
  CHECK(found_json.exit_code == 1);
  simdjson::dom::parser found_parser;
  const auto report = cli_test::parse_json(found_parser, found_json.out);
  CHECK_FALSE(report["ok"].get_bool().value());
  const simdjson::dom::element recovery = report["recovery"].value();
  CHECK_FALSE(recovery["clean"].get_bool().value());
  CHECK_FALSE(recovery["applied"].get_bool().value());
  CHECK(number_of(recovery, "pack_cut_bytes") == 8);
  CHECK(number_of(recovery, "pack_valid_end") == pack_size);
  CHECK(contains(text_of(recovery, "first_problem"), "blob record cut short"));

  // Readers still work on the damaged store.
  simdjson::dom::parser reader_parser;
  CHECK(turn_ids(f.json(reader_parser, {"last", "--context", context})) == std::vector<std::uint64_t>{1, 2});

  const run_result repaired = f.run({"fsck", "--repair"});
  check_clean_success(repaired);
  CHECK(repaired.out == "recovery cut 8 bytes from the end of blobs.pack; first damage: " + pack + ": at byte " +
                            std::to_string(pack_size) + ": blob record cut short\n"
                            "repaired; clean: checked 2 turns, 2 blobs and 1 context\n");
  CHECK(std::filesystem::file_size(pack) == pack_size);
  simdjson::dom::parser again_parser;
  const auto again = f.json(again_parser, {"fsck"});
  CHECK(again["ok"].get_bool().value());
  CHECK(again["recovery"]["clean"].get_bool().value());

  // fsck --repair --json on the damaged store says what it cut.
  damage();
  simdjson::dom::parser repair_parser;
  const auto repair_json = f.json(repair_parser, {"fsck", "--repair"});
  CHECK(repair_json["ok"].get_bool().value());
  CHECK(repair_json["repaired"].get_bool().value());
  CHECK(repair_json["recovery"]["applied"].get_bool().value());
  CHECK(number_of(repair_json["recovery"].value(), "pack_cut_bytes") == 8);

  // A writer's open repairs a torn tail too, and says so in one line.
  damage();
  const run_result appended = f.run({"append", "--context", context, "--data", "three"});
  CHECK(appended.exit_code == 0);
  CHECK(appended.out.rfind("appended turn 3 ", 0) == 0);
  CHECK(appended.err == "ctxstore: " + f.store + ": recovery cut 8 bytes from the end of blobs.pack; first damage: " +
                            pack + ": at byte " + std::to_string(pack_size) + ": blob record cut short\n");
  check_clean_success(f.run({"fsck"}));
}

TEST_CASE("ctxstore: a damaged blob record inside the store is exit 1 for readers, a problem for fsck, cut by --repair") {
  store_fixture f;
  f.init();
  const std::string context = f.create();
  f.append(context, "a payload that will be damaged");
  const std::string pack = f.store + "/blobs.pack";
  {
    std::fstream file(pack, std::ios::binary | std::ios::in | std::ios::out);
    file.seekp(32 + 48 + 3);  // inside the first record's stored bytes
    file.put('#');
  }
  const std::string hash = hash_of("a payload that will be damaged");
  check_failure(f.run({"blob", "get", hash}), 1,
                pack + ": at byte 32: blob " + hash + ": blob record checksum mismatch");
  check_failure(f.run({"last", "--context", context, "--payloads"}), 1, "blob record checksum mismatch");

  const run_result checked = f.run({"fsck"});
  CHECK(checked.exit_code == 1);
  CHECK(checked.out == pack + ": at byte 32: blob record checksum mismatch\n"
                      "DAMAGED: 1 problem; checked 1 turn, 1 blob and 1 context "
                      "(ctxstore fsck --repair fixes what recovery can cut)\n");
  simdjson::dom::parser parser;
  const run_result checked_json = f.run({"fsck", "--json"});
  CHECK(checked_json.exit_code == 1);
  const auto report = cli_test::parse_json(parser, checked_json.out);
  CHECK_FALSE(report["ok"].get_bool().value());
  CHECK(report["recovery"]["clean"].get_bool().value());  // the damage is inside the durable part
  const auto problems = array_of(report, "problems");
  REQUIRE(problems.size() == 1);
  CHECK(text_of(problems.at(0).value(), "file") == pack);
  CHECK(number_of(problems.at(0).value(), "offset") == 32);
  CHECK(text_of(problems.at(0).value(), "message") == "blob record checksum mismatch");

  // The repair cuts the damaged record and the turn that needs it.
  const run_result repaired = f.run({"fsck", "--repair"});
  CHECK(repaired.exit_code == 0);
  CHECK(contains(repaired.out, "repaired; clean: checked 0 turns, 0 blobs and 1 context\n"));
  check_clean_success(f.run({"fsck"}));
  check_failure(f.run({"blob", "get", hash}), 1, "no blob " + hash);
}

TEST_CASE("ctxstore: refused inputs give one line on stderr and their documented exit code") {
  store_fixture f;
  f.init();
  const std::string context = f.create();
  f.append(context, "x");
  struct bad_case {
    std::vector<std::string> args;
    int exit_code;
    std::string fragment;
  };
  const std::string unknown_context = context == "00000000000000aa" ? "00000000000000ab" : "00000000000000aa";
  const std::string missing_store = f.dir.path() + "/missing";
  const std::vector<bad_case> cases = {
      {{"last", "--context", unknown_context}, 1, "does not exist"},
      {{"before", "--context", unknown_context, "--turn", "1"}, 1, "does not exist"},
      {{"append", "--context", unknown_context, "--data", "x"}, 1, "does not exist"},
      {{"last", "--context", "xyz"}, 2, "--context: must be a context id (up to 16 hex digits, optionally after 0x, not 0), not 'xyz'"},
      {{"last", "--context", "0"}, 2, "--context: must be a context id"},
      {{"last", "--context", "12345678901234567"}, 2, "--context: must be a context id"},
      {{"last", "--context", context, "-n", "0"}, 2, "--count: must be a whole number of at least 1, not '0'"},
      {{"last", "--context", context, "-n", "-3"}, 2, "--count: must be a whole number of at least 1, not '-3'"},
      {{"last"}, 2, "--context is required"},
      {{"before", "--context", context, "--turn", "abc"}, 2, "--turn: must be a whole number of at least 1, not 'abc'"},
      {{"before", "--context", context, "--turn", "99"}, 1, "turn 99 does not exist"},
      {{"replay", "--turn", "0"}, 2, "--turn: must be a whole number of at least 1, not '0'"},
      {{"replay", "--turn", "99"}, 1, "turn 99 does not exist"},
      {{"range", "--context", context, "--start", "-1"}, 2, "--start: must be a whole number from 0 to 4294967295"},
      {{"fork", "--from-turn", "99"}, 1, "turn 99 does not exist"},
      {{"fork"}, 2, "--from-turn is required"},
      {{"create", "--from-turn", "99"}, 1, "turn 99 does not exist"},
      {{"append", "--context", context, "--data", "x", "--file", "payload.bin"}, 2,
       "give at most one of --data S and --file F (neither: standard input) (run 'ctxstore append --help' for usage)\n"},
      {{"append", "--context", context, "--file", "no-such-file"}, 2, "no-such-file: "},
      {{"append", "--context", context, "--file", "."}, 2, ".: read failed: Is a directory"},
      {{"append", "--context", context, "--data", "x", "--parent", "99"}, 1, "turn 99 does not exist"},
      {{"append", "--context", context, "--data", "x", "--type", "0x10000000000000000"}, 2,
       "--type: must be a whole number from 0 to 18446744073709551615 (decimal or 0x-hex), not '0x10000000000000000'"},
      {{"append", "--context", context, "--data", "x", "--codec", "4294967296"}, 2,
       "--codec: must be a whole number from 0 to 4294967295 (decimal or 0x-hex)"},
      {{"append", "--context", context, "--data", "x", "--codec", "010x"}, 2, "--codec: must be a whole number"},
      {{"blob", "get", "abc"}, 2, "must be a blob hash (64 lowercase hex digits), not 'abc'"},
      {{"blob", "get", std::string(64, 'A')}, 2, "must be a blob hash"},
      {{"blob", "get", std::string(64, '0')}, 1, "no blob " + std::string(64, '0')},
      {{"blob"}, 2, "(run 'ctxstore blob --help' for usage)"},
      {{"bogus"}, 2, "unexpected arguments 'bogus' '--store'"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(cli_test::joined(c.args));
    check_failure(f.run(c.args), c.exit_code, c.fragment);
  }
  // A folder without a store is a usage error for readers and writers alike.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"contexts"}, {"stats"}, {"fsck"}, {"fsck", "--repair"}, {"create"},
                                             {"append", "--context", context, "--data", "x"}}) {
    CAPTURE(cli_test::joined(args));
    std::vector<std::string> with_store = args;
    with_store.insert(with_store.end(), {"--store", missing_store});
    check_failure(cli_test::ctxstore(with_store, f.dir.path()), 2, missing_store + ": no turn store here");
  }
  check_failure(cli_test::ctxstore({"init", "--store", f.dir.path() + "/no/such/parent"}, f.dir.path()), 2,
                "no/such/parent");
  // Nothing was written by any of them.
  simdjson::dom::parser parser;
  const auto stats = f.json(parser, {"stats"});
  CHECK(number_of(stats, "turns") == 1);
  CHECK(number_of(stats, "contexts") == 1);
}

TEST_CASE("ctxstore: output that cannot be written is an I/O error, without the usage hint") {
  store_fixture f;
  f.init();
  const std::string context = f.create();
  f.append(context, "payload");
  const std::string hash = hash_of("payload");
  for (const std::string& command : std::vector<std::string>{"stats", "contexts --json", "blob get " + hash}) {
    CAPTURE(command);
    // Appended piece by piece: GCC 12 warns (-Warray-bounds, falsely) on a chain of + here.
    std::string script = CTXSTORE_BIN;
    script.append(" ").append(command).append(" --store ").append(f.store).append(" > /dev/full");
    const run_result r = cli_test::run("/bin/sh", {"-c", script});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "ctxstore: cannot write to standard output\n");
  }
}

TEST_CASE("ctxstore: while another process writes, writers fail with its pid or --wait, readers work") {
  store_fixture f;
  f.init();
  const std::string context = f.create();
  f.append(context, "before the lock");

  auto holder = agentctx::turns::turn_store::open(agentctx::io::default_file_system(), f.store);
  REQUIRE(holder.has_value());
  const std::string locked = f.store + ": store is locked by pid " + std::to_string(::getpid());
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"append", "--context", context, "--data", "x"}, {"create"}, {"fork", "--from-turn", "1"},
           {"fsck", "--repair"}}) {
    CAPTURE(cli_test::joined(args));
    check_failure(f.run(args), 2, locked);
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"last", "--context", context}, {"replay", "--turn", "1"}, {"contexts"}, {"stats"}, {"fsck"},
           {"blob", "get", hash_of("before the lock")}}) {
    CAPTURE(cli_test::joined(args));
    check_clean_success(f.run(args));
  }
  // A write by the holder is visible to a reader started after it.
  REQUIRE((*holder)->append(std::stoull(context, nullptr, 16), std::as_bytes(std::span("held", 4))).has_value());
  simdjson::dom::parser parser;
  CHECK(turn_ids(f.json(parser, {"last", "--context", context})) == std::vector<std::uint64_t>{1, 2});

  // --wait: the append waits until the holder lets go.
  std::atomic<bool> finished = false;
  run_result waited;
  std::thread writer([&] {
    waited = f.run({"append", "--context", context, "--data", "after the lock", "--wait"});
    finished = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK_FALSE(finished.load());
  holder->reset();
  writer.join();
  check_clean_success(waited);
  CHECK(waited.out.rfind("appended turn 3 to context " + context + " (parent 2, depth 2, ", 0) == 0);
}

TEST_CASE("ctxstore: --help names every command and option") {
  const run_result help = cli_test::ctxstore({"--help"});
  check_clean_success(help);
  for (const char* command : {"init", "create", "fork", "append", "last", "before", "range", "replay", "blob",
                              "contexts", "stats", "fsck"}) {
    CAPTURE(command);
    CHECK(contains(help.out, std::string("\n  ") + command));
  }
  const run_result append_help = cli_test::ctxstore({"append", "--help"});
  check_clean_success(append_help);
  for (const char* option : {"--context", "--parent", "--type", "--codec", "--data", "--file", "--store", "--json",
                             "--wait"}) {
    CAPTURE(option);
    CHECK(contains(append_help.out, option));
  }
  const run_result last_help = cli_test::ctxstore({"last", "--help"});
  for (const char* option : {"--context", "-n", "--payloads", "--store", "--json"}) {
    CAPTURE(option);
    CHECK(contains(last_help.out, option));
  }
}

#endif

}  // namespace cli_ctxstore_test
