// A session with a Relay store (seed 001, the Agentic Protocol): an agent
// deposits a Context Package, records a fact, flags its work for review, and
// the next session starts from orient(). Run: example_relay_session [DIR]
// (default: a fresh folder under /tmp).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/briefing.hpp"
#include "agentctx/relay/search.hpp"
#include "agentctx/relay/store.hpp"

namespace relay = agentctx::relay;
namespace json = agentctx::json;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp/agentctx-relay-example-" + std::to_string(::getpid());
  agentctx::io::posix_file_system fs;
  auto store = relay::store::open(fs, dir);  // the writer; created if missing
  if (!store) {
    std::cerr << store.error().describe() << '\n';
    return 1;
  }

  // 1. Deposit a package (section 6): no package_id, so one is generated.
  const std::string now = store->now_text();
  auto deposited = store->deposit_json(R"({
    "project_id": "proj_demo", "relay_version": "0.1", "title": "Chose the reranker",
    "status": "draft", "package_type": "decision", "review_type": "none",
    "created_at": ")" + now + R"(", "created_by": {"id": "agent-7", "type": "agent"},
    "decisions_made": ["use the cross-encoder reranker"],
    "open_questions": ["does it hold on the long-context split?"],
    "handoff_note": "benchmark it on the full set", "significance": 8,
    "x-trust-score": 0.9})");
  if (!deposited) {
    std::cerr << deposited.error().describe() << '\n';
    return 1;
  }
  const relay::stored_package& package = *deposited->package;
  std::cout << "deposited " << package.package.package_id << " " << package.hash << '\n';

  // 2. A fact about the project's state (section 7), superseded atomically later.
  relay::fact_assertion fact;
  fact.project_id = "proj_demo";
  fact.subject = "longmemeval_s";
  fact.predicate = "recall_any_at_5";
  fact.value = "97.0";
  fact.source_package_id = package.package.package_id;
  if (auto asserted = store->assert_fact(fact); !asserted) {
    std::cerr << asserted.error().describe() << '\n';
    return 1;
  }

  // 3. Ask a human to review the decision (L3).
  const std::string id = package.package.package_id;
  if (auto flagged = store->flag_for_review(id, relay::review_type::human, "check the numbers"); !flagged) {
    std::cerr << flagged.error().describe() << '\n';
    return 1;
  }

  // 4. The next session starts from the orientation bundle (section 8.3),
  //    trimmed to a token budget, and pulls what is relevant to its task.
  relay::orient_options budget;
  budget.max_tokens = 2000;
  auto bundle = relay::orient(*store, "proj_demo", budget);
  if (!bundle) {
    std::cerr << bundle.error().describe() << '\n';
    return 1;
  }
  std::cout << "orientation: " << bundle->bytes << " bytes, ~" << bundle->estimated_tokens << " tokens\n";
  std::cout << json::to_text(bundle->bundle, json::layout::pretty) << '\n';

  agentctx::agdb::hash_embedder embedder;
  auto hits = relay::pull_relevant(*store, "proj_demo", "reranker benchmark", 3, embedder);
  if (hits) {
    for (const relay::relevant_hit& hit : *hits) {
      std::cout << "relevant: " << hit.package->package.title << " (score " << hit.score << ")\n";
    }
  }
  std::cout << "store: " << dir << '\n';
  return 0;
}
