// Damaged store files (table-driven, leveldb log_test style): every kind of
// torn or corrupted byte in each file, and what open(), the reads and fsck
// make of it.
#include <functional>

#include "agentctx/turns/store_check.hpp"
#include "turns/turn_test_support.hpp"

namespace turns_bad_input_test {

using namespace turns_test;

namespace {

constexpr turn_id built_turns = 40;

store_options small_thresholds() { return turns_test::small_thresholds(3, 8, 10, 10); }

/// A store with two contexts, a fork, dedup hits, sealed index runs, a
/// snapshot and a checkpoint, closed cleanly. Returns the contexts.
std::vector<context_head> build_store(io::memory_file_system& fs) {
  auto store = fresh_store(fs, "store", small_thresholds());
  context_head a = require_value(store->create_context());
  context_head b = require_value(store->create_context());
  for (turn_id i = 0; i < built_turns - 5; ++i) {
    (void)require_value(store->append(i % 2 ? a.id : b.id, payload(i % 25, 400)));
  }
  context_head fork = require_value(store->fork(10));
  for (int i = 0; i < 5; ++i) (void)require_value(store->append(fork.id, payload(500 + i, 400)));
  require_ok(store->close());
  return store->contexts();
}

std::vector<std::byte> read(io::memory_file_system& fs, const std::string& name) {
  return require_value(fs.read_whole("store/" + name));
}

void write(io::memory_file_system& fs, const std::string& name, const std::vector<std::byte>& bytes) {
  require_ok(fs.write_whole("store/" + name, bytes));
}

void append_bytes(io::memory_file_system& fs, const std::string& name, const std::vector<std::byte>& extra) {
  auto bytes = read(fs, name);
  bytes.insert(bytes.end(), extra.begin(), extra.end());
  write(fs, name, bytes);
}

void flip(io::memory_file_system& fs, const std::string& name, std::size_t offset) {
  auto bytes = read(fs, name);
  REQUIRE(offset < bytes.size());
  bytes[offset] ^= std::byte{0x40};
  write(fs, name, bytes);
}

/// A valid turn record for `t`, to append after the last one.
std::vector<std::byte> record_of(const turn& t) {
  std::vector<std::byte> bytes(turn_record_size);
  encode_turn_record(bytes.data(), t);
  return bytes;
}

turn next_turn_like(io::memory_file_system& fs) {
  auto store = require_value(turn_store::open(fs, "store", [] {
    store_options o = small_thresholds();
    o.read_only = true;
    return o;
  }()));
  turn t = require_value(store->get_turn(built_turns));
  t.id = built_turns + 1;
  t.parent = built_turns;
  t.depth += 1;
  return t;
}

enum class outcome { opens, refuses };

struct damage_case {
  const char* name;
  std::function<void(io::memory_file_system&)> damage;
  outcome expected;
  errc refused_with = errc::ok;
  /// Checks on the recovery report of the first open (when it opens).
  std::function<void(const recovery_report&)> check_report;
  turn_id turns_after = built_turns;
};

std::vector<damage_case> damage_cases() {
  auto none = [](const recovery_report&) {};
  return {
      {"garbage after the last blob record", [](auto& fs) { append_bytes(fs, "blobs.pack", noise(1, 100)); },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.pack_cut_bytes == 100); }},
      {"zeros after the last blob record (preallocation)",
       [](auto& fs) { append_bytes(fs, "blobs.pack", std::vector<std::byte>(4096)); }, outcome::opens, errc::ok,
       [](const recovery_report& r) { CHECK(r.pack_cut_bytes == 4096); }},
      {"a torn blob record at the end",
       [](auto& fs) {
         auto bytes = read(fs, "blobs.pack");
         std::vector<std::byte> copy(bytes.begin() + file_header_size, bytes.begin() + file_header_size + 70);
         append_bytes(fs, "blobs.pack", copy);
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.pack_cut_bytes == 70); }},
      {"a blob record whose stored_len runs past the end",
       [](auto& fs) {
         std::vector<std::byte> header(blob_header_size + 8);
         blob_record_header h;
         h.codec = 0;
         h.raw_len = h.stored_len = 1'000'000;
         encode_blob_header(header.data(), h);
         append_bytes(fs, "blobs.pack", header);
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.pack_cut_bytes == blob_header_size + 8); }},
      {"a partial turn record at the end", [](auto& fs) { append_bytes(fs, "turns.log", noise(2, 40)); },
       outcome::opens, errc::ok, [](const recovery_report& r) {
         CHECK(r.log_cut_bytes == 40);
         CHECK(r.turns_dropped == 0);
       }},
      {"a whole turn record with a bad checksum",
       [](auto& fs) {
         auto bytes = record_of(next_turn_like(fs));
         bytes[5] ^= std::byte{1};
         append_bytes(fs, "turns.log", bytes);
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.turns_dropped == 1); }},
      {"a turn record holding another id",
       [](auto& fs) {
         turn t = next_turn_like(fs);
         t.id += 5;
         append_bytes(fs, "turns.log", record_of(t));
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.turns_dropped == 1); }},
      {"a turn whose parent is not earlier",
       [](auto& fs) {
         turn t = next_turn_like(fs);
         t.parent = t.id;
         append_bytes(fs, "turns.log", record_of(t));
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.turns_dropped == 1); }},
      {"a turn with the wrong depth",
       [](auto& fs) {
         turn t = next_turn_like(fs);
         t.depth += 3;
         append_bytes(fs, "turns.log", record_of(t));
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.turns_dropped == 1); }},
      {"a turn whose blob is not in the pack",
       [](auto& fs) {
         turn t = next_turn_like(fs);
         t.payload_hash[0] ^= 0xFF;
         append_bytes(fs, "turns.log", record_of(t));
       },
       outcome::opens, errc::ok, [](const recovery_report& r) {
         CHECK(r.turns_dropped == 1);
         CHECK(r.first_problem.find("blob is not in the pack") != std::string::npos);
       }},
      {"a valid extra turn (durable, never acknowledged) is kept",
       [](auto& fs) { append_bytes(fs, "turns.log", record_of(next_turn_like(fs))); }, outcome::opens, errc::ok,
       [](const recovery_report& r) { CHECK(r.turns_dropped == 0); }, built_turns + 1},
      {"garbage after the last head record", [](auto& fs) { append_bytes(fs, "heads.log", noise(3, 30)); },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.head_log_cut_bytes == 30); }},
      {"a head record with a gap in its sequence",
       [](auto& fs) {
         std::vector<std::byte> record(head_record_size);
         encode_head_record(record.data(), 1'000'000, context_head{77, 0, 0, 0, 1});
         append_bytes(fs, "heads.log", record);
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.head_log_cut_bytes == head_record_size); }},
      {"a head record naming a turn that does not exist falls back",
       [](auto& fs) {
         auto log = read(fs, "heads.log");
         std::uint64_t seq = 0;
         context_head last;
         REQUIRE(decode_head_record(log.data() + log.size() - head_record_size, seq, last));
         last.head = built_turns + 7;
         std::vector<std::byte> record(head_record_size);
         encode_head_record(record.data(), seq + 1, last);
         append_bytes(fs, "heads.log", record);
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.head_records_dropped == 1); }},
      {"damaged heads.snap is ignored", [](auto& fs) { flip(fs, "heads.snap", file_header_size + 30); },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK_FALSE(r.snapshot_used); }},
      {"heads.snap of another store is ignored",
       [](auto& fs) {
         auto bytes = read(fs, "heads.snap");
         bytes[8] ^= std::byte{1};
         encode_file_header(bytes.data(), {head_snapshot_magic, [&] {
                                             store_salt s;
                                             std::memcpy(s.data(), bytes.data() + 8, s.size());
                                             return s;
                                           }()});
         write(fs, "heads.snap", bytes);
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK_FALSE(r.snapshot_used); }},
      {"damaged blobs.idx manifest: the index is rebuilt", [](auto& fs) { flip(fs, "blobs.idx", file_header_size + 2); },
       outcome::opens, errc::ok, [](const recovery_report& r) {
         CHECK(r.index_rebuilt);
         CHECK(r.blobs_indexed_from_pack > 0);
       }},
      {"a missing index run: the index is rebuilt",
       [](auto& fs) {
         for (const auto& name : require_value(fs.list_dir("store"))) {
           if (name.rfind("blobs.idx.", 0) == 0) {
             require_ok(fs.remove("store/" + name));
             break;
           }
         }
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.index_rebuilt); }},
      {"a damaged index run: the index is rebuilt",
       [](auto& fs) {
         for (const auto& name : require_value(fs.list_dir("store"))) {
           if (name.rfind("blobs.idx.", 0) == 0) {
             flip(fs, name, file_header_size + 40);
             break;
           }
         }
       },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.index_rebuilt); }},
      {"a missing blobs.idx: the pack is indexed again", [](auto& fs) { require_ok(fs.remove("store/blobs.idx")); },
       outcome::opens, errc::ok, [](const recovery_report& r) { CHECK(r.blobs_indexed_from_pack > 0); }},
      {"damaged turns.idx: every turn is verified", [](auto& fs) { flip(fs, "turns.idx", file_header_size + 1); },
       outcome::opens, errc::ok, none},
      {"turns.idx claims more turns than the log holds",
       [](auto& fs) {
         auto log = read(fs, "turns.log");
         log.resize(log.size() - 3 * turn_record_size);
         write(fs, "turns.log", log);
       },
       outcome::refuses, errc::corrupt, none},
      {"blobs.pack shorter than its checkpoint",
       [](auto& fs) {
         auto pack = read(fs, "blobs.pack");
         pack.resize(pack.size() - 10);
         write(fs, "blobs.pack", pack);
       },
       outcome::refuses, errc::corrupt, none},
      {"blobs.pack with a bad magic", [](auto& fs) { flip(fs, "blobs.pack", 0); }, outcome::refuses, errc::corrupt,
       none},
      {"turns.log of another store",
       [](auto& fs) {
         auto bytes = read(fs, "turns.log");
         store_salt other{};
         encode_file_header(bytes.data(), {turn_log_magic, other});
         write(fs, "turns.log", bytes);
       },
       outcome::refuses, errc::corrupt, none},
      {"heads.log shorter than its header",
       [](auto& fs) { write(fs, "heads.log", std::vector<std::byte>(10)); }, outcome::refuses, errc::corrupt, none},
      {"a damaged head record inside the checkpointed part of heads.log",
       [](auto& fs) {
         require_ok(fs.remove("store/heads.snap"));
         flip(fs, "heads.log", file_header_size + head_record_size + 9);
       },
       outcome::refuses, errc::corrupt, none},
      {"heads.log shorter than its checkpoint",
       [](auto& fs) {
         auto log = read(fs, "heads.log");
         log.resize(log.size() - head_record_size);
         write(fs, "heads.log", log);
       },
       outcome::refuses, errc::corrupt, none},
      {"heads.log missing", [](auto& fs) { require_ok(fs.remove("store/heads.log")); }, outcome::refuses,
       errc::not_found, none},
  };
}

}  // namespace

TEST_CASE("turn store: damaged files (table)") {
  for (const damage_case& c : damage_cases()) {
    CAPTURE(c.name);
    io::memory_file_system fs;
    std::vector<context_head> heads = build_store(fs);
    c.damage(fs);
    io::fault_injecting_file_system faulty(fs);
    auto opened = turn_store::open(faulty, "store", small_thresholds());
    if (c.expected == outcome::refuses) {
      REQUIRE_FALSE(opened.has_value());
      CHECK(opened.error().code == c.refused_with);
      CHECK_FALSE(opened.error().describe().empty());
      continue;
    }
    REQUIRE_MESSAGE(opened.has_value(), test_support::error_text(opened));
    auto& store = *opened;
    c.check_report(store->recovery());
    CHECK(store->last_turn() == c.turns_after);
    for (turn_id id = 1; id <= built_turns; ++id) {
      auto t = require_value(store->get_turn(id));
      CHECK(require_value(store->read_payload(t)).size() == 400);
    }
    for (const context_head& h : heads) CHECK(require_value(store->head(h.id)) == h);
    // The process dies right after recovery, before close() could write anything.
    faulty.set_crash_after_fault(true);
    faulty.fail_operation(faulty.operation_count() + 1);
    store.reset();
    fs.simulate_crash();
    // Recovery was applied and made durable: the next open finds nothing to cut.
    auto again = require_value(turn_store::open(fs, "store", small_thresholds()));
    CHECK(again->recovery().pack_cut_bytes == 0);
    CHECK(again->recovery().log_cut_bytes == 0);
    CHECK(again->recovery().turns_dropped == 0);
    CHECK(again->recovery().head_log_cut_bytes == 0);
    CHECK(again->recovery().head_records_dropped == 0);
    for (const context_head& h : heads) CHECK(require_value(again->head(h.id)) == h);
    auto check = require_value(check_store(fs, "store"));
    CHECK_MESSAGE(check.problems.empty(), (check.problems.empty() ? "" : check.problems[0].message));
  }
}

TEST_CASE("turn store: damage inside the durable prefix is reported, not cut; fsck --repair decides") {
  SUBCASE("a flipped byte inside a stored blob") {
    io::memory_file_system fs;
    build_store(fs);
    flip(fs, "blobs.pack", file_header_size + blob_header_size + 3);
    auto store = require_value(turn_store::open(fs, "store", small_thresholds()));
    CHECK(store->recovery().clean());
    auto first = require_value(store->get_turn(1));
    auto bytes = store->read_payload(first);
    REQUIRE_FALSE(bytes.has_value());
    CHECK(is_data_error(bytes.error().code));
    CHECK(bytes.error().path == "store/blobs.pack");
    store.reset();
    check_report report = require_value(check_store(fs, "store"));
    CHECK_FALSE(report.ok());
    REQUIRE_FALSE(report.problems.empty());
    CHECK(report.problems[0].file == "store/blobs.pack");
    CHECK(report.problems[0].offset == file_header_size);
  }
  SUBCASE("a flipped byte inside a checkpointed turn record") {
    io::memory_file_system fs;
    build_store(fs);
    flip(fs, "turns.log", turn_record_offset(3) + 20);
    auto store = require_value(turn_store::open(fs, "store", small_thresholds()));
    auto damaged = store->get_turn(3);
    REQUIRE_FALSE(damaged.has_value());
    CHECK(damaged.error().code == errc::checksum_mismatch);
    CHECK(damaged.error().offset == turn_record_offset(3));
    store.reset();
    check_report report = require_value(check_store(fs, "store"));
    REQUIRE_FALSE(report.problems.empty());
    CHECK(report.problems[0].offset == turn_record_offset(3));
    CHECK(report.turns_checked == built_turns);
  }
  SUBCASE("blobs.pack cut short: open refuses; repair drops what is lost and the store works again") {
    io::memory_file_system fs;
    build_store(fs);
    auto pack = read(fs, "blobs.pack");
    pack.resize(pack.size() - 10);
    write(fs, "blobs.pack", pack);
    CHECK(turn_store::open(fs, "store", small_thresholds()).error().code == errc::corrupt);
    check_options repair;
    repair.repair = true;
    repair.store = small_thresholds();
    check_report report = require_value(check_store(fs, "store", repair));
    CHECK(report.repaired);
    CHECK(report.recovery.pack_cut_bytes > 0);
    CHECK(report.problems.empty());
    auto store = require_value(turn_store::open(fs, "store", small_thresholds()));
    CHECK(store->recovery().clean());
    CHECK(store->last_turn() < built_turns);
    for (const context_head& h : store->contexts()) CHECK(h.head <= store->last_turn());
    auto ctx = store->contexts().front().id;
    turn_id next = require_value(store->append(ctx, payload(1)));
    CHECK(next == store->last_turn());
  }
  SUBCASE("a damaged old head record: open refuses; repair keeps what is before it") {
    io::memory_file_system fs;
    std::vector<context_head> heads = build_store(fs);
    require_ok(fs.remove("store/heads.snap"));
    flip(fs, "heads.log", file_header_size + 3 * head_record_size + 1);
    auto refused = turn_store::open(fs, "store", small_thresholds());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == errc::corrupt);
    CHECK(refused.error().offset == file_header_size + 3 * head_record_size);
    check_report looked = require_value(check_store(fs, "store"));
    CHECK(looked.recovery.head_log_cut_bytes > 0);
    check_options repair;
    repair.repair = true;
    repair.store = small_thresholds();
    check_report report = require_value(check_store(fs, "store", repair));
    CHECK(report.repaired);
    CHECK(report.problems.empty());
    auto store = require_value(turn_store::open(fs, "store", small_thresholds()));
    CHECK(store->recovery().clean());
    CHECK(store->last_turn() == built_turns);  // turns are untouched; only heads went back
    for (const context_head& h : store->contexts()) CHECK(h.head <= built_turns);
  }
  SUBCASE("a clean store checks clean") {
    io::memory_file_system fs;
    build_store(fs);
    check_report report = require_value(check_store(fs, "store"));
    CHECK(report.ok());
    CHECK(report.turns_checked == built_turns);
    CHECK(report.blobs_checked == 30);
    CHECK(report.contexts_checked == 3);
  }
}

TEST_CASE("turn store: what a crashed writer wrote but never synced is synced before a checkpoint vouches for it") {
  io::memory_file_system memory;
  context_id ctx = 0;
  {
    auto store = fresh_store(memory, "store", small_thresholds());
    ctx = require_value(store->create_context()).id;
  }
  {
    // The first writer dies in its first sync: the turn is written, not synced,
    // and the page cache (the memory file system's current state) keeps it.
    io::fault_injecting_file_system faulty(memory);
    auto store = require_value(turn_store::open(faulty, "store", small_thresholds()));
    faulty.set_crash_after_fault(true);
    faulty.fail_sync(faulty.operation_count(io::operation_kind::sync) + 1);
    CHECK_FALSE(store->append(ctx, payload(1)).has_value());
  }
  {
    // The next writer finds the turn whole and keeps it, then checkpoints.
    auto store = require_value(turn_store::open(memory, "store", small_thresholds()));
    CHECK(store->last_turn() == 1);
  }
  // Power loss now: nothing the checkpoint claims may be missing.
  memory.simulate_crash();
  auto store = require_value(turn_store::open(memory, "store", small_thresholds()));
  CHECK(store->last_turn() == 1);
  CHECK(require_value(store->read_payload(require_value(store->get_turn(1)))) == payload(1));
}

TEST_CASE("turn store: fsck --repair that empties the logs leaves no stale checkpoint behind") {
  io::memory_file_system fs;
  build_store(fs);
  for (const char* name : {"blobs.pack", "turns.log", "heads.log"}) {
    auto bytes = read(fs, name);
    bytes.resize(file_header_size);
    bytes.push_back(std::byte{0x55});  // a torn byte after each header
    write(fs, name, bytes);
  }
  check_options repair;
  repair.repair = true;
  repair.store = small_thresholds();
  check_report report = require_value(check_store(fs, "store", repair));
  CHECK(report.repaired);
  CHECK(report.ok());
  auto store = require_value(turn_store::open(fs, "store", small_thresholds()));
  CHECK(store->recovery().clean());
  CHECK(store->last_turn() == 0);
  CHECK(store->contexts().empty());
}

}  // namespace turns_bad_input_test
