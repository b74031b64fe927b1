// relay/export.hpp: import into archived and differing projects, and the
// sessions' packages_deposited through export and import.
#include "agentctx/relay/export.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/log_format.hpp"
#include "relay_test_support.hpp"

namespace relay_export_test {

using namespace relay_test;
using agentctx::errc;

/// "value valid_to" of each fact of (proj_demo, api, status), all ended, in
/// the history's order.
std::vector<std::string> ends(const relay::store& s) {
  std::vector<std::string> out;
  for (const relay::fact* f : s.history("proj_demo", "api", "status")) out.push_back(f->value + " " + *f->valid_to);
  return out;
}

TEST_CASE("import refuses to write into a project the store holds archived, and keeps the store's project") {
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(source.deposit(package("pkg_1")));
  std::string text;
  require_ok(relay::export_ndjson(source, "proj_demo", text));

  // The target's proj_demo was created at another time, then archived.
  agentctx::io::memory_file_system other;
  auto options = test_options();
  const auto clock = options.clock;
  options.clock = [clock] { return clock() + 86'400'000; };
  auto target = require_value(relay::store::open(other, "/copy", options));
  require_value(target.create_project("proj_demo"));
  require_value(target.set_archived("proj_demo", true));
  auto refused = relay::import_ndjson(target, text);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::archived);
  CHECK(relay::protocol_error_of(refused.error()).code == "project_archived");
  CHECK(refused.error().message.starts_with("line 3: project \"proj_demo\" is archived"));
  CHECK(require_value(target.packages_of("proj_demo")).empty());

  // Restored, the import goes into the store's project, which keeps its content.
  const std::string created_at = target.find_project("proj_demo")->created_at;
  require_value(target.set_archived("proj_demo", false));
  auto report = require_value(relay::import_ndjson(target, text));
  CHECK(report.packages == 1);
  CHECK(report.projects == 0);
  CHECK(report.skipped == 1);
  CHECK(report.differing_projects == std::vector<std::string>{"proj_demo"});
  CHECK(target.find_project("proj_demo")->created_at == created_at);
  CHECK(require_value(target.packages_of("proj_demo")).size() == 1);

  // An archived project the import itself creates is restored as exported.
  require_value(source.set_archived("proj_demo", true));
  std::string archived_text;
  require_ok(relay::export_ndjson(source, "proj_demo", archived_text));
  agentctx::io::memory_file_system third;
  auto restored = require_value(relay::store::open(third, "/r3", test_options()));
  auto restored_report = require_value(relay::import_ndjson(restored, archived_text));
  CHECK(restored_report.packages == 1);
  CHECK(restored.find_project("proj_demo")->archived());
  // Importing it again writes nothing, so the archived project is no obstacle.
  CHECK(require_value(relay::import_ndjson(restored, archived_text)).packages == 0);
  // An import of it that stopped after the project line (here: an import of
  // the file's first lines) is completed by importing the file again: the
  // store holds the archived project exactly as exported, so it is the
  // export's own, and what the export holds goes into it.
  agentctx::io::memory_file_system fourth;
  auto stopped = require_value(relay::store::open(fourth, "/r4", test_options()));
  relay::import_options allow_cut;
  allow_cut.allow_incomplete = true;
  const std::string first_two_lines = archived_text.substr(0, archived_text.find('\n', archived_text.find('\n') + 1) + 1);
  CHECK(require_value(relay::import_ndjson(stopped, first_two_lines, allow_cut)).projects == 1);
  CHECK(stopped.find_project("proj_demo")->archived());
  const relay::import_report completed = require_value(relay::import_ndjson(stopped, archived_text));
  CHECK(completed.packages == 1);
  CHECK(completed.differing_projects.empty());
  CHECK(require_value(stopped.packages_of("proj_demo")).size() == 1);
  CHECK(stopped.find_project("proj_demo")->archived());
}

TEST_CASE("a session's packages_deposited survives export and import in its order") {
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  const std::string id = require_value(source.start_session("proj_demo", "claude", relay::actor_type::agent))->session_id;
  for (const char* package_id : {"pkg_z", "pkg_a", "pkg_m"}) {
    auto p = package(package_id);
    p.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
    require_value(source.deposit(p));
  }
  auto elsewhere = package("pkg_b", "proj_other");
  elsewhere.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
  require_value(source.deposit(elsewhere));
  require_value(source.end_session(id));
  const json::value listed = json::value::array_type{"pkg_z", "pkg_a", "pkg_m"};
  CHECK(*source.session_wire(*source.find_session(id)).find("packages_deposited") == listed);

  std::string text;
  require_ok(relay::export_ndjson(source, "", text));
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  auto report = require_value(relay::import_ndjson(target, text));
  CHECK(report.sessions == 1);
  CHECK(*target.session_wire(*target.find_session(id)).find("packages_deposited") == listed);
  std::string copied;
  require_ok(relay::export_ndjson(target, "", copied));
  CHECK(copied.substr(copied.find('\n')) == text.substr(text.find('\n')));
  // Reopened, the imported list is still there.
  auto reader_options = test_options();
  reader_options.read_only = true;
  auto reader = require_value(relay::store::open(other, "/copy", reader_options));
  CHECK(*reader.session_wire(*reader.find_session(id)).find("packages_deposited") == listed);
}

TEST_CASE("import refuses a review history that went apart from the store's, and takes one that goes on from it") {
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  const json::value deposited = draft("pkg_d");
  require_value(source.deposit(deposited));
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  require_value(relay::import_ndjson(target, first));

  // Each store flags the draft for a different reviewer.
  require_value(source.flag_for_review("pkg_d", relay::review_type::agent));
  require_value(target.flag_for_review("pkg_d", relay::review_type::human));
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  auto refused = relay::import_ndjson(target, later);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::already_exists);
  CHECK(relay::protocol_error_of(refused.error()).code == "duplicate_package_id");
  CHECK(refused.error().message.find("status change 1 of package \"pkg_d\" differs from the one the store holds") !=
        std::string::npos);
  // Nothing was written: the target's history is its own still.
  const relay::stored_package* held = require_value(target.find_package("pkg_d"));
  REQUIRE(held->changes.size() == 1);
  CHECK(held->changes[0].review == relay::review_type::human);

  // The same history going on (the source's one change, then a second)
  // imports the second into a store that holds the first.
  agentctx::io::memory_file_system third;
  auto follower = require_value(relay::store::open(third, "/third", test_options()));
  require_value(relay::import_ndjson(follower, later));
  require_value(source.review("pkg_d", relay::package_status::complete, std::string("fine")));
  std::string latest;
  require_ok(relay::export_ndjson(source, "", latest));
  auto report = require_value(relay::import_ndjson(follower, latest));
  CHECK(report.status_changes == 1);
  CHECK(report.skipped == 3);  // the project, the package and its first change
  CHECK(require_value(follower.find_package("pkg_d"))->hash == require_value(source.find_package("pkg_d"))->hash);
  // An older export (fewer changes) into the newer store changes nothing.
  auto older = require_value(relay::import_ndjson(follower, later));
  CHECK(older.status_changes == 0);
  CHECK(require_value(follower.find_package("pkg_d"))->changes.size() == 2);
  // A change at the same place with another note went apart too.
  agentctx::io::memory_file_system fourth;
  auto noted = require_value(relay::store::open(fourth, "/fourth", test_options()));
  require_value(relay::import_ndjson(noted, first));
  require_value(noted.flag_for_review("pkg_d", relay::review_type::agent, std::string("a note the source lacks")));
  auto apart = relay::import_ndjson(noted, later);
  REQUIRE_FALSE(apart.has_value());
  CHECK(apart.error().code == errc::already_exists);
}

TEST_CASE("import ends a session the store holds open when the export has it ended, and refuses one that differs") {
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  const std::string id = require_value(source.start_session("proj_demo", "claude", relay::actor_type::agent))->session_id;
  auto in_session = package("pkg_1");
  in_session.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
  require_value(source.deposit(in_session));
  std::string open_text;
  require_ok(relay::export_ndjson(source, "", open_text));
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  require_value(relay::import_ndjson(target, open_text));
  CHECK_FALSE(target.find_session(id)->ended_at.has_value());

  // The session goes on in the source: a second package, then its end.
  auto second = package("pkg_2");
  second.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", id}});
  require_value(source.deposit(second));
  require_value(source.end_session(id));
  std::string ended_text;
  require_ok(relay::export_ndjson(source, "", ended_text));
  auto report = require_value(relay::import_ndjson(target, ended_text));
  CHECK(report.sessions == 1);
  CHECK(report.packages == 1);
  REQUIRE(target.find_session(id)->ended_at.has_value());
  CHECK(*target.find_session(id)->ended_at == *source.find_session(id)->ended_at);
  const json::value both = json::value::array_type{"pkg_1", "pkg_2"};
  CHECK(*target.session_wire(*target.find_session(id)).find("packages_deposited") == both);
  // So the two stores export the same lines, and reopened the target agrees.
  std::string copied;
  require_ok(relay::export_ndjson(target, "", copied));
  CHECK(copied.substr(copied.find('\n')) == ended_text.substr(ended_text.find('\n')));
  auto reader_options = test_options();
  reader_options.read_only = true;
  auto reader = require_value(relay::store::open(other, "/copy", reader_options));
  CHECK(reader.find_session(id)->ended_at.has_value());
  CHECK(*reader.session_wire(*reader.find_session(id)).find("packages_deposited") == both);

  // The older export, with the session open, changes nothing now.
  auto older = require_value(relay::import_ndjson(target, open_text));
  CHECK(older.sessions == 0);
  CHECK(target.find_session(id)->ended_at.has_value());

  // A store that ended the session at another time, or holds it with other
  // members, holds another session under that id.
  agentctx::io::memory_file_system third;
  auto options = test_options();
  const auto clock = options.clock;
  options.clock = [clock] { return clock() + 3'600'000; };
  auto elsewhere = require_value(relay::store::open(third, "/third", options));
  require_value(relay::import_ndjson(elsewhere, open_text));
  require_value(elsewhere.end_session(id));
  auto refused = relay::import_ndjson(elsewhere, ended_text);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::already_exists);
  CHECK(refused.error().message.find("session \"" + id + "\" exists in the store with other content") !=
        std::string::npos);
  std::string renamed = open_text;
  const std::string actor = "\"actor_id\":\"claude\"";
  REQUIRE(renamed.find(actor) != std::string::npos);
  renamed.replace(renamed.find(actor), actor.size(), "\"actor_id\":\"gemini\"");
  agentctx::io::memory_file_system fourth;
  auto fresh = require_value(relay::store::open(fourth, "/fourth", test_options()));
  require_value(relay::import_ndjson(fresh, open_text));
  auto differs = relay::import_ndjson(fresh, renamed);
  REQUIRE_FALSE(differs.has_value());
  CHECK(differs.error().code == errc::already_exists);
}

TEST_CASE("import brings a store up to a later export of it: facts superseded or invalidated since end as exported") {
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  const auto assertion = [](std::string subject, std::string value, std::string valid_from) {
    return status_of(std::move(subject), std::move(value), std::move(valid_from));
  };
  require_value(source.assert_fact(assertion("api", "v1", "2026-04-01T00:00:00Z")));
  require_value(source.assert_fact(assertion("site", "up", "2026-04-02T00:00:00Z")));
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  require_value(relay::import_ndjson(target, first));

  // Since: api's fact superseded, site's invalidated.
  require_value(source.assert_fact(assertion("api", "v2", "2026-04-10T00:00:00.5Z")));
  CHECK(require_value(source.invalidate_fact("proj_demo", "site", "status")) == 1);
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  auto report = require_value(relay::import_ndjson(target, later));
  CHECK(report.facts == 3);  // api v1's end, api v2, site's end
  CHECK(target.current_fact("proj_demo", "api", "status")->value == "v2");
  CHECK(target.current_fact("proj_demo", "site", "status") == nullptr);
  std::string copied;
  require_ok(relay::export_ndjson(target, "", copied));
  CHECK(copied.substr(copied.find('\n')) == later.substr(later.find('\n')));
  auto reader_options = test_options();
  reader_options.read_only = true;
  auto reader = require_value(relay::store::open(other, "/copy", reader_options));
  CHECK(*reader.history("proj_demo", "api", "status")[0]->valid_to == "2026-04-10T00:00:00.5Z");

  // The older export into the store that is later now changes nothing.
  auto older = require_value(relay::import_ndjson(target, first));
  CHECK(older.facts == 0);
  CHECK(target.current_fact("proj_demo", "api", "status")->value == "v2");

  // A store that went on otherwise (api superseded at another time) holds
  // another history: refused, and nothing written.
  agentctx::io::memory_file_system third;
  auto own_ids = test_options();
  own_ids.random = [n = std::uint64_t{7}]() mutable { return n += 0x9E3779B97F4A7C15ull; };  // not the source's ids
  auto diverged = require_value(relay::store::open(third, "/third", own_ids));
  require_value(relay::import_ndjson(diverged, first));
  require_value(diverged.assert_fact(assertion("api", "v9", "2026-04-05T00:00:00Z")));
  auto refused = relay::import_ndjson(diverged, later);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::already_exists);
  CHECK(refused.error().message.find("would be a second current fact") != std::string::npos);
  CHECK(diverged.current_fact("proj_demo", "api", "status")->value == "v9");
  CHECK(diverged.current_fact("proj_demo", "site", "status")->value == "up");
}

TEST_CASE("import catches a copy up after a fact that was to hold later is invalidated, whatever the order of its lines") {
  const auto assertion = [](std::string value, std::optional<std::string> valid_from = {}) {
    return status_of("api", std::move(value), std::move(valid_from));
  };
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));  // the clock reads 2026-04-18
  require_value(source.assert_fact(assertion("v1", "2026-01-01T00:00:00Z")));
  require_value(source.assert_fact(assertion("v2", "2030-01-01T00:00:00Z")));
  require_value(source.assert_fact(assertion("v3", "2031-01-01T00:00:00Z")));
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  agentctx::io::memory_file_system other;
  auto copy = require_value(relay::store::open(other, "/copy", test_options()));
  require_value(relay::import_ndjson(copy, first));

  // The invalidation ends v1 now, and v2 and v3 where they start (never held).
  CHECK(require_value(source.invalidate_fact("proj_demo", "api", "status")) == 1);
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  auto report = require_value(relay::import_ndjson(copy, later));
  CHECK(report.facts == 3);
  std::string copied;
  require_ok(relay::export_ndjson(copy, "", copied));
  CHECK(copied.substr(copied.find('\n')) == later.substr(later.find('\n')));
  CHECK(copy.current_fact("proj_demo", "api", "status") == nullptr);
  // The older export again changes nothing (the copy's ends are the later ones).
  auto older = require_value(relay::import_ndjson(copy, first));
  CHECK(older.facts == 0);
  std::string unchanged;
  require_ok(relay::export_ndjson(copy, "", unchanged));
  CHECK(unchanged.substr(unchanged.find('\n')) == later.substr(later.find('\n')));
  // The same lines in another order import the same.
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < later.size();) {
    const std::size_t end = later.find('\n', at);
    lines.push_back(later.substr(at, end + 1 - at));
    at = end + 1;
  }
  std::vector<std::size_t> fact_rows;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with(R"({"fact":)") || lines[i].find(R"("kind":"fact")") != std::string::npos) fact_rows.push_back(i);
  }
  REQUIRE(fact_rows.size() == 3);
  std::swap(lines[fact_rows[0]], lines[fact_rows[2]]);
  std::string reordered;
  for (const std::string& line : lines) reordered += line;
  agentctx::io::memory_file_system third;
  auto another = require_value(relay::store::open(third, "/third", test_options()));
  require_value(relay::import_ndjson(another, first));
  require_value(relay::import_ndjson(another, reordered));
  std::string again;
  require_ok(relay::export_ndjson(another, "", again));
  CHECK(again.substr(again.find('\n')) == later.substr(later.find('\n')));

  // An export that ends the store's facts otherwise than one invalidation
  // can (v1 cut, but the current fact v3 left as it is) is refused.
  std::string partial = first;
  const std::string v1_end = R"("valid_to":"2030-01-01T00:00:00Z")";
  const std::string v1_line_end = *source.history("proj_demo", "api", "status")[0]->valid_to;
  REQUIRE(partial.find(v1_end) != std::string::npos);
  partial.replace(partial.find(v1_end), v1_end.size(), R"("valid_to":")" + v1_line_end + "\"");
  agentctx::io::memory_file_system fourth;
  auto strict = require_value(relay::store::open(fourth, "/fourth", test_options()));
  require_value(relay::import_ndjson(strict, first));
  auto refused = relay::import_ndjson(strict, partial);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::already_exists);
  CHECK(strict.current_fact("proj_demo", "api", "status")->value == "v3");
}

TEST_CASE("import catches a copy up when the key also holds a fact that never held") {
  const auto assertion = [](std::string value, std::optional<std::string> valid_from = {}) {
    return status_of("queue", std::move(value), std::move(valid_from));
  };
  agentctx::io::memory_file_system fs, other;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));  // 2026-04-18T20:00:01Z onwards
  require_value(source.assert_fact(assertion("v1")));
  require_value(source.assert_fact(assertion("v2", "2026-04-18T21:00:00Z")));
  require_value(source.assert_fact(assertion("v3", "2026-04-18T21:00:00Z")));  // v2 never holds
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  auto copy = require_value(relay::store::open(other, "/copy", test_options()));
  require_value(relay::import_ndjson(copy, first));
  CHECK(require_value(source.invalidate_fact("proj_demo", "queue", "status")) == 1);  // v1 cut now; v3 never holds
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  auto report = require_value(relay::import_ndjson(copy, later));
  CHECK(report.facts == 2);  // v1 and v3; v2 ends where it ended
  std::string copied;
  require_ok(relay::export_ndjson(copy, "", copied));
  CHECK(copied.substr(copied.find('\n')) == later.substr(later.find('\n')));
}

TEST_CASE("import takes a new current fact listed before the line that ends the store's current one") {
  // Store x: fact F current; the copy imports it; x invalidates F. Store a
  // imports x's later export after asserting G itself: a's export lists G
  // (current) before F (ended).
  const auto assertion = [](std::string value, std::optional<std::string> valid_from = {}) {
    return status_of("site", std::move(value), std::move(valid_from));
  };
  agentctx::io::memory_file_system xfs, cfs, afs;
  auto x = require_value(relay::store::open(xfs, "/x", test_options()));
  require_value(x.assert_fact(assertion("F", "2026-04-01T00:00:00Z")));
  std::string x_first;
  require_ok(relay::export_ndjson(x, "", x_first));
  auto copy = require_value(relay::store::open(cfs, "/c", test_options()));
  require_value(relay::import_ndjson(copy, x_first));
  CHECK(require_value(x.invalidate_fact("proj_demo", "site", "status")) == 1);
  std::string x_later;
  require_ok(relay::export_ndjson(x, "", x_later));
  auto a_options = test_options();
  a_options.random = [n = std::uint64_t{11}]() mutable { return n += 0x9E3779B97F4A7C15ull; };  // ids of its own
  auto a = require_value(relay::store::open(afs, "/a", a_options));
  require_value(a.assert_fact(assertion("G", "2026-05-01T00:00:00Z")));
  require_value(relay::import_ndjson(a, x_later));
  std::string a_export;
  require_ok(relay::export_ndjson(a, "", a_export));
  REQUIRE(a_export.find(R"("value":"G")") < a_export.find(R"("value":"F")"));
  auto report = require_value(relay::import_ndjson(copy, a_export));
  CHECK(report.facts == 2);
  CHECK(copy.current_fact("proj_demo", "site", "status")->value == "G");
}

TEST_CASE("import catches a copy up when the fact invalidated since is one the copy never held") {
  // The source's clock steps back an hour: its second invalidation (of a
  // fact asserted after the copy's export) cuts a fact the first ended.
  const auto assertion = [](std::string value, std::string valid_from) {
    return status_of("api", std::move(value), std::move(valid_from));
  };
  auto now = std::make_shared<std::uint64_t>(1'776'542'400'000ull);  // 2026-04-18T20:00:00Z
  const auto source_options = options_at(now);
  agentctx::io::memory_file_system fs, other;
  auto source = require_value(relay::store::open(fs, "/r", source_options));
  require_value(source.assert_fact(assertion("E", "2026-01-01T00:00:00Z")));
  require_value(source.assert_fact(assertion("F", "2099-01-01T00:00:00Z")));
  CHECK(require_value(source.invalidate_fact("proj_demo", "api", "status")) == 1);  // E ends now, F never holds
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  auto copy = require_value(relay::store::open(other, "/copy", test_options()));
  require_value(relay::import_ndjson(copy, first));
  REQUIRE(copy.current_fact("proj_demo", "api", "status") == nullptr);

  *now -= 3'600'000;
  require_value(source.assert_fact(assertion("G", "2099-06-01T00:00:00Z")));
  CHECK(require_value(source.invalidate_fact("proj_demo", "api", "status")) == 1);
  CHECK(ends(source) == std::vector<std::string>{"E 2026-04-18T19:00:00.000Z", "F 2099-01-01T00:00:00Z",
                                                 "G 2099-06-01T00:00:00Z"});
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  auto report = require_value(relay::import_ndjson(copy, later));
  CHECK(report.facts == 2);  // E's new end, G
  CHECK(ends(copy) == ends(source));
  std::string copied;
  require_ok(relay::export_ndjson(copy, "", copied));
  CHECK(copied.substr(copied.find('\n')) == later.substr(later.find('\n')));
  auto reader_options = test_options();
  reader_options.read_only = true;
  CHECK(ends(require_value(relay::store::open(other, "/copy", reader_options))) == ends(source));
  CHECK(require_value(relay::import_ndjson(copy, later)).facts == 0);

  // A new fact listed before G that holds past E's new end (imported after
  // the invalidation, listed otherwise): G is written current and
  // invalidated before it, which leaves it whole. The lines in reverse
  // order import the same.
  const std::size_t g_line = later.find(R"("value":"G")");
  REQUIRE(g_line != std::string::npos);
  std::string holding = later;
  holding.insert(holding.rfind('\n', g_line) + 1,
                 R"({"kind":"fact","fact":{"fact_id":"fact_x","project_id":"proj_demo","subject":"api",)"
                 R"("predicate":"status","value":"X","valid_from":"2026-05-01T00:00:00Z",)"
                 R"("valid_to":"2098-01-01T00:00:00Z","created_at":"2026-04-18T20:00:00Z"}})"
                 "\n");
  const auto with_fact_count = [](std::string text, int from, int to) {
    const std::string count = R"("facts":)" + std::to_string(from) + ",";
    REQUIRE(text.find(count) != std::string::npos);
    text.replace(text.find(count), count.size(), R"("facts":)" + std::to_string(to) + ",");
    return text;
  };
  holding = with_fact_count(holding, 3, 4);
  std::vector<std::string> rows;
  for (std::size_t at = 0; at < holding.size();) {
    const std::size_t end = holding.find('\n', at);
    rows.push_back(holding.substr(at, end + 1 - at));
    at = end + 1;
  }
  REQUIRE(rows.size() == 7);  // header, project, E, F, X, G, end
  std::reverse(rows.begin() + 2, rows.begin() + 6);
  std::string reversed;
  for (const std::string& row : rows) reversed += row;
  const std::vector<std::string> caught_up = {"E 2026-04-18T19:00:00.000Z", "X 2098-01-01T00:00:00Z",
                                              "F 2099-01-01T00:00:00Z", "G 2099-06-01T00:00:00Z"};
  for (const std::string& text : {holding, reversed}) {
    CAPTURE(text);
    agentctx::io::memory_file_system third;
    auto another = require_value(relay::store::open(third, "/third", test_options()));
    require_value(relay::import_ndjson(another, first));
    CHECK(require_value(relay::import_ndjson(another, text)).facts == 3);  // E's end, X, G
    CHECK(ends(another) == caught_up);
    CHECK(require_value(relay::import_ndjson(another, text)).facts == 0);
    { relay::store closing = std::move(another); }
    CHECK(ends(require_value(relay::store::open(third, "/third", reader_options))) == caught_up);
  }

  // Refused, nothing written: no fact to name (G's line left out).
  agentctx::io::memory_file_system fourth;
  auto strict = require_value(relay::store::open(fourth, "/fourth", test_options()));
  require_value(relay::import_ndjson(strict, first));
  std::string without_g = with_fact_count(later, 3, 2);
  const std::size_t g_at = without_g.find(R"("value":"G")");
  const std::size_t g_begin = without_g.rfind('\n', g_at) + 1;
  without_g.erase(g_begin, without_g.find('\n', g_at) + 1 - g_begin);
  const std::string no_current = "ends earlier in the export than in the store, which holds no current fact of (api, "
                                 "status): the export must add one that an invalidation then ended, starting after "
                                 "the store's ends";
  const agentctx::error refused = require_error(relay::import_ndjson(strict, without_g));
  CHECK(refused.code == errc::already_exists);
  CHECK(refused.message.find(no_current) != std::string::npos);
  // A fact listed twice, here E as the copy holds it and then cut.
  const std::size_t e_at = first.find(R"("value":"E")");
  const std::size_t e_begin = first.rfind('\n', e_at) + 1;
  std::string twice = with_fact_count(later, 3, 4);
  twice.insert(twice.rfind('\n', twice.find(R"("value":"E")")) + 1, first.substr(e_begin, first.find('\n', e_at) + 1 - e_begin));
  const agentctx::error listed_twice = require_error(relay::import_ndjson(strict, twice));
  CHECK(listed_twice.code == errc::invalid_argument);
  CHECK(listed_twice.message.ends_with(" appears twice"));
  CHECK(ends(strict) == std::vector<std::string>{"E 2026-04-18T20:00:00.000Z", "F 2099-01-01T00:00:00Z"});
}

TEST_CASE("import catches a copy up when its current fact was superseded at the same instant, spelled otherwise, and "
          "the new fact invalidated") {
  // v4 is to hold from 20:00:10Z; v6, from 20:00:10.000Z, supersedes it (v4
  // never holds, its valid_to spelled as v6's valid_from); invalidating v6
  // then cuts v1. An invalidation of the copy's current v4 would spell v4's
  // end as its own valid_from: v6 is written superseding v4, and invalidated.
  auto now = std::make_shared<std::uint64_t>(1'776'542'400'000ull);  // 2026-04-18T20:00:00Z
  const auto options = options_at(now);
  agentctx::io::memory_file_system fs, other;
  auto source = require_value(relay::store::open(fs, "/r", options));
  require_value(source.assert_fact(status_of("api", "v1")));
  *now += 500;
  require_value(source.assert_fact(status_of("api", "v4", "2026-04-18T20:00:10Z")));
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  auto copy = require_value(relay::store::open(other, "/copy", test_options()));
  require_value(relay::import_ndjson(copy, first));
  *now += 500;
  require_value(source.assert_fact(status_of("api", "v6", "2026-04-18T20:00:10.000Z")));
  *now += 500;
  CHECK(require_value(source.invalidate_fact("proj_demo", "api", "status")) == 1);
  REQUIRE(ends(source) == std::vector<std::string>{"v1 2026-04-18T20:00:01.500Z", "v4 2026-04-18T20:00:10.000Z",
                                                   "v6 2026-04-18T20:00:10.000Z"});
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  CHECK(require_value(relay::import_ndjson(copy, later)).facts == 3);
  CHECK(ends(copy) == ends(source));
  std::string copied;
  require_ok(relay::export_ndjson(copy, "", copied));
  CHECK(copied.substr(copied.find('\n')) == later.substr(later.find('\n')));
  CHECK(require_value(relay::import_ndjson(copy, later)).facts == 0);
}

TEST_CASE("import names the fact that superseded the copy's current one at its instant, whatever the order of lines") {
  // C is to hold from 20:00:10Z; N2 supersedes it at 20:00:10.000Z, N1 N2 at
  // 20:00:20Z; the invalidation at 20:00:02 cuts v1. Only N2, written
  // superseding C, gives C's end as the source spells it, listed before or
  // after N1.
  auto now = std::make_shared<std::uint64_t>(1'776'542'400'000ull);  // 2026-04-18T20:00:00Z
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", options_at(now)));
  require_value(source.assert_fact(status_of("api", "v1")));
  require_value(source.assert_fact(status_of("api", "C", "2026-04-18T20:00:10Z")));
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  require_value(source.assert_fact(status_of("api", "N2", "2026-04-18T20:00:10.000Z")));
  require_value(source.assert_fact(status_of("api", "N1", "2026-04-18T20:00:20Z")));
  *now += 2000;
  CHECK(require_value(source.invalidate_fact("proj_demo", "api", "status")) == 1);
  REQUIRE(ends(source) == std::vector<std::string>{"v1 2026-04-18T20:00:02.000Z", "C 2026-04-18T20:00:10.000Z",
                                                   "N2 2026-04-18T20:00:10.000Z", "N1 2026-04-18T20:00:20Z"});
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  const std::size_t n2 = later.rfind('\n', later.find(R"("value":"N2")")) + 1;
  const std::size_t n1 = later.rfind('\n', later.find(R"("value":"N1")")) + 1;
  REQUIRE(n2 < n1);
  std::string swapped = later;
  const std::string n2_line = later.substr(n2, n1 - n2);
  const std::string n1_line = later.substr(n1, later.find('\n', n1) + 1 - n1);
  swapped.replace(n2, n2_line.size() + n1_line.size(), n1_line + n2_line);
  for (const std::string& text : {later, swapped}) {
    CAPTURE(text);
    agentctx::io::memory_file_system other;
    auto copy = require_value(relay::store::open(other, "/copy", test_options()));
    require_value(relay::import_ndjson(copy, first));
    CHECK(require_value(relay::import_ndjson(copy, text)).facts == 4);
    CHECK(ends(copy) == ends(source));
  }
}

TEST_CASE("import refuses to name a fact the copy lacks when it starts before an end the copy holds") {
  // The copy invalidated H itself, later than the source cut it by
  // invalidating X (which superseded H and was to start at 20:00:10):
  // written current, X would hold together with H as the copy has it, as a
  // crash between X's two records would leave them. The histories went apart.
  auto now = std::make_shared<std::uint64_t>(1'776'542'400'000ull);  // 2026-04-18T20:00:00Z
  const auto source_options = options_at(now);
  const auto copy_options = options_at(std::make_shared<std::uint64_t>(1'776'542'500'000ull));  // 20:01:40
  agentctx::io::memory_file_system fs, other;
  auto source = require_value(relay::store::open(fs, "/r", source_options));
  require_value(source.assert_fact(status_of("api", "H", "2026-01-01T00:00:00Z")));
  std::string first;
  require_ok(relay::export_ndjson(source, "", first));
  auto copy = require_value(relay::store::open(other, "/copy", copy_options));
  require_value(relay::import_ndjson(copy, first));
  CHECK(require_value(copy.invalidate_fact("proj_demo", "api", "status")) == 1);  // H ends 20:01:40
  *now += 1000;
  require_value(source.assert_fact(status_of("api", "X", "2026-04-18T20:00:10Z")));
  CHECK(require_value(source.invalidate_fact("proj_demo", "api", "status")) == 1);  // H ends 20:00:01
  std::string later;
  require_ok(relay::export_ndjson(source, "", later));
  const agentctx::error refused = require_error(relay::import_ndjson(copy, later));
  CHECK(refused.code == errc::already_exists);
  CHECK(refused.message.find("ends earlier in the export than in the store, which holds no current fact of (api, "
                             "status)") != std::string::npos);
  REQUIRE(copy.history("proj_demo", "api", "status").size() == 1);
  CHECK(*copy.history("proj_demo", "api", "status")[0]->valid_to == "2026-04-18T20:01:40.000Z");
}

TEST_CASE("an invalidation leaves a fact that never held as written, however its valid_to is spelled") {
  // Imported from elsewhere: facts of no span, one ended a fraction of a
  // millisecond before it begins (as versions before exact instants wrote).
  const auto fact_line = [](const std::string& id, const std::string& from, const std::string& to) {
    return R"({"kind":"fact","fact":{"fact_id":")" + id +
           R"(","project_id":"proj_demo","subject":"queue","predicate":"status","value":")" + id +
           R"(","valid_from":")" + from + R"(","valid_to":")" + to + R"(","created_at":"2026-04-18T20:00:00Z"}})" + "\n";
  };
  agentctx::io::memory_file_system fs;
  auto s = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(s.create_project("proj_demo"));
  std::string header;
  require_ok(relay::export_ndjson(s, "proj_demo", header));
  header.erase(header.rfind('\n', header.size() - 2) + 1);
  relay::import_options incomplete;
  incomplete.allow_incomplete = true;
  require_value(relay::import_ndjson(
      s,
      header + fact_line("fact_a", "2098-01-01T00:00:00.0009Z", "2098-01-01T00:00:00.000900Z") +
          fact_line("fact_b", "2098-06-01T00:00:00.0005Z", "2098-06-01T00:00:00Z") +
          fact_line("fact_c", "2026-01-01T00:00:00Z", "2097-01-01T00:00:00Z"),
      incomplete));
  require_value(s.assert_fact(status_of("queue", "later", "2099-01-01T00:00:00Z")));
  CHECK(require_value(s.invalidate_fact("proj_demo", "queue", "status")) == 1);
  CHECK(*s.find_fact("fact_a")->valid_to == "2098-01-01T00:00:00.000900Z");
  CHECK(*s.find_fact("fact_b")->valid_to == "2098-06-01T00:00:00Z");
  CHECK(s.find_fact("fact_c")->valid_to->starts_with("2026-04-18T20:00:"));  // it held, and is cut now
  auto reader_options = test_options();
  reader_options.read_only = true;
  auto reader = require_value(relay::store::open(fs, "/r", reader_options));
  CHECK(*reader.find_fact("fact_a")->valid_to == "2098-01-01T00:00:00.000900Z");
  CHECK(*reader.find_fact("fact_b")->valid_to == "2098-06-01T00:00:00Z");

  // Before 2026-11-29 the invalidation spelled their ends anew (as their
  // valid_from): such an export and this one import into each other's
  // stores as the same facts, both never held.
  std::string now_export;
  require_ok(relay::export_ndjson(s, "", now_export));
  std::string old_export = now_export;
  for (const auto& [was, is] : {std::pair<std::string, std::string>{R"("valid_to":"2098-01-01T00:00:00.000900Z")",
                                                                    R"("valid_to":"2098-01-01T00:00:00.0009Z")"},
                                {R"("valid_to":"2098-06-01T00:00:00Z")", R"("valid_to":"2098-06-01T00:00:00.0005Z")"}}) {
    REQUIRE(old_export.find(was) != std::string::npos);
    old_export.replace(old_export.find(was), was.size(), is);
  }
  CHECK(require_value(relay::import_ndjson(s, old_export)).facts == 0);
  CHECK(*s.find_fact("fact_b")->valid_to == "2098-06-01T00:00:00Z");
  agentctx::io::memory_file_system older;
  auto old_copy = require_value(relay::store::open(older, "/old", test_options()));
  CHECK(require_value(relay::import_ndjson(old_copy, old_export)).facts == 4);
  CHECK(require_value(relay::import_ndjson(old_copy, now_export)).facts == 0);
  CHECK(*old_copy.find_fact("fact_b")->valid_to == "2098-06-01T00:00:00.0005Z");
}

TEST_CASE("import refuses a fact that would hold while another fact of its key holds") {
  const auto fact_line = [](const std::string& id, const std::string& from, const std::string& to) {
    return R"({"kind":"fact","fact":{"fact_id":")" + id +
           R"(","project_id":"proj_demo","subject":"dashboard","predicate":"status","value":")" + id +
           R"(","valid_from":")" + from + "\"" + (to.empty() ? std::string() : R"(,"valid_to":")" + to + "\"") +
           R"(,"created_at":"2026-04-18T20:00:00Z"}})" + "\n";
  };
  const auto open_store_at = [](agentctx::io::memory_file_system& fs) {
    return require_value(relay::store::open(fs, "/r", test_options()));
  };
  agentctx::io::memory_file_system source_fs;
  auto source = open_store_at(source_fs);
  require_value(source.create_project("proj_demo"));
  std::string header;
  require_ok(relay::export_ndjson(source, "proj_demo", header));
  header.erase(header.rfind('\n', header.size() - 2) + 1);  // the header and the project, not the end line
  relay::import_options incomplete;  // the files below have no end line
  incomplete.allow_incomplete = true;

  // In the file: [04-01, 04-10) and [04-05, 04-20) meet.
  {
    agentctx::io::memory_file_system fs;
    auto target = open_store_at(fs);
    const std::string text = header + fact_line("fact_a", "2026-04-01T00:00:00Z", "2026-04-10T00:00:00Z") +
                             fact_line("fact_b", "2026-04-05T00:00:00Z", "2026-04-20T00:00:00Z");
    const agentctx::error refused = require_error(relay::import_ndjson(target, text, incomplete));
    CHECK(refused.code == errc::invalid_argument);
    CHECK(refused.message == "line 4: fact \"fact_b\" would hold at the same time as another fact of (dashboard, "
                             "status) in the import");
    CHECK(target.find_fact("fact_a") == nullptr);
  }
  // Spans that only touch, and a fact that never held, import.
  agentctx::io::memory_file_system fs;
  auto target = open_store_at(fs);
  const std::string text = header + fact_line("fact_a", "2026-04-01T00:00:00Z", "2026-04-10T00:00:00Z") +
                           fact_line("fact_b", "2026-04-10T00:00:00Z", "2026-04-20T00:00:00Z") +
                           fact_line("fact_c", "2026-04-15T00:00:00Z", "2026-04-15T00:00:00Z");
  CHECK(require_value(relay::import_ndjson(target, text, incomplete)).facts == 3);
  // Against the store: a current fact from 04-18 meets fact_b.
  const agentctx::error refused =
      require_error(relay::import_ndjson(target, header + fact_line("fact_d", "2026-04-18T00:00:00Z", ""), incomplete));
  CHECK(refused.code == errc::already_exists);
  CHECK(refused.message == "line 3: fact \"fact_d\" would hold at the same time as fact \"fact_b\" of (dashboard, status)");
  CHECK(require_value(relay::import_ndjson(target, header + fact_line("fact_d", "2026-04-20T00:00:00Z", ""), incomplete)).facts == 1);
  CHECK(target.current_fact("proj_demo", "dashboard", "status")->fact_id == "fact_d");
}

TEST_CASE("an export ends with the counts of its lines; import refuses a file cut short, holed or joined") {
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(source.deposit(package("pkg_1")));
  require_value(source.deposit(package("pkg_2")));
  std::string text;
  const relay::export_report exported = require_value(relay::export_ndjson(source, "", text));
  CHECK(exported.left_out.empty());
  CHECK(exported.lines == relay::export_counts{1, 0, 2, 0, 0});
  CHECK(text.ends_with(
      R"({"facts":0,"kind":"relay-export-end","packages":2,"projects":1,"sessions":0,"status_changes":0})"
      "\n"));

  const auto import_into_new = [](const std::string& input, relay::import_options options = {}) {
    agentctx::io::memory_file_system other;
    auto target = require_value(relay::store::open(other, "/copy", test_options()));
    auto report = relay::import_ndjson(target, input, options);
    if (!report) CHECK(target.record_count() == 0);  // nothing written
    return report;
  };
  CHECK(require_value(import_into_new(text)).packages == 2);
  const std::string header = text.substr(0, text.find('\n') + 1);
  // Cut after the second package: refused, or imported as it is when allowed.
  const std::string cut = text.substr(0, text.rfind('\n', text.size() - 2) + 1);
  const agentctx::error incomplete = require_error(import_into_new(cut));
  CHECK(incomplete.code == errc::invalid_argument);
  CHECK(incomplete.message ==
        "the export is incomplete: it ends without its end line ({\"kind\":\"relay-export-end\",...}) after 1 project, "
        "0 sessions, 2 packages, 0 status changes, 0 facts: the file was cut short (or written before exports had end "
        "lines, 2026-11-26)");
  relay::import_options partial;
  partial.allow_incomplete = true;
  const relay::import_report cut_report = require_value(import_into_new(cut, partial));
  CHECK(cut_report.packages == 2);
  CHECK(cut_report.incomplete);
  CHECK(cut_report.cut_line == 0);
  CHECK_FALSE(require_value(import_into_new(text, partial)).incomplete);
  // Cut in the middle of its last package line: refused as cut short, or
  // left out when allowed.
  const std::string torn = text.substr(0, text.rfind('\n', text.find("pkg_2")) + 1 + 40);  // 40 bytes of line 4
  CHECK(require_error(import_into_new(torn)).message.starts_with(
      "line 4: the last line is cut short (no line break after it, and not JSON: "));
  CHECK(require_error(import_into_new(torn)).message.ends_with("): the file was cut short"));
  const relay::import_report torn_report = require_value(import_into_new(torn, partial));
  CHECK(torn_report.packages == 1);
  CHECK(torn_report.cut_line == 4);
  CHECK(torn_report.incomplete);
  // A line that is not JSON before the last one is an error either way.
  CHECK(require_error(import_into_new(header + "{\"kind\":\n" + text.substr(header.size()), partial))
            .message.starts_with("line 2: not JSON"));
  // A line lost in the middle: the counts differ (also when allowed).
  std::string holed = text;
  const std::size_t third = holed.find('\n', holed.find('\n') + 1) + 1;
  holed.erase(third, holed.find('\n', third) + 1 - third);
  for (const relay::import_options& options : {relay::import_options{}, partial}) {
    CHECK(require_error(import_into_new(holed, options)).message.starts_with(
        "line 4: the end line states 1 project, 0 sessions, 2 packages, 0 status changes, 0 facts, but the file holds "
        "1 project, 0 sessions, 1 package,"));
  }
  // Two exports joined, a line appended, a second header.
  CHECK(require_error(import_into_new(text + text)).message ==
        "line 6: a line after the export's end line (line 5): two exports joined, or something appended");
  CHECK(require_error(import_into_new(header + header)).message == "line 2: a second header line: two exports joined");
  // An end line whose counts are not counts.
  for (const char* end : {R"({"kind":"relay-export-end"})",
                          R"({"facts":0,"kind":"relay-export-end","packages":-1,"projects":0,"sessions":0,"status_changes":0})",
                          R"({"facts":0,"kind":"relay-export-end","packages":0.5,"projects":0,"sessions":0,"status_changes":0})",
                          R"({"facts":"0","kind":"relay-export-end","packages":0,"projects":0,"sessions":0,"status_changes":0})"}) {
    CAPTURE(end);
    CHECK(require_error(import_into_new(header + end + "\n")).message.find("is not a count") != std::string::npos);
  }
  // An export of no project: its header lists none. A header that lists
  // a project the file does not hold (or holds one it does not list) is
  // refused.
  const std::string empty_end =
      R"({"facts":0,"kind":"relay-export-end","packages":0,"projects":0,"sessions":0,"status_changes":0})";
  std::string no_projects = header;
  no_projects.replace(no_projects.find(R"(["proj_demo"])"), 13, "[]");
  CHECK(require_value(import_into_new(no_projects + empty_end)).packages == 0);
  CHECK(require_error(import_into_new(header + empty_end)).message ==
        R"(line 1: the header lists the projects ("proj_demo"), but the export's project lines are of ())");
  std::string other_listed = text;
  other_listed.replace(other_listed.find(R"(["proj_demo"])"), 13, R"(["proj_zzz"])");
  CHECK(require_error(import_into_new(other_listed)).message ==
        R"(line 1: the header lists the projects ("proj_zzz"), but the export's project lines are of ("proj_demo"))");
}

TEST_CASE("import refuses, naming the line and writing nothing: lines twice, a second current fact in the file, a "
          "record too large; a status line's other members are not written; a session ending before it starts is taken") {
  agentctx::io::memory_file_system fs;
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  const std::string session_id =
      require_value(source.start_session("proj_demo", "jordan", relay::actor_type::human))->session_id;
  json::value draft = package("pkg_1");
  draft.set("status", "draft");
  require_value(source.deposit(draft));
  require_value(source.flag_for_review("pkg_1", relay::review_type::human, std::string("check it")));
  require_value(source.assert_fact(status_of("dashboard", "live")));
  require_value(source.end_session(session_id));
  std::string text;
  require_ok(relay::export_ndjson(source, "", text));

  // The lines as trees; the text of a changed list, its end line's counts
  // made to agree.
  std::vector<json::value> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(require_value(json::parse(std::string_view(text).substr(at, end - at))));
    at = end + 1;
  }
  REQUIRE(lines.size() == 7);  // header, project, session, package, status, fact, end
  const auto text_of = [](std::vector<json::value> changed) {
    std::map<std::string, double> counts;
    for (const json::value& l : changed) counts[l.find("kind")->as_string() + "s"] += 1;
    json::value& end = changed.back();
    for (const char* name : {"projects", "sessions", "packages", "facts"}) end.set(name, counts[name]);
    end.set("status_changes", counts["statuss"]);
    std::string out;
    for (const json::value& l : changed) out += require_value(json::serialize(l, json::canonical_form::jcs)) + "\n";
    return out;
  };
  const auto inserted = [&](std::size_t at, json::value line) {
    std::vector<json::value> changed = lines;
    changed.insert(changed.begin() + static_cast<std::ptrdiff_t>(at), std::move(line));
    return changed;
  };
  const auto member_set = [](json::value line, const char* object, const char* name, json::value value) {
    line.find(object)->set(name, std::move(value));
    return line;
  };

  json::value renamed_project = member_set(lines[1], "project", "name", "Another name");
  json::value second_current = member_set(lines[5], "fact", "fact_id", "fact_second");
  second_current.find("fact")->set("valid_from", "2026-05-01T00:00:00Z");
  std::vector<json::value> ends_early = lines;
  ends_early[2].find("session")->set("ended_at", "2020-01-01T00:00:00Z");
  // A package whose record is larger than a record may be, hashed right.
  json::value big = package("pkg_big");
  big.set("content_md", std::string(relay::max_record_payload - 200, 'x'));
  json::value big_line = json::value::object_type{
      {"kind", "package"}, {"hash", require_value(relay::content_hash(big))}, {"package", big}};

  const auto status_set = [&](const char* name, const char* value) {
    std::vector<json::value> changed = lines;
    changed[4].set(name, value);
    return changed;
  };
  std::vector<json::value> project_late = lines;  // header, session, package, project, ...
  std::rotate(project_late.begin() + 1, project_late.begin() + 2, project_late.begin() + 4);

  struct refusal {
    const char* name;
    std::string input;
    errc code;
    std::string message;
  };
  const refusal refusals[] = {
      {"a project line twice", text_of(inserted(2, renamed_project)), errc::invalid_argument,
       "line 3: project \"proj_demo\" appears twice"},
      {"a project's line after its session's and package's", text_of(project_late), errc::invalid_argument,
       "line 2: session of project \"proj_demo\", whose line has not come before it (the header lists the project"},
      {"a session line twice", text_of(inserted(3, lines[2])), errc::invalid_argument,
       "line 4: session \"" + session_id + "\" appears twice"},
      {"two current facts of a key in the file", text_of(inserted(6, second_current)), errc::invalid_argument,
       "line 7: fact \"fact_second\" would be a second current fact of (dashboard, status) in the import"},
      {"a record too large for the log", text_of(inserted(5, big_line)), errc::invalid_argument,
       "line 6: the record would be "},
      {"a status line whose note is not a string", text_of([&] {
         std::vector<json::value> changed = lines;
         changed[4].set("note", 5);
         return changed;
       }()),
       errc::invalid_argument, "line 5: status line's note is not a string"},
  };
  for (const refusal& r : refusals) {
    CAPTURE(r.name);
    agentctx::io::memory_file_system other;
    auto target = require_value(relay::store::open(other, "/copy", test_options()));
    const agentctx::error e = require_error(relay::import_ndjson(target, r.input));
    CHECK(e.code == r.code);
    CHECK(e.message.starts_with(r.message));
    CHECK(target.record_count() == 0);
  }

  // Status changes older stores wrote and still read import: an `at` with
  // an offset (imports before 2026-11-29 wrote it as given), and
  // awaiting_review with review_type none (review before 2026-11-26).
  for (const std::pair<const char*, const char*>& member :
       {std::pair{"at", "2026-04-18T21:00:04+01:00"}, std::pair{"review_type", "none"}}) {
    CAPTURE(member.first);
    std::vector<json::value> old_change = status_set(member.first, member.second);
    if (std::string_view(member.first) == "review_type") {
      json::value state = *lines[3].find("package");
      state.set("status", "awaiting_review");
      state.set("review_type", "none");
      old_change[4].set("hash", require_value(relay::content_hash(state)));
    }
    agentctx::io::memory_file_system other_fs;
    auto copy = require_value(relay::store::open(other_fs, "/copy", test_options()));
    CHECK(require_value(relay::import_ndjson(copy, text_of(old_change))).status_changes == 1);
    CHECK(require_value(relay::import_ndjson(copy, text_of(old_change))).status_changes == 0);
  }
  // A session that ends before it starts (a store before 2026-11-27 ended
  // one so when its clock stepped back) is imported as it is, and again
  // changes nothing.
  {
    agentctx::io::memory_file_system other_fs;
    auto copy = require_value(relay::store::open(other_fs, "/copy", test_options()));
    CHECK(require_value(relay::import_ndjson(copy, text_of(ends_early))).sessions == 1);
    CHECK(copy.find_session(session_id)->ended_at == std::optional<std::string>("2020-01-01T00:00:00Z"));
    CHECK(require_value(relay::import_ndjson(copy, text_of(ends_early))).sessions == 0);
  }
  // A status line's members other than a status change's are not written:
  // a "project" member there creates no project.
  std::vector<json::value> with_project = lines;
  with_project[4].set("project", json::value::object_type{{"project_id", "injected"}, {"name", "injected"},
                                                         {"created_at", "2026-04-18T20:00:00Z"}});
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  CHECK(require_value(relay::import_ndjson(target, text_of(with_project))).status_changes == 1);
  CHECK(target.find_project("injected") == nullptr);
  CHECK(require_value(target.find_package("pkg_1", "proj_demo"))->package.status == relay::package_status::awaiting_review);
  // The store's own end of a session is never before its start, should the
  // clock step back.
  auto now = std::make_shared<std::uint64_t>(1'776'542'400'000ull);
  const auto stepping = options_at(now);
  agentctx::io::memory_file_system fourth;
  auto back = require_value(relay::store::open(fourth, "/r4", stepping));
  const relay::session* started = require_value(back.start_session("proj_demo", "jordan", relay::actor_type::human));
  *now -= 60'000;
  const relay::session* ended = require_value(back.end_session(started->session_id));
  CHECK(ended->ended_at == std::optional<std::string>(ended->started_at));
}

namespace {

// `v` in canonical form, as one line of NDJSON.
std::string line_of(const json::value& v) { return require_value(json::serialize(v, json::canonical_form::jcs)) + "\n"; }

// A store's state as bare wire objects, one per line, as another
// implementation may back it up: projects, sessions, packages in their
// current state, facts; in reverse order, as a file need not be in any.
std::string wire_lines_of(const relay::store& s) {
  std::vector<std::string> lines;
  const auto add = [&](const json::value& v) { lines.push_back(line_of(v)); };
  for (const relay::project* p : s.projects()) {
    add(p->wire);
    for (const relay::session* ses : s.sessions(p->project_id)) add(s.session_wire(*ses));
    for (const relay::stored_package* sp : require_value(s.packages_of(p->project_id))) add(sp->package.wire);
    for (const relay::fact* f : s.all_facts(p->project_id)) add(f->wire);
  }
  std::string text;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) text += *it;
  return text;
}

relay::store wire_source(agentctx::io::memory_file_system& fs) {
  auto source = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(source.create_project("proj_demo", std::string("Demo")));
  const std::string session = require_value(source.start_session("proj_demo", "claude", relay::actor_type::agent))->session_id;
  auto reviewed = package("pkg_reviewed");
  reviewed.set("status", "draft");
  reviewed.set("x-origin", json::value::object_type{{"tool", "other"}, {"n", 1.5}});
  reviewed.set("created_by", json::value::object_type{{"id", "claude"}, {"type", "agent"}, {"session_id", session}});
  require_value(source.deposit(reviewed));
  require_value(source.flag_for_review("pkg_reviewed", relay::review_type::human, "check it"));
  require_value(source.deposit(package("pkg_plain", "proj_demo", "Plain", "1969-07-20T20:17:40Z")));
  require_value(source.assert_fact(status_of("api", "beta", "2026-01-01T00:00:00Z")));
  require_value(source.assert_fact(status_of("api", "live", "2026-02-01T00:00:00Z")));
  return source;
}

}  // namespace

TEST_CASE("import reads bare wire objects, another implementation's backup: hashes computed, every member kept") {
  agentctx::io::memory_file_system fs;
  auto source = wire_source(fs);
  const std::string text = wire_lines_of(source);
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  const relay::import_report report = require_value(relay::import_ndjson(target, text));
  CHECK(report.wire_objects);
  // projects, sessions, packages, status changes, facts, the line cut short
  CHECK(std::vector<std::size_t>{report.projects, report.sessions, report.packages, report.status_changes,
                                 report.facts, report.cut_line} == std::vector<std::size_t>{1, 1, 2, 0, 2, 0});
  CHECK(target.find_project("proj_demo")->wire == source.find_project("proj_demo")->wire);
  for (const char* id : {"pkg_reviewed", "pkg_plain"}) {
    CAPTURE(id);
    const relay::stored_package* mine = require_value(source.find_package(id));
    const relay::stored_package* copied = require_value(target.find_package(id));
    // The current state travels, so its hash is the one any implementation computes for it.
    CHECK(copied->hash == mine->hash);
    CHECK(copied->deposited_hash == mine->hash);
    CHECK(copied->package.wire == mine->package.wire);
    CHECK(copied->changes.empty());
  }
  CHECK(require_value(target.find_package("pkg_reviewed"))->package.wire.find("x-origin")->find("n")->as_number() == 1.5);
  const auto history = target.history("proj_demo", "api", "status");
  REQUIRE(history.size() == 2);
  CHECK(history[0]->wire == source.history("proj_demo", "api", "status")[0]->wire);
  CHECK(target.current_fact("proj_demo", "api", "status")->value == "live");
  const relay::session* ses = source.sessions("proj_demo").front();
  CHECK(target.session_wire(*target.find_session(ses->session_id)) == source.session_wire(*ses));
  // The same file again changes nothing.
  const relay::import_report again = require_value(relay::import_ndjson(target, text));
  CHECK(again.wire_objects);
  CHECK(again.packages + again.facts + again.sessions + again.projects == 0);
  CHECK(again.skipped == 6);
  // A project only referenced is created as a deposit creates one.
  agentctx::io::memory_file_system third;
  auto bare = require_value(relay::store::open(third, "/bare", test_options()));
  const std::string lone = line_of(package("pkg_lone", "proj_new"));
  const relay::import_report made = require_value(relay::import_ndjson(bare, lone));
  CHECK(made.projects == 1);
  CHECK(made.packages == 1);
  REQUIRE(bare.find_project("proj_new") != nullptr);
  CHECK(bare.find_project("proj_new")->wire.as_object().size() == 2);  // project_id, created_at
  // A package that has a member named kind is a wire object still.
  auto kinded = package("pkg_kind", "proj_new");
  kinded.set("kind", "package");
  const std::string kind_line = line_of(kinded);
  CHECK(require_value(relay::import_ndjson(bare, kind_line)).packages == 1);
  CHECK(require_value(bare.find_package("pkg_kind"))->package.wire.find("kind")->as_string() == "package");
}

TEST_CASE("import of bare wire objects refuses, naming the file's line and writing nothing") {
  agentctx::io::memory_file_system fs;
  auto source = wire_source(fs);
  const std::string good = line_of(package("pkg_good"));
  auto long_title = package("pkg_long");
  long_title.set("title", std::string(201, 't'));
  const std::string bad_package = line_of(long_title);
  const auto refused = [](const std::string& input, const std::string& expected, errc code = errc::invalid_argument) {
    CAPTURE(input);
    agentctx::io::memory_file_system other;
    auto target = require_value(relay::store::open(other, "/copy", test_options()));
    const agentctx::error e = require_error(relay::import_ndjson(target, input));
    CHECK(e.code == code);
    CHECK(e.message == expected);
    CHECK(target.record_count() == 0);
  };
  // Sorted into the export's order inside, but the file's own line is named.
  refused(good + line_of(package("pkg_other")) + bad_package, "line 3: title must be 1 to 200 characters (it has 201)");
  // A fact on line 1 is imported after the package on line 2, and named as line 1.
  json::value fact_wire = source.current_fact("proj_demo", "api", "status")->wire;
  fact_wire.set("valid_from", "yesterday");
  refused(line_of(fact_wire) + good, "line 1: valid_from must be an RFC 3339 UTC timestamp (got \"yesterday\")");
  refused(good + good, "line 2: package \"pkg_good\" appears twice");
  refused(good + "{\"name\":\"x\"}\n", "line 2: not a Relay wire object: a package has relay_version, a fact "
                                        "fact_id, a session session_id, a project project_id");
  refused(good + "[1,2]\n", "line 2: not a Relay wire object: a package has relay_version, a fact "
                            "fact_id, a session session_id, a project project_id");
  refused(good + "{\"kind\":\"status\",\"project_id\":\"proj_demo\"}\n",
          "line 2: a line of a Relay export among bare wire objects (the file's first line is a wire object)");
  refused(good + "{\"title\":", "line 2: the last line is cut short (no line break after it, and not JSON: "
                                "the text ends where a value should be): the file was cut short");
  refused(good + "{\"title\":\n" + good,
          "line 2: not JSON: the text ends where a value should be");
  // An object as deep as a line may be: its record holds it one level
  // deeper than the log takes (a deposit refuses it so too).
  auto deep = package("pkg_deep");
  json::value nested = 1;
  for (int i = 0; i < 1023; ++i) nested = json::value::array_type{std::move(nested)};
  deep.set("x-deep", std::move(nested));
  refused("\n" + good + line_of(deep),
          "line 3: cannot be stored as a log record: arrays and objects nest deeper than 1024 levels (the record "
          "holds the object given one level deeper: it may nest 1023 levels at most)");
  {
    agentctx::io::memory_file_system other;
    auto target = require_value(relay::store::open(other, "/copy", test_options()));
    const agentctx::error e = require_error(target.deposit(deep));
    CHECK(e.code == errc::invalid_argument);
    CHECK(e.message == "cannot be stored as a log record: arrays and objects nest deeper than 1024 levels (the "
                       "record holds the object given one level deeper: it may nest 1023 levels at most)");
    CHECK(target.record_count() == 0);
  }
  auto other_hash = package("pkg_good");
  other_hash.set("title", "Other");
  {
    agentctx::io::memory_file_system other;
    auto target = require_value(relay::store::open(other, "/copy", test_options()));
    require_value(target.deposit(package("pkg_good")));
    const agentctx::error e =
        require_error(relay::import_ndjson(target, "\n" + line_of(other_hash)));
    CHECK(e.code == errc::already_exists);
    CHECK(e.message == "line 2: package \"pkg_good\" exists in the store with other content (duplicate_package_id)");
  }
  // Allowed, a last line cut in the middle is left out and said so.
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  relay::import_options partial;
  partial.allow_incomplete = true;
  const relay::import_report cut = require_value(relay::import_ndjson(target, good + "{\"title\":", partial));
  CHECK(cut.cut_line == 2);
  CHECK(cut.packages == 1);
  CHECK(cut.wire_objects);
}

TEST_CASE("bare wire objects of a package the store holds in another state: skipped, caught up, or refused") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  const json::value deposited = draft("pkg_1");
  require_value(store.deposit(deposited));
  const std::string deposited_line = line_of(deposited);
  require_value(store.flag_for_review("pkg_1", relay::review_type::human));
  const std::string flagged_line = line_of(require_value(store.find_package("pkg_1"))->package.wire);
  require_value(store.flag_for_review("pkg_1", relay::review_type::agent, "an agent may do"));
  const std::string current_line = line_of(require_value(store.find_package("pkg_1"))->package.wire);
  // Every state the store's package has had is held: skipped, nothing written.
  const std::size_t records = store.record_count();
  for (const std::string& text : {deposited_line, flagged_line, current_line}) {
    CAPTURE(text);
    const relay::import_report r = require_value(relay::import_ndjson(store, text));
    CHECK(r.skipped == 1);  // the file's line, however many lines of the store it stands for
    CHECK(r.packages + r.status_changes == 0);
    CHECK(store.record_count() == records);
  }
  // A store that holds the package as deposited catches up to the file's
  // later state by a status change, whose hash is the file's.
  agentctx::io::memory_file_system other_fs;
  auto other = require_value(relay::store::open(other_fs, "/copy", test_options()));
  require_value(other.deposit(deposited));
  const relay::import_report caught_up = require_value(relay::import_ndjson(other, current_line));
  CHECK(caught_up.status_changes == 1);
  CHECK(caught_up.skipped == 0);
  const relay::stored_package* copy = require_value(other.find_package("pkg_1"));
  CHECK(copy->hash == require_value(store.find_package("pkg_1"))->hash);
  CHECK(copy->package.review == relay::review_type::agent);
  REQUIRE(copy->changes.size() == 1);
  CHECK(require_value(relay::import_ndjson(other, current_line)).status_changes == 0);
  // Complete, the store holds the file's state as an earlier one: skipped.
  require_value(other.review("pkg_1", relay::package_status::complete));
  CHECK(require_value(relay::import_ndjson(other, current_line)).skipped == 1);
  // A state no allowed change reaches from the store's is refused, naming the line.
  auto sent_back = deposited;
  sent_back.set("status", "revision_requested");
  sent_back.set("review_type", "agent");
  const agentctx::error refused = require_error(relay::import_ndjson(other, "\n" + line_of(sent_back)));
  CHECK(refused.code == errc::already_exists);
  CHECK(refused.message == "line 2: package \"pkg_1\" is complete in the store, and no allowed status change leads "
                           "from there to the file's revision_requested (agent)");
  // Another package with the id is a conflict, as in an export.
  auto other_content = deposited;
  other_content.set("title", "Other");
  CHECK(require_error(relay::import_ndjson(other, line_of(other_content))).code == errc::already_exists);
}

TEST_CASE("an error on a project made for bare wire objects names the first line naming the project") {
  agentctx::io::memory_file_system memory;
  agentctx::io::fault_injecting_file_system faulty(memory);
  auto store = require_value(relay::store::open(faulty, "/r", test_options()));
  faulty.fail_operation(faulty.operation_count() + 1);  // the first write: the project's record
  const agentctx::error e = require_error(
      relay::import_ndjson(store, "\n\n\n\n" + line_of(package("pkg_one", "proj_new")) + line_of(package("pkg_two", "proj_new"))));
  CHECK(e.message.starts_with("line 5: "));
}

TEST_CASE("export leaves out a quarantined package, says so, and what it writes imports") {
  agentctx::io::memory_file_system fs;
  std::string genuine;  // an export made before the bytes changed
  {
    auto source = require_value(relay::store::open(fs, "/r", test_options()));
    auto draft = package("pkg_1", "proj_demo", "Shipped archive");
    draft.set("status", "draft");
    require_value(source.deposit(draft));
    require_value(source.deposit(package("pkg_2")));
    require_value(source.review("pkg_1", relay::package_status::complete));
    require_value(relay::export_ndjson(source, "", genuine));
  }
  // pkg_1's bytes change under its hash (its checksum made to match).
  std::string bytes;
  {
    auto mapped = require_value(fs.map("/r/relay.log"));
    bytes.assign(reinterpret_cast<const char*>(mapped.data()), mapped.size());
  }
  const auto at = bytes.find("Shipped archive");
  REQUIRE(at != std::string::npos);
  bytes.replace(at, 7, "Shapped");
  const std::uint32_t length = agentctx::load_u32(bytes.data() + relay::log_header_size);
  agentctx::store_u32(bytes.data() + relay::log_header_size + 4,
                      agentctx::crc32(std::string_view(bytes).substr(relay::log_header_size + 8, length)));
  {
    auto file = require_value(fs.open("/r/relay.log", agentctx::io::create_or_open));
    require_ok(file->truncate(0));
    require_ok(file->append(std::as_bytes(std::span(bytes.data(), bytes.size()))));
  }
  auto options = test_options();
  options.read_only = true;
  auto source = require_value(relay::store::open(fs, "/r", options));
  REQUIRE(source.quarantined().size() == 1);

  std::string text;
  const relay::export_report exported = require_value(relay::export_ndjson(source, "", text));
  REQUIRE(exported.left_out.size() == 1);
  CHECK(exported.left_out[0].starts_with("proj_demo/pkg_1: "));
  CHECK(exported.lines == relay::export_counts{1, 0, 1, 0, 0});  // pkg_1's status change left out with it
  CHECK(text.find("pkg_1") == std::string::npos);
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  CHECK(require_value(relay::import_ndjson(target, text)).packages == 1);
  CHECK(require_value(target.find_package("pkg_2"))->hash == require_value(source.find_package("pkg_2"))->hash);

  // The genuine export imported into the store that quarantined pkg_1 is
  // refused at pkg_1's line: the store's copy is neither the file's nor
  // other content, and an import cannot mend it. Nothing is written.
  auto writer = require_value(relay::store::open(fs, "/r", test_options()));
  const std::string log_before = [&] {
    auto mapped = require_value(fs.map("/r/relay.log"));
    return std::string(reinterpret_cast<const char*>(mapped.data()), mapped.size());
  }();
  auto refused = relay::import_ndjson(writer, genuine);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::corrupt);
  CHECK(refused.error().message.find("package \"pkg_1\" is quarantined in the store") != std::string::npos);
  auto mapped_after = require_value(fs.map("/r/relay.log"));
  CHECK(std::string(reinterpret_cast<const char*>(mapped_after.data()), mapped_after.size()) == log_before);
}

namespace {

// A reader of `text` in pieces of `piece` bytes, counting what it gave.
struct piece_reader {
  std::string text;
  std::size_t piece = 1;
  std::size_t given = 0;

  relay::import_reader reader() {
    return [this](std::span<char> buffer) -> agentctx::result<std::size_t> {
      const std::size_t n = std::min({piece, buffer.size(), text.size() - given});
      std::copy_n(text.data() + given, n, buffer.data());
      given += n;
      return n;
    };
  }
};

}  // namespace

TEST_CASE("import read piece by piece gives what the import of the text gives, reading no further than the line it refuses") {
  agentctx::io::memory_file_system fs;
  auto source = wire_source(fs);
  std::string text;
  require_value(relay::export_ndjson(source, "", text));
  const std::string header = text.substr(0, text.find('\n') + 1);
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  std::vector<std::string> inputs = {text, crlf, "\n \n" + text + "\n\n", text + text, header + "{}\n",
                                     "", "\n\n", "not JSON", "[1]\n", wire_lines_of(source),
                                     wire_lines_of(source) + "{\"title\":"};
  for (std::size_t cut = 0; cut < text.size(); cut += 97) inputs.push_back(text.substr(0, cut));
  relay::import_options partial;
  partial.allow_incomplete = true;
  for (const std::string& input : inputs) {
    for (const relay::import_options& options : {relay::import_options{}, partial}) {
      // Read ahead whole, or the import reading on past a line or two, or
      // past the first piece.
      const std::vector<std::pair<std::size_t, relay::read_ahead_limits>> readings = {
          {std::size_t{1}, {}},
          {std::size_t{3}, {}},
          {std::size_t{1} << 16, {}},
          {std::size_t{3}, {.bytes = std::size_t{1} << 30, .lines = 1}},
          {std::size_t{7}, {.bytes = std::size_t{1} << 30, .lines = 2}},
          {std::size_t{1} << 16, {.bytes = 0}},
      };
      for (const auto& reading : readings) {
        const std::size_t piece = reading.first;
        const relay::read_ahead_limits& limits = reading.second;
        CAPTURE(input);
        CAPTURE(options.allow_incomplete);
        CAPTURE(piece);
        CAPTURE(limits.lines);
        agentctx::io::memory_file_system whole_fs;
        auto whole = require_value(relay::store::open(whole_fs, "/w", test_options()));
        agentctx::io::memory_file_system pieces_fs;
        auto pieces = require_value(relay::store::open(pieces_fs, "/p", test_options()));
        const auto expected = relay::import_ndjson(whole, input, options);
        piece_reader in{input, piece};
        const relay::import_reader reader = in.reader();
        const auto got = relay::import_ndjson(pieces, relay::read_import_input(reader, limits), options);
        REQUIRE(got.has_value() == expected.has_value());
        if (!expected) {
          CHECK(got.error().code == expected.error().code);
          CHECK(got.error().message == expected.error().message);
          CHECK(pieces.record_count() == 0);
          continue;
        }
        CHECK(got->projects == expected->projects);
        CHECK(got->sessions == expected->sessions);
        CHECK(got->packages == expected->packages);
        CHECK(got->status_changes == expected->status_changes);
        CHECK(got->facts == expected->facts);
        CHECK(got->skipped == expected->skipped);
        CHECK(got->incomplete == expected->incomplete);
        CHECK(got->cut_line == expected->cut_line);
        CHECK(got->wire_objects == expected->wire_objects);
        std::string a;
        std::string b;
        require_value(relay::export_ndjson(whole, "", a));
        require_value(relay::export_ndjson(pieces, "", b));
        CHECK(a == b);
      }
    }
  }
}

TEST_CASE("import read piece by piece stops at the line it refuses; a reader's error or a line too long ends it") {
  // Endless input after a line the import is sure to refuse: it reads no
  // further (a piece of 64 KiB past it at the most).
  agentctx::io::memory_file_system source_fs;
  auto source = wire_source(source_fs);
  std::string whole_export;
  require_value(relay::export_ndjson(source, "", whole_export));
  const std::string header =
      std::string(R"({"exported_at":"2026-04-18T20:00:00Z","kind":"relay-export","projects":[],"protocol_version":"0.1"})") +
      "\n";
  const std::vector<std::pair<std::string, std::string>> endless_cases = {
      {"not JSON\n", "line 1: not JSON"},
      {header, "line 2: has no \"kind\""},
      {header + R"({"kind":"relay-export"})" + "\n", "line 2: a second header line"},
      {header + R"({"kind":"nonsense"})" + "\n", "line 2: unknown kind"},
      {whole_export, "a line after the export's end line"},
      {wire_lines_of(source), "not a Relay wire object"},
  };
  for (const auto& endless_case : endless_cases) {
    // (No structured binding: clang 14 does not let a lambda, CAPTURE's
    // too, refer to one.)
    const std::string& first = endless_case.first;
    const std::string& expected = endless_case.second;
    CAPTURE(first);
    agentctx::io::memory_file_system fs;
    auto target = require_value(relay::store::open(fs, "/t", test_options()));
    std::size_t given = 0;
    const relay::import_reader endless = [&](std::span<char> buffer) -> agentctx::result<std::size_t> {
      std::size_t n = 0;
      for (; n < buffer.size(); ++n) {
        const std::size_t at = given + n;
        buffer[n] = at < first.size() ? first[at] : "{}\n"[(at - first.size()) % 3];
      }
      given += n;
      return n;
    };
    const agentctx::error e = require_error(relay::import_ndjson(target, endless));
    CAPTURE(e.message);
    CHECK(e.message.find(expected) != std::string::npos);
    CHECK(given <= first.size() + (std::size_t{1} << 17));
    CHECK(target.record_count() == 0);
  }
  // Lines that look right but are not, endlessly: past the read-ahead
  // limits the import reads on itself, and refuses the first such line.
  {
    agentctx::io::memory_file_system fs;
    auto target = require_value(relay::store::open(fs, "/t", test_options()));
    const std::string status_line = R"({"kind":"status"})" "\n";
    std::size_t given = 0;
    const relay::import_reader endless = [&](std::span<char> buffer) -> agentctx::result<std::size_t> {
      std::size_t n = 0;
      for (; n < buffer.size(); ++n) {
        const std::size_t at = given + n;
        buffer[n] = at < header.size() ? header[at] : status_line[(at - header.size()) % status_line.size()];
      }
      given += n;
      return n;
    };
    relay::import_input input = relay::read_import_input(endless);
    CHECK(input.lines() == 100'000);
    CHECK_FALSE(input.read_whole());
    const agentctx::error e = require_error(relay::import_ndjson(target, std::move(input)));
    CAPTURE(e.message);
    CHECK(e.message.starts_with("line 2: "));
    CHECK(given <= 100'000 * status_line.size() + (std::size_t{1} << 17));
    CHECK(target.record_count() == 0);
  }
  // A reader's error is the import's, and nothing is written.
  {
    agentctx::io::memory_file_system fs;
    auto source = wire_source(fs);
    std::string text;
    require_value(relay::export_ndjson(source, "", text));
    agentctx::io::memory_file_system other;
    auto target = require_value(relay::store::open(other, "/t", test_options()));
    bool gave = false;
    const relay::import_reader failing = [&](std::span<char> buffer) -> agentctx::result<std::size_t> {
      if (gave) return agentctx::fail(errc::io_error, "read failed: Input/output error", "in.ndjson");
      gave = true;
      const std::size_t n = std::min(buffer.size(), text.size() - 10);
      std::copy_n(text.data(), n, buffer.data());
      return n;
    };
    const agentctx::error e = require_error(relay::import_ndjson(target, failing));
    CHECK(e.code == errc::io_error);
    CHECK(e.message == "read failed: Input/output error");
    CHECK(e.path == "in.ndjson");
    CHECK(target.record_count() == 0);
  }
  // A reader that says it read more than it was given room for is refused.
  {
    agentctx::io::memory_file_system fs;
    auto target = require_value(relay::store::open(fs, "/t", test_options()));
    const relay::import_reader lying = [](std::span<char> buffer) -> agentctx::result<std::size_t> {
      return buffer.size() + 1;
    };
    const agentctx::error e = require_error(relay::import_ndjson(target, lying));
    CHECK(e.code == errc::invalid_argument);
    CHECK(e.message == "the import's reader returned 65537 bytes for a buffer of 65536");
    CHECK(target.record_count() == 0);
  }
  // A line longer than the most a line may be is refused as soon as it is
  // read that far, or when its line break is read (blank lines counted).
  for (const std::string& text : {std::string("0123456789\n\nabcdefghijk\nz\n"), std::string("0123456789\n\nabcdefghijk")}) {
    for (std::size_t piece : {std::size_t{1}, std::size_t{64}}) {
      CAPTURE(text);
      CAPTURE(piece);
      piece_reader in{text, piece};
      const relay::import_reader reader = in.reader();
      relay::detail::stream_lines lines(reader, 10);
      std::string_view line;
      bool unbroken = true;
      REQUIRE(lines.next(line, unbroken));
      CHECK(line == "0123456789");
      CHECK_FALSE(unbroken);
      CHECK_FALSE(lines.next(line, unbroken));
      REQUIRE(lines.failure().has_value());
      CHECK(lines.failure()->code == errc::invalid_argument);
      CHECK(lines.failure()->message == "line 3: longer than 10 bytes, more than any line of an export holds");
      CHECK_FALSE(lines.next(line, unbroken));
    }
  }
  // Lines as line_cursor reads them: blank ones skipped and counted, the
  // last one unbroken when no line break follows it.
  piece_reader in{" \r\nab\n\t\ncd", 2};
  const relay::import_reader reader = in.reader();
  relay::detail::stream_lines lines(reader);
  std::string_view line;
  bool unbroken = true;
  REQUIRE(lines.next(line, unbroken));
  CHECK(line == "ab");
  CHECK(lines.number() == 2);
  CHECK_FALSE(unbroken);
  REQUIRE(lines.next(line, unbroken));
  CHECK(line == "cd");
  CHECK(lines.number() == 4);
  CHECK(unbroken);
  CHECK_FALSE(lines.next(line, unbroken));
  CHECK_FALSE(lines.failure().has_value());
}

}  // namespace relay_export_test
