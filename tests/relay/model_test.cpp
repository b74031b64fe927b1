// relay/model.hpp: every constraint of seed 001 sections 6 and 7, as a table
// of invalid packages and facts, plus what valid objects read as.
#include "agentctx/relay/model.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/errors.hpp"
#include "relay_test_support.hpp"

namespace relay_model_test {

using namespace relay_test;
using agentctx::errc;

namespace {

json::value parsed(std::string_view text) { return require_value(json::parse(text)); }

}  // namespace

TEST_CASE("a minimal package reads with the defaults of section 6.4") {
  auto p = require_value(relay::read_package(package("pkg_1")));
  CHECK(p.package_id == "pkg_1");
  CHECK(p.project_id == "proj_demo");
  CHECK(p.status == relay::package_status::complete);
  CHECK(p.review == relay::review_type::none);
  CHECK(p.package_type == "milestone");
  CHECK(p.created_by.id == "jordan");
  CHECK(p.created_by.type == relay::actor_type::human);
  CHECK_FALSE(p.created_by.session_id.has_value());
  CHECK(p.significance == 5);
  CHECK(p.description.empty());
  CHECK(p.tags.empty());
  CHECK_FALSE(p.estimated_next_actor.has_value());
  CHECK(p.created_at_instant.ms == 1'776'542'400'000ull);
}

TEST_CASE("every optional field reads; unknown and x-* members stay in the wire object") {
  auto p = require_value(relay::read_package(parsed(R"({
    "package_id": "any string at all", "project_id": "p", "relay_version": "0.1",
    "title": "t", "status": "awaiting_review", "package_type": "x-model-eval", "review_type": "agent",
    "created_at": "2026-04-18T20:00:00.123+00:00",
    "created_by": {"id": "bot-7", "type": "agent", "session_id": "sess_1", "x-key": "fp"},
    "description": "d", "tags": ["a", "b"], "decisions_made": ["x"], "open_questions": ["q?"],
    "handoff_note": "h", "estimated_next_actor": "agent",
    "deliverables": [{"path": "docs/a.md", "type": "md", "hash": "sha256:abc123", "size_bytes": 18432, "x-more": 1},
                     {"path": "https://example.com/x", "type": ""}],
    "parent_package_id": "pkg_0", "significance": 9.0, "content_md": "# body", "topic": "retrieval",
    "artifact_type": "report", "storage_path": "s3://b/k", "x-trust-score": 0.93, "future_field": {"n": [1]}
  })")));
  CHECK(p.package_type == "x-model-eval");
  CHECK(p.significance == 9);
  CHECK(p.created_at_instant.ms == 1'776'542'400'123ull);
  CHECK(p.created_by.session_id == std::optional<std::string>("sess_1"));
  CHECK(p.deliverables.size() == 2);
  CHECK(p.deliverables[0].size_bytes == std::optional<std::uint64_t>(18432));
  CHECK(p.estimated_next_actor == std::optional<relay::actor_type>(relay::actor_type::agent));
  CHECK(p.topic == std::optional<std::string>("retrieval"));
  CHECK(p.wire.find("x-trust-score")->as_number() == doctest::Approx(0.93));
  CHECK(p.wire.find("future_field") != nullptr);
}

TEST_CASE("invalid packages: each constraint of section 6 names its field") {
  struct bad {
    const char* what;
    std::function<void(json::value&)> edit;
    const char* message_start;
  };
  const auto set = [](std::string name, json::value v) {
    return [name, v](json::value& p) { p.set(name, v); };
  };
  const auto drop = [](std::string name) { return [name](json::value& p) { p.erase(name); }; };
  const auto created_by = [](json::value v) { return [v](json::value& p) { p.set("created_by", v); }; };
  const bad cases[] = {
      {"package_id missing", drop("package_id"), "package_id is required"},
      {"package_id empty", set("package_id", ""), "package_id must not be empty"},
      {"package_id a number", set("package_id", 7), "package_id must be a string"},
      {"project_id missing", drop("project_id"), "project_id is required"},
      {"relay_version missing", drop("relay_version"), "relay_version is required"},
      {"relay_version 0.2", set("relay_version", "0.2"), "relay_version must be \"0.1\""},
      {"title missing", drop("title"), "title is required"},
      {"title empty", set("title", ""), "title must not be empty"},
      {"title 201 characters", set("title", std::string(201, 'x')), "title must be 1 to 200 characters (it has 201)"},
      {"title null", set("title", nullptr), "title is required"},
      {"status unknown", set("status", "done"), "status must be one of draft, complete"},
      {"status missing", drop("status"), "status is required"},
      {"package_type unknown", set("package_type", "note"), "package_type must be one of standard"},
      {"package_type bare x-", set("package_type", "x-"), "package_type must be one of"},
      {"review_type unknown", set("review_type", "peer"), "review_type must be one of none, human, agent"},
      {"created_at missing", drop("created_at"), "created_at is required"},
      {"created_at not RFC 3339", set("created_at", "2026-04-18 20:00:00"), "created_at must be an RFC 3339 UTC timestamp"},
      {"created_at not UTC", set("created_at", "2026-04-18T20:00:00+02:00"), "created_at must be in UTC"},
      {"created_at impossible date", set("created_at", "2026-02-30T00:00:00Z"), "created_at must be an RFC 3339"},
      {"created_by missing", drop("created_by"), "created_by is required"},
      {"created_by a string", created_by("jordan"), "created_by must be an object"},
      {"created_by.id missing", created_by(json::value::object_type{{"type", "human"}}), "created_by.id is required"},
      {"created_by.type unknown", created_by(json::value::object_type{{"id", "j"}, {"type", "robot"}}),
       "created_by.type must be one of human, agent, script (got \"robot\")"},
      {"created_by.session_id a number", created_by(json::value::object_type{{"id", "j"}, {"type", "human"}, {"session_id", 3}}),
       "created_by.session_id must be a string or null"},
      {"description a number", set("description", 1), "description must be a string or null"},
      {"tags not an array", set("tags", "a,b"), "tags must be an array of strings"},
      {"tags with a number", set("tags", json::value::array_type{"a", 2}), "tags[1] must be a string"},
      {"decisions_made with null", set("decisions_made", json::value::array_type{nullptr}), "decisions_made[0] must be a string"},
      {"open_questions an object", set("open_questions", json::value::object_type{}), "open_questions must be an array"},
      {"handoff_note an array", set("handoff_note", json::value::array_type{}), "handoff_note must be a string"},
      {"estimated_next_actor script", set("estimated_next_actor", "script"), "estimated_next_actor must be human, agent or null"},
      {"significance 0", set("significance", 0), "significance must be an integer from 1 to 10"},
      {"significance 11", set("significance", 11), "significance must be an integer from 1 to 10"},
      {"significance 5.5", set("significance", 5.5), "significance must be an integer from 1 to 10"},
      {"significance a string", set("significance", "5"), "significance must be an integer from 1 to 10"},
      {"parent_package_id a number", set("parent_package_id", 1), "parent_package_id must be a string or null"},
      {"content_md an object", set("content_md", json::value::object_type{}), "content_md must be a string"},
      {"topic a boolean", set("topic", true), "topic must be a string or null"},
      {"artifact_type a number", set("artifact_type", 2), "artifact_type must be a string or null"},
      {"storage_path an array", set("storage_path", json::value::array_type{}), "storage_path must be a string or null"},
      {"deliverables an object", set("deliverables", json::value::object_type{}), "deliverables must be an array of objects"},
      {"deliverable a string", set("deliverables", json::value::array_type{"a.md"}), "deliverables[0] must be an object"},
      {"deliverable without path", set("deliverables", json::value::array_type{json::value::object_type{{"type", "md"}}}),
       "deliverables[0].path is required"},
      {"deliverable without type",
       set("deliverables", json::value::array_type{json::value::object_type{{"path", "a.md"}}}), "deliverables[0].type is required"},
      {"deliverable hash without algorithm",
       set("deliverables", json::value::array_type{json::value::object_type{{"path", "a"}, {"type", "md"}, {"hash", "abc"}}}),
       "deliverables[0].hash must be <algo>:<hex>"},
      {"deliverable hash not hex",
       set("deliverables", json::value::array_type{json::value::object_type{{"path", "a"}, {"type", "md"}, {"hash", "sha256:xyz"}}}),
       "deliverables[0].hash must be <algo>:<hex>"},
      {"deliverable negative size",
       set("deliverables",
           json::value::array_type{json::value::object_type{{"path", "a"}, {"type", "md"}, {"size_bytes", -1}}}),
       "deliverables[0].size_bytes must be a non-negative integer"},
  };
  for (const bad& b : cases) {
    CAPTURE(b.what);
    json::value p = package("pkg_1");
    b.edit(p);
    auto out = relay::read_package(std::move(p));
    REQUIRE_FALSE(out.has_value());
    CHECK(out.error().code == errc::invalid_argument);
    CHECK(relay::protocol_error_of(out.error()).code == "invalid_schema");
    CHECK(relay::protocol_error_of(out.error()).http_status == 400);
    CHECK_MESSAGE(out.error().message.starts_with(b.message_start), out.error().message);
  }
  CHECK(relay::read_package(json::value::array_type{}).error().message == "the package must be a JSON object");
}

TEST_CASE("title length counts characters, not bytes") {
  std::string title;
  for (int i = 0; i < 200; ++i) title += "\xC3\xA9";  // 200 characters, 400 bytes
  json::value p = package("pkg_1");
  p.set("title", title);
  CHECK(relay::read_package(p).has_value());
  title += "\xC3\xA9";
  p.set("title", title);
  CHECK_FALSE(relay::read_package(p).has_value());
}

TEST_CASE("null optional members are absent; every standard package type is accepted") {
  json::value p = package("pkg_1");
  for (const char* name : {"description", "tags", "estimated_next_actor", "deliverables", "parent_package_id",
                           "significance", "content_md", "topic", "artifact_type", "storage_path"}) {
    p.set(name, nullptr);
  }
  auto read = require_value(relay::read_package(p));
  CHECK(read.significance == 5);
  for (std::string_view type : relay::standard_package_types) {
    p.set("package_type", std::string(type));
    CHECK(relay::read_package(p).has_value());
  }
}

TEST_CASE("the L3 transitions, and complete is terminal") {
  using relay::package_status;
  const package_status all[] = {package_status::draft, package_status::complete, package_status::awaiting_review,
                                package_status::revision_requested};
  int allowed = 0;
  for (auto from : all) {
    for (auto to : all) allowed += relay::is_allowed_transition(from, to);
  }
  CHECK(allowed == 6);
  CHECK(relay::is_allowed_transition(package_status::draft, package_status::complete));
  CHECK(relay::is_allowed_transition(package_status::draft, package_status::awaiting_review));
  CHECK(relay::is_allowed_transition(package_status::awaiting_review, package_status::complete));
  CHECK(relay::is_allowed_transition(package_status::awaiting_review, package_status::revision_requested));
  CHECK(relay::is_allowed_transition(package_status::revision_requested, package_status::awaiting_review));
  CHECK(relay::is_allowed_transition(package_status::revision_requested, package_status::complete));
  for (auto to : all) CHECK_FALSE(relay::is_allowed_transition(package_status::complete, to));
}

TEST_CASE("facts: the section 7.5 example reads; each constraint is checked") {
  auto f = require_value(relay::read_fact(parsed(R"({
    "fact_id": "fact_ab12cd34ef56ab78cd90ef12ab34cd56", "project_id": "proj_dev_relay",
    "subject": "longmemeval_s", "predicate": "recall_any_at_5", "value": "97.0",
    "valid_from": "2026-04-10T12:00:00Z", "valid_to": null,
    "source_package_id": "pkg_7593a5b03fcc4706b181ea855e958e06", "confidence": 1.0,
    "asserted_by": {"id": "jordan", "type": "human", "session_id": null},
    "created_at": "2026-04-10T12:00:00Z", "tags": ["benchmark", "retrieval"]})")));
  CHECK(f.is_current());
  CHECK(f.value == "97.0");
  CHECK(f.asserted_by->id == "jordan");
  CHECK(f.holds_at(f.valid_from_at));
  CHECK_FALSE(f.holds_at(agentctx::utc_instant{f.valid_from_at.ms - 1, {}}));

  struct bad {
    const char* text;
    const char* message_start;
  };
  const char* base = R"("fact_id":"f","project_id":"p","subject":"s","predicate":"p","valid_from":"2026-04-10T12:00:00Z","created_at":"2026-04-10T12:00:00Z")";
  const bad cases[] = {
      {R"({"value":97.0,)", "value must be a string (numbers are written as strings"},
      {R"({)", "value is required"},
      {R"({"value":"v","valid_to":"2026-04-09T00:00:00Z",)", "valid_to must not be before valid_from"},
      {R"({"value":"v","valid_to":"yesterday",)", "valid_to must be an RFC 3339"},
      {R"({"value":"v","confidence":1.5,)", "confidence must be a number from 0.0 to 1.0"},
      {R"({"value":"v","confidence":"high",)", "confidence must be a number"},
      {R"({"value":"v","asserted_by":{"id":"x"},)", "asserted_by.type is required"},
      {R"({"value":"v","tags":[1],)", "tags[0] must be a string"},
  };
  for (const bad& b : cases) {
    CAPTURE(b.text);
    auto out = relay::read_fact(parsed(std::string(b.text) + base + "}"));
    REQUIRE_FALSE(out.has_value());
    CHECK_MESSAGE(out.error().message.starts_with(b.message_start), out.error().message);
  }
  CHECK(relay::read_fact(parsed(R"({"value":"v","fact_id":"f","project_id":"p","subject":"s","valid_from":"2026-04-10T12:00:00Z","created_at":"2026-04-10T12:00:00Z"})"))
            .error()
            .message == "predicate is required");
}

TEST_CASE("projects and sessions") {
  auto p = require_value(relay::read_project(parsed(R"({"project_id":"p","created_at":"2026-01-01T00:00:00Z","archived_at":"2026-02-01T00:00:00Z"})")));
  CHECK(p.archived());
  CHECK(p.name == "p");
  CHECK(relay::read_project(parsed(R"({"project_id":"p"})")).error().message == "created_at is required");
  auto s = require_value(relay::read_session(parsed(
      R"({"session_id":"s","project_id":"p","actor_id":"a","actor_type":"agent","callsign":"coral-heron","started_at":"2026-01-01T00:00:00Z","ended_at":null,"packages_deposited":["x"]})")));
  CHECK(s.callsign == std::optional<std::string>("coral-heron"));
  CHECK(s.packages_deposited.size() == 1);
  CHECK(relay::read_session(parsed(R"({"session_id":"s","project_id":"p","actor_id":"a","actor_type":"bot","started_at":"2026-01-01T00:00:00Z"})"))
            .error()
            .message.starts_with("actor_type must be one of"));
}

TEST_CASE("generated ids and callsigns") {
  std::uint64_t n = 0;
  const auto counter = [&n] { return ++n * 0x0123456789ABCDEFull; };
  const std::string id = relay::generate_id("pkg_", counter);
  CHECK(id.size() == 36);
  CHECK(id.find_first_not_of("0123456789abcdef", 4) == std::string::npos);
  CHECK(relay::generate_id("pkg_", counter) != id);
  const std::string callsign = relay::generate_callsign(12345);
  CHECK(callsign.find('-') != std::string::npos);
  CHECK(relay::generate_callsign(12345) == callsign);
}

}  // namespace relay_model_test
