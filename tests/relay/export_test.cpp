// relay/export.hpp: import into archived and differing projects, and the
// sessions' packages_deposited through export and import.
#include "agentctx/relay/export.hpp"

#include <doctest/doctest.h>

#include <string>

#include "agentctx/relay/errors.hpp"
#include "relay_test_support.hpp"

namespace relay_export_test {

using namespace relay_test;
using agentctx::errc;

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
  require_ok(relay::export_ndjson(source, "proj_demo", header));  // the header and the project

  // In the file: [04-01, 04-10) and [04-05, 04-20) meet.
  {
    agentctx::io::memory_file_system fs;
    auto target = open_store_at(fs);
    const std::string text = header + fact_line("fact_a", "2026-04-01T00:00:00Z", "2026-04-10T00:00:00Z") +
                             fact_line("fact_b", "2026-04-05T00:00:00Z", "2026-04-20T00:00:00Z");
    const agentctx::error refused = require_error(relay::import_ndjson(target, text));
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
  CHECK(require_value(relay::import_ndjson(target, text)).facts == 3);
  // Against the store: a current fact from 04-18 meets fact_b.
  const agentctx::error refused =
      require_error(relay::import_ndjson(target, header + fact_line("fact_d", "2026-04-18T00:00:00Z", "")));
  CHECK(refused.code == errc::already_exists);
  CHECK(refused.message == "line 3: fact \"fact_d\" would hold at the same time as fact \"fact_b\" of (dashboard, status)");
  CHECK(require_value(relay::import_ndjson(target, header + fact_line("fact_d", "2026-04-20T00:00:00Z", ""))).facts == 1);
  CHECK(target.current_fact("proj_demo", "dashboard", "status")->fact_id == "fact_d");
}

}  // namespace relay_export_test
