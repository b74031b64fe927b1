// relay::store: deposit, pull, review transitions, facts, sessions, reopening.
#include "agentctx/relay/store.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <thread>
#include <span>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/export.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "io/io_test_support.hpp"
#include "relay_test_support.hpp"

namespace relay_store_test {

using namespace relay_test;
using agentctx::errc;

TEST_CASE("deposit validates, hashes and stores; the identical package again is a no-op; other content is 409") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  auto first = require_value(store.deposit(package("pkg_1")));
  CHECK(first.created);
  CHECK(first.package->package.package_id == "pkg_1");
  CHECK(relay::is_sha256_content_hash(first.package->hash));
  CHECK(first.package->hash == require_value(relay::content_hash(package("pkg_1"))));
  auto again = require_value(store.deposit(package("pkg_1")));
  CHECK_FALSE(again.created);
  auto other = store.deposit(package("pkg_1", "proj_demo", "Another title"));
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().code == errc::already_exists);
  CHECK(relay::protocol_error_of(other.error()).code == "duplicate_package_id");
  CHECK(relay::protocol_error_of(other.error()).http_status == 409);
  // The same id in another project is another package.
  CHECK(require_value(store.deposit(package("pkg_1", "proj_other"))).created);
  CHECK(store.find_package("pkg_1").error().code == errc::invalid_argument);
  CHECK(require_value(store.find_package("pkg_1", "proj_other"))->package.project_id == "proj_other");
}

TEST_CASE("an absent package_id is generated as pkg_ and 32 hex digits, and covered by the hash") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  auto out = require_value(store.deposit(package("")));
  const std::string& id = out.package->package.package_id;
  CHECK(id.size() == 36);
  CHECK(id.starts_with("pkg_"));
  CHECK(out.package->hash == require_value(relay::content_hash(out.package->package.wire)));
}

TEST_CASE("a large package's hash, computed as its canonical form is written, is SHA-256 over that whole form") {
  json::value big = package("pkg_big");
  json::value::array_type numbers;
  for (int i = 0; i < 300000; ++i) numbers.emplace_back(i * 1e17);  // 1e21 and past it: exponent forms too
  big.set("x-data", std::move(numbers));
  const std::string canonical = require_value(json::serialize(big));
  REQUIRE(canonical.size() > 1000000);
  const std::string expected = agentctx::sha256_text(canonical);
  CHECK(require_value(relay::content_hash(big)) == expected);
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  CHECK(require_value(store.deposit(big)).package->hash == expected);
  // A failure part way leaves the next hash right (the hasher starts anew).
  json::value bad = big;
  for (auto& [name, member] : bad.as_object()) {
    if (name == "x-data") member.as_array().emplace_back(std::nan(""));
  }
  CHECK_FALSE(relay::content_hash(bad).has_value());
  CHECK(require_value(relay::content_hash(big)) == expected);
}

TEST_CASE("the state survives reopening, and a reader sees it") {
  agentctx::io::memory_file_system fs;
  {
    auto store = require_value(relay::store::open(fs, "/r", test_options()));
    require_value(store.deposit(package("pkg_1", "proj_demo", "one", "2026-04-18T20:00:00Z")));
    auto draft = package("pkg_2", "proj_demo", "two", "2026-04-19T20:00:00Z");
    draft.set("status", "draft");
    require_value(store.deposit(std::move(draft)));
    require_value(store.flag_for_review("pkg_2", relay::review_type::human, "please check"));
    relay::fact_assertion a;
    a.project_id = "proj_demo";
    a.subject = "longmemeval_s";
    a.predicate = "recall_any_at_5";
    a.value = "97.0";
    require_value(store.assert_fact(a));
  }
  auto reader = require_value(relay::store::open(fs, "/r", [] {
    auto o = test_options();
    o.read_only = true;
    return o;
  }()));
  auto latest = require_value(reader.latest("proj_demo", 5));
  REQUIRE(latest.size() == 2);
  CHECK(latest[0]->package.package_id == "pkg_2");
  CHECK(latest[0]->package.status == relay::package_status::awaiting_review);
  CHECK(latest[0]->changes.size() == 1);
  CHECK(latest[0]->hash != latest[0]->deposited_hash);
  CHECK(latest[0]->deposited_hash == require_value(relay::content_hash(latest[0]->deposited_wire())));
  CHECK(reader.current_fact("proj_demo", "longmemeval_s", "recall_any_at_5")->value == "97.0");
  CHECK(require_value(reader.verify()).ok());
}

namespace {

relay::store open_store(agentctx::io::memory_file_system& fs, bool read_only = false) {
  auto o = test_options();
  o.read_only = read_only;
  return require_value(relay::store::open(fs, "/r", o));
}

relay::fact_assertion assertion(std::string value, std::optional<std::string> valid_from = {}) {
  return status_of("dashboard", std::move(value), std::move(valid_from));
}

/// The values of the history of the key assertion() asserts, in its order.
std::vector<std::string> history_values(const relay::store& s) {
  std::vector<std::string> out;
  for (const relay::fact* f : s.history("proj_demo", "dashboard", "status")) out.push_back(f->value);
  return out;
}

/// history_values() of a new store that imported the export of `s`.
std::vector<std::string> history_values_of_copy(const relay::store& s) {
  std::string exported;
  require_ok(relay::export_ndjson(s, "proj_demo", exported));
  agentctx::io::memory_file_system copy_fs;
  auto copy = open_store(copy_fs);
  require_value(relay::import_ndjson(copy, exported));
  CHECK((copy.current_fact("proj_demo", "dashboard", "status") == nullptr) ==
        (s.current_fact("proj_demo", "dashboard", "status") == nullptr));
  return history_values(copy);
}

/// Both a writer and a reader refuse the store's log as damaged at `offset`,
/// naming `what`.
void check_refused_as_damage(agentctx::io::memory_file_system& fs, std::uint64_t offset, std::string_view what) {
  for (bool read_only : {false, true}) {
    auto o = test_options();
    o.read_only = read_only;
    auto refused = relay::store::open(fs, "/r", o);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == errc::corrupt);
    CHECK(refused.error().offset == offset);
    CHECK(refused.error().message.find(what) != std::string::npos);
  }
}

std::string log_bytes(agentctx::io::memory_file_system& fs) {
  auto mapped = require_value(fs.map("/r/relay.log"));
  return std::string(reinterpret_cast<const char*>(mapped.data()), mapped.size());
}

void write_log(agentctx::io::memory_file_system& fs, const std::string& bytes) {
  auto file = require_value(fs.open("/r/relay.log", agentctx::io::create_truncate));
  require_ok(file->write_at(0, std::as_bytes(std::span(bytes.data(), bytes.size()))));
  require_ok(file->sync());
}

/// Makes the store /r hold pkg_1 and pkg_2 (of proj_demo), closed again.
void deposit_two(agentctx::io::memory_file_system& fs) {
  auto store = open_store(fs);
  require_value(store.deposit(package("pkg_1")));
  require_value(store.deposit(package("pkg_2")));
}

/// Where the last record of the log `bytes` starts.
std::uint64_t last_record_offset(const std::string& bytes) {
  return relay::scan_records(std::as_bytes(std::span(bytes.data(), bytes.size())), relay::log_header_size)
      .records.back()
      .offset;
}

}  // namespace

TEST_CASE("packages awaiting review are listed by when they entered it, oldest first") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);  // the clock reads 2026-04-18T20:00:01Z onwards
  auto flagged_later = package("pkg_flagged", "proj_demo", "Flagged today", "2026-01-01T00:00:00Z");
  flagged_later.set("status", "draft");
  require_value(store.deposit(flagged_later));
  auto waiting_since_march = package("pkg_march", "proj_demo", "Deposited awaiting review", "2026-03-01T00:00:00Z");
  waiting_since_march.set("status", "awaiting_review");
  waiting_since_march.set("review_type", "human");
  require_value(store.deposit(waiting_since_march));
  auto waiting_since_april = package("pkg_april", "proj_demo", "Deposited awaiting review", "2026-04-01T00:00:00Z");
  waiting_since_april.set("status", "awaiting_review");
  waiting_since_april.set("review_type", "agent");
  require_value(store.deposit(waiting_since_april));
  require_value(store.flag_for_review("pkg_flagged", relay::review_type::human));
  const auto order = [&store] {
    std::vector<std::string> ids;
    for (const relay::stored_package* p : require_value(store.awaiting_review("proj_demo"))) {
      ids.push_back(p->package.package_id);
    }
    return ids;
  };
  CHECK(order() == std::vector<std::string>{"pkg_march", "pkg_april", "pkg_flagged"});
  // Flagged again, a package keeps its place: it entered awaiting review when it did.
  require_value(store.flag_for_review("pkg_march", relay::review_type::agent, "an agent may do"));
  CHECK(order() == std::vector<std::string>{"pkg_march", "pkg_april", "pkg_flagged"});
  // Sent back and resubmitted, it enters again.
  require_value(store.review("pkg_march", relay::package_status::revision_requested));
  require_value(store.review("pkg_march", relay::package_status::awaiting_review));
  CHECK(order() == std::vector<std::string>{"pkg_april", "pkg_flagged", "pkg_march"});
}

TEST_CASE("review transitions: flag, request revision, resubmit, complete; complete is terminal") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto draft = package("pkg_1");
  draft.set("status", "draft");
  require_value(store.deposit(draft));
  auto flagged = require_value(store.flag_for_review("pkg_1", relay::review_type::human, "check the numbers"));
  CHECK(flagged->package.status == relay::package_status::awaiting_review);
  CHECK(flagged->package.review == relay::review_type::human);
  CHECK(require_value(store.awaiting_review("proj_demo")).size() == 1);
  // Flagged again (section 8.5 refuses only complete): the reviewer changes,
  // the note is kept; the same reviewer and no note write nothing.
  const std::string first_hash = flagged->hash;
  auto again = require_value(store.flag_for_review("pkg_1", relay::review_type::agent, "an agent first"));
  CHECK(again->package.review == relay::review_type::agent);
  CHECK(again->changes.size() == 2);
  CHECK(again->changes.back().note == std::optional<std::string>("an agent first"));
  CHECK(again->hash != first_hash);
  CHECK(again->hash == require_value(relay::content_hash(again->package.wire)));
  const std::size_t log_size = log_bytes(fs).size();
  CHECK(require_value(store.flag_for_review("pkg_1", relay::review_type::agent))->changes.size() == 2);
  CHECK(log_bytes(fs).size() == log_size);
  // An empty note is no note: nothing is written either.
  CHECK(require_value(store.flag_for_review("pkg_1", relay::review_type::agent, ""))->changes.size() == 2);
  CHECK(log_bytes(fs).size() == log_size);
  auto noted = require_value(store.flag_for_review("pkg_1", relay::review_type::human, "a human after all"));
  CHECK(noted->changes.size() == 3);
  CHECK(noted->hash == first_hash);  // the same state as first flagged
  // relay review keeps to the transition table: awaiting_review to itself is none of it.
  CHECK(store.review("pkg_1", relay::package_status::awaiting_review, std::nullopt, {}, relay::review_type::agent)
            .error()
            .code == errc::invalid_transition);
  auto revision = require_value(store.review("pkg_1", relay::package_status::revision_requested, "fix table 2"));
  CHECK(revision->package.status == relay::package_status::revision_requested);
  CHECK(require_value(store.awaiting_review("proj_demo")).empty());
  CHECK_FALSE(require_value(store.review("pkg_1", relay::package_status::awaiting_review, ""))->changes.back().note);
  auto done = require_value(store.review("pkg_1", relay::package_status::complete, "approved"));
  CHECK(done->changes.size() == 6);
  CHECK(done->changes[0].note == std::optional<std::string>("check the numbers"));
  // Each state has its own hash; the deposited one is kept.
  CHECK(done->hash == done->changes.back().hash);
  CHECK(done->deposited_hash == require_value(relay::content_hash(draft)));
  CHECK(done->hash == require_value(relay::content_hash(done->package.wire)));
  auto terminal = store.review("pkg_1", relay::package_status::awaiting_review);
  REQUIRE_FALSE(terminal.has_value());
  CHECK(terminal.error().code == errc::invalid_transition);
  CHECK(relay::protocol_error_of(terminal.error()).code == "invalid_transition");
  CHECK(store.flag_for_review("pkg_1", relay::review_type::human).error().code == errc::invalid_transition);
  CHECK(store.flag_for_review("pkg_missing", relay::review_type::human).error().code == errc::not_found);
  CHECK(relay::protocol_error_of(store.flag_for_review("pkg_missing", relay::review_type::human).error()).code ==
        "package_not_found");
  // The whole history survives reopening.
  auto reader = open_store(fs, true);
  auto p = require_value(reader.find_package("pkg_1"));
  CHECK(p->changes.size() == 6);
  CHECK(p->changes[1].review == relay::review_type::agent);
  CHECK(p->changes[2].note == std::optional<std::string>("a human after all"));
  CHECK(p->package.status == relay::package_status::complete);
  CHECK(p->hash == done->hash);
  // And an export of it imports, every state's hash checked.
  std::string exported;
  require_ok(relay::export_ndjson(reader, "proj_demo", exported));
  agentctx::io::memory_file_system other_fs;
  auto other = open_store(other_fs);
  require_value(relay::import_ndjson(other, exported));
  auto imported = require_value(other.find_package("pkg_1"));
  REQUIRE(imported->changes.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(imported->changes[i].hash == p->changes[i].hash);
}

TEST_CASE("assert_fact supersedes atomically; the identical value is a no-op; an earlier valid_from is refused") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto first = require_value(store.assert_fact(assertion("draft", "2026-04-01T00:00:00Z")));
  CHECK(first.changed);
  CHECK_FALSE(first.superseded.has_value());
  const std::string first_id = first.asserted->fact_id;
  CHECK(first_id.starts_with("fact_"));
  auto same = require_value(store.assert_fact(assertion("draft", "2026-04-05T00:00:00Z")));
  CHECK_FALSE(same.changed);
  CHECK(same.asserted->fact_id == first_id);
  auto second = require_value(store.assert_fact(assertion("live", "2026-04-10T00:00:00Z")));
  CHECK(second.changed);
  CHECK(second.superseded == std::optional<std::string>(first_id));
  const auto* old = store.find_fact(first_id);
  CHECK(old->valid_to == std::optional<std::string>("2026-04-10T00:00:00Z"));
  CHECK(old->wire.find("valid_to")->as_string() == "2026-04-10T00:00:00Z");
  auto earlier = store.assert_fact(assertion("reverted", "2026-04-09T00:00:00Z"));
  REQUIRE_FALSE(earlier.has_value());
  CHECK(earlier.error().code == errc::invalid_argument);
  CHECK(earlier.error().message.find("earlier than the current fact") != std::string::npos);

  const auto at = [](const char* t) { return *agentctx::parse_rfc3339_utc_instant(t); };
  CHECK(store.fact_at("proj_demo", "dashboard", "status", at("2026-04-01T00:00:00Z"))->value == "draft");
  CHECK(store.fact_at("proj_demo", "dashboard", "status", at("2026-04-09T23:59:59Z"))->value == "draft");
  CHECK(store.fact_at("proj_demo", "dashboard", "status", at("2026-04-10T00:00:00Z"))->value == "live");
  CHECK(store.fact_at("proj_demo", "dashboard", "status", at("2026-03-31T00:00:00Z")) == nullptr);
  CHECK(store.history("proj_demo", "dashboard", "status").size() == 2);
  CHECK(store.facts("proj_demo").size() == 1);

  CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status", std::string("other"))) == 0);
  CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 1);
  CHECK(store.current_fact("proj_demo", "dashboard", "status") == nullptr);
  CHECK(store.facts("proj_demo").empty());
  CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 0);
  CHECK(store.history("proj_demo", "dashboard", "status").size() == 2);
  // After invalidation a new assertion starts a new current fact.
  CHECK(require_value(store.assert_fact(assertion("back"))).changed);

  auto reader = open_store(fs, true);
  CHECK(reader.history("proj_demo", "dashboard", "status").size() == 3);
  CHECK(reader.current_fact("proj_demo", "dashboard", "status")->value == "back");
  CHECK(reader.fact_at("proj_demo", "dashboard", "status", at("2026-04-10T00:00:01Z"))->value == "live");
}

TEST_CASE("invalidating a fact that starts in the future ends it where it starts; export and import keep it") {
  agentctx::io::memory_file_system fs;
  std::string fact_id;
  {
    auto store = open_store(fs);  // the clock reads 2026-04-18
    fact_id = require_value(store.assert_fact(assertion("planned", "2099-01-01T00:00:00Z"))).asserted->fact_id;
    CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 1);
    const auto* ended = store.find_fact(fact_id);
    CHECK(ended->valid_to == std::optional<std::string>("2099-01-01T00:00:00Z"));
    CHECK(ended->wire.find("valid_to")->as_string() == "2099-01-01T00:00:00Z");
    // It never held, so it does not stand in the way of a fact from today.
    CHECK(require_value(store.assert_fact(assertion("live", "2026-05-01T00:00:00Z"))).changed);
    CHECK(require_value(store.assert_fact(assertion("later", "2026-06-01T00:00:00Z"))).changed);
  }
  // History is in valid_from order, the current fact last, however the facts
  // came: "live", once superseded, goes before the fact that never held.
  const std::vector<std::string> in_order{"live", "planned", "later"};
  auto reader = open_store(fs, true);
  CHECK(reader.find_fact(fact_id)->valid_to == std::optional<std::string>("2099-01-01T00:00:00Z"));
  CHECK(history_values(reader) == in_order);
  CHECK(history_values_of_copy(reader) == in_order);
  // Invalidation moves the current fact into place too. (The store's ids
  // come from a fixed stream: read past the ones the first writer took.)
  {
    auto o = test_options();
    for (int i = 0; i < 64; ++i) o.random();
    auto store = require_value(relay::store::open(fs, "/r", o));
    require_value(store.invalidate_fact("proj_demo", "dashboard", "status"));
    CHECK(require_value(store.assert_fact(assertion("again"))).changed);
    CHECK(history_values(store) == std::vector<std::string>{"live", "later", "planned", "again"});
  }
  CHECK(history_values(open_store(fs, true)) == std::vector<std::string>{"live", "later", "planned", "again"});
}

TEST_CASE("facts of a key that start at the same time are listed in the log's order, in a store and in its copy") {
  const std::string when = "2099-01-01T00:00:00Z";
  // A fact that never held, from another store, starting when this store's
  // current fact does.
  agentctx::io::memory_file_system other_fs;
  std::string never_held;
  {
    auto o = test_options();
    for (int i = 0; i < 64; ++i) o.random();  // ids other than the first store's
    auto other = require_value(relay::store::open(other_fs, "/r", o));
    require_value(other.assert_fact(assertion("never", when)));
    require_value(other.invalidate_fact("proj_demo", "dashboard", "status"));
    require_ok(relay::export_ndjson(other, "proj_demo", never_held));
  }
  for (const bool supersede : {false, true}) {
    CAPTURE(supersede);
    agentctx::io::memory_file_system fs;
    auto store = open_store(fs);
    require_value(store.assert_fact(assertion("current", when)));
    require_value(relay::import_ndjson(store, never_held));  // recorded after "current"
    CHECK(history_values(store) == std::vector<std::string>{"never", "current"});
    if (supersede) {
      require_value(store.assert_fact(assertion("next", when)));
    } else {
      require_value(store.invalidate_fact("proj_demo", "dashboard", "status"));
    }
    const std::vector<std::string> expected =
        supersede ? std::vector<std::string>{"current", "never", "next"} : std::vector<std::string>{"current", "never"};
    CHECK(history_values(store) == expected);
    CHECK(history_values(open_store(fs, true)) == expected);
    CHECK(history_values_of_copy(store) == expected);
  }
}

TEST_CASE("invalidating a fact that is to supersede another later ends the other now: no fact of the key holds on") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);  // the clock reads 2026-04-18T20:00:01Z onwards
  const std::string first =
      require_value(store.assert_fact(assertion("v1", "2026-01-01T00:00:00Z"))).asserted->fact_id;
  const std::string planned =
      require_value(store.assert_fact(assertion("v2", "2030-01-01T00:00:00Z"))).asserted->fact_id;
  CHECK(*store.find_fact(first)->valid_to == "2030-01-01T00:00:00Z");
  CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 1);
  const auto now = [&] { return *agentctx::parse_rfc3339_utc_instant(store.now_text()); };
  // v1 ends now, not in 2030; v2 never held.
  const std::string ended_at = *store.find_fact(first)->valid_to;
  CHECK(ended_at.starts_with("2026-04-18T20:00:"));
  CHECK(store.find_fact(planned)->never_held());
  CHECK(store.fact_at("proj_demo", "dashboard", "status", now()) == nullptr);
  CHECK(store.facts("proj_demo", now()).empty());
  CHECK(store.fact_at("proj_demo", "dashboard", "status", *agentctx::parse_rfc3339_utc_instant("2026-02-01T00:00:00Z"))
            ->value == "v1");
  // So the key takes a new fact from now on, rather than only from 2030.
  CHECK(require_value(store.assert_fact(assertion("v3"))).changed);
  CHECK(store.current_fact("proj_demo", "dashboard", "status")->value == "v3");
  // Reopened, the log reads the same.
  auto reader = open_store(fs, true);
  CHECK(*reader.find_fact(first)->valid_to == ended_at);
  CHECK(reader.find_fact(planned)->never_held());
  CHECK(reader.current_fact("proj_demo", "dashboard", "status")->value == "v3");
}

TEST_CASE("a log whose invalidate record ends a fact before it starts reads it as ended where it starts") {
  // Written by versions before invalidate_fact clamped its time.
  agentctx::io::memory_file_system fs;
  std::string fact_id;
  {
    auto store = open_store(fs);
    fact_id = require_value(store.assert_fact(assertion("planned", "2099-01-01T00:00:00Z"))).asserted->fact_id;
  }
  std::string bytes = log_bytes(fs);
  relay::append_record(bytes, R"({"type":"invalidate","project_id":"proj_demo","fact_ids":[")" + fact_id +
                                  R"("],"valid_to":"2026-04-18T20:00:10Z"})");
  write_log(fs, bytes);
  auto reader = open_store(fs, true);
  const auto* ended = reader.find_fact(fact_id);
  REQUIRE(ended != nullptr);
  CHECK(ended->valid_to == std::optional<std::string>("2099-01-01T00:00:00Z"));
  CHECK(ended->wire.find("valid_to")->as_string() == "2099-01-01T00:00:00Z");
  CHECK(reader.current_fact("proj_demo", "dashboard", "status") == nullptr);
}

TEST_CASE("after an invalidation a new fact may not start while the ended one held") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);  // the clock reads 2026-04-18T20:00:01Z onwards
  require_value(store.assert_fact(assertion("draft", "2026-01-01T00:00:00Z")));
  CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 1);
  const std::string ended_at = *store.history("proj_demo", "dashboard", "status").back()->valid_to;
  auto overlapping = store.assert_fact(assertion("live", "2026-03-01T00:00:00Z"));
  REQUIRE_FALSE(overlapping.has_value());
  CHECK(overlapping.error().code == errc::invalid_argument);
  CHECK(overlapping.error().message ==
        "valid_from \"2026-03-01T00:00:00Z\" is earlier than the valid_to \"" + ended_at + "\" of the key's last fact");
  CHECK(store.history("proj_demo", "dashboard", "status").size() == 1);
  // From the moment it ended (valid_to is exclusive) or later is accepted,
  // and each time has at most one fact.
  CHECK(require_value(store.assert_fact(assertion("live", ended_at))).changed);
  const auto at = [](const std::string& t) { return *agentctx::parse_rfc3339_utc_instant(t); };
  CHECK(store.fact_at("proj_demo", "dashboard", "status", at("2026-03-01T00:00:00Z"))->value == "draft");
  CHECK(store.fact_at("proj_demo", "dashboard", "status", at(ended_at))->value == "live");
}

TEST_CASE("facts are ordered by their times exactly, fraction digits past milliseconds included") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  require_value(store.assert_fact(assertion("one", "2026-01-01T00:00:00.0009Z")));
  // 0.0001 s is earlier than 0.0009 s, though both are in millisecond 0.
  auto earlier = store.assert_fact(assertion("two", "2026-01-01T00:00:00.0001Z"));
  REQUIRE_FALSE(earlier.has_value());
  CHECK(earlier.error().code == errc::invalid_argument);
  CHECK(earlier.error().message.find("is earlier than the current fact's valid_from") != std::string::npos);
  // The same time written with more digits is not earlier: it supersedes,
  // and the fact it ends never held.
  require_value(store.assert_fact(assertion("two", "2026-01-01T00:00:00.000900Z")));
  require_value(store.assert_fact(assertion("three", "2026-01-01T00:00:00.00095Z")));
  const auto history = store.history("proj_demo", "dashboard", "status");
  REQUIRE(history.size() == 3);
  CHECK(history[0]->never_held());
  for (const relay::fact* f : history) CHECK_FALSE((f->valid_to && f->valid_to_at < f->valid_from_at));
  const auto value_at = [&](const char* t) -> std::string {
    const relay::fact* f = store.fact_at("proj_demo", "dashboard", "status", *agentctx::parse_rfc3339_utc_instant(t));
    return f == nullptr ? "(none)" : f->value;
  };
  CHECK(value_at("2026-01-01T00:00:00Z") == "(none)");
  CHECK(value_at("2026-01-01T00:00:00.0008Z") == "(none)");
  CHECK(value_at("2026-01-01T00:00:00.0009Z") == "two");
  CHECK(value_at("2026-01-01T00:00:00.00094999Z") == "two");
  CHECK(value_at("2026-01-01T00:00:00.00095Z") == "three");
  CHECK(store.facts("proj_demo", *agentctx::parse_rfc3339_utc_instant("2026-01-01T00:00:00.0005Z")).empty());
  // Reopened, the log reads the same.
  auto reader = open_store(fs, true);
  CHECK(reader.fact_at("proj_demo", "dashboard", "status", *agentctx::parse_rfc3339_utc_instant("2026-01-01T00:00:00.0009Z"))
            ->value == "two");
  CHECK(reader.history("proj_demo", "dashboard", "status")[0]->never_held());
}

TEST_CASE("a log of a version that compared milliseconds opens: a fact ended a fraction before it began never held") {
  // Versions before exact instants took 00:00:00.0001Z and .0009Z as the
  // same millisecond: they let the later-written fact supersede the other
  // from before it began, and imported facts so ended.
  agentctx::io::memory_file_system fs;
  std::string first;
  {
    auto store = open_store(fs);
    first = require_value(store.assert_fact(assertion("one", "2026-01-01T00:00:00.0009Z"))).asserted->fact_id;
  }
  const std::string fact = R"({"fact_id":"fact_00000000000000000000000000000002","project_id":"proj_demo",)"
                           R"("subject":"dashboard","predicate":"status","value":"two",)"
                           R"("valid_from":"2026-01-01T00:00:00.0001Z","created_at":"2026-04-18T20:00:05Z"})";
  const std::string imported = R"({"fact_id":"fact_00000000000000000000000000000003","project_id":"proj_demo",)"
                               R"("subject":"api","predicate":"status","value":"old",)"
                               R"("valid_from":"2026-01-01T00:00:00.0009Z","valid_to":"2026-01-01T00:00:00.0001Z",)"
                               R"("created_at":"2026-04-18T20:00:06Z"})";
  std::string bytes = log_bytes(fs);
  relay::append_record(bytes, R"({"type":"fact","supersedes":")" + first + R"(","fact":)" + fact + "}");
  relay::append_record(bytes, R"({"type":"fact","fact":)" + imported + "}");
  write_log(fs, bytes);
  auto reader = open_store(fs, true);
  CHECK(reader.current_fact("proj_demo", "dashboard", "status")->value == "two");
  CHECK(*reader.find_fact(first)->valid_to == "2026-01-01T00:00:00.0001Z");
  CHECK(reader.find_fact(first)->never_held());
  CHECK(reader.find_fact("fact_00000000000000000000000000000003")->never_held());
  CHECK(reader.fact_at("proj_demo", "dashboard", "status", *agentctx::parse_rfc3339_utc_instant("2026-01-01T00:00:00.0009Z"))
            ->value == "two");
  CHECK(require_value(reader.verify()).ok());
  // Its export imports, and a new assert is still checked exactly.
  std::string exported;
  require_ok(relay::export_ndjson(reader, "", exported));
  agentctx::io::memory_file_system other;
  auto copy = open_store(other);
  require_value(relay::import_ndjson(copy, exported));
  CHECK(copy.find_fact(first)->never_held());
  CHECK_FALSE(copy.assert_fact(assertion("three", "2026-01-01T00:00:00.00005Z")).has_value());
}

TEST_CASE("a fact asserted from a package is attributed to the package's author by default") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  require_value(store.deposit(package("pkg_1")));
  auto a = assertion("live");
  a.source_package_id = "pkg_1";
  a.confidence = 0.5;
  a.tags = {"ops"};
  auto out = require_value(store.assert_fact(a));
  REQUIRE(out.asserted->asserted_by.has_value());
  CHECK(out.asserted->asserted_by->id == "jordan");
  CHECK(out.asserted->confidence == 0.5);
  CHECK(out.asserted->tags == std::vector<std::string>{"ops"});
  auto bad = assertion("x");
  bad.confidence = 2.0;
  CHECK(store.assert_fact(bad).error().message.starts_with("confidence"));
  auto bad_time = assertion("x", "soon");
  CHECK(store.assert_fact(bad_time).error().message.starts_with("valid_from"));
}

TEST_CASE("an archived project refuses writes with 403 project_archived, and can be restored") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  require_value(store.create_project("proj_demo", std::string("Demo"), std::string("a demo")));
  CHECK(store.create_project("proj_demo").error().code == errc::already_exists);
  auto draft = package("pkg_0");
  draft.set("status", "draft");
  require_value(store.deposit(draft));
  CHECK(require_value(store.set_archived("proj_demo", true))->archived());
  auto refused = store.deposit(package("pkg_1"));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::archived);
  CHECK(relay::protocol_error_of(refused.error()).code == "project_archived");
  CHECK(relay::protocol_error_of(refused.error()).http_status == 403);
  CHECK(store.assert_fact(assertion("x")).error().code == errc::archived);
  CHECK(store.invalidate_fact("proj_demo", "a", "b").error().code == errc::archived);
  CHECK(store.review("pkg_0", relay::package_status::complete).error().code == errc::archived);
  CHECK(require_value(store.latest("proj_demo")).size() == 1);  // reads still work
  CHECK_FALSE(require_value(store.set_archived("proj_demo", false))->archived());
  CHECK(require_value(store.deposit(package("pkg_1"))).created);
  CHECK(store.set_archived("proj_nope", true).error().code == errc::not_found);
  CHECK(relay::protocol_error_of(store.set_archived("proj_nope", true).error()).code == "project_not_found");
  CHECK(store.find_project("proj_demo")->name == "Demo");
}

TEST_CASE("latest orders by created_at, newest first, and honours the limit") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  require_value(store.deposit(package("b", "proj_demo", "b", "2026-04-02T00:00:00Z")));
  require_value(store.deposit(package("a", "proj_demo", "a", "2026-04-01T00:00:00Z")));
  require_value(store.deposit(package("c", "proj_demo", "c", "2026-04-03T00:00:00Z")));
  require_value(store.deposit(package("c2", "proj_demo", "c2", "2026-04-03T00:00:00Z")));
  auto latest = require_value(store.latest("proj_demo", 3));
  REQUIRE(latest.size() == 3);
  CHECK(latest[0]->package.package_id == "c2");  // same created_at: the later deposit first
  CHECK(latest[1]->package.package_id == "c");
  CHECK(latest[2]->package.package_id == "b");
  CHECK(require_value(store.latest("proj_demo", 100)).size() == 4);
  CHECK(store.latest("proj_nope").error().code == errc::not_found);
  CHECK(store.find_package("zzz").error().code == errc::not_found);
}

TEST_CASE("latest and awaiting_review compare created_at exactly, fraction digits past milliseconds included") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  // Within one millisecond, the later instant deposited first: were only
  // milliseconds compared, the deposit order would decide, the wrong way.
  for (const auto& [id, at] : {std::pair{"later", "2026-04-18T10:00:00.0009Z"}, std::pair{"earlier", "2026-04-18T10:00:00.0001Z"},
                               std::pair{"same_ms", "2026-04-18T10:00:00.00050Z"}}) {
    json::value p = package(id, "proj_demo", id, at);
    p.set("status", "awaiting_review");
    p.set("review_type", "human");
    require_value(store.deposit(p));
  }
  std::vector<std::string> newest_first;
  for (const relay::stored_package* p : require_value(store.latest("proj_demo", 10))) {
    newest_first.push_back(p->package.package_id);
  }
  CHECK(newest_first == std::vector<std::string>{"later", "same_ms", "earlier"});
  std::vector<std::string> oldest_first;
  for (const relay::stored_package* p : require_value(store.awaiting_review("proj_demo"))) {
    oldest_first.push_back(p->package.package_id);
  }
  CHECK(oldest_first == std::vector<std::string>{"earlier", "same_ms", "later"});
}

TEST_CASE("a session of an archived project cannot be ended until the project is restored") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  const std::string id = require_value(store.start_session("proj_demo", "claude", relay::actor_type::agent))->session_id;
  require_value(store.set_archived("proj_demo", true));
  auto refused = store.end_session(id);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::archived);
  CHECK_FALSE(store.find_session(id)->ended_at.has_value());
  require_value(store.set_archived("proj_demo", false));
  CHECK(require_value(store.end_session(id))->ended_at.has_value());
}

TEST_CASE("sessions carry a callsign and the packages deposited in them") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto s = require_value(store.start_session("proj_demo", "claude", relay::actor_type::agent));
  const std::string id = s->session_id;
  CHECK(id.starts_with("sess_"));
  REQUIRE(s->callsign.has_value());
  CHECK(s->callsign->find('-') != std::string::npos);
  auto p = package("pkg_1");
  p.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
  require_value(store.deposit(p));
  auto wire = store.session_wire(*store.find_session(id));
  CHECK(wire.find("packages_deposited")->as_array().size() == 1);
  CHECK(require_value(store.end_session(id))->ended_at.has_value());
  CHECK(store.end_session(id).error().code == errc::invalid_argument);
  CHECK(store.end_session("sess_nope").error().code == errc::not_found);
  CHECK(relay::protocol_error_of(store.end_session("sess_nope").error()).code == "session_not_found");
  auto reader = open_store(fs, true);
  CHECK(reader.find_session(id)->ended_at.has_value());
  CHECK(reader.sessions("proj_demo").size() == 1);
}

namespace {

// Changes "Shipped archive" inside its record to "Shapped archive" and fixes
// up the record's CRC, as a careless editor (or a bug elsewhere) would.
void edit_title_keeping_crc(agentctx::io::memory_file_system& fs) {
  std::string bytes = log_bytes(fs);
  const auto at = bytes.find("Shipped archive");
  REQUIRE(at != std::string::npos);
  bytes.replace(at, 7, "Shapped");
  std::size_t offset = relay::log_header_size;
  while (offset < bytes.size()) {
    const std::uint32_t length = agentctx::load_u32(bytes.data() + offset);
    if (offset < at && at < offset + 8 + length) {
      agentctx::store_u32(bytes.data() + offset + 4, agentctx::crc32(std::string_view(bytes).substr(offset + 8, length)));
    }
    offset += 8 + length;
  }
  write_log(fs, bytes);
}

}  // namespace

TEST_CASE("a package whose bytes no longer match its hash is quarantined and reported") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_1", "proj_demo", "Shipped archive")));
    require_value(store.deposit(package("pkg_2", "proj_demo", "Second")));
  }
  edit_title_keeping_crc(fs);
  auto store = open_store(fs);
  CHECK(store.quarantined().size() == 1);
  CHECK(store.quarantined()[0]->package.package_id == "pkg_1");
  auto latest = require_value(store.latest("proj_demo"));
  REQUIRE(latest.size() == 1);
  CHECK(latest[0]->package.package_id == "pkg_2");
  auto report = require_value(store.verify());
  CHECK_FALSE(report.ok());
  REQUIRE(report.quarantined.size() == 1);
  CHECK(report.quarantined[0].find("proj_demo/pkg_1: stored hash sha256:") == 0);
  CHECK(store.review("pkg_1", relay::package_status::complete).error().code == errc::corrupt);
}

TEST_CASE("a package whose deposited bytes no longer match is reported for them, not for its later status changes") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    json::value draft = package("pkg_1", "proj_demo", "Shipped archive");
    draft.set("status", "draft");
    require_value(store.deposit(std::move(draft)));
    require_value(store.flag_for_review("pkg_1", relay::review_type::human));
  }
  edit_title_keeping_crc(fs);
  auto store = open_store(fs);
  const relay::stored_package* p = require_value(store.find_package("pkg_1"));
  REQUIRE(p->quarantined);
  CHECK(p->changes.size() == 1);
  CHECK(store.quarantine_reason(*p).find("stored hash sha256:") == 0);
  CHECK(store.quarantine_reason(*p).find("but the bytes hash to sha256:") != std::string::npos);
  const auto report = require_value(store.verify());
  REQUIRE(report.quarantined.size() == 1);
  CHECK(report.quarantined[0].find("proj_demo/pkg_1: stored hash sha256:") == 0);
}

TEST_CASE("a torn last record is cut by the writer and ignored by readers; damage in the middle is refused") {
  agentctx::io::memory_file_system fs;
  deposit_two(fs);
  const std::string whole = log_bytes(fs);
  // Torn: the last record lacks its last 5 bytes.
  write_log(fs, whole.substr(0, whole.size() - 5));
  const std::uint64_t last = last_record_offset(whole);
  {
    auto reader = open_store(fs, true);
    CHECK(require_value(reader.latest("proj_demo")).size() == 1);
    CHECK(log_bytes(fs).size() == whole.size() - 5);  // readers cut nothing
    CHECK_FALSE(reader.tail_cut().has_value());
    const relay::verify_report report = require_value(reader.verify());
    CHECK(report.ok());  // a torn tail is not damage, but verify says it is there
    CHECK(report.torn_tail_offset == std::optional<std::uint64_t>(last));
    CHECK(report.torn_tail_bytes == whole.size() - 5 - last);
    auto writer = open_store(fs);
    CHECK(require_value(writer.latest("proj_demo")).size() == 1);
    CHECK(log_bytes(fs).size() == last);  // the writer cut it
    // ... keeping what it cut beside the log.
    REQUIRE(writer.tail_cut().has_value());
    CHECK(writer.tail_cut()->offset == last);
    CHECK(writer.tail_cut()->bytes == whole.size() - 5 - last);
    CHECK(writer.tail_cut()->problem.starts_with("incomplete record"));
    CHECK(writer.tail_cut()->kept_as.starts_with("/r/relay.log.torn-"));
    auto kept = require_value(fs.map(writer.tail_cut()->kept_as));
    CHECK(std::string(reinterpret_cast<const char*>(kept.data()), kept.size()) == whole.substr(last, whole.size() - 5 - last));
    CHECK(require_value(writer.deposit(package("pkg_2"))).created);
    CHECK_FALSE(require_value(writer.verify()).torn_tail_offset.has_value());
  }
  // A crash between the copy and the cut leaves the tail and its copy, and a
  // crash during a copy leaves its temporary file: the next writer keeps no
  // second copy, names the first, and removes the temporary.
  {
    const auto torn_files = [&] {
      std::vector<std::string> names;
      for (const std::string& entry : require_value(fs.list_dir("/r"))) {
        if (entry.find("relay.log.torn-") != std::string::npos) names.push_back(entry);
      }
      return names;
    };
    REQUIRE(torn_files().size() == 1);
    const std::string first_copy = "/r/" + torn_files().front();
    write_log(fs, whole.substr(0, whole.size() - 5));
    const std::string leftover = "/r/.relay.log.torn-1.tmp." + std::to_string(::getpid()) + ".999999";
    REQUIRE(fs.write_whole(leftover, std::string_view("half a copy")).has_value());
    auto writer = open_store(fs);
    REQUIRE(writer.tail_cut().has_value());
    CHECK(writer.tail_cut()->kept_as == first_copy);
    CHECK(log_bytes(fs).size() == last);
    CHECK(torn_files() == std::vector<std::string>{first_copy.substr(3)});
    REQUIRE(fs.remove(first_copy).has_value());
  }
  // When the bytes cannot be kept (a full disk often leaves the torn tail),
  // the writer cuts them all the same and says why.
  {
    // Which write copies the tail: learnt from an open without a fault.
    write_log(fs, whole.substr(0, whole.size() - 5));
    const auto torn_image = fs.snapshot();
    agentctx::io::fault_injecting_file_system faulty(fs);
    require_value(relay::store::open(faulty, "/r", test_options()));
    std::uint64_t copy_write = 0, writes = 0;
    for (const auto& op : faulty.operation_history()) {
      if (op.kind != agentctx::io::operation_kind::write) continue;
      ++writes;
      if (copy_write == 0 && op.path.find(".torn-") != std::string::npos) copy_write = writes;
    }
    REQUIRE(copy_write != 0);
    fs.restore(torn_image);
    faulty.reset();
    faulty.fail_write(copy_write);
    auto writer = require_value(relay::store::open(faulty, "/r", test_options()));
    REQUIRE(writer.tail_cut().has_value());
    CHECK(writer.tail_cut()->kept_as.empty());
    CHECK(writer.tail_cut()->not_kept.starts_with("/r/relay.log.torn-"));
    CHECK(log_bytes(fs).size() == last);
    CHECK(require_value(writer.latest("proj_demo")).size() == 1);
  }
  // Zeros where a record should start (space allocated, never written): torn too.
  write_log(fs, whole + std::string(64, '\0'));
  CHECK(require_value(open_store(fs).latest("proj_demo")).size() == 2);
  CHECK(log_bytes(fs) == whole);
  // Damaged: a flipped byte in the first record, with a good record after it.
  std::string damaged = whole;
  damaged[relay::log_header_size + 20] ^= 0x01;
  write_log(fs, damaged);
  check_refused_as_damage(fs, relay::log_header_size, "checksum");
  CHECK(log_bytes(fs) == damaged);  // nothing cut
  // Not a log at all.
  write_log(fs, "hello, world, this is not a relay log at all......");
  CHECK(relay::store::open(fs, "/r", test_options()).error().code == errc::bad_magic);
}

namespace {

/// The offsets of the records of `log`.
std::vector<std::uint64_t> record_offsets(const std::string& log) {
  std::vector<std::uint64_t> offsets;
  for (const auto& r : relay::scan_records(std::as_bytes(std::span(log.data(), log.size())), relay::log_header_size).records) {
    offsets.push_back(r.offset);
  }
  return offsets;
}

/// The payloads of the records of `log`, in order.
std::vector<std::string> record_payloads(const std::string& log) {
  std::vector<std::string> payloads;
  for (const auto& r : relay::scan_records(std::as_bytes(std::span(log.data(), log.size())), relay::log_header_size).records) {
    payloads.emplace_back(r.payload);
  }
  return payloads;
}

/// A sound log (good header, every frame and checksum good) of `payloads`.
std::string log_of(const std::vector<std::string>& payloads) {
  std::string log = relay::encode_log_header();
  for (const std::string& payload : payloads) relay::append_record(log, payload);
  return log;
}

/// A log of four records: pkg_1 (creating its project), pkg_2 (a draft),
/// pkg_3, and pkg_2 flagged for review; and the offsets of its records.
std::pair<std::string, std::vector<std::uint64_t>> four_record_log(agentctx::io::memory_file_system& fs) {
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_1")));
    auto draft = package("pkg_2");
    draft.set("status", "draft");
    require_value(store.deposit(std::move(draft)));
    require_value(store.deposit(package("pkg_3")));
    require_value(store.flag_for_review("pkg_2", relay::review_type::human));
  }
  std::string log = log_bytes(fs);
  const std::vector<std::uint64_t> offsets = record_offsets(log);
  REQUIRE(offsets.size() == 4);
  return {log, offsets};
}

relay::repair_options repair_at(std::uint64_t ms) {
  relay::repair_options o;
  o.clock = [ms] { return ms; };
  return o;
}

std::vector<std::string> latest_ids(agentctx::io::memory_file_system& fs) {
  auto store = open_store(fs, true);
  std::vector<std::string> ids;
  for (const auto* p : require_value(store.latest("proj_demo", 10))) ids.push_back(p->package.package_id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

// Power lost right after a writer's open cut a torn tail whose copy a killed
// writer had made (bytes synced, name not yet): the copy must survive the cut.
TEST_CASE("a torn tail's copy found again is made durable before the tail is cut") {
  agentctx::io::memory_file_system fs;
  deposit_two(fs);
  const std::string whole = log_bytes(fs);
  const std::uint64_t last = last_record_offset(whole);
  const std::string tail = whole.substr(last, whole.size() - 5 - last);
  write_log(fs, whole.substr(0, whole.size() - 5));
  {
    auto copy = require_value(fs.open("/r/relay.log.torn-1", agentctx::io::create_truncate));
    require_ok(copy->append(std::as_bytes(std::span(tail.data(), tail.size()))));
    require_ok(copy->sync());  // no sync_dir: the writer was killed before it
  }
  const auto image = fs.snapshot();
  agentctx::io::fault_injecting_file_system faulty(fs);
  {
    auto learnt = require_value(relay::store::open(faulty, "/r", test_options()));
    REQUIRE(learnt.tail_cut().has_value());
    CHECK(learnt.tail_cut()->kept_as == "/r/relay.log.torn-1");
  }
  // The open's last folder sync comes after the cut: power fails there.
  const std::uint64_t folder_syncs = faulty.operation_count(agentctx::io::operation_kind::sync_dir);
  fs.restore(image);
  faulty.reset();
  faulty.set_crash_after_fault(true);
  faulty.inject({agentctx::io::operation_kind::sync_dir, folder_syncs, std::nullopt});
  REQUIRE_FALSE(relay::store::open(faulty, "/r", test_options()).has_value());
  fs.simulate_crash();
  CHECK(log_bytes(fs).size() == last);  // the cut is durable ...
  auto kept = fs.map("/r/relay.log.torn-1");  // ... and so is the copy of what it cut
  REQUIRE(kept.has_value());
  CHECK(std::string(reinterpret_cast<const char*>(kept->data()), kept->size()) == tail);
}

// A repair killed after it renamed the repaired log into place, before the
// folder sync: repaired again, it finds nothing to mend, and power is lost
// before any writer opens. The repaired log must be the one that survives.
TEST_CASE("a repair with nothing to mend makes the log it found durable") {
  agentctx::io::memory_file_system fs;
  deposit_two(fs);
  const std::string sound = log_bytes(fs);
  const auto records =
      relay::scan_records(std::as_bytes(std::span(sound.data(), sound.size())), relay::log_header_size).records;
  std::string damaged = sound;
  damaged[records.front().offset + 30] ^= 0x20;  // pkg_1's checksum fails; pkg_2 follows: damage
  write_log(fs, damaged);
  {
    // The killed repair's new log: written, synced and renamed; the folder not synced.
    auto rebuilt = require_value(fs.open("/r/relay.log.new", agentctx::io::create_truncate));
    require_ok(rebuilt->append(std::as_bytes(std::span(sound.data(), sound.size()))));
    require_ok(rebuilt->sync());
  }
  require_ok(fs.rename("/r/relay.log.new", "/r/relay.log"));
  const auto again = require_value(relay::store::repair(fs, "/r", repair_at(1'777'000'000'000)));
  CHECK_FALSE(again.needed());
  fs.simulate_crash();
  CHECK(log_bytes(fs) == sound);
  CHECK(latest_ids(fs) == std::vector<std::string>{"pkg_1", "pkg_2"});
}

TEST_CASE("repair salvages a damaged log: damage skipped, records that no longer apply dropped, the old log kept") {
  agentctx::io::memory_file_system fs;
  const auto [whole, at] = four_record_log(fs);
  std::string damaged = whole;
  damaged[at[1] + 30] ^= 0x20;  // pkg_2's record: its checksum fails
  write_log(fs, damaged);
  REQUIRE(relay::store::open(fs, "/r", test_options()).error().code == errc::corrupt);

  // A dry run says what would happen and changes nothing.
  auto dry_options = repair_at(1'777'000'000'000);
  dry_options.dry_run = true;
  const auto dry = require_value(relay::store::repair(fs, "/r", dry_options));
  CHECK(dry.needed());
  CHECK_FALSE(dry.rewritten);
  CHECK(dry.records_kept == 2);
  REQUIRE(dry.lost.size() == 2);
  CHECK(log_bytes(fs) == damaged);
  CHECK_FALSE(fs.exists("/r/relay.log.damaged-1777000000000").value());

  const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1'777'000'000'000)));
  CHECK(report.rewritten);
  CHECK(report.log_bytes == damaged.size());
  CHECK(report.records_kept == 2);
  REQUIRE(report.lost.size() == 2);
  CHECK(report.lost[0].offset == at[1]);
  CHECK(report.lost[0].bytes == at[2] - at[1]);
  CHECK(report.lost[0].what == "damaged bytes: record checksum mismatch");
  CHECK(report.lost[1].offset == at[3]);
  CHECK(report.lost[1].what.starts_with("record does not apply: "));
  CHECK(report.backup == "/r/relay.log.damaged-1777000000000");
  auto backup = require_value(fs.map(report.backup));
  CHECK(std::string(reinterpret_cast<const char*>(backup.data()), backup.size()) == damaged);
  // The store opens again, with what survived, and takes writes.
  CHECK(latest_ids(fs) == std::vector<std::string>{"pkg_1", "pkg_3"});
  CHECK(require_value(open_store(fs).deposit(package("pkg_2"))).created);
  // Damaged again (the new deposit's record) and repaired in the same
  // millisecond: the first backup stays, the second gets its own name.
  {
    std::string again_damaged = log_bytes(fs);
    const auto now = relay::scan_records(std::as_bytes(std::span(again_damaged.data(), again_damaged.size())),
                                         relay::log_header_size);
    REQUIRE(now.records.size() == 3);
    again_damaged[now.records[2].offset + 30] ^= 0x20;
    write_log(fs, again_damaged);
    const auto second = require_value(relay::store::repair(fs, "/r", repair_at(1'777'000'000'000)));
    CHECK(second.backup == "/r/relay.log.damaged-1777000000000-1");
    CHECK(second.records_kept == 2);
    auto first_backup = require_value(fs.map("/r/relay.log.damaged-1777000000000"));
    CHECK(std::string(reinterpret_cast<const char*>(first_backup.data()), first_backup.size()) == damaged);
  }
  // Repairing a sound store changes nothing.
  const std::string sound = log_bytes(fs);
  const auto again = require_value(relay::store::repair(fs, "/r", repair_at(1'777'000'000'001)));
  CHECK_FALSE(again.needed());
  CHECK_FALSE(again.rewritten);
  CHECK(again.records_kept == 2);
  CHECK(log_bytes(fs) == sound);
  CHECK_FALSE(fs.exists("/r/relay.log.damaged-1777000000001").value());
}

TEST_CASE("repair resumes after a damaged length, skips inserted garbage, drops a torn tail, rewrites a damaged header") {
  struct repair_case {
    const char* name;
    std::function<std::string(const std::string&, const std::vector<std::uint64_t>&)> damage;
    std::size_t kept;
    std::vector<std::string> lost_prefixes;
    bool header_rewritten;
  };
  const std::vector<repair_case> cases = {
      {"a length out of range", [](const std::string& log, const std::vector<std::uint64_t>& at) {
         std::string out = log;
         out[at[2]] = out[at[2] + 1] = out[at[2] + 2] = out[at[2] + 3] = '\xff';
         return out;
       }, 3, {"damaged bytes: record length"}, false},
      {"garbage between two records", [](const std::string& log, const std::vector<std::uint64_t>& at) {
         return log.substr(0, at[1]) + std::string(100, '\x7f') + log.substr(at[1]);
       }, 4, {"damaged bytes: record length"}, false},
      {"a torn tail", [](const std::string& log, const std::vector<std::uint64_t>&) {
         return log.substr(0, log.size() - 7);
       }, 3, {"torn tail: incomplete record"}, false},
      {"a damaged header", [](const std::string& log, const std::vector<std::uint64_t>&) {
         std::string out = log;
         out[20] = '\x01';
         return out;
       }, 4, {}, true},
  };
  for (const repair_case& c : cases) {
    CAPTURE(c.name);
    agentctx::io::memory_file_system fs;
    const auto [whole, at] = four_record_log(fs);
    write_log(fs, c.damage(whole, at));
    const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
    CHECK(report.rewritten);
    CHECK(report.header_rewritten == c.header_rewritten);
    CHECK(report.records_kept == c.kept);
    REQUIRE(report.lost.size() == c.lost_prefixes.size());
    for (std::size_t i = 0; i < c.lost_prefixes.size(); ++i) {
      CHECK_MESSAGE(report.lost[i].what.starts_with(c.lost_prefixes[i]), report.lost[i].what);
    }
    auto store = relay::store::open(fs, "/r", test_options());
    REQUIRE_MESSAGE(store.has_value(), test_support::error_text(store));
    CHECK(store->record_count() == c.kept);
  }
}

TEST_CASE("repair refuses what it cannot salvage and a store in use") {
  agentctx::io::memory_file_system fs;
  CHECK(relay::store::repair(fs, "/r").error().code == errc::not_found);
  four_record_log(fs);
  {
    auto writer = open_store(fs);
    CHECK(relay::store::repair(fs, "/r").error().code == errc::locked);
  }
  write_log(fs, "hello, world, this is not a relay log at all......");
  CHECK(relay::store::repair(fs, "/r").error().code == errc::bad_magic);
  CHECK(log_bytes(fs) == "hello, world, this is not a relay log at all......");
}

TEST_CASE("one writer at a time; readers refresh to see new records") {
  agentctx::io::memory_file_system fs;
  auto writer = open_store(fs);
  auto second = relay::store::open(fs, "/r", test_options());
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == errc::locked);
  CHECK(second.error().message.starts_with("store is locked"));
  CHECK(relay::protocol_error_of(second.error()).code == "store_locked");
  auto reader = open_store(fs, true);
  CHECK(reader.projects().empty());
  require_value(writer.deposit(package("pkg_1")));
  CHECK(reader.projects().empty());
  require_ok(reader.refresh());
  CHECK(require_value(reader.latest("proj_demo")).size() == 1);
  CHECK(reader.deposit(package("pkg_2")).error().code == errc::unsupported);
  // A reader of a folder without a store is told so.
  auto o = test_options();
  o.read_only = true;
  CHECK(relay::store::open(fs, "/elsewhere", o).error().code == errc::not_found);
  o.read_only = false;
  o.create_if_missing = false;
  CHECK(relay::store::open(fs, "/elsewhere", o).error().code == errc::not_found);
}

TEST_CASE("discard_if_unused removes a store its writer created and wrote nothing to, and nothing else") {
  agentctx::io::memory_file_system fs;
  const auto discard = [](relay::store&& s) { return require_value(relay::store::discard_if_unused(std::move(s))); };
  // A folder the open made goes with the store.
  {
    auto s = open_store(fs);
    CHECK(s.deposit(package("pkg_1", "proj_demo", "")).error().code == errc::invalid_argument);  // nothing written
    CHECK(discard(std::move(s)));
    CHECK_FALSE(*fs.exists("/r"));
  }
  // A folder that was there stays, with what else it holds.
  for (const bool with_file : {false, true}) {
    CAPTURE(with_file);
    require_ok(fs.create_dir("/mine"));
    if (with_file) {
      const std::string mine = "mine";
      require_ok(require_value(fs.open("/mine/notes.txt", agentctx::io::create_or_open))
                     ->append(std::as_bytes(std::span(mine.data(), mine.size()))));
    }
    CHECK(discard(require_value(relay::store::open(fs, "/mine", test_options()))));
    CHECK(*fs.list_dir("/mine") == (with_file ? std::vector<std::string>{"notes.txt"} : std::vector<std::string>{}));
    if (with_file) require_ok(fs.remove("/mine/notes.txt"));
    require_ok(fs.remove_dir("/mine"));
  }
  // A store with a record, one an earlier writer created (even empty), and
  // a reader are only closed.
  {
    auto s = open_store(fs);
    require_value(s.deposit(package("pkg_1")));
    CHECK_FALSE(discard(std::move(s)));
    CHECK(require_value(open_store(fs, true).latest("proj_demo")).size() == 1);
  }
  {
    auto first = require_value(relay::store::open(fs, "/empty", test_options()));
  }
  CHECK_FALSE(discard(require_value(relay::store::open(fs, "/empty", test_options()))));
  CHECK(*fs.exists("/empty/relay.log"));
  CHECK_FALSE(discard(open_store(fs, true)));
  CHECK(*fs.exists("/r/relay.log"));
}

// A removal that fails: discard_if_unused says so, and what it removed
// before is synced. The nth remove is of relay.log, store.lock, the folder.
TEST_CASE("discard_if_unused reports a removal that fails and keeps what it could not remove") {
  using agentctx::io::operation_kind;
  for (std::uint64_t n = 1; n <= 3; ++n) {
    CAPTURE(n);
    agentctx::io::memory_file_system memory;
    agentctx::io::fault_injecting_file_system faulty(memory);
    auto s = require_value(relay::store::open(faulty, "/r", test_options()));
    const auto removes = faulty.operation_count(operation_kind::remove);
    const auto dir_syncs = faulty.operation_count(operation_kind::sync_dir);
    faulty.inject({operation_kind::remove, removes + n, std::nullopt});
    auto discarded = relay::store::discard_if_unused(std::move(s));
    REQUIRE_FALSE(discarded.has_value());
    CHECK(discarded.error().code == errc::io_error);
    CHECK(*memory.exists("/r/relay.log") == (n == 1));
    CHECK(*memory.exists("/r/store.lock") == (n <= 2));
    CHECK(*memory.exists("/r"));
    CHECK(faulty.operation_count(operation_kind::sync_dir) == dir_syncs + (n >= 2 ? 1 : 0));
    // What stays is an empty store (or a folder), which a writer opens.
    CHECK(require_value(relay::store::open(memory, "/r", test_options())).record_count() == 0);
  }
}

// The writer that waited holds the lock of the store it made, not the lock
// file of the one removed: a third writer is refused while it writes.
// `waited` says when a lock() waits for the lock (the waiter then locked the
// file that is removed).
namespace {
void check_waiting_writer_creates_afresh(agentctx::io::file_system& fs, const std::string& dir,
                                         const std::function<bool()>& waited) {
  std::optional<relay::store> first = require_value(relay::store::open(fs, dir, test_options()));
  std::optional<agentctx::result<relay::store>> second;
  io_test::waiting_thread waiter(
      [&] {
        auto o = test_options();
        o.wait_for_lock = true;
        second.emplace(relay::store::open(fs, dir, o));
        if (second->has_value()) (void)(*second)->deposit(package("pkg_waited"));
      },
      [&] { first.reset(); });
  io_test::wait_until(waited);
  CHECK(require_value(relay::store::discard_if_unused(std::move(*first))));
  waiter.join();
  REQUIRE(second.has_value());
  REQUIRE(second->has_value());
  relay::store& writer = **second;
  CHECK(writer.record_count() == 1);
  CHECK(relay::store::open(fs, dir, test_options()).error().code == errc::locked);
  auto o = test_options();
  o.read_only = true;
  auto reader = require_value(relay::store::open(fs, dir, o));
  const auto latest = require_value(reader.latest("proj_demo"));
  REQUIRE(latest.size() == 1);
  CHECK(latest[0]->package.package_id == "pkg_waited");
  CHECK(require_value(reader.verify()).ok());
}

// A writer that only opens an existing store (create_if_missing false), and
// repair, waiting while the store is discarded: not_found, and nothing of a
// store is left behind (the lock file their lock made goes again), in a
// folder the discarding open made (it goes) or one that was there (it stays,
// empty).
void check_waiter_finds_no_store(agentctx::io::file_system& fs, const std::string& dir,
                                 const std::function<bool()>& waited) {
  for (const bool repair : {false, true}) {
    for (const bool folder_was_there : {false, true}) {
      CAPTURE(repair);
      CAPTURE(folder_was_there);
      if (folder_was_there) require_ok(fs.create_dir(dir));
      std::optional<relay::store> first = require_value(relay::store::open(fs, dir, test_options()));
      std::optional<errc> code;
      io_test::waiting_thread waiter([&] {
        if (repair) {
          relay::repair_options o;
          o.wait_for_lock = true;
          auto repaired = relay::store::repair(fs, dir, o);
          code = repaired ? errc::ok : repaired.error().code;
        } else {
          auto o = test_options();
          o.wait_for_lock = true;
          o.create_if_missing = false;
          auto opened = relay::store::open(fs, dir, o);
          code = opened ? errc::ok : opened.error().code;
        }
      }, [&] { first.reset(); });
      io_test::wait_until(waited);
      CHECK(require_value(relay::store::discard_if_unused(std::move(*first))));
      waiter.join();
      CHECK(code == errc::not_found);
      if (folder_was_there) {
        CHECK(require_value(fs.list_dir(dir)).empty());
        require_ok(fs.remove_dir(dir));
      } else {
        CHECK_FALSE(require_value(fs.exists(dir)));
      }
    }
  }
}

// Runs `check` on a store folder in memory and on the real disk, with what
// says there when a lock() waits for store.lock.
void in_memory_and_on_disk(void (*check)(agentctx::io::file_system&, const std::string&,
                                         const std::function<bool()>&)) {
  SUBCASE("in memory") {
    agentctx::io::memory_file_system fs;
    check(fs, "/r", [&] { return fs.lock_waiters() != 0; });
  }
  SUBCASE("on disk") {
    io_test::temporary_directory tmp;
    const std::string dir = tmp.path() + "/store";
    check(agentctx::io::default_file_system(), dir, [&] { return io_test::disk_lock_waited(dir + "/store.lock"); });
  }
}
}  // namespace

TEST_CASE("a writer that waits while another discards the store it created creates the store afresh") {
  in_memory_and_on_disk(check_waiting_writer_creates_afresh);
}

TEST_CASE("an open of an existing store, or a repair, that waits while the store is discarded finds none") {
  in_memory_and_on_disk(check_waiter_finds_no_store);
}

TEST_CASE("deposit_json: text that is not JSON, or JSON that breaks RFC 8785, is an invalid_schema error") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  for (const char* text : {"", "{", "[1,2]", R"({"a":1,"a":2})", R"({"title":"\ud800"})"}) {
    CAPTURE(text);
    auto out = store.deposit_json(text);
    REQUIRE_FALSE(out.has_value());
    CHECK(out.error().code == errc::invalid_argument);
  }
  auto ok = require_value(store.deposit_json(R"({"project_id":"p","relay_version":"0.1","title":"t","status":"complete",
    "package_type":"standard","review_type":"none","created_at":"2026-04-18T20:00:00Z",
    "created_by":{"id":"j","type":"human"},"x-extra":{"kept":[1,2,3]}})"));
  CHECK(ok.package->package.wire.find("x-extra") != nullptr);
}

TEST_CASE("pull specific refuses a quarantined package, naming why") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_1", "proj_demo", "Shipped archive")));
  }
  std::string bytes = log_bytes(fs);
  const auto at = bytes.find("Shipped archive");
  bytes.replace(at, 7, "Shapped");
  const std::uint32_t length = agentctx::load_u32(bytes.data() + relay::log_header_size);
  agentctx::store_u32(bytes.data() + relay::log_header_size + 4,
                      agentctx::crc32(std::string_view(bytes).substr(relay::log_header_size + 8, length)));
  write_log(fs, bytes);
  auto store = open_store(fs, true);
  CHECK(require_value(store.find_package("pkg_1"))->quarantined);
  auto refused = store.pull_specific("pkg_1");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::corrupt);
  CHECK(refused.error().message.find("quarantined: stored hash") != std::string::npos);
  CHECK(store.pull_specific("pkg_2").error().code == errc::not_found);
  CHECK(relay::protocol_error_of(relay::project_not_found("p")).code == "project_not_found");
}


namespace {

/// A store like the audit's: a project (created by the deposit of pkg_0)
/// with 8 packages, 6 facts (two keys superseded) and a session, in that
/// project; and the offsets of the log's records.
std::pair<std::string, std::vector<std::uint64_t>> project_log(agentctx::io::memory_file_system& fs) {
  {
    auto store = open_store(fs);
    for (int i = 0; i < 8; ++i) require_value(store.deposit(package("pkg_" + std::to_string(i))));
    for (int i = 0; i < 6; ++i) {
      auto a = assertion("v" + std::to_string(i));
      a.subject = "subject_" + std::to_string(i % 3);
      require_value(store.assert_fact(a));
    }
    require_value(store.start_session("proj_demo", "claude", relay::actor_type::agent));
  }
  std::string log = log_bytes(fs);
  const std::vector<std::uint64_t> offsets = record_offsets(log);
  REQUIRE(offsets.size() == 15);
  return {log, offsets};
}

}  // namespace

TEST_CASE("repair keeps a project's records when the record that created the project is damaged") {
  agentctx::io::memory_file_system fs;
  const auto [whole, at] = project_log(fs);
  REQUIRE(whole.substr(at[0], at[1] - at[0]).find(R"("project":{"created_at")") != std::string::npos);
  std::string damaged = whole;
  damaged[at[0] + 40] ^= 0x01;  // the first record: pkg_0's deposit, which created proj_demo
  write_log(fs, damaged);
  REQUIRE(relay::store::open(fs, "/r", test_options()).error().code == errc::corrupt);

  const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
  CHECK(report.rewritten);
  CHECK(report.records_kept == 14);
  REQUIRE(report.lost.size() == 1);
  CHECK(report.lost[0].offset == at[0]);
  CHECK(report.lost[0].bytes == at[1] - at[0]);
  CHECK(report.lost[0].what == "damaged bytes: record checksum mismatch");
  REQUIRE(report.recreated.size() == 1);
  CHECK(report.recreated[0].project_id == "proj_demo");
  CHECK(report.recreated[0].offset == at[1]);
  CHECK(report.recreated[0].created_at == "2026-04-18T20:00:00Z");  // pkg_1's created_at

  auto store = open_store(fs, true);
  CHECK(store.record_count() == 15);  // the recreated project and the 14 kept
  REQUIRE(store.find_project("proj_demo") != nullptr);
  CHECK(store.find_project("proj_demo")->created_at == "2026-04-18T20:00:00Z");
  CHECK(require_value(store.packages_of("proj_demo")).size() == 7);
  CHECK(store.find_package("pkg_0").error().code == errc::not_found);
  CHECK(store.all_facts("proj_demo").size() == 6);
  CHECK(store.facts("proj_demo").size() == 3);
  CHECK(store.sessions("proj_demo").size() == 1);
  CHECK(require_value(store.verify()).ok());
  // The repaired store takes writes, and repairing it again finds nothing.
  CHECK(require_value(open_store(fs).deposit(package("pkg_0"))).created);
  CHECK_FALSE(require_value(relay::store::repair(fs, "/r", repair_at(2))).needed());
}

TEST_CASE("repair loses only the damaged record in the middle of a project's log") {
  agentctx::io::memory_file_system fs;
  const auto [whole, at] = project_log(fs);
  std::string damaged = whole;
  damaged[at[4] + 40] ^= 0x01;  // pkg_4's deposit
  write_log(fs, damaged);
  const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
  CHECK(report.records_kept == 14);
  REQUIRE(report.lost.size() == 1);
  CHECK(report.lost[0].offset == at[4]);
  CHECK(report.recreated.empty());
  auto store = open_store(fs, true);
  CHECK(require_value(store.packages_of("proj_demo")).size() == 7);
  CHECK(store.find_package("pkg_4").error().code == errc::not_found);
  CHECK(store.all_facts("proj_demo").size() == 6);
  CHECK(store.sessions("proj_demo").size() == 1);
}

TEST_CASE("repair keeps a key's later facts when a fact they superseded is lost") {
  // One key asserted four times (f0 .. f3, each superseding the one before),
  // after the deposit that created the project; record i + 1 asserts f<i>.
  const std::vector<std::string> days = {"2026-04-01", "2026-04-02", "2026-04-03", "2026-04-04"};
  const auto build = [&](agentctx::io::memory_file_system& fs) {
    std::vector<std::string> ids;
    {
      auto store = open_store(fs);
      require_value(store.deposit(package("pkg_0")));
      for (std::size_t i = 0; i < days.size(); ++i) {
        auto outcome = require_value(store.assert_fact(assertion("v" + std::to_string(i), days[i] + "T00:00:00Z")));
        ids.push_back(outcome.asserted->fact_id);
      }
    }
    return ids;
  };
  // Damages record `index` of the log; returns the records' offsets.
  const auto damage = [](agentctx::io::memory_file_system& fs, std::size_t index) {
    std::string log = log_bytes(fs);
    const std::vector<std::uint64_t> at = record_offsets(log);
    REQUIRE(at.size() == 5);
    log[at[index] + 40] ^= 0x01;
    write_log(fs, log);
    return at;
  };

  SUBCASE("a middle fact: the next one supersedes the fact before it") {
    agentctx::io::memory_file_system fs;
    const std::vector<std::string> ids = build(fs);
    const std::vector<std::uint64_t> at = damage(fs, 2);  // f1
    const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
    CHECK(report.records_kept == 4);
    REQUIRE(report.lost.size() == 1);
    CHECK(report.lost[0].offset == at[2]);
    REQUIRE(report.relinked.size() == 1);
    CHECK(report.relinked[0].offset == at[3]);
    CHECK(report.relinked[0].fact_id == ids[2]);
    CHECK(report.relinked[0].lost_fact_id == ids[1]);
    CHECK(report.relinked[0].supersedes == ids[0]);

    auto store = open_store(fs, true);
    const auto history = store.history("proj_demo", "dashboard", "status");
    REQUIRE(history.size() == 3);
    CHECK(history[0]->fact_id == ids[0]);
    CHECK(history[0]->valid_to == "2026-04-03T00:00:00Z");  // over f1's lost day
    CHECK(history[1]->fact_id == ids[2]);
    CHECK(history[1]->valid_to == "2026-04-04T00:00:00Z");
    CHECK(history[2]->fact_id == ids[3]);
    CHECK(store.current_fact("proj_demo", "dashboard", "status")->value == "v3");
    CHECK(store.facts("proj_demo").size() == 1);
    CHECK(require_value(store.verify()).ok());
    CHECK_FALSE(require_value(relay::store::repair(fs, "/r", repair_at(2))).needed());
  }

  SUBCASE("the first fact: the next one supersedes nothing") {
    agentctx::io::memory_file_system fs;
    const std::vector<std::string> ids = build(fs);
    damage(fs, 1);  // f0
    const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
    CHECK(report.records_kept == 4);
    REQUIRE(report.relinked.size() == 1);
    CHECK(report.relinked[0].fact_id == ids[1]);
    CHECK(report.relinked[0].lost_fact_id == ids[0]);
    CHECK_FALSE(report.relinked[0].supersedes.has_value());
    auto store = open_store(fs, true);
    const auto history = store.history("proj_demo", "dashboard", "status");
    REQUIRE(history.size() == 3);
    CHECK(history[0]->fact_id == ids[1]);
    CHECK(history[2]->is_current());
    CHECK(store.current_fact("proj_demo", "dashboard", "status")->value == "v3");
    // The amended record reads as a record the store writes itself.
    auto writer = open_store(fs);
    CHECK(require_value(writer.assert_fact(assertion("v4", "2026-04-05T00:00:00Z"))).superseded == ids[3]);
  }

  SUBCASE("a lost invalidation: the next fact supersedes the fact it had ended") {
    agentctx::io::memory_file_system fs;
    std::vector<std::string> ids;
    {
      auto store = open_store(fs);
      require_value(store.deposit(package("pkg_0")));
      ids.push_back(require_value(store.assert_fact(assertion("v0", "2026-04-01T00:00:00Z"))).asserted->fact_id);
      CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 1);
      // The invalidation ended v0 at the clock's 2026-04-18T20:00:0xZ.
      ids.push_back(require_value(store.assert_fact(assertion("v1", "2026-04-20T00:00:00Z"))).asserted->fact_id);
      ids.push_back(require_value(store.assert_fact(assertion("v2", "2026-04-21T00:00:00Z"))).asserted->fact_id);
    }
    const std::vector<std::uint64_t> at = damage(fs, 2);  // the invalidation
    const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
    CHECK(report.records_kept == 4);
    REQUIRE(report.relinked.size() == 1);
    CHECK(report.relinked[0].offset == at[3]);
    CHECK(report.relinked[0].fact_id == ids[1]);
    CHECK_FALSE(report.relinked[0].lost_fact_id.has_value());
    CHECK(report.relinked[0].supersedes == ids[0]);
    auto store = open_store(fs, true);
    const auto history = store.history("proj_demo", "dashboard", "status");
    REQUIRE(history.size() == 3);
    CHECK(history[0]->valid_to == "2026-04-20T00:00:00Z");
    CHECK(store.current_fact("proj_demo", "dashboard", "status")->value == "v2");
  }

  SUBCASE("a dry run reports the same and changes nothing") {
    agentctx::io::memory_file_system fs;
    build(fs);
    damage(fs, 2);
    const std::string log = log_bytes(fs);
    auto options = repair_at(1);
    options.dry_run = true;
    const auto report = require_value(relay::store::repair(fs, "/r", options));
    CHECK(report.relinked.size() == 1);
    CHECK_FALSE(report.rewritten);
    CHECK(log_bytes(fs) == log);
  }
}

TEST_CASE("repair amends a log that open refuses although no bytes are lost") {
  // Written by another tool, say: every frame and checksum is good, but a
  // record needs a project recreated or a fact relinked to apply.
  SUBCASE("a fact superseding a fact the log never held") {
    agentctx::io::memory_file_system fs;
    {
      auto store = open_store(fs);
      require_value(store.deposit(package("pkg_0")));
      require_value(store.assert_fact(assertion("v0", "2026-04-01T00:00:00Z")));
      require_value(store.assert_fact(assertion("v1", "2026-04-02T00:00:00Z")));
    }
    std::vector<std::string> payloads = record_payloads(log_bytes(fs));
    REQUIRE(payloads.size() == 3);
    const auto at = payloads[2].find(R"("supersedes":"fact_)");
    REQUIRE(at != std::string::npos);
    payloads[2].replace(at + 14, 5, "gone_");
    write_log(fs, log_of(payloads));
    const auto refused = relay::store::open(fs, "/r", test_options());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("supersedes the wrong fact") != std::string::npos);

    const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
    CHECK(report.lost.empty());
    REQUIRE(report.relinked.size() == 1);
    CHECK(report.relinked[0].lost_fact_id.value_or("").rfind("gone_", 0) == 0);
    CHECK(report.needed());
    CHECK(report.rewritten);
    auto store = open_store(fs, true);
    CHECK(store.history("proj_demo", "dashboard", "status").size() == 2);
    CHECK(store.current_fact("proj_demo", "dashboard", "status")->value == "v1");
    CHECK_FALSE(require_value(relay::store::repair(fs, "/r", repair_at(2))).needed());
  }

  SUBCASE("records of a project the log never created") {
    agentctx::io::memory_file_system fs;
    {
      auto store = open_store(fs);
      require_value(store.deposit(package("pkg_0")));
      require_value(store.deposit(package("pkg_1")));
    }
    std::vector<std::string> payloads = record_payloads(log_bytes(fs));
    payloads.erase(payloads.begin());  // the deposit that created the project
    write_log(fs, log_of(payloads));
    REQUIRE(relay::store::open(fs, "/r", test_options()).error().code == errc::corrupt);
    const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
    CHECK(report.lost.empty());
    CHECK(report.recreated.size() == 1);
    CHECK(report.needed());
    CHECK(report.rewritten);
    CHECK(require_value(open_store(fs, true).packages_of("proj_demo")).size() == 1);
  }
}

TEST_CASE("repair loses a fact that cannot be relinked, naming why") {
  // A fact that starts in the future and is invalidated never held, so a
  // later assertion may start before it; with the invalidation lost, that
  // fact cannot supersede it.
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_0")));
    require_value(store.assert_fact(assertion("v0", "2099-04-10T00:00:00Z")));
    CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 1);
    require_value(store.assert_fact(assertion("v1", "2026-04-01T00:00:00Z")));
  }
  std::string log = log_bytes(fs);
  const std::vector<std::uint64_t> at = record_offsets(log);
  REQUIRE(at.size() == 4);
  log[at[2] + 40] ^= 0x01;  // the invalidation
  write_log(fs, log);
  const auto report = require_value(relay::store::repair(fs, "/r", repair_at(1)));
  CHECK(report.relinked.empty());
  REQUIRE(report.lost.size() == 2);
  CHECK(report.lost[1].offset == at[3]);
  CHECK(report.lost[1].what == "record does not apply: fact record starts before the fact it supersedes");
  CHECK(open_store(fs, true).current_fact("proj_demo", "dashboard", "status")->value == "v0");
}

TEST_CASE("open names a package record that does not apply") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_0")));
    require_value(store.deposit(package("pkg_1")));
  }
  std::vector<std::string> payloads = record_payloads(log_bytes(fs));
  payloads.push_back(payloads[1]);  // pkg_1 again
  write_log(fs, log_of(payloads));
  const auto refused = relay::store::open(fs, "/r", test_options());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::corrupt);
  CHECK(refused.error().message.find(R"(record does not apply: package "pkg_1" deposited twice)") != std::string::npos);
  CHECK(refused.error().offset == log_of({payloads[0], payloads[1]}).size());
}

TEST_CASE("open refuses records an export of the store could not carry, and record members of the wrong type") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    auto draft = package("pkg_0");
    draft.set("status", "draft");
    require_value(store.deposit(std::move(draft)));
    require_value(store.assert_fact(status_of("moon", "far", "2026-01-01T00:00:00Z")));
  }
  const std::vector<std::string> sound = record_payloads(log_bytes(fs));
  REQUIRE(sound.size() == 2);
  const std::string fact_id = require_value(relay::store::open(fs, "/r", test_options())).facts("proj_demo")[0]->fact_id;
  const std::string status_head =
      R"({"type":"status","project_id":"proj_demo","package_id":"pkg_0","status":"complete","review_type":"none",)";
  std::string hash_now;
  {
    json::value completed = require_value(relay::store::open(fs, "/r", test_options())).find_package("pkg_0").value()->package.wire;
    completed.set("status", "complete");
    hash_now = require_value(relay::content_hash(completed));
  }
  const std::string tail = R"(,"hash":")" + hash_now + R"("})";
  // A package nesting 1024 levels: its record nests 1025, deeper than any
  // JSON text canonical JSON reads (export and import could not carry it).
  json::value deep = package("pkg_deep");
  json::value nested = json::value::array_type{};
  for (int i = 0; i < 1022; ++i) nested = json::value::array_type{std::move(nested)};
  deep.set("x-deep", std::move(nested));
  const std::string deep_record =
      R"({"type":"package","hash":")" + require_value(relay::content_hash(deep)) + R"(","package":)" +
      json::to_text(deep) + "}";
  const struct {
    std::string record;
    std::string message;
  } cases[] = {
      {deep_record, "arrays and objects nest deeper than 1024 levels"},
      {status_head + R"("at":"yesterday")" + tail, "status record's at is not an RFC 3339 timestamp"},
      {status_head + R"("at":"2026-02-30T00:00:00Z")" + tail, "status record's at is not an RFC 3339 timestamp"},
      {R"({"type":"fact","supersedes":7,"fact":{"fact_id":"fact_2","project_id":"proj_demo","subject":"sun",)"
       R"("predicate":"status","value":"near","valid_from":"2026-01-02T00:00:00Z","created_at":"2026-01-02T00:00:00Z"}})",
       "fact record's supersedes is not a string"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.message);
    write_log(fs, log_of({sound[0], sound[1], c.record}));
    const auto refused = relay::store::open(fs, "/r", test_options());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == errc::corrupt);
    CHECK(refused.error().message.find(c.message) != std::string::npos);
    CHECK(refused.error().offset == log_of({sound[0], sound[1]}).size());
  }
  // Each read as sound when it is right: a package nesting 1023 levels, an
  // `at` with an offset, a note null (absent) or a string, supersedes null.
  json::value shallow = package("pkg_deep");
  json::value less = json::value::array_type{};
  for (int i = 0; i < 1021; ++i) less = json::value::array_type{std::move(less)};
  shallow.set("x-deep", std::move(less));
  const std::string sound_cases[] = {
      R"({"type":"package","hash":")" + require_value(relay::content_hash(shallow)) + R"(","package":)" +
          json::to_text(shallow) + "}",
      status_head + R"("at":"2026-03-01T01:00:00+01:00","note":null)" + tail,
      status_head + R"("at":"2026-03-01T00:00:00Z","note":"done")" + tail,
      // Imports before 2026-11-27 copied a line's note as it was: read as none.
      status_head + R"("at":"2026-03-01T00:00:00Z","note":5)" + tail,
      R"({"type":"fact","supersedes":null,"fact":{"fact_id":"fact_2","project_id":"proj_demo","subject":"sun",)"
      R"("predicate":"status","value":"near","valid_from":"2026-01-02T00:00:00Z","created_at":"2026-01-02T00:00:00Z"}})",
  };
  for (const std::string& record : sound_cases) {
    CAPTURE(record.substr(0, 120));
    write_log(fs, log_of({sound[0], sound[1], record}));
    auto opened = relay::store::open(fs, "/r", test_options());
    REQUIRE_MESSAGE(opened.has_value(), opened.error().message);
    std::string exported;
    require_value(relay::export_ndjson(*opened, "", exported));
    agentctx::io::memory_file_system other_fs;
    auto copy = require_value(relay::store::open(other_fs, "/r", test_options()));
    require_value(relay::import_ndjson(copy, exported));
  }
  write_log(fs, log_of({sound[0], sound[1], status_head + R"("at":"2026-03-01T00:00:00Z","note":5)" + tail}));
  {
    auto opened = require_value(relay::store::open(fs, "/r", test_options()));
    const relay::stored_package* p = require_value(opened.find_package("pkg_0"));
    REQUIRE(p->changes.size() == 1);
    CHECK_FALSE(p->changes[0].note.has_value());
  }
  CHECK(fact_id.starts_with("fact_"));
}

TEST_CASE("a record that has no canonical form is the caller's invalid input, and nothing is written") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto nan = assertion("draft", "2026-04-01T00:00:00Z");
  nan.extensions.emplace_back("x-score", std::numeric_limits<double>::quiet_NaN());
  const agentctx::error e = require_error(store.assert_fact(nan));
  CHECK(e.code == errc::invalid_argument);
  CHECK(e.message.starts_with("cannot be stored as a log record: "));
  CHECK(e.message.find("NaN") != std::string::npos);  // the cause is named
  CHECK(store.record_count() == 0);
  require_value(store.assert_fact(assertion("draft", "2026-04-01T00:00:00Z")));  // the writer is not poisoned
}

TEST_CASE("a version 1 relay.log is read as it is, and becomes version 2 before the first record this build appends") {
  // Version 2 adds records a reader of version 1 refuses as damage (a flag
  // again, times before 1970): its header tells such a reader it is a
  // version it does not read instead.
  agentctx::io::memory_file_system fs;
  deposit_two(fs);
  std::string v1 = log_bytes(fs);
  REQUIRE(agentctx::load_u32(v1.data() + 8) == 2);
  agentctx::store_u32(v1.data() + 8, 1);
  write_log(fs, v1);
  CHECK(relay::check_log_header(std::as_bytes(std::span(v1.data(), relay::log_header_size))) == relay::header_check::ok);
  for (std::size_t n : {std::size_t{9}, std::size_t{12}, std::size_t{31}}) {
    CHECK(relay::check_log_header(std::as_bytes(std::span(v1.data(), n))) == relay::header_check::incomplete);
  }
  {
    auto reader = open_store(fs, true);
    CHECK(reader.record_count() == 2);
    CHECK(reader.format_version() == 1);
    auto writer = open_store(fs);       // that writes nothing
    CHECK(writer.find_package("pkg_2", "proj_demo").has_value());
    CHECK(writer.format_version() == 1);
  }
  CHECK(log_bytes(fs) == v1);

  // A crash at the header's write or at its sync: the deposit was not
  // acknowledged, and the log holds what it held, of version 1 or 2.
  const auto image = fs.snapshot();
  agentctx::io::fault_injecting_file_system faulty(fs);
  for (std::uint64_t at : {1, 2}) {
    CAPTURE(at);
    fs.restore(image);
    faulty.reset();
    auto writer = require_value(relay::store::open(faulty, "/r", test_options()));
    const std::uint64_t opened = faulty.operation_count();
    faulty.set_crash_after_fault(true);
    faulty.fail_operation(opened + at);
    CHECK_FALSE(writer.deposit(package("pkg_3")).has_value());
    const auto history = faulty.operation_history();
    REQUIRE(history.size() == opened + at);
    CHECK(history.back().kind == (at == 1 ? agentctx::io::operation_kind::write : agentctx::io::operation_kind::sync));
    for (auto mode : {agentctx::io::crash_mode::drop_unsynced(), agentctx::io::crash_mode::keep_prefix(1)}) {
      const auto crashed = fs.snapshot();
      fs.simulate_crash(mode);
      const std::string after = log_bytes(fs);
      CHECK(after.substr(relay::log_header_size) == v1.substr(relay::log_header_size));
      const std::uint32_t version = agentctx::load_u32(after.data() + 8);
      CHECK((version == 1 || (version == 2 && at == 2)));
      auto reopened = open_store(fs);
      CHECK(reopened.record_count() == 2);
      CHECK_FALSE(reopened.find_package("pkg_3", "proj_demo").has_value());
      fs.restore(crashed);
    }
  }
  // A failed write or sync of the header, the process living on: the writer
  // refuses further writes, as after any failed write, until reopened.
  for (std::uint64_t at : {1, 2}) {
    CAPTURE(at);
    fs.restore(image);
    faulty.reset();
    auto writer = require_value(relay::store::open(faulty, "/r", test_options()));
    faulty.fail_operation(faulty.operation_count() + at);
    CHECK_FALSE(writer.deposit(package("pkg_3")).has_value());
    const agentctx::error e = require_error(writer.deposit(package("pkg_3")));
    CHECK(e.code == errc::io_error);
    CHECK(e.message.find("an earlier write to the log failed") != std::string::npos);
  }
  fs.restore(image);

  // A reader open across the upgrade reads on (it reads both versions).
  auto before = open_store(fs, true);
  REQUIRE(before.record_count() == 2);
  {
    auto writer = open_store(fs);
    require_value(writer.deposit(package("pkg_3")));
    CHECK(writer.format_version() == 2);
    require_value(writer.deposit(package("pkg_4")));
  }
  CHECK(before.format_version() == 1);
  require_ok(before.refresh());
  CHECK(before.record_count() == 4);
  CHECK(before.format_version() == 2);
  const std::string v2 = log_bytes(fs);
  CHECK(agentctx::load_u32(v2.data() + 8) == 2);
  CHECK(v2.substr(0, 8) == v1.substr(0, 8));
  CHECK(v2.substr(12, v1.size() - 12) == v1.substr(12));
  auto reader = open_store(fs, true);
  CHECK(reader.record_count() == 4);
  CHECK(reader.find_package("pkg_4", "proj_demo").has_value());

  // A version this build does not read is named, with the ones it does: at
  // open, and by a reader open since, whose refresh reads no record of it
  // (a later writer writes its version in place before its first record).
  std::string v3 = v2;
  agentctx::store_u32(v3.data() + 8, 3);
  write_log(fs, v3);
  const agentctx::error e = require_error(relay::store::open(fs, "/r", test_options()));
  CHECK(e.code == errc::unsupported_version);
  CHECK(e.message == "relay.log format version 3 is not supported (this build reads 1 to 2)");
  CHECK(log_bytes(fs) == v3);
  {
    auto file = require_value(fs.open("/r/relay.log", agentctx::io::read_write));
    const std::string more = relay::encode_log_header();  // stands for a record of version 3
    require_ok(file->append(std::as_bytes(std::span(more.data(), more.size()))));
  }
  const agentctx::error refused = require_error(reader.refresh());
  CHECK(refused.code == errc::unsupported_version);
  CHECK(refused.message == e.message);
  CHECK(reader.record_count() == 4);
  CHECK(reader.find_package("pkg_4", "proj_demo").has_value());
}

TEST_CASE("a short relay.log that is not the start of a Relay header is refused, never overwritten") {
  for (const std::string& foreign : {std::string("hello\n"), std::string("RELAYLOG\x03\0\0\0", 12), std::string("\0\0x", 3)}) {
    CAPTURE(foreign);
    agentctx::io::memory_file_system fs;
    require_ok(fs.create_dir("/r"));
    write_log(fs, foreign);
    auto reader_options = test_options();
    reader_options.read_only = true;
    auto reader = relay::store::open(fs, "/r", reader_options);
    REQUIRE_FALSE(reader.has_value());
    CHECK((reader.error().code == errc::bad_magic || reader.error().code == errc::unsupported_version));
    auto writer = relay::store::open(fs, "/r", test_options());
    REQUIRE_FALSE(writer.has_value());
    CHECK(writer.error().code == reader.error().code);
    CHECK(relay::store::repair(fs, "/r").error().code == reader.error().code);
    CHECK(log_bytes(fs) == foreign);
  }
  CHECK(relay::check_log_header(std::as_bytes(std::span("hello\n", 6))) == relay::header_check::bad_magic);
  // A prefix of the header (a creation a crash cut short, empty included) is
  // a log being created: a reader is told so, a writer finishes it. So are
  // zeros (a file system that made the length durable before the bytes).
  const std::string header = relay::encode_log_header();
  std::vector<std::string> being_created;
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{12}, std::size_t{31}}) {
    being_created.push_back(header.substr(0, n));
  }
  being_created.emplace_back(10, '\0');
  being_created.emplace_back(31, '\0');
  for (const std::string& start : being_created) {
    CAPTURE(start.size());
    agentctx::io::memory_file_system fs;
    require_ok(fs.create_dir("/r"));
    write_log(fs, start);
    auto reader_options = test_options();
    reader_options.read_only = true;
    CHECK(relay::store::open(fs, "/r", reader_options).error().code == errc::not_found);
    auto writer = require_value(relay::store::open(fs, "/r", test_options()));
    CHECK(writer.record_count() == 0);
    CHECK(log_bytes(fs) == header);
  }
}

TEST_CASE("a relay.log of a whole header's worth of zeros is a creation a crash interrupted") {
  // The creation appends the 32-byte header: a file system that made the
  // length durable and not the bytes leaves 32 zeros. Repair takes it too.
  const std::string header = relay::encode_log_header();
  agentctx::io::memory_file_system fs;
  require_ok(fs.create_dir("/r"));
  write_log(fs, std::string(relay::log_header_size, '\0'));
  auto reader_options = test_options();
  reader_options.read_only = true;
  CHECK(relay::store::open(fs, "/r", reader_options).error().code == errc::not_found);
  auto report = require_value(relay::store::repair(fs, "/r", repair_at(1776542400000)));
  REQUIRE(report.lost.size() == 1);
  CHECK(report.lost[0].what == "incomplete header");
  CHECK(log_bytes(fs) == header);
  write_log(fs, std::string(relay::log_header_size, '\0'));
  CHECK(open_store(fs).record_count() == 0);
  CHECK(log_bytes(fs) == header);
  // 32 zeros and more is not a header being written.
  write_log(fs, std::string(relay::log_header_size + 1, '\0'));
  CHECK(relay::store::open(fs, "/r", test_options()).error().code == errc::bad_magic);
}

TEST_CASE("a record that fails its checks is torn only where one torn append can have left it") {
  // {"a":"xx...x"} of n bytes.
  const auto payload_of = [](std::size_t n) { return "{\"a\":\"" + std::string(n - 8, 'x') + "\"}"; };
  const auto scan = [](const std::string& log) {
    return relay::scan_records(std::as_bytes(std::span(log.data(), log.size())), relay::log_header_size);
  };
  const std::string first_at_510 = payload_of(510 - relay::log_header_size - relay::record_header_size);
  const std::string first_at_440 = payload_of(400);
  const std::string second = payload_of(100), third = payload_of(60);
  for (const std::string& first : {first_at_510, first_at_440}) {
    const std::size_t at = relay::log_header_size + relay::record_header_size + first.size();
    const bool header_spans_sectors = at / 512 != (at + relay::record_header_size - 1) / 512;
    CAPTURE(at);
    const std::string sound = log_of({first, second});
    REQUIRE(scan(sound).tail == relay::log_tail::clean);
    // The second record's length 10 short of the bytes there: a crash can
    // have kept half of a header that spans two sectors, nothing else can
    // leave bytes after the end a header gives.
    std::string short_length = sound;
    agentctx::store_u32(short_length.data() + at, static_cast<std::uint32_t>(second.size() - 10));
    const relay::log_scan s = scan(short_length);
    CHECK(s.records.size() == 1);
    CHECK(s.valid_end == at);
    CHECK(s.tail == (header_spans_sectors ? relay::log_tail::torn : relay::log_tail::damaged));
    // Its payload damaged and the file ending with it: torn either way.
    std::string last_damaged = sound;
    last_damaged[at + relay::record_header_size + 20] ^= 0x01;
    CHECK(scan(last_damaged).tail == relay::log_tail::torn);
    // A good record after it: damage either way, found where it is.
    const std::string three = log_of({first, second, third});
    std::string middle_damaged = three;
    middle_damaged[at + relay::record_header_size + 20] ^= 0x01;
    const relay::log_scan m = scan(middle_damaged);
    CHECK(m.tail == relay::log_tail::damaged);
    // Searched for only where the header may be torn.
    CHECK(m.next_good == (header_spans_sectors ? std::optional<std::uint64_t>(at + relay::record_header_size + second.size())
                                               : std::nullopt));
  }
}

TEST_CASE("damage that runs to the end of the log is refused when bytes follow a record's end, not cut") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_1")));
    require_value(store.deposit(package("pkg_2")));
    require_value(store.deposit(package("pkg_3")));
  }
  const std::string whole = log_bytes(fs);
  const std::vector<std::uint64_t> offsets = record_offsets(whole);
  REQUIRE(offsets.size() == 3);
  // Zeros from inside pkg_2's record into the header of pkg_3's: no good
  // record follows, but pkg_2's header, whole, says its record ends before
  // the bytes of another. Two acknowledged deposits would be lost by a cut.
  std::string damaged = whole;
  std::fill(damaged.begin() + static_cast<std::ptrdiff_t>(offsets[1] + 30),
            damaged.begin() + static_cast<std::ptrdiff_t>(offsets[2] + 4), '\0');
  write_log(fs, damaged);
  check_refused_as_damage(fs, offsets[1], "checksum");
  CHECK(log_bytes(fs) == damaged);
}

TEST_CASE("a search for a good record after damage is bounded, however the bytes are crafted") {
  // Every fourth offset of this pattern starts a candidate record that
  // claims 8.2 MB, from '{"' to '}': checksumming them all would take
  // terabytes. The search gives up after a multiple of the file's size.
  std::string log = log_of({"{\"a\":1}"});
  const std::size_t good_end = log.size();
  log.append(8, '\xff');  // a record length out of range: what follows is searched
  for (std::size_t i = 0; i < (12u << 20) / 4; ++i) log.append("{\"}\0", 4);
  const auto bytes = std::as_bytes(std::span(log.data(), log.size()));
  const relay::log_scan scan = relay::scan_records(bytes, relay::log_header_size);
  CHECK(scan.records.size() == 1);
  CHECK(scan.tail == relay::log_tail::damaged);  // not known to be a torn tail: refused, not cut
  CHECK(scan.problem.find("gave up") != std::string::npos);
  const relay::salvage_scan salvage = relay::salvage_records(bytes, relay::log_header_size);
  CHECK(salvage.records.size() == 1);
  REQUIRE(salvage.skipped.size() == 1);
  CHECK(salvage.skipped[0].offset == good_end);
  CHECK(salvage.skipped[0].length == log.size() - good_end);
  CHECK(salvage.skipped[0].problem.find("not searched") != std::string::npos);
}

TEST_CASE("a reader's refresh stops at a record that does not apply, and reads a replaced log anew") {
  agentctx::io::memory_file_system fs;
  {
    auto writer = open_store(fs);
    require_value(writer.deposit(package("pkg_1")));
  }
  auto reader = open_store(fs, true);
  {
    auto writer = open_store(fs);
    require_value(writer.deposit(package("pkg_2")));
  }
  std::vector<std::string> payloads = record_payloads(log_bytes(fs));
  REQUIRE(payloads.size() == 2);
  const std::size_t sound_size = log_bytes(fs).size();
  payloads.push_back(payloads[1]);  // pkg_2 again: does not apply
  write_log(fs, log_of(payloads));
  for (int again = 0; again < 2; ++again) {
    auto refused = reader.refresh();
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find(R"(package "pkg_2" deposited twice)") != std::string::npos);
    CHECK(refused.error().offset == sound_size);
    CHECK(reader.log_size() == sound_size);  // it read pkg_2, and resumes after it
    CHECK(require_value(reader.latest("proj_demo")).size() == 2);
  }
  // Repair drops the record that does not apply; pkg_1's record is
  // damaged as well, so the records the reader read move.
  std::string damaged = log_bytes(fs);
  damaged[relay::log_header_size + relay::record_header_size + 30] ^= 0x01;
  write_log(fs, damaged);
  require_value(relay::store::repair(fs, "/r", repair_at(1776542400000)));
  {
    auto writer = open_store(fs);
    require_value(writer.deposit(package("pkg_3")));
  }
  require_ok(reader.refresh());
  auto fresh = open_store(fs, true);
  const auto ids = [](relay::store& s) {
    std::vector<std::string> out;
    for (const auto* p : require_value(s.latest("proj_demo", 10))) out.push_back(p->package.package_id);
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(ids(fresh) == std::vector<std::string>{"pkg_2", "pkg_3"});
  CHECK(ids(reader) == ids(fresh));
  CHECK(reader.log_size() == fresh.log_size());
}

TEST_CASE("readers copy the log instead of mapping it: a writer may cut a torn tail under them") {
  // The in-memory file system, counting map() calls.
  struct counting_fs final : agentctx::io::file_system {
    agentctx::io::memory_file_system inner;
    int maps = 0;
    using path = const std::string&;
    agentctx::result<std::unique_ptr<agentctx::io::file>> open(path p, agentctx::io::open_options o) override {
      return inner.open(p, o);
    }
    agentctx::result<agentctx::io::mapped_bytes> map(path p) override {
      ++maps;
      return inner.map(p);
    }
    agentctx::result<void> rename(path from, path to) override { return inner.rename(from, to); }
    agentctx::result<void> remove(path p) override { return inner.remove(p); }
    agentctx::result<void> remove_dir(path p) override { return inner.remove_dir(p); }
    agentctx::result<void> sync_dir(path p) override { return inner.sync_dir(p); }
    agentctx::result<void> create_dir(path p) override { return inner.create_dir(p); }
    agentctx::result<bool> exists(path p) override { return inner.exists(p); }
    agentctx::result<std::uint64_t> file_size(path p) override { return inner.file_size(p); }
    agentctx::result<std::vector<std::string>> list_dir(path p) override { return inner.list_dir(p); }
    agentctx::result<std::unique_ptr<agentctx::io::file_lock>> lock(path p, agentctx::io::lock_mode m, bool wait) override {
      return inner.lock(p, m, wait);
    }
  } fs;
  const auto open_store = [&](bool read_only) {
    auto o = test_options();
    o.read_only = read_only;
    return require_value(relay::store::open(fs, "/r", o));
  };
  {
    auto writer = open_store(false);
    require_value(writer.deposit(package("pkg_1")));
  }
  const int by_writer = fs.maps;
  CHECK(by_writer > 0);
  auto reader = open_store(true);
  {
    auto writer = open_store(false);
    require_value(writer.deposit(package("pkg_2")));
  }
  require_ok(reader.refresh());
  CHECK(require_value(reader.latest("proj_demo")).size() == 2);
  CHECK(require_value(reader.verify()).packages == 2);
  CHECK(fs.maps == 2 * by_writer);  // the two writers' opens, none of the reader's
}

TEST_CASE("an invalidate record must name its project and facts of it") {
  agentctx::io::memory_file_system fs;
  std::string fact_id;
  {
    auto store = open_store(fs);
    fact_id = require_value(store.assert_fact(assertion("green"))).asserted->fact_id;
    require_value(store.deposit(package("pkg_o", "proj_other")));
  }
  const std::vector<std::string> sound = record_payloads(log_bytes(fs));
  for (const auto& named :
       std::vector<std::pair<std::string, std::string>>{{"proj_nope", R"(invalidate record for unknown project "proj_nope")"},
                                                        {"proj_other", "invalidate record names a fact of another project"}}) {
    const std::string& project = named.first;
    const std::string& message = named.second;
    CAPTURE(project);
    std::vector<std::string> payloads = sound;
    payloads.push_back(R"({"fact_ids":[")" + fact_id + R"("],"project_id":")" + project +
                       R"(","type":"invalidate","valid_to":"2030-01-01T00:00:00.000Z"})");
    write_log(fs, log_of(payloads));
    auto refused = relay::store::open(fs, "/r", test_options());
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == errc::corrupt);
    CHECK(refused.error().message.find(message) != std::string::npos);
  }
  std::vector<std::string> payloads = sound;
  payloads.push_back(R"({"fact_ids":[")" + fact_id +
                     R"("],"project_id":"proj_demo","type":"invalidate","valid_to":"2030-01-01T00:00:00.000Z"})");
  write_log(fs, log_of(payloads));
  CHECK(open_store(fs).facts("proj_demo").empty());
}

TEST_CASE("a session whose start record repair lost lists the packages deposited in it") {
  agentctx::io::memory_file_system fs;
  std::string id;
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_0")));
    id = require_value(store.start_session("proj_demo", "claude", relay::actor_type::agent))->session_id;
    // Its actor's package; another actor's naming it; its actor's after it ended.
    for (const auto& [pkg, by] : std::vector<std::pair<std::string, std::string>>{{"pkg_a", "claude"}, {"pkg_b", "bob"}}) {
      auto p = package(pkg);
      p.set("created_by", json::value::object_type{{"id", by}, {"type", "agent"}, {"session_id", id}});
      require_value(store.deposit(p));
    }
    require_value(store.end_session(id));
    auto late = package("pkg_c");
    late.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
    require_value(store.deposit(late));
    CHECK(*store.session_wire(*store.find_session(id)).find("packages_deposited") ==
          json::value(json::value::array_type{"pkg_a"}));
  }
  const std::string whole = log_bytes(fs);
  const std::vector<std::uint64_t> offsets = record_offsets(whole);
  REQUIRE(offsets.size() == 6);  // pkg_0, the session's start, pkg_a, pkg_b, its end, pkg_c
  std::string damaged = whole;
  damaged[offsets[1] + relay::record_header_size + 10] ^= 0x01;
  write_log(fs, damaged);
  auto report = require_value(relay::store::repair(fs, "/r", repair_at(1776542400000)));
  REQUIRE(report.lost.size() == 1);
  CHECK(report.lost[0].offset == offsets[1]);
  auto reader = open_store(fs, true);
  const relay::session* session = reader.find_session(id);
  REQUIRE(session != nullptr);
  CHECK(*reader.session_wire(*session).find("packages_deposited") ==
        json::value(json::value::array_type{"pkg_a"}));
}

TEST_CASE("an id or value that is not UTF-8 is the caller's invalid input (400), and nothing is written") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  const std::string before = log_bytes(fs);
  relay::fact_assertion tagged = assertion("v");
  tagged.tags = {"ok", "t\xc0"};
  // A package tree a program built: a value, and a member's name.
  json::value bad_title = package("pkg_utf8");
  bad_title.set("title", "t\xff");
  json::value bad_name = package("pkg_utf8");
  bad_name.set("x-ext", json::value::object_type{{"k\xff", 1}});
  const std::pair<agentctx::error, std::string> cases[] = {
      {store.create_project("p\xff").error(), "project_id is not valid UTF-8"},
      {store.assert_fact(assertion("v\xfe")).error(), "value is not valid UTF-8"},
      {store.assert_fact(tagged).error(), "tags[1] is not valid UTF-8"},
      {store.deposit(bad_title).error(), "title is not valid UTF-8"},
      {store.deposit(bad_name).error(), "a member's name in x-ext is not valid UTF-8"},
      // Ids and values looked up rather than written are refused the same way.
      {store.invalidate_fact("proj_demo", "s\xff", "p").error(), "subject is not valid UTF-8"},
      {store.invalidate_fact("proj_demo", "s", "p", std::string("v\xff")).error(), "value is not valid UTF-8"},
      {store.invalidate_fact("p\xff", "s", "p").error(), "project_id is not valid UTF-8"},
      {store.flag_for_review("pkg\xff", relay::review_type::human).error(), "package_id is not valid UTF-8"},
      {store.pull_specific("pkg_1", "p\xff").error(), "project_id is not valid UTF-8"},
      {store.end_session("sess\xff").error(), "session_id is not valid UTF-8"},
      {store.set_archived("p\xff", true).error(), "project_id is not valid UTF-8"},
  };
  for (const auto& [refused, message] : cases) {
    CHECK(refused.code == errc::invalid_argument);
    CHECK(refused.message == message);  // the message is the capture
    CHECK(relay::protocol_error_of(refused).code == "invalid_schema");
  }
  CHECK(log_bytes(fs) == before);
}

TEST_CASE("invalidate_fact on an unknown project is project_not_found") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto refused = store.invalidate_fact("proj_nope", "dashboard", "status");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::not_found);
  CHECK(relay::protocol_error_of(refused.error()).code == "project_not_found");
  CHECK(store.find_project("proj_nope") == nullptr);
  // A known project without the fact: nothing to invalidate.
  require_value(store.create_project("proj_demo"));
  CHECK(require_value(store.invalidate_fact("proj_demo", "dashboard", "status")) == 0);
}

TEST_CASE("assert_fact: source_package_id must be a package of the project; asserted_by copies its created_by whole") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto p = package("pkg_1");
  p.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", nullptr},
                                               {"x-cb", json::value::object_type{{"model", "m1"}}}});
  require_value(store.deposit(p));
  require_value(store.deposit(package("pkg_other", "proj_other")));

  auto a = assertion("live");
  a.source_package_id = "pkg_missing";
  auto missing = store.assert_fact(a);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
  CHECK(relay::protocol_error_of(missing.error()).code == "package_not_found");
  a.source_package_id = "pkg_other";  // another project's
  CHECK(relay::protocol_error_of(store.assert_fact(a).error()).code == "package_not_found");
  CHECK(store.all_facts("proj_demo").empty());

  a.source_package_id = "pkg_1";
  auto asserted = require_value(store.assert_fact(a));
  const json::value* by = asserted.asserted->wire.find("asserted_by");
  REQUIRE(by != nullptr);
  CHECK(*by == *store.find_package("pkg_1").value()->package.wire.find("created_by"));
  CHECK(by->find("x-cb")->find("model")->as_string() == "m1");
  CHECK(by->find("session_id")->is_null());
  const std::string fact_id = asserted.asserted->fact_id;
  // An explicit asserted_by wins.
  auto b = assertion("down");
  b.source_package_id = "pkg_1";
  b.asserted_by = relay::actor{"jordan", relay::actor_type::human, std::nullopt};
  auto explicit_by = require_value(store.assert_fact(b));
  CHECK(explicit_by.asserted->asserted_by->id == "jordan");
  // Reopened, the fact is the same.
  auto reader = open_store(fs, true);
  CHECK(reader.find_fact(fact_id)->wire.find("asserted_by")->find("x-cb") != nullptr);
}

TEST_CASE("assert_fact: the current value again is a no-op unless it gives other details, which supersede") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto first = assertion("97.0", "2026-04-10T00:00:00Z");
  first.confidence = 0.5;
  first.tags = {"benchmark"};
  const std::string first_id = require_value(store.assert_fact(first)).asserted->fact_id;
  // Only the value given, or the same details: nothing changes.
  CHECK_FALSE(require_value(store.assert_fact(assertion("97.0"))).changed);
  auto same = assertion("97.0");
  same.confidence = 0.5;
  same.tags = {"benchmark"};
  CHECK_FALSE(require_value(store.assert_fact(same)).changed);
  CHECK(store.history("proj_demo", "dashboard", "status").size() == 1);
  // Another confidence: a new fact, which has what it was given.
  auto surer = assertion("97.0", "2026-04-11T00:00:00Z");
  surer.confidence = 0.9;
  auto superseded = require_value(store.assert_fact(surer));
  CHECK(superseded.changed);
  CHECK(superseded.superseded == std::optional<std::string>(first_id));
  CHECK(superseded.asserted->confidence == 0.9);
  CHECK(superseded.asserted->tags.empty());
  // Other tags, and another attribution, supersede too.
  auto tagged = assertion("97.0", "2026-04-12T00:00:00Z");
  tagged.tags = {"rerun"};
  CHECK(require_value(store.assert_fact(tagged)).changed);
  auto by_bob = assertion("97.0", "2026-04-13T00:00:00Z");
  by_bob.asserted_by = relay::actor{"bob", relay::actor_type::human, std::nullopt};
  CHECK(require_value(store.assert_fact(by_bob)).changed);
  CHECK_FALSE(require_value(store.assert_fact(by_bob)).changed);
  // The same id of another type is another actor.
  by_bob.asserted_by->type = relay::actor_type::agent;
  CHECK(require_value(store.assert_fact(by_bob)).changed);
  CHECK(store.history("proj_demo", "dashboard", "status").size() == 5);
  CHECK(store.facts("proj_demo").size() == 1);
}

TEST_CASE("assert_fact keeps the x-* members it is given, on the fact and on asserted_by, through reopen and export") {
  agentctx::io::memory_file_system fs;
  std::string fact_id;
  {
    auto store = open_store(fs);
    auto first = assertion("97.0", "2026-04-10T00:00:00Z");
    first.extensions = {{"x-trust", 0.9}, {"x-origin", json::value::object_type{{"tool", "bench"}, {"run", 3}}}};
    first.asserted_by = relay::actor{"bob", relay::actor_type::human, std::nullopt};
    first.asserted_by_extensions = {{"x-team", "evals"}};
    const auto asserted = require_value(store.assert_fact(first));
    fact_id = asserted.asserted->fact_id;
    CHECK(asserted.asserted->wire.find("x-trust")->as_number() == 0.9);
    CHECK(asserted.asserted->wire.find("asserted_by")->find("x-team")->as_string() == "evals");
    // The same value again: a no-op when the extensions given are the
    // current fact's (or none are given), a new fact when one differs.
    auto again = assertion("97.0", "2026-04-11T00:00:00Z");
    CHECK_FALSE(require_value(store.assert_fact(again)).changed);
    again.extensions = {{"x-trust", 0.9}};
    CHECK_FALSE(require_value(store.assert_fact(again)).changed);
    again.extensions = {{"x-trust", 0.5}};
    const auto changed = require_value(store.assert_fact(again));
    CHECK(changed.changed);
    CHECK(changed.asserted->wire.find("x-origin") == nullptr);  // the new fact has what it was given

    // Refused: a name that is not an extension's, one given twice, and
    // asserted_by's extensions without asserted_by.
    const auto check_error = [&](const agentctx::result<relay::assert_outcome>& r, agentctx::errc code,
                                 std::string_view part) {
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().code == code);
      CHECK_MESSAGE(r.error().message.find(part) != std::string::npos, r.error().message);
    };
    auto bad = assertion("98.0", "2026-04-12T00:00:00Z");
    bad.extensions = {{"trust", 1}};
    check_error(store.assert_fact(bad), agentctx::errc::invalid_argument,
                "\"trust\" is not an extension member: their names start with x-");
    bad.extensions = {{"x-a", 1}, {"x-a", 2}};
    check_error(store.assert_fact(bad), agentctx::errc::invalid_argument, "\"x-a\" is given twice");
    bad.extensions = {};
    bad.asserted_by_extensions = {{"x-team", "evals"}};
    check_error(store.assert_fact(bad), agentctx::errc::invalid_argument,
                "asserted_by's extension members need asserted_by");
    bad.asserted_by = relay::actor{"bob", relay::actor_type::human, std::nullopt};
    bad.asserted_by_extensions = {{"team", "evals"}};
    check_error(store.assert_fact(bad), agentctx::errc::invalid_argument, "asserted_by.\"team\" is not an extension");
    CHECK(store.history("proj_demo", "dashboard", "status").size() == 2);
  }
  auto reader = open_store(fs, true);
  const relay::fact* kept = reader.find_fact(fact_id);
  REQUIRE(kept != nullptr);
  CHECK(kept->wire.find("x-origin")->find("run")->as_number() == 3);
  CHECK(kept->wire.find("asserted_by")->find("x-team")->as_string() == "evals");
  std::string exported;
  require_ok(relay::export_ndjson(reader, "proj_demo", exported));
  agentctx::io::memory_file_system other_fs;
  auto other = open_store(other_fs);
  require_value(relay::import_ndjson(other, exported));
  REQUIRE(other.find_fact(fact_id) != nullptr);
  CHECK(other.find_fact(fact_id)->wire == kept->wire);
}

TEST_CASE("a quarantined package is neither a fact's source nor returned by a deposit of its id") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    require_value(store.deposit(package("pkg_1", "proj_demo", "Shipped archive")));
  }
  std::string bytes = log_bytes(fs);
  bytes.replace(bytes.find("Shipped archive"), 7, "Shapped");
  const std::uint32_t length = agentctx::load_u32(bytes.data() + relay::log_header_size);
  agentctx::store_u32(bytes.data() + relay::log_header_size + 4,
                      agentctx::crc32(std::string_view(bytes).substr(relay::log_header_size + 8, length)));
  write_log(fs, bytes);
  auto store = open_store(fs);
  REQUIRE(require_value(store.find_package("pkg_1"))->quarantined);
  const std::string before = log_bytes(fs);
  // Its created_by, which the fact would copy, is not to be trusted.
  auto a = assertion("live");
  a.source_package_id = "pkg_1";
  auto refused = store.assert_fact(a);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::corrupt);
  CHECK(refused.error().message.find("is quarantined") != std::string::npos);
  // The genuine package deposited again is not answered with the tampered
  // one, nor is other content compared with it.
  for (const char* title : {"Shipped archive", "Something else"}) {
    CAPTURE(title);
    auto again = store.deposit(package("pkg_1", "proj_demo", title));
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().code == errc::corrupt);
    CHECK(relay::protocol_error_of(again.error()).code == "internal_error");
    CHECK(again.error().message.find("quarantined: stored hash") != std::string::npos);
  }
  CHECK(log_bytes(fs) == before);
}

TEST_CASE("a failed append is cut again: the next open finds no torn tail, and the store refuses writes until reopened") {
  agentctx::io::memory_file_system memory;
  {
    auto store = open_store(memory);
    require_value(store.deposit(package("pkg_1")));
  }
  const std::string before = log_bytes(memory);
  for (const bool sync_fails : {false, true}) {
    CAPTURE(sync_fails);
    write_log(memory, before);
    agentctx::io::fault_injecting_file_system faulty(memory);
    auto store = require_value(relay::store::open(faulty, "/r", test_options()));
    faulty.reset();
    if (sync_fails) {
      faulty.fail_sync(1);
    } else {
      // A full disk: the first 20 bytes of the record reach the log.
      faulty.tear_write(1, 20);
    }
    auto failed = store.deposit(package("pkg_2"));
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == errc::io_error);
    CHECK(log_bytes(memory) == before);
    auto later = store.deposit(package("pkg_3"));
    REQUIRE_FALSE(later.has_value());
    CHECK(later.error().message.find("reopen the store") != std::string::npos);
  }
  auto reopened = open_store(memory);
  CHECK_FALSE(reopened.tail_cut().has_value());
  CHECK(reopened.find_package("pkg_2").error().code == errc::not_found);
  CHECK(require_value(reopened.deposit(package("pkg_2"))).created);
}

TEST_CASE("a session lists only its actor's packages of its project deposited while it was open") {
  agentctx::io::memory_file_system fs;
  std::string id;
  {
    auto store = open_store(fs);
    id = require_value(store.start_session("proj_demo", "claude", relay::actor_type::agent))->session_id;
    const auto in_session = [&](std::string package_id, std::string project, std::string actor = "claude",
                                std::string type = "agent") {
      auto p = package(std::move(package_id), std::move(project));
      p.set("created_by", json::value::object_type{{"id", actor}, {"type", type}, {"session_id", id}});
      return p;
    };
    require_value(store.deposit(in_session("pkg_b", "proj_demo")));
    require_value(store.deposit(in_session("pkg_elsewhere", "proj_other")));
    require_value(store.deposit(in_session("pkg_other_actor", "proj_demo", "someone-else")));
    // The same id of another type is another actor (section 5.4).
    require_value(store.deposit(in_session("pkg_human_claude", "proj_demo", "claude", "human")));
    require_value(store.deposit(in_session("pkg_a", "proj_demo")));
    require_value(store.deposit(package("pkg_unrelated")));
    require_value(store.end_session(id));
    require_value(store.deposit(in_session("pkg_late", "proj_demo")));
    const json::value wire = store.session_wire(*store.find_session(id));
    CHECK(*wire.find("packages_deposited") == json::value(json::value::array_type{"pkg_b", "pkg_a"}));
  }
  auto reader = open_store(fs, true);
  CHECK(*reader.session_wire(*reader.find_session(id)).find("packages_deposited") ==
        json::value(json::value::array_type{"pkg_b", "pkg_a"}));
}

TEST_CASE("a session an earlier version imported (ended, no list, before its packages) keeps its packages") {
  // An earlier version's import wrote the session record, already ended and
  // without packages_deposited, before the session's packages: its
  // packages are the session's, as that version listed them.
  agentctx::io::memory_file_system fs;
  const std::string id = "sess_0123456789abcdef0123456789abcdef";
  {
    auto store = open_store(fs);
    require_ok(store.append_record(json::value::object_type{
        {"type", "project"},
        {"project", json::value::object_type{{"project_id", "proj_demo"}, {"created_at", "2026-04-01T00:00:00Z"}}}}));
    require_ok(store.append_record(json::value::object_type{
        {"type", "session"},
        {"session", json::value::object_type{{"session_id", id},
                                             {"project_id", "proj_demo"},
                                             {"actor_id", "claude"},
                                             {"actor_type", "agent"},
                                             {"started_at", "2026-04-01T00:00:00Z"},
                                             {"ended_at", "2026-04-02T00:00:00Z"}}}}));
    auto p = package("pkg_a");
    p.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
    require_value(store.deposit(p));
  }
  auto reader = open_store(fs, true);
  CHECK(*reader.session_wire(*reader.find_session(id)).find("packages_deposited") ==
        json::value(json::value::array_type{"pkg_a"}));
}

TEST_CASE("awaiting_review needs a reviewer: review_type none is refused, review can set it") {
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto draft = package("pkg_1");
  draft.set("status", "draft");
  require_value(store.deposit(draft));
  auto refused = store.review("pkg_1", relay::package_status::awaiting_review);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::invalid_argument);
  CHECK(relay::protocol_error_of(refused.error()).code == "invalid_schema");
  CHECK(store.flag_for_review("pkg_1", relay::review_type::none).error().code == errc::invalid_argument);
  CHECK(store.review("pkg_1", relay::package_status::awaiting_review, {}, {}, relay::review_type::none).error().code ==
        errc::invalid_argument);
  // review_type goes only with awaiting_review.
  CHECK(store.review("pkg_1", relay::package_status::complete, {}, {}, relay::review_type::human).error().code ==
        errc::invalid_argument);
  CHECK(require_value(store.find_package("pkg_1"))->changes.empty());

  auto flagged = require_value(store.review("pkg_1", relay::package_status::awaiting_review, "please", {},
                                            relay::review_type::agent));
  CHECK(flagged->package.status == relay::package_status::awaiting_review);
  CHECK(flagged->package.review == relay::review_type::agent);
  // Resubmission after a revision keeps the reviewer.
  require_value(store.review("pkg_1", relay::package_status::revision_requested));
  auto resubmitted = require_value(store.review("pkg_1", relay::package_status::awaiting_review));
  CHECK(resubmitted->package.review == relay::review_type::agent);
}

TEST_CASE("open reads the log on several threads into the state one thread reads, errors included") {
  agentctx::io::memory_file_system fs;
  {
    auto store = open_store(fs);
    for (int i = 0; i < 600; ++i) {
      const std::string id = "pkg_" + std::to_string(i);
      const std::string project = "proj_" + std::to_string(i % 3);
      json::value p = package(id, project, "Package " + std::to_string(i));
      if (i % 7 == 0) p.set("status", "draft");
      require_value(store.deposit(p));
      if (i % 7 == 0) {
        require_value(store.flag_for_review(id, relay::review_type::human, std::nullopt, project));
        if (i % 14 == 0) require_value(store.review(id, relay::package_status::complete, "looks right", project));
      }
      if (i % 40 == 0) {
        relay::fact_assertion a = assertion("state " + std::to_string(i));
        a.project_id = project;
        require_value(store.assert_fact(a));
      }
    }
  }
  // One package's bytes no longer match its hash: quarantined, on any count
  // of threads.
  std::vector<std::string> payloads = record_payloads(log_bytes(fs));
  const auto edited = std::find_if(payloads.begin(), payloads.end(),
                                   [](const std::string& payload) { return payload.find("\"Package 123\"") != std::string::npos; });
  REQUIRE(edited != payloads.end());
  edited->replace(edited->find("Package 123"), 11, "Packaxe 123");
  write_log(fs, log_of(payloads));

  // Everything a reader can see, as text.
  const auto state_read_on = [&](unsigned threads) {
    auto o = test_options();
    o.read_only = true;
    o.open_threads = threads;
    auto s = require_value(relay::store::open(fs, "/r", o));
    std::string state;
    require_ok(relay::export_ndjson(s, "", state));
    for (const relay::project* project : s.projects()) {
      for (const relay::stored_package* p : require_value(s.packages_of(project->project_id))) {
        state += p->package.package_id + " " + std::to_string(p->sequence) + " " + p->deposited_hash + " " + p->hash +
                 " " + std::to_string(p->changes.size()) + (p->quarantined ? " quarantined: " + s.quarantine_reason(*p) : "") +
                 "\n";
      }
    }
    for (const std::string& line : require_value(s.verify()).quarantined) state += "verify: " + line + "\n";
    return state;
  };
  const std::string one = state_read_on(1);
  CHECK(one.find("pkg_123 123 ") != std::string::npos);
  CHECK(one.find("quarantined: stored hash sha256:") != std::string::npos);
  CHECK(one.find("verify: proj_0/pkg_123: stored hash") != std::string::npos);
  for (const unsigned threads : {2u, 3u, 4u, 16u}) {
    CAPTURE(threads);
    CHECK(state_read_on(threads) == one);
  }

  // A record that does not apply, far into the log: the same error at the
  // same offset.
  payloads.push_back(payloads[1]);
  write_log(fs, log_of(payloads));
  std::optional<agentctx::error> first;
  for (const unsigned threads : {1u, 4u}) {
    auto o = test_options();
    o.open_threads = threads;
    const auto refused = relay::store::open(fs, "/r", o);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("record does not apply") != std::string::npos);
    if (!first) first = refused.error();
    CHECK(refused.error().message == first->message);
    CHECK(refused.error().offset == first->offset);
  }
  CHECK(first->offset == log_of(std::vector<std::string>(payloads.begin(), payloads.end() - 1)).size());
}

TEST_CASE("a prepared package record appends as the record itself does") {
  // prepare_package_record reads and hashes a package record ahead of its
  // append (import checks a whole file before it writes); its append gives
  // the state, the log and the errors append_record of the record gives.
  const auto record_of = [](const json::value& wire, const std::string& hash) {
    return json::value(json::value::object_type{{"type", "package"}, {"hash", hash}, {"package", wire}});
  };
  const json::value good = package("pkg_good");
  const std::string good_hash = require_value(relay::content_hash(good));
  const json::value other = package("pkg_other");
  const std::string wrong_hash = require_value(relay::content_hash(package("pkg_else")));
  const auto run = [&](bool prepared) {
    agentctx::io::memory_file_system fs;
    std::string outcome;
    {
      auto store = open_store(fs);
      require_value(store.deposit(package("pkg_first")));  // proj_demo exists
      const auto append = [&](json::value record) -> agentctx::result<void> {
        if (!prepared) return store.append_record(std::move(record));
        auto p = store.prepare_package_record(std::move(record));
        if (!p) return agentctx::unexpected(std::move(p).error());
        return store.append_record(std::move(*p));
      };
      const auto note = [&](const char* what, const agentctx::result<void>& r) {
        outcome += std::string(what) + ": " + (r ? "ok" : std::string(agentctx::to_string(r.error().code)) + " " + r.error().message) + "\n";
      };
      note("good", append(record_of(good, good_hash)));
      note("again", append(record_of(good, good_hash)));
      note("wrong hash", append(record_of(other, wrong_hash)));
      note("unknown project", append(record_of(package("pkg_x", "proj_nowhere"), good_hash)));
      for (const relay::stored_package* p : require_value(store.packages_of("proj_demo"))) {
        outcome += p->package.package_id + " " + p->hash + (p->quarantined ? " quarantined: " + store.quarantine_reason(*p) : "") + "\n";
      }
    }
    outcome += log_bytes(fs);
    auto reader = open_store(fs, true);
    outcome += "reopened: " + std::to_string(reader.record_count()) + " records, " +
               std::to_string(reader.quarantined().size()) + " quarantined\n";
    return outcome;
  };
  const std::string plain = run(false);
  CHECK(plain.find("good: ok") != std::string::npos);
  CHECK(plain.find("again: corrupt package \"pkg_good\" deposited twice") != std::string::npos);
  CHECK(plain.find("pkg_other " + wrong_hash + " quarantined: stored hash") != std::string::npos);
  CHECK(plain.find("unknown project: corrupt package record for unknown project") != std::string::npos);
  CHECK(plain.find("reopened: 3 records, 1 quarantined") != std::string::npos);
  CHECK(run(true) == plain);

  // What a prepared record says of its package; a record that is not a
  // package record is refused, and so is a package that fails validation.
  agentctx::io::memory_file_system fs;
  auto store = open_store(fs);
  auto p = require_value(store.prepare_package_record(record_of(other, wrong_hash)));
  CHECK(p.read().package_id == "pkg_other");
  CHECK(p.computed_hash() == require_value(relay::content_hash(other)));
  CHECK(*p.record().find("hash") == json::value(wrong_hash));
  // append_record takes it, also when the append is refused (no project here).
  const auto appended = store.append_record(std::move(p));
  REQUIRE_FALSE(appended.has_value());
  CHECK(appended.error().message.find("unknown project") != std::string::npos);
  CHECK(p.record().is_null());  // NOLINT(bugprone-use-after-move): the documented state
  const auto again = store.append_record(std::move(p));
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message.find("record has no type") != std::string::npos);
  const auto refused = [&](json::value record, std::string_view message) {
    auto r = store.prepare_package_record(std::move(record));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_argument);
    CHECK(r.error().message.find(message) != std::string::npos);
  };
  refused(json::value::object_type{{"type", "fact"}, {"hash", good_hash}, {"package", good}}, "not a package record");
  refused(json::value::object_type{{"type", "package"}, {"package", good}}, "not a package record");
  json::value untitled = package("pkg_untitled");
  untitled.set("title", "");
  refused(record_of(untitled, good_hash), "title");
  CHECK(log_bytes(fs).size() == relay::log_header_size);  // nothing written
}

TEST_CASE("open on several threads reads a log of more records than one replay window holds (4096)") {
  // Helper threads free the records they prepared once the calling thread
  // has applied them, and the windows reuse one vector of records: a log of
  // a window and a bit reads the same on any count of threads.
  agentctx::io::memory_file_system fs;
  constexpr int count = 4096 + 100;
  {
    auto store = open_store(fs);
    for (int i = 0; i < count; ++i) {
      const std::string id = "pkg_" + std::to_string(i);
      const std::string project = "proj_" + std::to_string(i % 2);
      json::value p = package(id, project, "Package " + std::to_string(i));
      if (i % 1000 == 999) p.set("status", "draft");
      require_value(store.deposit(p));
      if (i % 1000 == 999) require_value(store.flag_for_review(id, relay::review_type::human, std::nullopt, project));
    }
  }
  const auto state_read_on = [&](unsigned threads) {
    auto o = test_options();
    o.read_only = true;
    o.open_threads = threads;
    auto s = require_value(relay::store::open(fs, "/r", o));
    std::string state = std::to_string(s.record_count()) + " records\n";
    for (const relay::project* project : s.projects()) {
      for (const relay::stored_package* p : require_value(s.packages_of(project->project_id))) {
        state += p->package.package_id + " " + std::to_string(p->sequence) + " " + p->hash + " " +
                 std::to_string(p->changes.size()) + (p->quarantined ? " quarantined" : "") + "\n";
      }
    }
    return state;
  };
  const std::string one = state_read_on(1);
  CHECK(one.find("pkg_4195 ") != std::string::npos);
  CHECK(one.find("pkg_3999 ") != std::string::npos);
  CHECK(one.find("quarantined") == std::string::npos);
  for (const unsigned threads : {2u, 3u, 8u}) {
    CAPTURE(threads);
    CHECK(state_read_on(threads) == one);
  }
}

}  // namespace relay_store_test
