// Tests of agentctx/agdb/proposals.hpp: proposal events (encoding, parsing,
// a bad-input table), the fold of review state, and propose / promote /
// accept / reject against the in-memory file system.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "support/hash_layer.hpp"

namespace agdb_proposals_test {

namespace agdb = agentctx::agdb;
using agdb::layer_id;
using agentctx::errc;
using test_support::layer_entry;

namespace {

const std::vector<agdb::layer_location> layers = agdb::standard_layer_locations("/repo");
const std::string base_path = "/repo/AGENTS.db";
const std::string user_path = "/repo/AGENTS.user.db";
const std::string delta_path = "/repo/AGENTS.delta.db";

using test_support::file_bytes;
using test_support::read_valid_layer;

agdb::proposal_ledger ledger_of(agentctx::io::file_system& fs) {
  auto reader = agdb::layer_reader::open(fs, delta_path);
  REQUIRE(reader.has_value());
  auto ledger = agdb::fold_proposals(*reader);
  REQUIRE(ledger.has_value());
  return std::move(*ledger);
}

const agdb::chunk* find(const agdb::layer_contents& contents, std::uint32_t id) {
  for (const agdb::chunk& c : contents.chunks) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

// /repo with a base layer (ids 1, 2) and a delta layer (ids 100, 101 by
// agents, and 102 with a chunk-id source).
struct review_repo {
  agentctx::io::memory_file_system fs;
  review_repo() {
    REQUIRE(fs.create_dir("/repo").has_value());
    test_support::write_hash_layer(fs, base_path, {{1, "canonical", "Releases are cut on Fridays."},
                                                    {2, "canonical", "The API lives in src/api."}});
    test_support::write_hash_layer(
        fs, delta_path,
        {{100, "invariant", "Requests to /foo MUST include header Bar.", {agdb::source_ref::to_string("src/r.ts:88")}},
         {101, "note", "The build needs cmake 3.25."},
         {102, "note", "Friday releases skip holidays.", {agdb::source_ref::to_chunk(1)}}});
  }
  agdb::proposal_outcome propose(std::uint32_t id) {
    agdb::proposal_request request;
    request.context_id = id;
    request.title = "proposal of " + std::to_string(id);
    request.created_at_unix_ms = 1'000;
    auto outcome = agdb::propose_promotion(fs, layers, request);
    INFO((outcome ? std::string() : outcome.error().describe()));
    REQUIRE(outcome.has_value());
    return *outcome;
  }
};

agdb::review_options reviewer(std::string name = "alice") {
  agdb::review_options options;
  options.actor = std::move(name);
  options.now_unix_ms = 2'000;
  return options;
}

}  // namespace

TEST_CASE("proposal events encode to compact JSON and parse back") {
  agdb::proposal_event e;
  e.action = agdb::proposal_action::accept;
  e.proposal_id = 77;
  e.context_id = 1234;
  e.created_at_unix_ms = 5;
  e.actor = "alice";
  e.reason = "checked \"twice\"";
  e.outcome = "promoted";
  const std::string json = agdb::encode_proposal_event(e);
  CHECK(json ==
        R"({"action":"accept","proposal_id":77,"context_id":1234,"created_at_unix_ms":5,"actor":"alice",)"
        R"("reason":"checked \"twice\"","outcome":"promoted"})");
  auto parsed = agdb::parse_proposal_event(json);
  REQUIRE(parsed.has_value());
  CHECK(*parsed == e);

  agdb::proposal_event propose;
  propose.context_id = 9;
  propose.from_path = "AGENTS.delta.db";
  propose.to_path = "AGENTS.user.db";
  propose.title = "t";
  propose.why = "w";
  propose.what = "x";
  propose.where = "y";
  auto round = agdb::parse_proposal_event(agdb::encode_proposal_event(propose));
  REQUIRE(round.has_value());
  CHECK(*round == propose);
}

TEST_CASE("events as the reference implementation writes them are read, nulls as absent") {
  auto propose = agdb::parse_proposal_event(
      R"({"action":"propose","context_id":5,"from_path":"AGENTS.delta.db","to_path":"AGENTS.user.db",)"
      R"("created_at_unix_ms":1,"actor":"mcp"})");
  REQUIRE(propose.has_value());
  CHECK(propose->action == agdb::proposal_action::propose);
  CHECK(propose->context_id == 5);
  CHECK(propose->actor == "mcp");
  auto accept = agdb::parse_proposal_event(
      R"({"action":"accept","proposal_id":6,"context_id":5,"created_at_unix_ms":2,"actor":"human",)"
      R"("outcome":null,"reason":null,"x-extra":[1,2]})");
  REQUIRE(accept.has_value());
  CHECK(accept->proposal_id == 6u);
  CHECK_FALSE(accept->reason.has_value());
  CHECK_FALSE(accept->outcome.has_value());
  auto no_action = agdb::parse_proposal_event(R"({"context_id":7})");
  REQUIRE(no_action.has_value());
  CHECK(no_action->action == agdb::proposal_action::propose);
}

TEST_CASE("bad proposal event contents are refused with a message naming the member") {
  struct bad_case {
    const char* content;
    const char* fragment;
  };
  const bad_case cases[] = {
      {"", "not JSON"},
      {"{", "not JSON"},
      {"[1,2]", "not a JSON object"},
      {"\"propose\"", "not a JSON object"},
      {R"({"action":"delete","context_id":1})", "action \"delete\""},
      {R"({"action":7,"context_id":1})", "action is not a string"},
      {R"({"action":"propose"})", "context_id is missing"},
      {R"({"context_id":null})", "context_id is missing"},
      {R"({"context_id":0})", "context_id is not a chunk id"},
      {R"({"context_id":-3})", "context_id is not a chunk id"},
      {R"({"context_id":4294967296})", "context_id is not a chunk id"},
      {R"({"context_id":1.5})", "context_id is not a chunk id"},
      {R"({"context_id":"12"})", "context_id is not a chunk id"},
      {R"({"context_id":1,"proposal_id":0})", "proposal_id is not a chunk id"},
      {R"({"context_id":1,"created_at_unix_ms":-1})", "created_at_unix_ms"},
      {R"({"context_id":1,"created_at_unix_ms":1e3})", "created_at_unix_ms"},
      {R"({"context_id":1,"title":5})", "title is not a string"},
      {R"({"context_id":1,"reason":{}})", "reason is not a string"},
      {R"({"context_id":1,"actor":["a"]})", "actor is not a string"},
      {R"({"context_id":1} trailing)", "not JSON"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.content);
    auto parsed = agdb::parse_proposal_event(c.content);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().code == errc::invalid_value);
    CHECK(parsed.error().message.find(c.fragment) != std::string::npos);
  }
}

TEST_CASE("the fold: first decision stands, bad events are skipped with a warning") {
  agentctx::io::memory_file_system fs;
  REQUIRE(fs.create_dir("/repo").has_value());
  const auto event = [](std::uint32_t id, std::string content, std::uint32_t source) {
    return layer_entry{id, "meta.proposal_event", std::move(content), {agdb::source_ref::to_chunk(source)}};
  };
  test_support::write_hash_layer(
      fs, delta_path,
      {{5, "note", "delta five"},
       {6, "note", "delta six"},
       event(10, R"({"action":"propose","context_id":5,"actor":"mcp","created_at_unix_ms":1,"title":"five"})", 5),
       event(11, R"({"action":"propose","context_id":6,"actor":"mcp","created_at_unix_ms":2})", 6),
       event(12, R"({"action":"accept","proposal_id":10,"context_id":5,"actor":"alice","created_at_unix_ms":3,)"
                 R"("reason":"good"})",
             5),
       event(13, R"({"action":"reject","proposal_id":10,"context_id":5,"actor":"bob","created_at_unix_ms":4})", 5),
       event(14, R"({"action":"reject","proposal_id":99,"context_id":5})", 5),
       event(15, "not json at all", 5),
       event(16, R"({"action":"accept","context_id":6,"actor":"carol"})", 6)});
  const agdb::proposal_ledger ledger = ledger_of(fs);
  REQUIRE(ledger.proposals.size() == 2);
  const agdb::proposal& five = ledger.proposals[0];
  CHECK(five.id == 10);
  CHECK(five.context_id == 5);
  CHECK(five.status == agdb::proposal_status::accepted);
  CHECK(five.decided_by == "alice");
  CHECK(five.decided_at_unix_ms == 3u);
  CHECK(five.reason == "good");
  CHECK(five.decision_id == 12u);
  CHECK(five.title == "five");
  const agdb::proposal& six = ledger.proposals[1];
  CHECK(six.status == agdb::proposal_status::pending);  // event 16 is a direct promotion record
  CHECK(ledger.pending_for(6) == &six);
  CHECK(ledger.pending_for(5) == nullptr);
  CHECK(ledger.count(agdb::proposal_status::pending) == 1);
  REQUIRE(ledger.warnings.size() == 3);
  CHECK(ledger.warnings[0].find("event 13") != std::string::npos);
  CHECK(ledger.warnings[0].find("already accepted by event 12") != std::string::npos);
  CHECK(ledger.warnings[1].find("event 14") != std::string::npos);
  CHECK(ledger.warnings[2].find("event 15") != std::string::npos);
}

TEST_CASE("propose appends one event to the delta layer and keeps every record") {
  review_repo repo;
  const agdb::layer_contents before = read_valid_layer(repo.fs, delta_path);
  const agdb::proposal_outcome outcome = repo.propose(100);
  CHECK_FALSE(outcome.already_pending);
  CHECK(outcome.context_id == 100);
  CHECK(outcome.path == delta_path);

  const agdb::layer_contents after = read_valid_layer(repo.fs, delta_path);
  REQUIRE(after.chunks.size() == before.chunks.size() + 1);
  CHECK(std::equal(before.chunks.begin(), before.chunks.end(), after.chunks.begin()));
  const agdb::chunk& event = after.chunks.back();
  CHECK(event.id == outcome.proposal_id);
  CHECK(event.kind == "meta.proposal_event");
  CHECK(event.author == "mcp");
  CHECK(event.sources == std::vector{agdb::source_ref::to_chunk(100)});
  CHECK(after.metadata_json == before.metadata_json);
  // The event's id is free in every layer; its row is all zeros.
  CHECK(find(read_valid_layer(repo.fs, base_path), event.id) == nullptr);
  const std::size_t row = after.chunks.size() - 1;
  CHECK(std::all_of(after.embeddings.f32_values.begin() + static_cast<std::ptrdiff_t>(row * 128),
                    after.embeddings.f32_values.end(), [](float v) { return v == 0.0f; }));

  auto parsed = agdb::parse_proposal_event(event.content);
  REQUIRE(parsed.has_value());
  CHECK(parsed->context_id == 100);
  CHECK(parsed->from_path == "AGENTS.delta.db");
  CHECK(parsed->to_path == "AGENTS.user.db");
  CHECK(parsed->title == "proposal of 100");

  // Proposing it again names the pending proposal and writes nothing.
  const auto bytes = file_bytes(repo.fs, delta_path);
  const agdb::proposal_outcome again = repo.propose(100);
  CHECK(again.already_pending);
  CHECK(again.proposal_id == outcome.proposal_id);
  CHECK(file_bytes(repo.fs, delta_path) == bytes);
}

TEST_CASE("bad proposals are refused and write nothing") {
  review_repo repo;
  const auto bytes = file_bytes(repo.fs, delta_path);
  const auto refused = [&](agdb::proposal_request request, errc code, const char* fragment) {
    CAPTURE(fragment);
    auto outcome = agdb::propose_promotion(repo.fs, layers, request);
    REQUIRE_FALSE(outcome.has_value());
    CHECK(outcome.error().code == code);
    CHECK(outcome.error().describe().find(fragment) != std::string::npos);
  };
  agdb::proposal_request request;
  request.context_id = 100;
  request.target = "base";
  refused(request, errc::invalid_argument, "must be user, not 'base'");
  request.target = "delta";
  refused(request, errc::invalid_argument, "must be user");
  request.target = "user";
  request.context_id = 0;
  refused(request, errc::invalid_argument, "context_id 0");
  request.context_id = 1;  // in base, not in delta
  refused(request, errc::not_found, "chunk 1 is not in the delta layer");
  request.context_id = 100;
  request.actor = "";
  refused(request, errc::invalid_argument, "actor");
  request.actor = "mcp";
  request.title = std::string("\xff\xfe");
  refused(request, errc::invalid_argument, "not valid UTF-8");
  CHECK(file_bytes(repo.fs, delta_path) == bytes);

  // A proposal event is not context: it cannot be proposed itself.
  const agdb::proposal_outcome first = repo.propose(101);
  request.title.reset();
  request.context_id = first.proposal_id;
  refused(request, errc::invalid_argument, "meta.proposal_event record");

  // Without a delta layer there is nothing to propose.
  agentctx::io::memory_file_system empty;
  REQUIRE(empty.create_dir("/repo").has_value());
  request.context_id = 100;
  auto missing = agdb::propose_promotion(empty, layers, request);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);
}

TEST_CASE("accepting a proposal copies the chunk into a new user layer and records the decision") {
  review_repo repo;
  const agdb::layer_contents delta_before = read_valid_layer(repo.fs, delta_path);
  const agdb::proposal_outcome proposed = repo.propose(100);
  const std::uint32_t ids[] = {proposed.proposal_id};
  agdb::review_options options = reviewer();
  options.reason = "verified in src/r.ts";
  auto report = agdb::accept_proposals(repo.fs, layers, ids, options);
  INFO((report ? std::string() : report.error().describe()));
  REQUIRE(report.has_value());
  CHECK(report->user_created);
  REQUIRE(report->chunks.size() == 1);
  CHECK(report->chunks[0].context_id == 100);
  CHECK(report->chunks[0].outcome == agdb::promotion_outcome::promoted);
  CHECK(report->chunks[0].proposal_id == proposed.proposal_id);

  const agdb::layer_contents user = read_valid_layer(repo.fs, user_path);
  REQUIRE(user.chunks.size() == 1);
  const agdb::chunk& copy = user.chunks[0];
  const agdb::chunk& original = *find(delta_before, 100);
  CHECK(copy.id == 100);
  CHECK(copy.author == "human");
  CHECK(copy.kind == original.kind);
  CHECK(copy.content == original.content);
  CHECK(copy.confidence == original.confidence);
  CHECK(copy.created_at_unix_ms == 2'000);
  CHECK(copy.sources == std::vector{agdb::source_ref::to_string("src/r.ts:88"), agdb::source_ref::to_chunk(100)});
  CHECK(user.metadata_json == delta_before.metadata_json);
  CHECK(std::equal(user.embeddings.f32_values.begin(), user.embeddings.f32_values.end(),
                   delta_before.embeddings.f32_values.begin()));

  // The delta layer keeps every record; the decision is appended.
  const agdb::layer_contents delta_after = read_valid_layer(repo.fs, delta_path);
  REQUIRE(delta_after.chunks.size() == delta_before.chunks.size() + 2);
  CHECK(std::equal(delta_before.chunks.begin(), delta_before.chunks.end(), delta_after.chunks.begin()));
  const agdb::proposal_ledger ledger = ledger_of(repo.fs);
  REQUIRE(ledger.proposals.size() == 1);
  CHECK(ledger.proposals[0].status == agdb::proposal_status::accepted);
  CHECK(ledger.proposals[0].decided_by == "alice");
  CHECK(ledger.proposals[0].decided_at_unix_ms == 2'000u);
  CHECK(ledger.proposals[0].reason == "verified in src/r.ts");
  CHECK(ledger.proposals[0].outcome == "promoted");
  CHECK(ledger.proposals[0].decision_id == report->chunks[0].decision_id);
  CHECK(ledger.warnings.empty());

  // An accepted proposal is not decided twice, and its chunk not proposed again.
  auto twice = agdb::accept_proposals(repo.fs, layers, ids, reviewer("bob"));
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.error().message.find("already accepted by alice") != std::string::npos);
  agdb::proposal_request request;
  request.context_id = 100;
  auto again = agdb::propose_promotion(repo.fs, layers, request);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message.find("already accepted") != std::string::npos);
}

TEST_CASE("promote: equal content is a no-op, other content needs supersede, all or nothing") {
  review_repo repo;
  const std::uint32_t first[] = {100, 101};
  REQUIRE(agdb::promote_chunks(repo.fs, layers, first, reviewer()).has_value());
  const auto user_bytes = file_bytes(repo.fs, user_path);

  // Promoting the same ids again changes no chunk and records the decisions.
  auto again = agdb::promote_chunks(repo.fs, layers, first, reviewer());
  REQUIRE(again.has_value());
  CHECK(again->chunks[0].outcome == agdb::promotion_outcome::unchanged);
  CHECK(again->chunks[1].outcome == agdb::promotion_outcome::unchanged);
  CHECK(file_bytes(repo.fs, user_path) == user_bytes);

  // The user layer now holds id 101 with other content (a human edited it).
  agdb::layer_contents edited = read_valid_layer(repo.fs, user_path);
  edited.chunks[1].content = "The build needs cmake 3.28.";
  REQUIRE(agdb::write_layer(repo.fs, user_path, edited).has_value());
  const auto edited_bytes = file_bytes(repo.fs, user_path);
  const auto delta_bytes = file_bytes(repo.fs, delta_path);
  const std::uint32_t mixed[] = {102, 101};
  auto refused = agdb::promote_chunks(repo.fs, layers, mixed, reviewer());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("chunk 101 is already in the user layer with other content") != std::string::npos);
  CHECK(refused.error().message.find("--supersede") != std::string::npos);
  CHECK(file_bytes(repo.fs, user_path) == edited_bytes);  // 102 was not promoted either
  CHECK(file_bytes(repo.fs, delta_path) == delta_bytes);

  agdb::review_options supersede = reviewer();
  supersede.supersede = true;
  auto replaced = agdb::promote_chunks(repo.fs, layers, mixed, supersede);
  REQUIRE(replaced.has_value());
  CHECK(replaced->chunks[0].outcome == agdb::promotion_outcome::promoted);
  CHECK(replaced->chunks[1].outcome == agdb::promotion_outcome::superseded);
  const agdb::layer_contents user = read_valid_layer(repo.fs, user_path);
  REQUIRE(user.chunks.size() == 3);
  CHECK(user.chunks[1].id == 101);  // replaced in place
  CHECK(user.chunks[1].content == "The build needs cmake 3.25.");
  CHECK(user.chunks[2].id == 102);
  CHECK(user.chunks[2].sources == std::vector{agdb::source_ref::to_chunk(1), agdb::source_ref::to_chunk(102)});

  // Ids that are not promotable context.
  const std::uint32_t missing[] = {100, 555};
  auto not_there = agdb::promote_chunks(repo.fs, layers, missing, reviewer());
  REQUIRE_FALSE(not_there.has_value());
  CHECK(not_there.error().code == errc::not_found);
  const std::uint32_t none[] = {0};
  CHECK_FALSE(agdb::promote_chunks(repo.fs, layers, std::span<const std::uint32_t>(none, 0), reviewer()).has_value());
  const agdb::proposal_outcome proposal = repo.propose(102);
  const std::uint32_t event[] = {proposal.proposal_id};
  auto meta = agdb::promote_chunks(repo.fs, layers, event, reviewer());
  REQUIRE_FALSE(meta.has_value());
  CHECK(meta.error().message.find("meta.proposal_event record") != std::string::npos);
}

TEST_CASE("promote by chunk id accepts the chunk's pending proposal; a repeat finishes an interrupted accept") {
  review_repo repo;
  const agdb::proposal_outcome proposed = repo.propose(101);
  // As if a crash hit after the user layer was written but before the
  // decision was: the chunk is in the user layer, the proposal pending.
  const std::uint32_t ids[] = {101};
  agdb::layer_contents delta = read_valid_layer(repo.fs, delta_path);
  test_support::write_hash_layer(repo.fs, user_path, {{101, "note", "The build needs cmake 3.25."}});
  auto report = agdb::promote_chunks(repo.fs, layers, ids, reviewer());
  REQUIRE(report.has_value());
  CHECK(report->chunks[0].outcome == agdb::promotion_outcome::unchanged);
  CHECK(report->chunks[0].proposal_id == proposed.proposal_id);
  const agdb::proposal_ledger ledger = ledger_of(repo.fs);
  CHECK(ledger.proposals[0].status == agdb::proposal_status::accepted);
  CHECK(ledger.proposals[0].outcome == "unchanged");
  CHECK(read_valid_layer(repo.fs, delta_path).chunks.size() == delta.chunks.size() + 1);
}

TEST_CASE("reject records the reason; decided proposals cannot be decided again") {
  review_repo repo;
  const agdb::proposal_outcome a = repo.propose(100);
  const agdb::proposal_outcome b = repo.propose(101);
  const std::uint32_t ids[] = {a.proposal_id, b.proposal_id, a.proposal_id};
  agdb::review_options options = reviewer("bob");
  auto no_reason = agdb::reject_proposals(repo.fs, layers, ids, options);
  REQUIRE_FALSE(no_reason.has_value());
  CHECK(no_reason.error().message.find("needs a reason") != std::string::npos);
  options.reason = "too specific";
  auto report = agdb::reject_proposals(repo.fs, layers, ids, options);
  REQUIRE(report.has_value());
  CHECK(report->decisions.size() == 2);  // the repeated id once
  const agdb::proposal_ledger ledger = ledger_of(repo.fs);
  for (const agdb::proposal& p : ledger.proposals) {
    CHECK(p.status == agdb::proposal_status::rejected);
    CHECK(p.decided_by == "bob");
    CHECK(p.reason == "too specific");
  }
  CHECK_FALSE(repo.fs.exists(user_path).value());  // nothing was copied

  const std::uint32_t accept[] = {a.proposal_id};
  auto late = agdb::accept_proposals(repo.fs, layers, accept, reviewer());
  REQUIRE_FALSE(late.has_value());
  CHECK(late.error().message.find("already rejected by bob") != std::string::npos);
  const std::uint32_t unknown[] = {424242};
  auto missing = agdb::reject_proposals(repo.fs, layers, unknown, options);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == errc::not_found);

  // A rejected chunk may be proposed again: a new proposal.
  const agdb::proposal_outcome again = repo.propose(100);
  CHECK_FALSE(again.already_pending);
  CHECK(again.proposal_id != a.proposal_id);
}

TEST_CASE("an i8 delta layer promotes its rows unchanged into a new i8 user layer") {
  agentctx::io::memory_file_system fs;
  REQUIRE(fs.create_dir("/repo").has_value());
  agdb::hash_embedder embedder(128);
  agdb::layer_contents delta;
  delta.metadata_json = agdb::layer_metadata_json(embedder.profile(), "test", "1");
  delta.embeddings.dim = 128;
  std::vector<float> values(2 * 128);
  const std::string_view texts[] = {"alpha beta gamma", "delta epsilon"};
  REQUIRE(embedder.embed(texts, values).has_value());
  delta.embeddings.type = agdb::element_type::i8;
  delta.embeddings.quant_scale = agdb::choose_i8_scale(values);
  delta.embeddings.i8_values = agdb::quantize_i8(values, delta.embeddings.quant_scale);
  for (std::uint32_t i = 0; i < 2; ++i) {
    agdb::chunk c;
    c.id = 40 + i;
    c.kind = "note";
    c.content = std::string(texts[i]);
    c.author = "mcp";
    c.confidence = 0.5f;
    delta.chunks.push_back(c);
  }
  REQUIRE(agdb::write_layer(fs, delta_path, delta).has_value());
  const std::uint32_t ids[] = {41};
  REQUIRE(agdb::promote_chunks(fs, layers, ids, reviewer()).has_value());
  const agdb::layer_contents user = read_valid_layer(fs, user_path);
  CHECK(user.embeddings.type == agdb::element_type::i8);
  CHECK(user.embeddings.quant_scale == delta.embeddings.quant_scale);
  CHECK(std::equal(user.embeddings.i8_values.begin(), user.embeddings.i8_values.end(),
                   delta.embeddings.i8_values.begin() + 128));
}

TEST_CASE("promotion refuses layers with different embedding profiles and a delta that is the user file") {
  review_repo repo;
  agdb::hash_embedder other(128);
  agdb::layer_contents user;
  agdb::embedding_profile profile = other.profile();
  profile.model = "another-model";
  user.metadata_json = agdb::layer_metadata_json(profile, "test", "1");
  user.embeddings.dim = 128;
  REQUIRE(agdb::write_layer(repo.fs, user_path, user).has_value());
  const std::uint32_t ids[] = {100};
  auto refused = agdb::promote_chunks(repo.fs, layers, ids, reviewer());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::incompatible);

  std::vector<agdb::layer_location> same = layers;
  for (agdb::layer_location& location : same) {
    if (location.id == layer_id::user) location.path = delta_path;
  }
  auto same_file = agdb::promote_chunks(repo.fs, same, ids, reviewer());
  REQUIRE_FALSE(same_file.has_value());
  CHECK(same_file.error().message.find("same file") != std::string::npos);
}

}  // namespace agdb_proposals_test
