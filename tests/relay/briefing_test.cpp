// relay/briefing.hpp (orient, orchestrate), relay/search.hpp (pull relevant)
// and relay/export.hpp (export, import).
#include "agentctx/relay/briefing.hpp"

#include <doctest/doctest.h>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/relay/conformance.hpp"
#include "agentctx/relay/export.hpp"
#include "agentctx/relay/search.hpp"
#include "relay_test_support.hpp"
#include "support/hash_layer.hpp"
#include "support/random.hpp"

namespace relay_briefing_test {

using namespace relay_test;
using agentctx::errc;

namespace {

// The test clock starts at 2026-04-18T20:00:00Z; packages are dated relative to it.
json::value dated(std::string id, std::string created_at, int significance, std::vector<std::string> questions = {},
                  std::string title = "") {
  json::value p = package(id, "proj_demo", title.empty() ? "package " + id : title, created_at);
  p.set("significance", significance);
  if (!questions.empty()) p.set("open_questions", json::value::array_type(questions.begin(), questions.end()));
  return p;
}

relay::store seeded(agentctx::io::memory_file_system& fs) {
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(store.deposit(dated("old", "2026-03-01T00:00:00Z", 9, {"stale?"})));
  require_value(store.deposit(dated("p1", "2026-04-10T00:00:00Z", 3, {"who owns the index?", "shared?"})));
  require_value(store.deposit(dated("p2", "2026-04-15T00:00:00Z", 8, {"shared?"})));
  require_value(store.deposit(dated("p3", "2026-04-17T00:00:00Z", 5)));
  relay::fact_assertion a;
  a.project_id = "proj_demo";
  a.subject = "dashboard";
  a.predicate = "status";
  a.value = "live";
  require_value(store.assert_fact(a));
  a.subject = "api";
  a.confidence = 0.2;
  require_value(store.assert_fact(a));
  return store;
}

std::vector<std::string> ids_of(const json::value& array) {
  std::vector<std::string> out;
  for (const auto& p : array.as_array()) out.push_back(p.find("package_id")->as_string());
  return out;
}

}  // namespace

TEST_CASE("orient returns exactly the section 8.3 bundle, windowed and in a fixed order") {
  agentctx::io::memory_file_system fs;
  auto store = seeded(fs);
  auto o = require_value(relay::orient(store, "proj_demo"));
  const auto& members = o.bundle.as_object();
  REQUIRE(members.size() == 6);
  const char* names[] = {"project", "recent_packages", "active_facts", "open_questions", "window_days", "generated_at"};
  for (std::size_t i = 0; i < 6; ++i) CHECK(members[i].first == names[i]);
  CHECK(ids_of(*o.bundle.find("recent_packages")) == std::vector<std::string>{"p3", "p2", "p1"});
  CHECK(o.bundle.find("window_days")->as_number() == 14);
  CHECK(o.bundle.find("project")->find("project_id")->as_string() == "proj_demo");
  const auto& facts = o.bundle.find("active_facts")->as_array();
  REQUIRE(facts.size() == 2);
  CHECK(facts[0].find("subject")->as_string() == "api");
  const auto& questions = o.bundle.find("open_questions")->as_array();
  REQUIRE(questions.size() == 2);
  CHECK(questions[0].as_string() == "shared?");
  CHECK(questions[1].as_string() == "who owns the index?");
  CHECK(o.bytes == require_value(json::serialize(o.bundle, json::canonical_form::jcs)).size());
  CHECK(o.estimated_tokens == (o.bytes + 3) / 4);

  relay::orient_options wide;
  wide.window_days = 60;
  CHECK(ids_of(*require_value(relay::orient(store, "proj_demo", wide)).bundle.find("recent_packages")).size() == 4);
  CHECK(relay::orient(store, "proj_nope").error().code == errc::not_found);
  wide.window_days = 0;
  CHECK(relay::orient(store, "proj_demo", wide).error().code == errc::invalid_argument);
}

TEST_CASE("times before 1970 are times like any other: packages, facts, windows, reopening, export and import") {
  agentctx::io::memory_file_system fs;
  {
    auto store = seeded(fs);
    require_value(store.deposit(dated("apollo", "1969-07-20T20:17:40Z", 10, {"what next?"})));
    require_value(store.deposit(dated("ancient", "0001-01-01T00:00:00.5Z", 10)));
    relay::fact_assertion a = status_of("moon", "unvisited", "0000-01-01T00:00:00Z");
    require_value(store.assert_fact(a));
    a.value = "visited";
    a.valid_from = "1969-07-20T20:17:40.0001Z";
    require_value(store.assert_fact(a));
    a.value = "unvisited";
    a.valid_from = "1969-07-20T20:17:40Z";
    CHECK(store.assert_fact(a).error().code == errc::invalid_argument);  // earlier than the current fact
  }
  const auto check_store = [](const relay::store& store) {
    // Latest orders them last, oldest last; orient's window leaves them out
    // until it reaches back to them.
    const auto latest = require_value(store.latest("proj_demo", 10));
    REQUIRE(latest.size() == 6);
    CHECK(latest[4]->package.package_id == "apollo");
    CHECK(latest[5]->package.package_id == "ancient");
    CHECK(latest[4]->package.created_at_instant.ms == -14'182'940'000);
    CHECK(ids_of(*require_value(relay::orient(store, "proj_demo")).bundle.find("recent_packages")) ==
          std::vector<std::string>{"p3", "p2", "p1"});
    relay::orient_options back_to_1969;
    back_to_1969.window_days = 20'726;  // from 1969-07-20T20:00 (the clock reads 2026-04-18T20:00)
    CHECK(ids_of(*require_value(relay::orient(store, "proj_demo", back_to_1969)).bundle.find("recent_packages")).size() ==
          5);
    back_to_1969.window_days = 20'725;
    CHECK(ids_of(*require_value(relay::orient(store, "proj_demo", back_to_1969)).bundle.find("recent_packages")).size() ==
          4);
    const auto value_at = [&](const char* t) -> std::string {
      const relay::fact* f = store.fact_at("proj_demo", "moon", "status", *agentctx::parse_rfc3339_utc_instant(t));
      return f == nullptr ? "(none)" : f->value;
    };
    CHECK_FALSE(agentctx::parse_rfc3339_utc_instant("-001-01-01T00:00:00Z").has_value());
    CHECK(value_at("0000-01-01T00:00:00Z") == "unvisited");
    CHECK(value_at("1969-07-20T20:17:40Z") == "unvisited");
    CHECK(value_at("1969-07-20T20:17:40.0001Z") == "visited");
    CHECK(value_at("2026-01-01T00:00:00Z") == "visited");
    const auto history = store.history("proj_demo", "moon", "status");
    REQUIRE(history.size() == 2);
    CHECK(history[0]->valid_to == std::optional<std::string>("1969-07-20T20:17:40.0001Z"));
  };
  check_store(require_value(relay::store::open(fs, "/r", test_options())));
  std::string exported;
  {
    auto reader = require_value(relay::store::open(fs, "/r", test_options()));
    require_ok(relay::export_ndjson(reader, "proj_demo", exported));
  }
  agentctx::io::memory_file_system other_fs;
  auto other = require_value(relay::store::open(other_fs, "/r", test_options()));
  require_value(relay::import_ndjson(other, exported));
  check_store(other);
  CHECK(require_value(other.find_package("apollo"))->hash ==
        require_value(require_value(relay::store::open(fs, "/r", test_options())).find_package("apollo"))->hash);
}

TEST_CASE("orient under a budget drops the lowest significance first and says what it left out") {
  agentctx::io::memory_file_system fs;
  auto store = seeded(fs);
  const auto full = require_value(relay::orient(store, "proj_demo"));
  relay::orient_options o;
  o.max_bytes = full.bytes - 50;
  auto trimmed = require_value(relay::orient(store, "proj_demo", o));
  CHECK(trimmed.bytes <= *o.max_bytes);
  // The 0.2-confidence fact ranks 2, below p1 (significance 3): it goes first.
  CHECK(trimmed.omitted_facts == 1);
  CHECK(trimmed.omitted_packages.empty());
  const json::value* report = trimmed.bundle.find("x-agentctx-budget");
  REQUIRE(report != nullptr);
  CHECK(report->find("bytes")->as_number() == trimmed.bytes);
  CHECK(report->find("omitted_facts")->as_number() == 1);
  CHECK(report->find("max_bytes")->as_number() == *o.max_bytes);
  // Tighter: p1 next, then its question "who owns the index?" (significance 3).
  o.max_bytes = full.bytes - 700;
  auto tighter = require_value(relay::orient(store, "proj_demo", o));
  CHECK(tighter.bytes <= *o.max_bytes);
  REQUIRE_FALSE(tighter.omitted_packages.empty());
  CHECK(tighter.omitted_packages[0] == "p1");
  CHECK(tighter.bundle.find("x-agentctx-budget")->find("omitted_packages")->as_array().size() ==
        tighter.omitted_packages.size());
  // Whatever was dropped ranks no higher than whatever was kept.
  int highest_dropped = 0;
  for (const auto& id : tighter.omitted_packages) {
    highest_dropped = std::max(highest_dropped, require_value(store.find_package(id))->package.significance);
  }
  for (const auto& kept : tighter.bundle.find("recent_packages")->as_array()) {
    CHECK(kept.find("significance")->as_number() >= highest_dropped);
  }

  relay::orient_options tokens;
  tokens.max_tokens = 100;
  auto small = require_value(relay::orient(store, "proj_demo", tokens));
  CHECK(small.estimated_tokens <= 100);
  CHECK(small.omitted_packages.size() == 3);
  CHECK(small.bundle.find("recent_packages")->as_array().empty());

  relay::orient_options tiny;
  tiny.max_bytes = 10;  // smaller than the fixed part: everything omitted, still a valid bundle
  auto least = require_value(relay::orient(store, "proj_demo", tiny));
  CHECK(least.bundle.find("active_facts")->as_array().empty());
  CHECK(least.omitted_facts == 2);
  CHECK(least.omitted_open_questions == 2);
  CHECK(least.over_budget);  // and says so
  CHECK(least.bundle.find("x-agentctx-budget")->find("over_budget")->as_bool());
  CHECK(least.bytes == least.bundle.find("x-agentctx-budget")->find("bytes")->as_number());
  CHECK_FALSE(trimmed.over_budget);
  CHECK(trimmed.bundle.find("x-agentctx-budget")->find("over_budget") == nullptr);
  // Both limits: the tighter one decides.
  relay::orient_options both;
  both.max_bytes = full.bytes - 50;
  both.max_tokens = 100;
  CHECK(require_value(relay::orient(store, "proj_demo", both)).omitted_packages.size() == 3);
  tiny.max_bytes = 0;
  CHECK(relay::orient(store, "proj_demo", tiny).error().code == errc::invalid_argument);
}

TEST_CASE("orient under every budget fits exactly: it leaves out no more than it must, ids that need escapes too") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  // Ids and questions whose JSON text is longer than their bytes, at every significance.
  const std::string odd = std::string("pkg_\x01\"\\") + "\x1f";
  for (int i = 0; i < 12; ++i) {
    const std::string id = (i % 3 == 0 ? odd : "pkg_") + std::to_string(i);
    auto p = dated(id, "2026-04-" + std::to_string(10 + i % 8) + "T00:00:00Z", 1 + i % 10,
                   {"question \"" + std::to_string(i % 5) + "\"\n?"});
    require_value(store.deposit(p));
  }
  for (int i = 0; i < 6; ++i) {
    auto a = status_of("subject\t" + std::to_string(i), "v");
    a.confidence = 0.1 * i;
    require_value(store.assert_fact(a));
  }
  const auto full = require_value(relay::orient(store, "proj_demo"));
  // The size of the bundle with k items left out (the order does not depend on the budget).
  std::map<std::size_t, std::size_t> size_leaving_out;
  std::size_t previously_left_out = SIZE_MAX;
  for (std::size_t budget = 400; budget <= full.bytes + 400; ++budget) {
    CAPTURE(budget);
    relay::orient_options o;
    o.max_bytes = budget;
    const auto r = require_value(relay::orient(store, "proj_demo", o));
    const std::size_t left_out = r.omitted_packages.size() + r.omitted_open_questions + r.omitted_facts;
    CHECK(r.bytes == require_value(json::serialize(r.bundle, json::canonical_form::jcs)).size());
    CHECK(r.bundle.find("x-agentctx-budget")->find("bytes")->as_number() == r.bytes);
    if (r.over_budget) {
      CHECK(left_out == 12 + 5 + 6);  // over only with everything left out
    } else {
      CHECK(r.bytes <= budget);
    }
    CHECK(left_out <= previously_left_out);  // a larger budget never leaves out more
    previously_left_out = left_out;
    if (!r.over_budget) size_leaving_out.emplace(left_out, r.bytes);
    // Leaving out one item fewer would not have fit.
    if (left_out > 0 && !r.over_budget && size_leaving_out.count(left_out - 1) != 0) {
      CHECK(size_leaving_out.at(left_out - 1) > budget);
    }
  }
  CHECK(previously_left_out == 0);
  // A budget of the untrimmed bundle's size (with its report) leaves out nothing.
  relay::orient_options exact;
  exact.max_bytes = size_leaving_out.at(0);
  const auto whole = require_value(relay::orient(store, "proj_demo", exact));
  CHECK(whole.omitted_packages.empty());
  CHECK(whole.bytes == *exact.max_bytes);
  exact.max_bytes = size_leaving_out.at(0) - 1;
  CHECK(require_value(relay::orient(store, "proj_demo", exact)).omitted_packages.size() +
            require_value(relay::orient(store, "proj_demo", exact)).omitted_facts +
            require_value(relay::orient(store, "proj_demo", exact)).omitted_open_questions ==
        1);
}

TEST_CASE("orient's budget takes a question to be as old as the newest package asking it") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  // The clock reads 2026-04-18T20:00:xxZ: a is 10 days old, b 1 day; the fact 5 days.
  require_value(store.deposit(dated("a", "2026-04-08T20:00:00Z", 5, {"QA?"})));
  require_value(store.deposit(dated("b", "2026-04-17T20:00:00Z", 5)));
  auto f = status_of("s", "v", "2026-04-13T20:00:00Z");
  f.confidence = 0.5;
  require_value(store.assert_fact(f));
  const auto full = require_value(relay::orient(store, "proj_demo"));
  // Sweep the budget down: among equals (significance 5) the oldest goes
  // first, a package before a question of the same age: a, QA?, the fact, b.
  std::vector<std::string> order;
  std::size_t seen = 0;
  for (std::size_t budget = full.bytes + 200; budget > 0 && seen < 4; --budget) {
    relay::orient_options o;
    o.max_bytes = budget;
    const auto r = require_value(relay::orient(store, "proj_demo", o));
    const std::size_t left_out = r.omitted_packages.size() + r.omitted_open_questions + r.omitted_facts;
    if (left_out == seen) continue;
    REQUIRE(left_out == seen + 1);
    if (r.omitted_packages.size() > 0 && (order.empty() || std::count(order.begin(), order.end(), r.omitted_packages.back()) == 0)) {
      order.push_back(r.omitted_packages.back());
    } else if (r.omitted_open_questions == 1 && std::count(order.begin(), order.end(), "QA?") == 0) {
      order.push_back("QA?");
    } else {
      order.push_back("fact");
    }
    seen = left_out;
  }
  CHECK(order == std::vector<std::string>{"a", "QA?", "fact", "b"});
}

TEST_CASE("orient keeps the newest max_packages packages of the window and says how many it left out") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  for (int i = 0; i < 7; ++i) {
    require_value(store.deposit(dated("p" + std::to_string(i), "2026-04-1" + std::to_string(i) + "T00:00:00Z", 5,
                                      {"q" + std::to_string(i)})));
  }
  relay::orient_options o;
  o.max_packages = 5;
  const auto r = require_value(relay::orient(store, "proj_demo", o));
  CHECK(ids_of(*r.bundle.find("recent_packages")) == std::vector<std::string>{"p6", "p5", "p4", "p3", "p2"});
  CHECK(r.packages_beyond_limit == 2);
  const json::value* limit = r.bundle.find("x-agentctx-limit");
  REQUIRE(limit != nullptr);
  CHECK(limit->find("max_packages")->as_number() == 5);
  CHECK(limit->find("packages_left_out")->as_number() == 2);
  CHECK(r.bytes == require_value(json::serialize(r.bundle, json::canonical_form::jcs)).size());
  o.max_packages = 7;
  const auto all = require_value(relay::orient(store, "proj_demo", o));
  CHECK(all.packages_beyond_limit == 0);
  CHECK(all.bundle.find("x-agentctx-limit") == nullptr);
}

TEST_CASE("pull relevant ranks by the fused vector and BM25 rankings") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  auto a = package("a", "proj_demo", "Retrieval benchmark results");
  a.set("description", "LongMemEval recall at 5 reached 97 percent after the reranker change");
  auto b = package("b", "proj_demo", "Dashboard filter shipped");
  b.set("description", "The archive filter on the dashboard now hides archived projects");
  auto c = package("c", "proj_demo", "Billing migration");
  c.set("content_md", "Stripe webhooks moved to the new queue");
  for (auto* p : {&a, &b, &c}) require_value(store.deposit(*p));
  agentctx::agdb::hash_embedder embedder;
  // Only b is related to the query at all (the others share no word with it,
  // and the hash embedder's vectors of texts with no word in common have
  // cosine 0): a limit of 2 returns it alone.
  auto hits = require_value(relay::pull_relevant(store, "proj_demo", "dashboard archive filter", 2, embedder));
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].package->package.package_id == "b");
  CHECK(hits[0].lexical_score > 0);
  CHECK(hits[0].vector_score > 0);
  auto two = require_value(relay::pull_relevant(store, "proj_demo", "dashboard filter billing", 3, embedder));
  REQUIRE(two.size() == 2);
  CHECK(two[0].score >= two[1].score);
  CHECK(require_value(relay::pull_relevant(store, "proj_demo", "zzzqqq nonsense", 5, embedder)).empty());
  auto recall = require_value(relay::pull_relevant(store, "", "recall reranker", 1, embedder));
  CHECK(recall[0].package->package.package_id == "a");
  CHECK(relay::pull_relevant(store, "proj_demo", "", 2, embedder).error().code == errc::invalid_argument);
  CHECK(relay::pull_relevant(store, "proj_nope", "x", 2, embedder).error().code == errc::not_found);
  CHECK(relay::searchable_text(require_value(store.find_package("c"))->package).find("Stripe") != std::string::npos);
}

namespace {

// An embedder that fails when told to, and otherwise embeds as hash_embedder.
class failing_embedder final : public agentctx::agdb::embedder {
 public:
  const agentctx::agdb::embedding_profile& profile() const override { return inner_.profile(); }
  agentctx::result<void> embed(std::span<const std::string_view> texts, std::span<float> out) override {
    if (fail) return agentctx::fail(errc::io_error, "the embedder is down");
    return inner_.embed(texts, out);
  }
  bool fail = false;

 private:
  agentctx::agdb::hash_embedder inner_;
};

// A package whose texts draw on a small vocabulary (cased, with non-ASCII
// words), so that queries share terms with many packages.
json::value worded(std::size_t i, const std::string& project, test_support::random_stream& random) {
  static const char* const words[] = {"Archive", "index", "session", "HANDOFF", "layer", "retrieval", "dashboard",
                                      "migration", "schema", "agent", "review", "deposit", "cache", "vector",
                                      "filter", "commit", "café", "résumé", "日本語", "budget", "token", "chunk"};
  const auto next = [&random] { return random.next(); };
  const auto text = [&](std::size_t count) {
    std::string out;
    for (std::size_t k = 0; k < count; ++k) out += std::string(k == 0 ? "" : " ") + words[next() % std::size(words)];
    return out;
  };
  json::value p = package("pkg" + std::to_string(i), project, text(1 + next() % 5));
  if (next() % 2 == 0) p.set("description", text(next() % 20));
  if (next() % 3 == 0) p.set("content_md", "# " + text(3) + "\n\n" + text(next() % 120) + ".");
  if (next() % 4 == 0) p.set("decisions_made", json::value::array_type{text(4), text(2)});
  if (next() % 5 == 0) p.set("handoff_note", text(6));
  if (i % 10 == 3) p.set("status", "draft");
  return p;
}

// The hits of pull_relevant through `index` are exactly those without one.
std::size_t check_same_ranking(const relay::store& store, relay::relevance_index& index, agentctx::agdb::embedder& embedder,
                        const std::string& project, const std::string& query, std::size_t limit) {
  CAPTURE(project);
  CAPTURE(query);
  const auto plain = require_value(relay::pull_relevant(store, project, query, limit, embedder));
  const auto indexed = require_value(relay::pull_relevant(store, project, query, limit, embedder, &index));
  REQUIRE(indexed.size() == plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    CHECK(indexed[i].package == plain[i].package);
    CHECK(indexed[i].score == plain[i].score);
    CHECK(indexed[i].vector_score == plain[i].vector_score);
    CHECK(indexed[i].lexical_score == plain[i].lexical_score);
  }
  return plain.size();
}

}  // namespace

TEST_CASE("a relevance index ranks exactly as a pull without one, as the store grows and changes") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  test_support::random_stream random(0x2545F4914F6CDD1Dull);
  const std::string projects[] = {"proj_a", "proj_b", "proj_c"};
  std::size_t deposited = 0;
  const auto deposit_more = [&](std::size_t count) {
    for (std::size_t k = 0; k < count; ++k, ++deposited) {
      require_value(store.deposit(worded(deposited, projects[deposited % 3], random)));
    }
  };
  const std::string queries[] = {"archive index", "DASHBOARD filter migration", "café", "résumé 日本語 token",
                                 "nothing matches zzz", "review review deposit", "a", "Vector-cache, chunk!"};
  agentctx::agdb::hash_embedder embedder;
  relay::relevance_index index;
  deposit_more(150);
  std::size_t hits = 0;
  for (const std::string& query : queries) {
    for (const std::string project : {"", "proj_a", "proj_c"}) {
      for (const std::size_t limit : {1, 5, 40}) hits += check_same_ranking(store, index, embedder, project, query, limit);
    }
  }
  CHECK(hits > 300);  // most queries found packages
  CHECK(index.size() == 150);  // the global pulls indexed every package, once

  // New packages, and status changes (which leave a package's text as it was).
  deposit_more(60);
  require_value(store.flag_for_review("pkg3", relay::review_type::human));
  require_value(store.flag_for_review("pkg163", relay::review_type::agent));
  for (const std::string& query : queries) {
    check_same_ranking(store, index, embedder, "proj_b", query, 10);
    check_same_ranking(store, index, embedder, "", query, 10);
  }
  CHECK(index.size() == 210);

  // The same index over another store, whose packages differ at the same
  // places: each entry is computed again for its new bytes.
  agentctx::io::memory_file_system other_fs;
  auto other = require_value(relay::store::open(other_fs, "/r", test_options()));
  test_support::random_stream other_random(99);
  for (std::size_t i = 0; i < 100; ++i) require_value(other.deposit(worded(i, "proj_x", other_random)));
  for (const std::string& query : queries) check_same_ranking(other, index, embedder, "", query, 7);

  // Candidates from both stores at once: their places collide (each store
  // numbers its packages from 0), so the index ranks them without itself,
  // exactly as rank_relevant does.
  std::vector<const relay::stored_package*> both = require_value(store.packages_of("proj_a"));
  for (const auto* p : require_value(other.packages_of("proj_x"))) both.push_back(p);
  for (const std::string& query : queries) {
    CAPTURE(query);
    const auto plain = require_value(relay::rank_relevant(both, query, 10, embedder));
    const auto indexed = require_value(index.rank(both, query, 10, embedder));
    REQUIRE(indexed.size() == plain.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
      CHECK(indexed[i].package == plain[i].package);
      CHECK(indexed[i].score == plain[i].score);
    }
  }

  // Another embedding profile empties the index.
  agentctx::agdb::hash_embedder wider(64);
  check_same_ranking(store, index, wider, "", "archive index", 5);
  CHECK(index.size() == 210);

  // An embedder that fails leaves the index as it was; the request errors
  // are those of a pull without an index.
  failing_embedder flaky;
  flaky.fail = true;
  deposit_more(5);
  CHECK(relay::pull_relevant(store, "", "archive", 5, flaky, &index).error().code == errc::io_error);
  CHECK(index.size() == 0);  // flaky's profile differs from wider's: emptied, and nothing added
  CHECK(relay::pull_relevant(store, "", "", 5, embedder, &index).error().code == errc::invalid_argument);
  CHECK(relay::pull_relevant(store, "", "x", 0, embedder, &index).error().code == errc::invalid_argument);
  flaky.fail = false;
  for (const std::string& query : queries) check_same_ranking(store, index, flaky, "", query, 10);
  CHECK(index.size() == 215);
}

TEST_CASE("orchestrate digests a project, or every active project, leaving drafts out") {
  agentctx::io::memory_file_system fs;
  auto store = seeded(fs);
  auto draft = dated("d1", "2026-04-18T00:00:00Z", 10, {"draft question?"});
  draft.set("status", "draft");
  require_value(store.deposit(draft));
  auto decided = dated("p4", "2026-04-18T10:00:00Z", 7, {}, "Chose the reranker");
  decided.set("decisions_made", json::value::array_type{"use the cross-encoder"});
  decided.set("handoff_note", "benchmark it on the full set");
  decided.set("estimated_next_actor", "agent");
  require_value(store.deposit(decided));
  require_value(store.deposit(package("q1", "proj_other", "Other project work", "2026-04-18T00:00:00Z")));
  agentctx::agdb::hash_embedder embedder;

  relay::orchestrate_options one;
  one.project_id = "proj_demo";
  one.focus = "reranker";
  one.snippets = 2;
  auto digest = require_value(relay::orchestrate(store, one, embedder));
  CHECK(digest.find("scope")->as_string() == "project");
  const json::value* summary = digest.find("summary");
  CHECK(summary->find("packages")->as_number() == 4);  // p1 p2 p3 p4; the draft and "old" are out
  CHECK(summary->find("decisions")->as_array().size() == 1);
  CHECK(summary->find("handoffs")->as_array()[0].find("estimated_next_actor")->as_string() == "agent");
  CHECK(summary->find("most_significant")->as_array()[0].find("package_id")->as_string() == "p2");
  const auto& snippets = digest.find("snippets")->as_array();
  REQUIRE(snippets.size() == 1);  // the one package related to the focus
  CHECK(snippets[0].find("package_id")->as_string() == "p4");
  CHECK(digest.find("projects") == nullptr);
  for (const auto& q : digest.find("open_questions")->as_array()) {
    CHECK(q.find("question")->as_string() != "draft question?");
    CHECK(q.find("project_id")->as_string() == "proj_demo");
  }

  relay::orchestrate_options global;
  auto all = require_value(relay::orchestrate(store, global, embedder));
  CHECK(all.find("scope")->as_string() == "global");
  CHECK(all.find("projects")->as_array().size() == 2);
  CHECK(all.find("snippets")->as_array().empty());
  require_value(store.set_archived("proj_other", true));
  CHECK(require_value(relay::orchestrate(store, global, embedder)).find("projects")->as_array().size() == 1);
  one.project_id = "proj_nope";
  CHECK(relay::orchestrate(store, one, embedder).error().code == errc::not_found);
}

TEST_CASE("a global digest orders packages of equal created_at by deposit, the later first, across projects") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  for (const auto& [id, project] : {std::pair{"x1", "proj_t1"}, std::pair{"x2", "proj_t2"}, std::pair{"x3", "proj_t1"}}) {
    auto p = package(id, project, std::string("package ") + id, "2026-04-17T00:00:00Z");
    p.set("decisions_made", json::value::array_type{std::string("decided in ") + id});
    require_value(store.deposit(p));
  }
  agentctx::agdb::hash_embedder embedder;
  const json::value digest = require_value(relay::orchestrate(store, relay::orchestrate_options{}, embedder));
  std::vector<std::string> order;
  for (const json::value& d : digest.find("summary")->find("decisions")->as_array()) {
    order.push_back(d.find("package_id")->as_string());
  }
  CHECK(order == std::vector<std::string>{"x3", "x2", "x1"});
}

namespace {

// The hash embedder's vectors under another profile: an embedder whose
// vectors, as far as search can tell, relate texts without a word in common.
class renamed_embedder final : public agentctx::agdb::embedder {
 public:
  renamed_embedder() { profile_.backend = "command-test"; }
  const agentctx::agdb::embedding_profile& profile() const override { return profile_; }
  agentctx::result<void> embed(std::span<const std::string_view> texts, std::span<float> out) override {
    return inner_.embed(texts, out);
  }

 private:
  agentctx::agdb::hash_embedder inner_;
  agentctx::agdb::embedding_profile profile_ = inner_.profile();
};

std::vector<std::string> hit_ids(const std::vector<relay::relevant_hit>& hits) {
  std::vector<std::string> out;
  for (const relay::relevant_hit& h : hits) out.push_back(h.package->package.package_id);
  return out;
}

std::vector<std::string> snippet_ids(const json::value& digest) {
  return ids_of(*digest.find("snippets"));
}

// The two ways pull_relevant ranks, which give the same hits: without an
// index (null) and through `index`.
std::vector<relay::relevance_index*> both_ways(relay::relevance_index& index) { return {nullptr, &index}; }

}  // namespace

TEST_CASE("with the hash embedder a package is related only by a word it shares with the query") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(store.deposit(package("ship", "proj_demo", "Shipped archive feature")));
  for (int i = 1; i <= 20; ++i) {
    require_value(store.deposit(package("f" + std::to_string(i), "proj_demo", "filler number " + std::to_string(i))));
  }
  require_value(store.deposit(package("beta", "proj_demo", "betaword release notes")));
  agentctx::agdb::hash_embedder hash;  // 128 dims: these words collide in buckets
  renamed_embedder other;               // the same vectors, from an embedder that relates by them

  // "xylophone" shares no word with any package, yet its hashed vector has a
  // positive cosine with some: collisions, which relate nothing.
  const auto by_vector = require_value(relay::pull_relevant(store, "proj_demo", "xylophone", 5, other));
  REQUIRE_FALSE(by_vector.empty());
  for (const relay::relevant_hit& h : by_vector) {
    CHECK(h.vector_score > 0);
    CHECK(h.lexical_score == 0);
  }
  CHECK(require_value(relay::pull_relevant(store, "proj_demo", "xylophone", 5, hash)).empty());

  // "betaword": only the package holding it, which a collision ranked below
  // an unrelated filler in the vector ranking.
  const auto beta = require_value(relay::pull_relevant(store, "proj_demo", "betaword", 5, hash));
  CHECK(hit_ids(beta) == std::vector<std::string>{"beta"});
  CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_demo", "betaword", 5, other))).size() > 1);

  // A shared word counts whatever its case or punctuation (BM25's terms);
  // the vector then orders the packages holding one.
  const auto filler = require_value(relay::pull_relevant(store, "proj_demo", "FILLER, 7", 30, hash));
  CHECK(filler.size() == 20);
  CHECK(filler[0].package->package.package_id == "f7");  // both words
  for (const relay::relevant_hit& h : filler) CHECK(h.lexical_score > 0);
  // A query of no word at all relates nothing.
  CHECK(require_value(relay::pull_relevant(store, "proj_demo", "?!", 5, hash)).empty());

  // Words the hash embedder splits at white space that BM25 reads as part of
  // a word (U+3000, U+00A0) relate too, and so does a word of a query past
  // BM25's first 64 terms: with and without a relevance_index.
  require_value(store.deposit(package("cjk", "proj_demo", "\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x80\x80\xE5\xA4\xA7\xE9\x98\xAA")));
  require_value(store.deposit(package("nbsp", "proj_demo", "prix\xC2\xA0" "fixe")));
  std::string long_query;
  for (int i = 0; i < 64; ++i) long_query += "junk" + std::to_string(i) + " ";
  long_query += "betaword";
  relay::relevance_index index;
  for (relay::relevance_index* kept : both_ways(index)) {
    CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_demo", "\xE5\xA4\xA7\xE9\x98\xAA", 5, hash, kept))) ==
          std::vector<std::string>{"cjk"});
    CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_demo", "fixe", 5, hash, kept))) ==
          std::vector<std::string>{"nbsp"});
    CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_demo", long_query, 5, hash, kept))) ==
          std::vector<std::string>{"beta"});
  }
}

TEST_CASE("with the hash embedder a shared word relates whatever the cosine; only spaced texts are read for it") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  const std::string osaka = "\xE5\xA4\xA7\xE9\x98\xAA";
  // Each text holds the query's word and one that cancels it in the hash
  // embedder's vector (cosine 0 with the query): once left out, as only a
  // positive cosine let a word BM25 does not see relate.
  require_value(store.deposit(package("cjk", "proj_demo", osaka + "\xE3\x80\x80" + test_support::cancelling_word(osaka, 128))));
  require_value(store.deposit(package("beta", "proj_demo", "betaword " + test_support::cancelling_word("betaword", 128))));
  require_value(store.deposit(package("other", "proj_demo", "nothing in common")));
  std::string long_query;
  for (int i = 0; i < 64; ++i) long_query += "junk" + std::to_string(i) + " ";
  long_query += "betaword";
  agentctx::agdb::hash_embedder hash;
  relay::relevance_index index;
  for (relay::relevance_index* kept : both_ways(index)) {
    const auto cjk = require_value(relay::pull_relevant(store, "proj_demo", osaka, 5, hash, kept));
    CHECK(hit_ids(cjk) == std::vector<std::string>{"cjk"});
    if (!cjk.empty()) CHECK(cjk[0].vector_score <= 0.0);
    const auto beta = require_value(relay::pull_relevant(store, "proj_demo", long_query, 5, hash, kept));
    CHECK(hit_ids(beta) == std::vector<std::string>{"beta"});
    if (!beta.empty()) CHECK(beta[0].vector_score <= 0.0);
    // BM25 sees the word: related by it, cosine 0 or not.
    CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_demo", "betaword", 5, hash, kept))) ==
          std::vector<std::string>{"beta"});
  }

  CHECK(relay::detail::holds_non_ascii_space("a\xE3\x80\x80" "b"));
  CHECK(relay::detail::holds_non_ascii_space("0123456789abcdef\xC2\xA0"));
  CHECK_FALSE(relay::detail::holds_non_ascii_space("0123456789abcdef \t\n caf\xC3\xA9 \xE3\x80\x81"));
  CHECK_FALSE(relay::detail::holds_non_ascii_space("\xE3\x80"));  // cut short: not a space
  const agentctx::agdb::bm25_query lexical("Zebra-crossing, \xE5\xA4\xA7\xE9\x98\xAA");
  CHECK(relay::detail::every_word_holds_a_term("Zebra-crossing, \xE5\xA4\xA7\xE9\x98\xAA", lexical));
  CHECK_FALSE(relay::detail::every_word_holds_a_term("zebra ->", agentctx::agdb::bm25_query("zebra ->")));
  CHECK_FALSE(relay::detail::every_word_holds_a_term(long_query, agentctx::agdb::bm25_query(long_query)));
}

TEST_CASE("with the hash embedder a word whose hash merely collides with a query word's relates nothing") {
  // Two words of one FNV-1a 32 hash: the hash embedder cannot tell them
  // apart, but a package holding the one shares no word with a query of
  // the other. Its U+00A0 has its text read for words BM25 does not see.
  const std::string query = "w673879";
  const std::string collider = "w1180600";
  REQUIRE(agentctx::agdb::fnv1a32(query) == agentctx::agdb::fnv1a32(collider));
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(store.deposit(package("ascii", "proj_demo", collider + " other")));
  require_value(store.deposit(package("spaced", "proj_demo", collider + " other\xC2\xA0words")));
  require_value(store.deposit(package("shared", "proj_demo", "x\xC2\xA0" + query)));
  agentctx::agdb::hash_embedder hash;
  relay::relevance_index index;
  for (relay::relevance_index* kept : both_ways(index)) {
    CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_demo", query, 5, hash, kept))) ==
          std::vector<std::string>{"shared"});
  }
}

TEST_CASE("a global relevant pull leaves archived projects out; naming one searches it") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(store.deposit(package("live", "proj_live", "Rollout plan")));
  require_value(store.deposit(package("kept", "proj_old", "Rollout plan, archived")));
  require_value(store.set_archived("proj_old", true));
  agentctx::agdb::hash_embedder embedder;
  relay::relevance_index index;
  for (relay::relevance_index* through : both_ways(index)) {
    CHECK(hit_ids(require_value(relay::pull_relevant(store, "", "rollout", 5, embedder, through))) ==
          std::vector<std::string>{"live"});
    CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_old", "rollout", 5, embedder, through))) ==
          std::vector<std::string>{"kept"});
  }
  require_value(store.set_archived("proj_old", false));
  CHECK(require_value(relay::pull_relevant(store, "", "rollout", 5, embedder)).size() == 2);
}

TEST_CASE("equal scores rank the earlier deposit first, across projects too, and orchestrate's snippets alike") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  // Identical texts, deposited alternately into two projects (proj_b first
  // in deposit order, proj_a first by name), and one that ranks lower.
  for (const auto& [id, project] : {std::pair{"t1", "proj_b"}, std::pair{"t2", "proj_a"}, std::pair{"t3", "proj_b"},
                                    std::pair{"t4", "proj_a"}}) {
    require_value(store.deposit(package(id, project, "tied rollout words")));
  }
  require_value(store.deposit(package("t5", "proj_a", "rollout words and many more words besides")));
  agentctx::agdb::hash_embedder embedder;
  const std::vector<std::string> expected = {"t1", "t2", "t3", "t4", "t5"};

  const auto hits = require_value(relay::pull_relevant(store, "", "rollout words", 10, embedder));
  CHECK(hit_ids(hits) == expected);
  REQUIRE(hits.size() == 5);
  // Tied in both rankings, the four fuse to one score (they share each rank).
  for (std::size_t i = 1; i < 4; ++i) CHECK(hits[i].score == hits[0].score);
  CHECK(hits[4].score < hits[0].score);
  // Whatever the order of the candidates, and through an index.
  std::vector<const relay::stored_package*> reversed;
  for (const relay::relevant_hit& h : hits) reversed.insert(reversed.begin(), h.package);
  CHECK(hit_ids(require_value(relay::rank_relevant(reversed, "rollout words", 10, embedder))) == expected);
  relay::relevance_index index;
  CHECK(hit_ids(require_value(relay::pull_relevant(store, "", "rollout words", 10, embedder, &index))) == expected);
  CHECK(hit_ids(require_value(relay::pull_relevant(store, "proj_a", "rollout words", 10, embedder))) ==
        std::vector<std::string>{"t2", "t4", "t5"});

  // Orchestrate's snippets are the same ranking (its recent packages are
  // newest first; the snippets are not).
  relay::orchestrate_options options;
  options.focus = "rollout words";
  options.snippets = 10;
  CHECK(snippet_ids(require_value(relay::orchestrate(store, options, embedder))) == expected);
  CHECK(snippet_ids(require_value(relay::orchestrate(store, options, embedder, &index))) == expected);
  options.project_id = "proj_b";
  CHECK(snippet_ids(require_value(relay::orchestrate(store, options, embedder))) == std::vector<std::string>{"t1", "t3"});
}

TEST_CASE("orchestrate's snippets search every package of the scope but drafts, in the window or not") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  auto old = package("old", "proj_demo", "Reranker study", "2025-01-01T00:00:00Z");
  old.set("description", "the first reranker experiments");
  require_value(store.deposit(old));
  auto decided = package("decided", "proj_demo", "Weekly notes");
  decided.set("decisions_made", json::value::array_type{"adopt the reranker"});
  decided.set("open_questions", json::value::array_type{"which reranker model?"});
  require_value(store.deposit(decided));
  auto draft = package("draft", "proj_demo", "Reranker draft");
  draft.set("status", "draft");
  require_value(store.deposit(draft));
  require_value(store.deposit(package("shelved", "proj_shelved", "Reranker in an archived project")));
  require_value(store.set_archived("proj_shelved", true));
  agentctx::agdb::hash_embedder embedder;

  relay::orchestrate_options options;
  options.focus = "reranker";
  const json::value digest = require_value(relay::orchestrate(store, options, embedder));
  CHECK(digest.find("summary")->find("packages")->as_number() == 1);  // the window holds "decided" only
  std::vector<std::string> ids = snippet_ids(digest);
  std::sort(ids.begin(), ids.end());
  CHECK(ids == std::vector<std::string>{"decided", "old"});
  for (const json::value& snippet : digest.find("snippets")->as_array()) {
    // A package matching on its decisions and questions alone shows them.
    const std::string expected = snippet.find("package_id")->as_string() == "decided"
                                     ? "adopt the reranker; which reranker model?"
                                     : "the first reranker experiments";
    CHECK(snippet.find("excerpt")->as_string() == expected);
  }
  // A project named is searched archived or not; its drafts still are not.
  options.project_id = "proj_shelved";
  CHECK(snippet_ids(require_value(relay::orchestrate(store, options, embedder))) == std::vector<std::string>{"shelved"});
}

TEST_CASE("a global digest lists an open question once per project, naming it, as the per-project counts do") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  const auto asking = [&](std::string id, std::string project, std::string created_at,
                          std::vector<std::string> questions) {
    json::value p = package(std::move(id), std::move(project), "work", std::move(created_at));
    p.set("open_questions", json::value::array_type(questions.begin(), questions.end()));
    require_value(store.deposit(p));
  };
  asking("a1", "proj_a", "2026-04-17T00:00:00Z", {"Ship v2?", "Who reviews?"});
  asking("b1", "proj_b", "2026-04-18T00:00:00Z", {"Ship v2?"});
  asking("a2", "proj_a", "2026-04-16T00:00:00Z", {"Ship v2?"});  // asked again in proj_a: once there
  agentctx::agdb::hash_embedder embedder;
  const json::value digest = require_value(relay::orchestrate(store, relay::orchestrate_options{}, embedder));
  std::vector<std::string> listed;
  for (const json::value& q : digest.find("open_questions")->as_array()) {
    listed.push_back(q.find("question")->as_string() + " @" + q.find("project_id")->as_string());
  }
  // Newest asking package first: b1, then a1 (in the order it lists them).
  CHECK(listed == std::vector<std::string>{"Ship v2? @proj_b", "Ship v2? @proj_a", "Who reviews? @proj_a"});
  double counted = 0;
  for (const json::value& p : digest.find("projects")->as_array()) counted += p.find("open_questions")->as_number();
  CHECK(counted == static_cast<double>(listed.size()));
}

TEST_CASE("orient's budget drops the earlier deposit first among packages of equal created_at and significance") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  require_value(store.deposit(dated("first", "2026-04-17T00:00:00Z", 5)));
  require_value(store.deposit(dated("second", "2026-04-17T00:00:00Z", 5)));
  const auto full = require_value(relay::orient(store, "proj_demo"));
  CHECK(ids_of(*full.bundle.find("recent_packages")) == std::vector<std::string>{"second", "first"});
  relay::orient_options o;
  bool dropped_one = false;
  for (std::size_t budget = full.bytes + 300; budget > 0 && !dropped_one; --budget) {
    o.max_bytes = budget;
    const auto r = require_value(relay::orient(store, "proj_demo", o));
    if (r.omitted_packages.empty()) continue;
    dropped_one = true;
    CHECK(r.omitted_packages == std::vector<std::string>{"first"});
    CHECK(ids_of(*r.bundle.find("recent_packages")) == std::vector<std::string>{"second"});
  }
  CHECK(dropped_one);
}

TEST_CASE("orient's budget drops the fact recorded first among facts of equal valid_from and confidence") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  // Asserted in the order opposite to their keys' (subject) order.
  require_value(store.assert_fact(status_of("zeta", "v", "2026-01-01T00:00:00Z")));
  require_value(store.assert_fact(status_of("alpha", "v", "2026-01-01T00:00:00Z")));
  const auto full = require_value(relay::orient(store, "proj_demo"));
  const auto subjects = [](const json::value& bundle) {
    std::vector<std::string> out;
    for (const json::value& f : bundle.find("active_facts")->as_array()) out.push_back(f.find("subject")->as_string());
    return out;
  };
  CHECK(subjects(full.bundle) == std::vector<std::string>{"alpha", "zeta"});
  relay::orient_options o;
  bool dropped_one = false;
  for (std::size_t budget = full.bytes + 300; budget > 0 && !dropped_one; --budget) {
    o.max_bytes = budget;
    const auto r = require_value(relay::orient(store, "proj_demo", o));
    if (r.omitted_facts == 0) continue;
    dropped_one = true;
    CHECK(r.omitted_facts == 1);
    CHECK(subjects(r.bundle) == std::vector<std::string>{"alpha"});
  }
  CHECK(dropped_one);
}

TEST_CASE("orient and orchestrate order packages by their whole created_at, past milliseconds too") {
  agentctx::io::memory_file_system fs;
  auto store = require_value(relay::store::open(fs, "/r", test_options()));
  // The later instant deposited first: comparing milliseconds alone, the
  // deposit order would decide, the wrong way.
  for (const auto& [id, at] : {std::pair{"later", "2026-04-18T10:00:00.0009Z"}, std::pair{"earlier", "2026-04-18T10:00:00.0001Z"}}) {
    json::value p = dated(id, at, 5, {std::string("asked in ") + id + "?"});
    p.set("decisions_made", json::value::array_type{std::string("decided in ") + id});
    require_value(store.deposit(p));
  }
  const auto oriented = require_value(relay::orient(store, "proj_demo"));
  CHECK(ids_of(*oriented.bundle.find("recent_packages")) == std::vector<std::string>{"later", "earlier"});
  CHECK(oriented.bundle.find("open_questions")->as_array()[0].as_string() == "asked in later?");
  agentctx::agdb::hash_embedder embedder;
  const json::value digest = require_value(relay::orchestrate(store, relay::orchestrate_options{}, embedder));
  CHECK(digest.find("summary")->find("decisions")->as_array()[0].find("package_id")->as_string() == "later");
  CHECK(digest.find("open_questions")->as_array()[0].find("question")->as_string() == "asked in later?");
}

TEST_CASE("export then import into another store preserves every hash, x-* member, status change and fact") {
  agentctx::io::memory_file_system fs;
  auto source = seeded(fs);
  auto draft = dated("d1", "2026-04-18T00:00:00Z", 4);
  draft.set("status", "draft");
  draft.set("x-trust-score", 0.93);
  draft.set("created_by", json::value::object_type{{"id", "j"}, {"type", "human"}, {"x-fingerprint", "ab:cd"}});
  require_value(source.deposit(draft));
  require_value(source.flag_for_review("d1", relay::review_type::human, "look"));
  require_value(source.review("d1", relay::package_status::complete));
  relay::fact_assertion a;
  a.project_id = "proj_demo";
  a.subject = "dashboard";
  a.predicate = "status";
  a.value = "down";
  require_value(source.assert_fact(a));
  require_value(source.start_session("proj_demo", "claude", relay::actor_type::agent));

  std::string text;
  require_ok(relay::export_ndjson(source, "proj_demo", text));
  CHECK(text.starts_with(R"({"exported_at":)"));

  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));
  auto report = require_value(relay::import_ndjson(target, text));
  CHECK(report.projects == 1);
  CHECK(report.packages == 5);
  CHECK(report.status_changes == 2);
  CHECK(report.facts == 3);
  CHECK(report.sessions == 1);
  CHECK(report.skipped == 0);
  for (const auto* p : require_value(source.packages_of("proj_demo"))) {
    auto copy = require_value(target.find_package(p->package.package_id, "proj_demo"));
    CHECK(copy->hash == p->hash);
    CHECK(copy->deposited_hash == p->deposited_hash);
    CHECK(copy->package.wire == p->package.wire);
    CHECK(copy->changes.size() == p->changes.size());
  }
  auto copy = require_value(target.find_package("d1"));
  CHECK(copy->package.wire.find("x-trust-score")->as_number() == doctest::Approx(0.93));
  CHECK(copy->package.wire.find("created_by")->find("x-fingerprint")->as_string() == "ab:cd");
  CHECK(target.history("proj_demo", "dashboard", "status").size() == 2);
  CHECK(target.current_fact("proj_demo", "dashboard", "status")->value == "down");
  CHECK(require_value(target.verify()).ok());

  // Importing again changes nothing; the export of the copy equals the original's (but for its time).
  auto again = require_value(relay::import_ndjson(target, text));
  CHECK(again.packages + again.facts + again.status_changes + again.projects + again.sessions == 0);
  CHECK(again.skipped > 0);
  std::string text2;
  require_ok(relay::export_ndjson(target, "proj_demo", text2));
  CHECK(text2.substr(text2.find('\n')) == text.substr(text.find('\n')));
}

TEST_CASE("import refuses bad lines and conflicts before writing anything") {
  agentctx::io::memory_file_system fs;
  auto source = seeded(fs);
  std::string text;
  require_ok(relay::export_ndjson(source, "", text));
  agentctx::io::memory_file_system other;
  auto target = require_value(relay::store::open(other, "/copy", test_options()));

  std::string tampered = text;
  const auto at = tampered.find("package p2");
  REQUIRE(at != std::string::npos);
  tampered.replace(at, 10, "package P2");
  auto refused = relay::import_ndjson(target, tampered);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("hashes to") != std::string::npos);
  CHECK(refused.error().message.starts_with("line "));
  CHECK(target.projects().empty());  // nothing written

  const std::string header = text.substr(0, text.find('\n') + 1);
  const std::string not_json = require_error(relay::import_ndjson(target, "{not json}\n")).message;
  CHECK(not_json.starts_with("line 1: not JSON"));
  CHECK(not_json.find("not JSON: not JSON") == std::string::npos);
  CHECK(require_error(relay::import_ndjson(target, header + R"({"kind":"mystery"})")).message.starts_with(
      "line 2: unknown kind"));
  CHECK(relay::import_ndjson(target, header + R"({"kind":"package","hash":"sha256:00","package":{}})").error().code ==
        errc::invalid_argument);
  // An export starts with its header: no line at all, or another first line, is no export.
  for (const std::string& headless : {std::string(), std::string("\n\n"), text.substr(text.find('\n') + 1)}) {
    CAPTURE(headless.substr(0, 40));
    const agentctx::error refused_headless = require_error(relay::import_ndjson(target, headless));
    CHECK(refused_headless.code == errc::invalid_argument);
    CHECK(refused_headless.message.find("not a Relay export") != std::string::npos);
  }
  CHECK(target.projects().empty());

  // Same id, other content: 409.
  require_value(target.deposit(dated("p2", "2026-04-15T00:00:00Z", 1)));
  auto conflict = relay::import_ndjson(target, text);
  REQUIRE_FALSE(conflict.has_value());
  CHECK(conflict.error().code == errc::already_exists);
  CHECK(require_value(target.latest("proj_demo", 10)).size() == 1);
}

TEST_CASE("the conformance descriptor declares L3 and the real capabilities") {
  const auto d = relay::conformance_descriptor();
  CHECK(require_value(json::serialize(d)) ==
        R"({"capabilities":{"blob_storage":false,"hybrid_search":true,"realtime":false,"semantic_search":false},)"
        R"("conformance_level":"L3","implementation":{"name":"agentctx","version":"0.1.0"},"protocol_version":"0.1"})");
}

}  // namespace relay_briefing_test
