// agentctx/relay/briefing.hpp: orient and orchestrate (seed 001 sections 8.3
// and 8.4), the bundles an agent or a human reads at the start of work.
//
// orient() returns exactly the OrientationBundle of section 8.3:
//   {"project", "recent_packages", "active_facts", "open_questions",
//    "window_days", "generated_at"}
// recent_packages: packages created within window_days of now, drafts
// included (orient is the project's own state, section 8.3), newest first
// (newer_first: equal created_at, the later deposit first), at most
// max_packages, in their current wire form; active_facts: the current facts
// by subject then predicate; open_questions: the open_questions of the
// recent packages, newest package first, each text once. When the window
// holds more than max_packages packages, the newest max_packages are kept
// and the bundle carries "x-agentctx-limit": {"max_packages",
// "packages_left_out"}.
//
// With a budget (max_bytes, or max_tokens estimated as ceil(bytes / 4) of
// the compact JSON), items are dropped until the bundle fits, and no more,
// lowest significance first: a package by its significance, a question by
// the highest significance among the packages that ask it, a fact by
// round(10 x confidence); among equals the oldest goes first (a package by
// its created_at, a question by that of the newest package asking it, a fact
// by its valid_from), at the same time packages before questions before
// facts, and of one kind at the same time the earlier deposit first (a
// question by that of the newest package asking it, a fact by its record:
// the one asserted or imported first). The bundle then
// carries an extension member (section 12.1) saying what was left out:
//   "x-agentctx-budget": {"max_bytes", "bytes", "estimated_tokens",
//     "omitted_packages": [ids], "omitted_open_questions": n, "omitted_facts": n,
//     "over_budget": true (only when it is)}
// A bundle whose fixed part alone exceeds the budget keeps that part, reports
// every item omitted, and is marked "over_budget". max_bytes and max_tokens
// together: both apply (the tighter one decides).
//
// orchestrate() returns a DigestBundle (section 8.4; the spec fixes its
// contents, this library its shape, docs/relay/protocol.md):
//   {"scope": "project" | "global", "project_id"?, "focus"?, "window_days",
//    "generated_at", "summary": {...}, "active_facts": [...],
//    "open_questions": [{"question", "project_id"}], "snippets": [...],
//    "projects": [...]?}
// Drafts are left out (section 5.3), as are archived projects in global
// mode (search_scope). The summary, the open questions and the per-project
// counts are of the window's packages; open questions are each text once
// per project, newest asking package first. Snippets are the packages most
// similar to `focus` among every package of the scope, in the window or not
// (section 8.4 windows the summary only), ranked as pull_relevant ranks
// them, at most `snippets` of them; without a focus, none.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agentctx/agdb/embedder.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/json/canonical.hpp"
#include "agentctx/json/value.hpp"
#include "agentctx/relay/search.hpp"
#include "agentctx/relay/errors.hpp"
#include "agentctx/relay/store.hpp"

namespace agentctx::relay {

inline constexpr unsigned default_window_days = 14;
/// The longest window the relay CLIs and relay serve take: 100 years.
inline constexpr unsigned max_window_days = 36'500;

/// The largest orient budget taken: 1 TB (max_bytes), 250 G estimated tokens
/// (max_tokens). A bound far above any bundle, so that the budget arithmetic
/// and its report stay exact.
inline constexpr std::size_t max_budget_bytes = 1'000'000'000'000;
inline constexpr std::size_t max_budget_tokens = max_budget_bytes / 4;

/// The most packages an orientation bundle takes (orient_options::max_packages).
inline constexpr std::size_t max_orient_packages = 10'000;

struct orient_options {
  unsigned window_days = default_window_days;
  std::size_t max_packages = 50;
  std::optional<std::size_t> max_bytes;   ///< budget of the compact JSON
  std::optional<std::size_t> max_tokens;  ///< budget in estimated tokens (bytes / 4)
};

struct orientation {
  json::value bundle;
  std::size_t bytes = 0;             ///< of the compact JSON of `bundle`
  std::size_t estimated_tokens = 0;  ///< ceil(bytes / 4)
  std::vector<std::string> omitted_packages;
  std::size_t omitted_open_questions = 0;
  std::size_t omitted_facts = 0;
  bool over_budget = false;  ///< the fixed part alone exceeds the budget
  /// Packages of the window past max_packages, left out before any budget
  /// (the bundle says so in "x-agentctx-limit").
  std::size_t packages_beyond_limit = 0;
};

/// Estimated tokens of `bytes` bytes of JSON: one per four bytes, rounded up.
constexpr std::size_t estimate_tokens(std::size_t bytes) noexcept { return (bytes + 3) / 4; }

namespace detail {

// Unix milliseconds `window_days` before `now_ms` (negative before 1970).
inline std::int64_t window_start_ms(std::uint64_t now_ms, unsigned window_days) {
  return static_cast<std::int64_t>(now_ms) - std::int64_t{window_days} * 86'400'000;
}

inline std::size_t compact_size(const json::value& v, json::canonicalizer& c) {
  auto text = c.serialize(v, json::canonical_form::jcs);
  return text ? text->size() : 0;
}

// Packages of a project created at or after `since`, newest first (newer_first).
inline std::vector<const stored_package*> recent_packages(const store& s, const std::string& project_id,
                                                          std::int64_t since, bool include_drafts) {
  std::vector<const stored_package*> out;
  auto all = s.packages_of(project_id);
  if (!all) return out;
  for (const stored_package* p : *all) {
    if (p->quarantined || p->package.created_at_instant.ms < since) continue;
    if (!include_drafts && p->package.status == package_status::draft) continue;
    out.push_back(p);
  }
  std::sort(out.begin(), out.end(), newer_first);
  return out;
}

// An open question of the recent packages: its text, the highest
// significance among the packages that ask it, and the newest of them.
struct open_question {
  std::string text;
  int significance = 0;
  const stored_package* newest = nullptr;
};

// Open questions of `packages` (newest first) in order, each text once.
inline std::vector<open_question> collect_questions(const std::vector<const stored_package*>& packages) {
  std::vector<open_question> out;
  std::map<std::string, std::size_t> seen;
  for (const stored_package* p : packages) {
    for (const std::string& q : p->package.open_questions) {
      auto [it, fresh] = seen.emplace(q, out.size());
      if (fresh) {
        out.push_back({q, p->package.significance, p});
      } else {
        out[it->second].significance = std::max(out[it->second].significance, p->package.significance);
      }
    }
  }
  return out;
}

inline int fact_significance(const fact& f) { return static_cast<int>(std::lround(f.confidence * 10.0)); }

// The text a snippet shows of a package: its description, else its
// content_md, else its handoff_note, else its decisions and open questions
// (a package may match on those alone); empty only for a bare title.
inline std::string snippet_body(const package& p) {
  for (const std::string* text : {&p.description, &p.content_md, &p.handoff_note}) {
    if (!text->empty()) return *text;
  }
  std::string out;
  for (const auto* list : {&p.decisions_made, &p.open_questions}) {
    for (const std::string& item : *list) out += (out.empty() ? "" : "; ") + item;
  }
  return out;
}

// The first `limit` bytes of `text`, cut at a character boundary, with an
// ellipsis when cut.
inline std::string excerpt(std::string_view text, std::size_t limit = 240) {
  if (text.size() <= limit) return std::string(text);
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "\xE2\x80\xA6";
}

}  // namespace detail

/// orient (section 8.3). Errors: not_found for an unknown project;
/// invalid_argument for a window of 0 days, max_packages 0 or above
/// max_orient_packages, a zero budget or one above max_budget_bytes /
/// max_budget_tokens.
inline result<orientation> orient(const store& s, const std::string& project_id, const orient_options& options = {}) {
  const project* target = s.find_project(project_id);
  if (target == nullptr) return unexpected(project_not_found(project_id));
  if (options.window_days == 0) return fail(errc::invalid_argument, "window_days must be at least 1");
  if (options.max_packages == 0 || options.max_packages > max_orient_packages) {
    return fail(errc::invalid_argument, "max_packages must be from 1 to " + std::to_string(max_orient_packages));
  }
  if ((options.max_bytes && *options.max_bytes == 0) || (options.max_tokens && *options.max_tokens == 0)) {
    return fail(errc::invalid_argument, "the budget must be at least 1");
  }
  if (options.max_bytes && *options.max_bytes > max_budget_bytes) {
    return fail(errc::invalid_argument, "max_bytes must be at most " + std::to_string(max_budget_bytes));
  }
  if (options.max_tokens && *options.max_tokens > max_budget_tokens) {
    return fail(errc::invalid_argument, "max_tokens must be at most " + std::to_string(max_budget_tokens));
  }
  const std::string now = s.now_text();
  const std::uint64_t now_ms = parse_rfc3339_utc_ms(now).value_or(0);
  auto packages = detail::recent_packages(s, project_id, detail::window_start_ms(now_ms, options.window_days), true);
  orientation out;
  if (packages.size() > options.max_packages) {
    out.packages_beyond_limit = packages.size() - options.max_packages;
    packages.resize(options.max_packages);
  }
  const auto questions = detail::collect_questions(packages);
  const auto facts = s.facts(project_id);

  json::canonicalizer c;
  std::optional<std::size_t> budget = options.max_bytes;
  if (options.max_tokens) {
    budget = std::min(budget.value_or(SIZE_MAX), *options.max_tokens * 4);
  }

  // Which items stay: all, unless a budget says otherwise.
  std::vector<bool> keep_package(packages.size(), true), keep_question(questions.size(), true),
      keep_fact(facts.size(), true);
  // The bundle with the items kept (none with `items` false).
  const auto build = [&](bool items = true) {
    json::value::array_type recent, active, open;
    for (std::size_t i = 0; items && i < packages.size(); ++i) {
      if (keep_package[i]) recent.push_back(packages[i]->package.wire);
    }
    for (std::size_t i = 0; items && i < facts.size(); ++i) {
      if (keep_fact[i]) active.push_back(facts[i]->wire);
    }
    for (std::size_t i = 0; items && i < questions.size(); ++i) {
      if (keep_question[i]) open.emplace_back(questions[i].text);
    }
    json::value bundle = json::value::object_type{{"project", target->wire},
                                                  {"recent_packages", std::move(recent)},
                                                  {"active_facts", std::move(active)},
                                                  {"open_questions", std::move(open)},
                                                  {"window_days", options.window_days},
                                                  {"generated_at", now}};
    if (out.packages_beyond_limit != 0) {
      bundle.set("x-agentctx-limit", json::value::object_type{{"max_packages", options.max_packages},
                                                              {"packages_left_out", out.packages_beyond_limit}});
    }
    return bundle;
  };
  // The budget report, with the sizes it states.
  const auto report = [&](std::size_t bytes, bool over) {
    json::value r = json::value::object_type{
        {"max_bytes", *budget},
        {"bytes", bytes},
        {"estimated_tokens", estimate_tokens(bytes)},
        {"omitted_packages", json::value::array_type(out.omitted_packages.begin(), out.omitted_packages.end())},
        {"omitted_open_questions", out.omitted_open_questions},
        {"omitted_facts", out.omitted_facts}};
    if (over) r.set("over_budget", true);
    return r;
  };

  if (budget) {
    // The bundle's size is known exactly without building it again for
    // each item left out: the bundle with every array empty and a report
    // of zeros, plus each array's items and the commas between them, plus
    // the report's omitted ids and the digits its numbers add.
    enum kind_order { package_kind = 0, question_kind = 1, fact_kind = 2 };
    struct item {
      int significance;
      const utc_instant* at;  // earlier = older
      int kind;
      std::uint64_t deposit;  // of one kind at one time: smaller = older (the store's record order)
      std::size_t index;
      std::size_t bytes;  // of its compact JSON, without a comma
    };
    std::vector<item> items;
    std::size_t kept_bytes[3] = {0, 0, 0};
    std::size_t kept_count[3] = {packages.size(), questions.size(), facts.size()};
    for (std::size_t i = 0; i < packages.size(); ++i) {
      items.push_back({packages[i]->package.significance, &packages[i]->package.created_at_instant, package_kind,
                       packages[i]->sequence, i, detail::compact_size(packages[i]->package.wire, c)});
    }
    for (std::size_t i = 0; i < questions.size(); ++i) {
      // A question is as old as the newest package that asks it.
      const stored_package& newest = *questions[i].newest;
      items.push_back({questions[i].significance, &newest.package.created_at_instant, question_kind, newest.sequence, i,
                       detail::compact_size(json::value(questions[i].text), c)});
    }
    for (std::size_t i = 0; i < facts.size(); ++i) {
      items.push_back({detail::fact_significance(*facts[i]), &facts[i]->valid_from_at, fact_kind, facts[i]->sequence, i,
                       detail::compact_size(facts[i]->wire, c)});
    }
    for (const item& it : items) kept_bytes[it.kind] += it.bytes;
    std::sort(items.begin(), items.end(), [](const item& a, const item& b) {
      if (a.significance != b.significance) return a.significance < b.significance;
      if (*a.at != *b.at) return *a.at < *b.at;
      if (a.kind != b.kind) return a.kind < b.kind;
      if (a.deposit != b.deposit) return a.deposit < b.deposit;
      return a.index < b.index;
    });
    json::value empty = build(false);
    empty.set("x-agentctx-budget", report(0, false));
    const std::size_t base = detail::compact_size(empty, c);
    std::size_t omitted_id_bytes = 0;
    const auto digits = [](std::size_t n) {
      std::size_t d = 1;
      for (; n >= 10; n /= 10) ++d;
      return d;
    };
    const auto commas = [](std::size_t count) { return count == 0 ? 0 : count - 1; };
    const auto size_now = [&] {
      std::size_t rest = base;
      for (int k = 0; k < 3; ++k) rest += kept_bytes[k] + commas(kept_count[k]);
      rest += omitted_id_bytes + commas(out.omitted_packages.size());
      rest += digits(out.omitted_open_questions) - 1 + digits(out.omitted_facts) - 1;
      // The report states the bundle's own size: settle its digits.
      std::size_t bytes = rest;
      for (;;) {
        const std::size_t next = rest + digits(bytes) - 1 + digits(estimate_tokens(bytes)) - 1;
        if (next == bytes) return bytes;
        bytes = next;
      }
    };
    for (const item& it : items) {
      if (size_now() <= *budget) break;
      kept_bytes[it.kind] -= it.bytes;
      --kept_count[it.kind];
      if (it.kind == package_kind) {
        keep_package[it.index] = false;
        out.omitted_packages.push_back(packages[it.index]->package.package_id);
        omitted_id_bytes += detail::compact_size(json::value(out.omitted_packages.back()), c);
      } else if (it.kind == question_kind) {
        keep_question[it.index] = false;
        ++out.omitted_open_questions;
      } else {
        keep_fact[it.index] = false;
        ++out.omitted_facts;
      }
    }
    // Over only when every item is left out and the rest still exceeds the
    // budget: the mark is added then, so it never pushes a bundle over.
    out.over_budget = size_now() > *budget;
  }
  out.bundle = build();
  if (budget) {
    out.bundle.set("x-agentctx-budget", report(0, out.over_budget));
    // The report states the size of the bundle that holds it: settle its digits.
    std::size_t bytes = 0;
    for (std::size_t stated = SIZE_MAX; stated != bytes;) {
      stated = bytes;
      bytes = detail::compact_size(out.bundle, c);
      out.bundle.find("x-agentctx-budget")->set("bytes", bytes);
      out.bundle.find("x-agentctx-budget")->set("estimated_tokens", estimate_tokens(bytes));
    }
  }
  out.bytes = detail::compact_size(out.bundle, c);
  out.estimated_tokens = estimate_tokens(out.bytes);
  return out;
}

struct orchestrate_options {
  std::string project_id;  ///< empty: a global digest over every active project
  std::string focus;       ///< empty: no snippets
  std::size_t snippets = 25;
  unsigned window_days = default_window_days;
};

/// orchestrate (section 8.4). Errors: not_found for an unknown project;
/// invalid_argument for a window of 0 days and for a focus that is not UTF-8
/// (invalid_utf8_input); the embedder's errors (with a focus).
/// With `index`, the snippets are ranked through it (the same snippets).
inline result<json::value> orchestrate(const store& s, const orchestrate_options& options, agdb::embedder& embedder,
                                       relevance_index* index = nullptr) {
  if (options.window_days == 0) return fail(errc::invalid_argument, "window_days must be at least 1");
  AGENTCTX_TRY(detail::check_utf8_input("focus", options.focus));
  auto scope = search_scope(s, options.project_id);
  if (!scope) return unexpected(std::move(scope).error());
  const std::string now = s.now_text();
  const std::int64_t since = detail::window_start_ms(parse_rfc3339_utc_ms(now).value_or(0), options.window_days);

  std::vector<const stored_package*> recent;  // every project in scope, newest first
  std::vector<detail::open_question> open;    // each project's, each text once per project
  json::value::array_type per_project, active_facts;
  std::map<std::string, std::size_t> by_type, by_status;
  for (const project* p : *scope) {
    auto packages = detail::recent_packages(s, p->project_id, since, false);
    const auto facts = s.facts(p->project_id);
    std::vector<detail::open_question> questions = detail::collect_questions(packages);
    std::size_t awaiting = 0;
    for (const stored_package* sp : packages) awaiting += sp->package.status == package_status::awaiting_review;
    per_project.push_back(json::value::object_type{{"project_id", p->project_id},
                                                   {"packages", packages.size()},
                                                   {"active_facts", facts.size()},
                                                   {"open_questions", questions.size()},
                                                   {"awaiting_review", awaiting}});
    for (const fact* f : facts) active_facts.push_back(f->wire);
    recent.insert(recent.end(), packages.begin(), packages.end());
    for (detail::open_question& q : questions) open.push_back(std::move(q));
  }
  // Newest first across the projects too (newer_first).
  std::sort(recent.begin(), recent.end(), newer_first);

  json::value::array_type decisions, handoffs, awaiting, significant, questions;
  for (const stored_package* p : recent) {
    ++by_type[p->package.package_type];
    ++by_status[std::string(to_string(p->package.status))];
    for (const std::string& d : p->package.decisions_made) {
      decisions.push_back(json::value::object_type{{"decision", d}, {"package_id", p->package.package_id}});
    }
    if (!p->package.handoff_note.empty()) {
      json::value h = json::value::object_type{{"note", p->package.handoff_note}, {"package_id", p->package.package_id}};
      if (p->package.estimated_next_actor) h.set("estimated_next_actor", std::string(to_string(*p->package.estimated_next_actor)));
      handoffs.push_back(std::move(h));
    }
    if (p->package.status == package_status::awaiting_review) awaiting.emplace_back(p->package.package_id);
  }
  std::vector<const stored_package*> by_significance = recent;
  std::stable_sort(by_significance.begin(), by_significance.end(), [](const stored_package* a, const stored_package* b) {
    return a->package.significance > b->package.significance;
  });
  for (std::size_t i = 0; i < by_significance.size() && i < 10; ++i) {
    const package& p = by_significance[i]->package;
    significant.push_back(json::value::object_type{
        {"package_id", p.package_id}, {"title", p.title}, {"significance", p.significance}, {"created_at", p.created_at}});
  }
  // Newest asking package first across the projects too; one package's in
  // the order it lists them. The newest asking package names the project.
  std::stable_sort(open.begin(), open.end(), [](const detail::open_question& a, const detail::open_question& b) {
    return newer_first(a.newest, b.newest);
  });
  for (detail::open_question& q : open) {
    questions.push_back(
        json::value::object_type{{"question", std::move(q.text)}, {"project_id", q.newest->package.project_id}});
  }
  json::value::object_type type_counts, status_counts;
  for (const auto& [k, n] : by_type) type_counts.emplace_back(k, n);
  for (const auto& [k, n] : by_status) status_counts.emplace_back(k, n);

  json::value::array_type snippets;
  if (!options.focus.empty() && options.snippets > 0) {
    // Every package of the scope but drafts, in the window or not.
    const std::vector<const stored_package*> candidates = packages_in(s, *scope, false);
    auto hits = index != nullptr ? index->rank(candidates, options.focus, options.snippets, embedder)
                                 : rank_relevant(candidates, options.focus, options.snippets, embedder);
    if (!hits) return unexpected(std::move(hits).error());
    for (const relevant_hit& h : *hits) {
      const package& p = h.package->package;
      snippets.push_back(json::value::object_type{{"package_id", p.package_id},
                                                  {"project_id", p.project_id},
                                                  {"title", p.title},
                                                  {"score", h.score},
                                                  {"excerpt", detail::excerpt(detail::snippet_body(p))}});
    }
  }

  json::value digest = json::value::object_type{};
  digest.set("scope", options.project_id.empty() ? "global" : "project");
  if (!options.project_id.empty()) digest.set("project_id", options.project_id);
  if (!options.focus.empty()) digest.set("focus", options.focus);
  digest.set("window_days", options.window_days);
  digest.set("generated_at", now);
  digest.set("summary", json::value::object_type{{"packages", recent.size()},
                                                 {"by_type", std::move(type_counts)},
                                                 {"by_status", std::move(status_counts)},
                                                 {"decisions", std::move(decisions)},
                                                 {"handoffs", std::move(handoffs)},
                                                 {"awaiting_review", std::move(awaiting)},
                                                 {"most_significant", std::move(significant)}});
  digest.set("active_facts", std::move(active_facts));
  digest.set("open_questions", std::move(questions));
  digest.set("snippets", std::move(snippets));
  if (options.project_id.empty()) digest.set("projects", std::move(per_project));
  return digest;
}

}  // namespace agentctx::relay
