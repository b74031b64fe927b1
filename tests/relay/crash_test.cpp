// Simulated crashes (issue 6 section 5): a workload of deposits, status
// changes, fact assertions and invalidations runs on the in-memory file
// system, is crashed at every write and sync (writes torn at a random byte),
// and every crash image (unsynced data dropped, kept, a random prefix kept
// with its last write torn, random pages kept) is reopened and checked
// against the acknowledged operations: never a half-written package, never
// two current facts for one key, never an acknowledged write missing.
#include <map>
#include <optional>
#include <random>
#include <set>

#include "agentctx/io/fault_injecting_file_system.hpp"
#include "relay_test_support.hpp"
#include "support/crash_images.hpp"

namespace relay_crash_test {

using namespace relay_test;
namespace io = agentctx::io;

namespace {

struct oracle {
  std::map<std::string, std::string> hashes;  // package id -> current hash, acknowledged
  std::map<std::string, std::string> facts;   // "subject/predicate" -> current value ("" = none), acknowledged
  std::optional<std::pair<std::string, std::string>> pending_package;  // id, hash it would have
  std::optional<std::pair<std::string, std::string>> pending_fact;     // key, value ("" = invalidated)
  bool completed = false;
};

constexpr int workload_steps = 60;

json::value workload_package(int step, std::mt19937_64& random) {
  auto p = package("pkg_" + std::to_string(step), step % 3 == 0 ? "proj_b" : "proj_a", "Work item " + std::to_string(step));
  p.set("status", random() % 2 ? "draft" : "complete");
  p.set("content_md", std::string(40 + random() % 900, static_cast<char>('a' + step % 26)));
  p.set("x-step", step);
  return p;
}

oracle run_workload(io::file_system& fs) {
  oracle log;
  auto opened = relay::store::open(fs, "/r", test_options());
  if (!opened) return log;
  auto& store = *opened;
  std::mt19937_64 random(77);
  std::vector<std::string> drafts;
  for (int step = 0; step < workload_steps; ++step) {
    const std::uint64_t r = random() % 100;
    if (r < 45) {
      json::value p = workload_package(step, random);
      const std::string id = p.find("package_id")->as_string();
      const bool draft = p.find("status")->as_string() == "draft";
      log.pending_package = {id, require_value(relay::content_hash(p))};
      auto out = store.deposit(std::move(p));
      if (!out) return log;
      log.hashes[id] = out->package->hash;
      if (draft) drafts.push_back(id);
      log.pending_package.reset();
    } else if (r < 60 && !drafts.empty()) {
      const std::string id = drafts.back();
      drafts.pop_back();
      auto out = store.flag_for_review(id, relay::review_type::human, "step " + std::to_string(step));
      if (!out) return log;
      log.hashes[id] = (*out)->hash;
    } else if (r < 90) {
      relay::fact_assertion a;
      a.project_id = "proj_a";
      a.subject = "component_" + std::to_string(random() % 3);
      a.predicate = "status";
      a.value = "v" + std::to_string(random() % 4);
      const std::string key = a.subject + "/" + a.predicate;
      log.pending_fact = {key, a.value};
      auto out = store.assert_fact(a);
      if (!out) return log;
      log.facts[key] = a.value;
      log.pending_fact.reset();
    } else {
      const std::string subject = "component_" + std::to_string(random() % 3);
      const std::string key = subject + "/status";
      log.pending_fact = {key, ""};
      auto out = store.invalidate_fact("proj_a", subject, "status");
      if (!out) return log;
      log.facts[key] = "";
      log.pending_fact.reset();
    }
  }
  log.completed = true;
  return log;
}

void check_against(io::memory_file_system& memory, const oracle& log, const std::string& image) {
  crash_support::image_expectations expect(image);
  std::size_t records = 0;
  std::uint64_t size = 0;
  {
    auto opened = relay::store::open(memory, "/r", test_options());
    if (!expect(opened.has_value(), opened ? "" : "open: " + opened.error().describe())) return;
    auto& store = *opened;
    expect(store.quarantined().empty(), "a package is half-written (quarantined)");
    std::set<std::string> seen;
    for (const relay::project* p : store.projects()) {
      const auto packages = require_value(store.packages_of(p->project_id));
      for (const relay::stored_package* sp : packages) {
        const std::string& id = sp->package.package_id;
        seen.insert(id);
        auto acknowledged = log.hashes.find(id);
        if (acknowledged == log.hashes.end()) {
          expect(log.pending_package && log.pending_package->first == id && log.pending_package->second == sp->hash,
                 "package " + id + " was never acknowledged nor in flight");
        } else if (sp->hash != acknowledged->second) {
          // Only a status change in flight may have moved it on.
          expect(sp->changes.size() == 1 && sp->deposited_hash == acknowledged->second, "package " + id + " changed");
        }
      }
    }
    for (const auto& [id, hash] : log.hashes) expect(seen.count(id) == 1, "acknowledged package " + id + " lost");
    for (int c = 0; c < 3; ++c) {
      const std::string subject = "component_" + std::to_string(c);
      const std::string key = subject + "/status";
      const auto history = store.history("proj_a", subject, "status");
      std::size_t current = 0;
      for (std::size_t i = 0; i < history.size(); ++i) {
        current += history[i]->is_current();
        if (i + 1 < history.size()) {
          expect(!history[i]->is_current() && history[i]->valid_to_at <= history[i + 1]->valid_from_at,
                 "history of " + key + " out of order");
        }
      }
      expect(current <= 1, "two current facts for " + key);
      const relay::fact* now = store.current_fact("proj_a", subject, "status");
      const std::string value = now ? now->value : "";
      auto acknowledged = log.facts.find(key);
      const std::string expected = acknowledged == log.facts.end() ? "" : acknowledged->second;
      if (value != expected) {
        expect(log.pending_fact && log.pending_fact->first == key && log.pending_fact->second == value,
               "fact " + key + " is \"" + value + "\", acknowledged \"" + expected + "\"");
      }
    }
    records = store.record_count();
    size = store.log_size();
    // And the store takes writes again.
    auto next = store.deposit(package("pkg_after", "proj_a"));
    expect(next.has_value(), next ? "" : "deposit after recovery: " + next.error().describe());
  }
  // Recovery is idempotent: the second open finds what the first left, plus the new deposit.
  auto again = relay::store::open(memory, "/r", test_options());
  if (!expect(again.has_value(), again ? "" : "second open: " + again.error().describe())) return;
  expect(again->record_count() == records + 1 && again->log_size() > size, "second open differs");
}

}  // namespace

TEST_CASE("relay store: crash at every write and sync; every image recovers to the acknowledged state") {
  io::memory_file_system memory;
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  oracle full = run_workload(faulty);
  REQUIRE(full.completed);
  REQUIRE(full.hashes.size() > 20);
  MESSAGE("workload: " << full.hashes.size() << " packages, " << full.facts.size() << " fact keys, "
                       << faulty.operation_count() << " mutating operations");
  const std::uint64_t images =
      crash_support::crash_at_every_operation(memory, initial, faulty, 5, 300, run_workload, check_against);
  MESSAGE("crash images checked: " << images);
  CHECK(images >= 500);
}

TEST_CASE("a write that fails leaves the store refusing writes until it is reopened") {
  io::memory_file_system memory;
  io::fault_injecting_file_system faulty(memory);
  auto store = require_value(relay::store::open(faulty, "/r", test_options()));
  require_value(store.deposit(package("pkg_1")));
  faulty.fail_operation(faulty.operation_count() + 2);  // the next deposit: its write, then this sync
  auto failed = store.deposit(package("pkg_2"));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == agentctx::errc::io_error);
  auto refused = store.deposit(package("pkg_3"));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("reopen") != std::string::npos);
}

}  // namespace relay_crash_test

namespace relay_crash_test {

namespace {

/// What a repair must leave after any crash: relay.log is the damaged log
/// or the repaired one (never neither, never a mix), and a backup, when
/// complete, is the damaged log byte for byte.
struct repair_outcome {
  bool completed = false;
};

std::string file_text(io::memory_file_system& fs, const std::string& path) {
  auto mapped = fs.map(path);
  if (!mapped) return {};
  return std::string(reinterpret_cast<const char*>(mapped->data()), mapped->size());
}

}  // namespace

TEST_CASE("relay repair: crash at every write and sync leaves the damaged log or the repaired one") {
  io::memory_file_system memory;
  {
    auto store = require_value(relay::store::open(memory, "/r", test_options()));
    for (int i = 0; i < 6; ++i) require_value(store.deposit(package("pkg_" + std::to_string(i))));
  }
  std::string damaged = file_text(memory, "/r/relay.log");
  const auto records =
      relay::scan_records(std::as_bytes(std::span(damaged.data(), damaged.size())), relay::log_header_size).records;
  REQUIRE(records.size() == 6);
  damaged[records[2].offset + 30] ^= 0x04;
  {
    auto file = require_value(memory.open("/r/relay.log", io::create_truncate));
    require_ok(file->write_at(0, std::as_bytes(std::span(damaged.data(), damaged.size()))));
    require_ok(file->sync());
  }
  // The repaired log, from a repair that is not crashed.
  std::string repaired;
  {
    io::memory_file_system copy;
    copy.restore(memory.snapshot());
    relay::repair_options o;
    o.clock = [] { return std::uint64_t{7}; };
    REQUIRE(require_value(relay::store::repair(copy, "/r", o)).records_kept == 5);
    repaired = file_text(copy, "/r/relay.log");
  }
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  const auto workload = [](io::file_system& fs) {
    relay::repair_options o;
    o.clock = [] { return std::uint64_t{7}; };
    return repair_outcome{relay::store::repair(fs, "/r", o).has_value()};
  };
  REQUIRE(workload(faulty).completed);
  const std::uint64_t images = crash_support::crash_at_every_operation(
      memory, initial, faulty, 11, 200, workload,
      [&](io::memory_file_system& m, const repair_outcome& outcome, const std::string& image) {
        crash_support::image_expectations expect(image);
        const std::string log = file_text(m, "/r/relay.log");
        expect(log == damaged || log == repaired, "relay.log is neither the damaged log nor the repaired one");
        if (outcome.completed) expect(log == repaired, "a repair that returned is not durable");
        if (log == repaired) expect(file_text(m, "/r/relay.log.damaged-7") == damaged, "the backup is not the damaged log");
        // Repairing again always ends in the repaired log.
        relay::repair_options o;
        o.clock = [] { return std::uint64_t{8}; };
        auto again = relay::store::repair(m, "/r", o);
        if (expect(again.has_value(), again ? "" : "repair again: " + again.error().describe())) {
          expect(file_text(m, "/r/relay.log") == repaired, "repairing again gives another log");
        }
      });
  MESSAGE("crash images checked: " << images);
  CHECK(images >= 50);
}

}  // namespace relay_crash_test
