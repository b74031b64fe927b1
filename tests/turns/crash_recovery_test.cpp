// Simulated crashes (issue 5 section 6): a workload of a few hundred appends
// with forks, explicit parents and dedup hits runs against the in-memory
// file system; it is crashed at every mutating operation (writes torn at a
// random byte), and each crash image (unsynced data dropped, kept, a random
// prefix kept with its last write torn, random pages kept) is reopened and
// checked against an oracle of the acknowledged operations.
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "support/crash_images.hpp"
#include "turns/turn_test_support.hpp"

namespace turns_crash_recovery_test {

using namespace turns_test;

namespace {

struct acknowledged_turn {
  turn_id id = 0;
  turn_id parent = 0;
  context_id context = 0;
  std::vector<std::byte> bytes;
};

/// The operation that was running when the crash hit, if any.
struct in_flight {
  bool is_append = false;
  context_id context = 0;
  turn_id parent = 0;
  std::vector<std::byte> bytes;
};

struct oracle {
  std::vector<acknowledged_turn> turns;
  std::map<context_id, turn_id> heads;  // last acknowledged head of every acknowledged context
  std::optional<in_flight> pending;
  bool completed = false;
};

// Index runs, merges, checkpoints and snapshots are written (and crashed)
// during the workload too.
store_options crash_options() { return small_thresholds(7, 24, 30, 40); }

constexpr int workload_steps = 220;

/// Runs the workload until it ends or an operation fails.
oracle run_workload(io::file_system& fs) {
  oracle log;
  auto opened = turn_store::open(fs, "store", crash_options());
  if (!opened) return log;
  auto& store = *opened;
  std::mt19937_64 random(2024);
  std::vector<context_id> contexts;
  auto create = [&](turn_id base) -> bool {
    log.pending = in_flight{false, 0, base, {}};
    auto ctx = store->create_context(base);
    if (!ctx) return false;
    contexts.push_back(ctx->id);
    log.heads[ctx->id] = base;
    log.pending.reset();
    return true;
  };
  for (int i = 0; i < 3; ++i) {
    if (!create(0)) return log;
  }
  for (int step = 0; step < workload_steps; ++step) {
    std::uint64_t r = random() % 100;
    if (r < 6 && !log.turns.empty()) {
      if (!create(log.turns[random() % log.turns.size()].id)) return log;
      continue;
    }
    context_id ctx = contexts[random() % contexts.size()];
    std::uint64_t seed = r < 35 ? random() % 12 : 1000 + static_cast<std::uint64_t>(step);  // dedup hits
    std::size_t size = 60 + static_cast<std::size_t>(random() % 1500);
    std::vector<std::byte> bytes = payload(seed, size);
    append_options options;
    options.type_tag = random() % 4;
    turn_id parent = log.heads[ctx];
    if (random() % 20 == 0 && !log.turns.empty()) {
      parent = log.turns[random() % log.turns.size()].id;
      options.parent = parent;
    }
    log.pending = in_flight{true, ctx, parent, bytes};
    auto id = store->append(ctx, bytes, options);
    if (!id) return log;
    log.turns.push_back({*id, parent, ctx, std::move(bytes)});
    log.heads[ctx] = *id;
    log.pending.reset();
  }
  log.completed = true;
  return log;
}

/// Everything a recovered store must satisfy.
void check_against(io::memory_file_system& memory, const oracle& log, const std::string& image) {
  crash_support::image_expectations expect(image);
  io::fault_injecting_file_system fs(memory);
  std::map<context_id, context_head> heads_after;
  turn_id last = 0;
  {
    auto opened = turn_store::open(fs, "store", crash_options());
    if (!expect(opened.has_value(), opened ? "" : "open: " + opened.error().describe())) return;
    auto& store = *opened;
    last = store->last_turn();
    turn_id max_acknowledged = log.turns.empty() ? 0 : log.turns.back().id;
    // At most the one append in flight may have survived beyond the acknowledged.
    if (!expect(last >= max_acknowledged && last <= max_acknowledged + 1,
                "last turn " + std::to_string(last) + " vs acknowledged " + std::to_string(max_acknowledged))) {
      return;
    }
    // Every turn: readable, dense, depth = parent's depth + 1, payload resolvable.
    std::vector<std::uint32_t> depth(last + 1, 0);
    std::vector<turn> turns(last + 1);
    std::vector<std::vector<std::byte>> payloads(last + 1);
    for (turn_id id = 1; id <= last; ++id) {
      auto t = store->get_turn(id);
      if (!expect(t.has_value(), t ? "" : t.error().describe())) return;
      if (!expect(t->id == id && t->parent < id && t->depth == (t->parent == 0 ? 0 : depth[t->parent] + 1),
                  "turn " + std::to_string(id) + " breaks the DAG invariants")) {
        return;
      }
      depth[id] = t->depth;
      turns[id] = *t;
      auto bytes = store->read_payload(*t);
      if (!expect(bytes.has_value(), bytes ? "" : bytes.error().describe())) return;
      payloads[id] = std::move(*bytes);
    }
    // Every acknowledged turn is there, byte for byte.
    for (const auto& a : log.turns) {
      if (!expect(turns[a.id].parent == a.parent && payloads[a.id] == a.bytes,
                  "acknowledged turn " + std::to_string(a.id) + " differs")) {
        return;
      }
    }
    // Heads: the acknowledged one, or the append in flight if it survived.
    std::size_t extra_contexts = 0;
    for (const context_head& h : store->contexts()) {
      heads_after[h.id] = h;
      if (!expect(h.head <= last && h.depth == (h.head == 0 ? 0 : depth[h.head]), "head past the durable turns")) {
        return;
      }
      auto it = log.heads.find(h.id);
      if (it == log.heads.end()) {
        ++extra_contexts;
        expect(log.pending && !log.pending->is_append && h.head == log.pending->parent, "unexpected context");
        continue;
      }
      if (h.head != it->second) {
        expect(log.pending && log.pending->is_append && log.pending->context == h.id && h.head == last &&
                   turns[h.head].parent == log.pending->parent && payloads[h.head] == log.pending->bytes,
               "context head moved to a turn that was not in flight");
      }
    }
    expect(extra_contexts <= 1, "more than one unacknowledged context");
    for (const auto& [id, head] : log.heads) expect(heads_after.count(id) == 1, "lost context " + std::to_string(id));
    // The process dies again right after recovery, before it closes.
    fs.set_crash_after_fault(true);
    fs.fail_operation(fs.operation_count() + 1);
  }
  memory.simulate_crash();
  fs.reset();
  // Recovery is idempotent: nothing left to cut, the same state.
  auto again = turn_store::open(fs, "store", crash_options());
  if (!expect(again.has_value(), again ? "" : "second open: " + again.error().describe())) return;
  const recovery_report& r = (*again)->recovery();
  expect(r.pack_cut_bytes == 0 && r.log_cut_bytes == 0 && r.turns_dropped == 0 && r.head_log_cut_bytes == 0 &&
             r.head_records_dropped == 0,
         "second recovery cut something");
  expect((*again)->last_turn() == last, "second recovery changed the last turn");
  for (const auto& [id, h] : heads_after) {
    auto now = (*again)->head(id);
    expect(now && *now == h, "second recovery changed a head");
  }
  // And the store takes appends again.
  context_id any = heads_after.empty() ? require_value((*again)->create_context()).id : heads_after.begin()->first;
  auto next = (*again)->append(any, payload(99'999));
  if (!expect(next.has_value(), next ? "" : "append after recovery: " + next.error().describe())) return;
  expect(*next == last + 1, "append after recovery got id " + std::to_string(*next));
  auto back = (*again)->get_turn(*next);
  auto bytes = back ? (*again)->read_payload(*back) : result<std::vector<std::byte>>(unexpected(back.error()));
  expect(bytes && *bytes == payload(99'999), "append after recovery unreadable");
}

}  // namespace

TEST_CASE("turn store: crash at every operation of a workload; every image recovers to the acknowledged state") {
  io::memory_file_system memory;
  require_ok(turn_store::init(memory, "store", crash_options()));
  const io::memory_file_system_state initial = memory.snapshot();

  io::fault_injecting_file_system faulty(memory);
  oracle full = run_workload(faulty);
  REQUIRE(full.completed);
  REQUIRE(full.turns.size() > 150);
  MESSAGE("workload: " << full.turns.size() << " acknowledged appends, " << full.heads.size() << " contexts, "
                       << faulty.operation_count() << " mutating operations");

  // Under AddressSanitizer the workload runs about 8 times slower: a
  // random quarter of its crash points there (the other build checks all).
  const std::uint64_t sample = crash_support::sanitized_build ? 4 : 1;
  const std::uint64_t images =
      crash_support::crash_at_every_operation(memory, initial, faulty, 11, 160, run_workload, check_against, sample);
  MESSAGE("crash images checked: " << images << std::string(sample > 1 ? " (a sample: a sanitizer build)" : ""));
  CHECK(images >= (sample == 1 ? 10'000 : 2'000));
}

}  // namespace turns_crash_recovery_test
