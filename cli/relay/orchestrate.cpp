// relay orchestrate: the DigestBundle (section 8.4) across a project's
// packages, or across every active project, e.g.
//   relay orchestrate --project proj_demo --focus "retrieval quality" --snippets 10
//   relay orchestrate --json                               # global digest
// --json prints the digest exactly as relay::orchestrate builds it; the text
// is a Markdown digest of the same contents. Snippets (with --focus) are
// ranked by the hybrid search, embedded as for pull --mode relevant.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/relay/briefing.hpp"
#include "common/embedder_options.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/search_embedder.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct orchestrate_cli_options : common_options {
  std::string project;
  std::string focus;
  std::optional<std::size_t> snippets;  ///< default: relay::orchestrate_options{}.snippets
  unsigned window_days = relay::default_window_days;
  agentctx_cli::embedder_options embedder;
};

/// "## Title (N)" and one line per item, or "- none".
template <class Line>
void section(std::string_view title, const json::value::array_type& items, Line&& line) {
  std::cout << "\n## " << title << " (" << items.size() << ")\n";
  if (items.empty()) std::cout << "- none\n";
  for (const json::value& item : items) std::cout << "- " << line(item) << '\n';
}

/// "2 milestone, 1 decision" from {"milestone": 2, "decision": 1}.
std::string counts_text(const json::value& counts) {
  std::string out;
  if (!counts.is_object()) return out;
  for (const auto& [name, n] : counts.as_object()) {
    out += (out.empty() ? "" : ", ") + std::to_string(static_cast<std::uint64_t>(n.as_number())) + " " + shown(name);
  }
  return out;
}

int print_digest(const json::value& digest) {
  const bool global = text_of(digest, "scope") == "global";
  std::cout << "# Digest: " << (global ? std::string("every active project") : "project " + shown(text_of(digest, "project_id")))
            << '\n';
  std::cout << "Generated " << shown(text_of(digest, "generated_at")) << " for the last "
            << count_of(count_in(digest, "window_days"), "day")
            << (digest.find("focus") ? "; focus: " + shown(text_of(digest, "focus")) : std::string()) << '\n';
  const json::value& summary = member(digest, "summary");
  std::cout << "\n## Summary\n" << count_of(count_in(summary, "packages"), "package");
  if (count_in(summary, "packages") > 0) {
    std::cout << ": " << counts_text(member(summary, "by_type")) << "; " << counts_text(member(summary, "by_status"));
  }
  std::cout << '\n';
  const auto package_ref = [](const json::value& item) { return " [" + shown(text_of(item, "package_id")) + "]"; };
  section("Most significant", array_in(summary, "most_significant"), [&](const json::value& item) {
    return "(" + std::to_string(count_in(item, "significance")) + ") " + shown(text_of(item, "title")) + package_ref(item);
  });
  section("Decisions", array_in(summary, "decisions"),
          [&](const json::value& item) { return shown(text_of(item, "decision")) + package_ref(item); });
  section("Handoffs", array_in(summary, "handoffs"), [&](const json::value& item) {
    const std::string next = text_of(item, "estimated_next_actor");
    return shown(text_of(item, "note")) + (next.empty() ? "" : " (next: " + shown(next) + ")") + package_ref(item);
  });
  section("Awaiting review", array_in(summary, "awaiting_review"),
          [](const json::value& item) { return shown(item.as_string()); });
  // A global digest says which project a fact or a question is of.
  const auto project_ref = [global](const json::value& item) {
    return global ? " [in " + shown(text_of(item, "project_id")) + "]" : std::string();
  };
  section("Active facts", array_in(digest, "active_facts"), [&](const json::value& item) {
    auto f = relay::read_fact(item);
    return (f ? fact_line(*f) : shown(text_of(item, "fact_id"))) + project_ref(item);
  });
  section("Open questions", array_in(digest, "open_questions"),
          [&](const json::value& item) { return shown(text_of(item, "question")) + project_ref(item); });
  section("Snippets", array_in(digest, "snippets"), [](const json::value& item) {
    char score[32];
    std::snprintf(score, sizeof score, "%.4f", member(item, "score").as_number());
    const std::string excerpt = text_of(item, "excerpt");
    return std::string(score) + "  " + shown(text_of(item, "title")) + " [" + shown(text_of(item, "package_id")) + " in " +
           shown(text_of(item, "project_id")) + "]" + (excerpt.empty() ? "" : "\n  " + shown(excerpt));
  });
  if (global) {
    section("Projects", array_in(digest, "projects"), [](const json::value& item) {
      return shown(text_of(item, "project_id")) + ": " + count_of(count_in(item, "packages"), "package") + ", " +
             count_of(count_in(item, "active_facts"), "active fact") + ", " +
             count_of(count_in(item, "open_questions"), "open question") + ", " +
             std::to_string(count_in(item, "awaiting_review")) + " awaiting review";
    });
  }
  return exit_ok;
}

int run_orchestrate(const orchestrate_cli_options& o) {
  if (o.focus.empty()) {
    if (o.snippets) return usage_error(o, "--snippets needs --focus TOPIC (snippets are the packages most similar to it)");
    if (const auto flag = agentctx_cli::first_embedder_flag_given(o.embedder)) {
      return usage_error(o, *flag + " needs --focus TOPIC (without a focus nothing is embedded)");
    }
  }
  return with_reader(o, [&](const relay::store& s) {
    relay::orchestrate_options options;
    options.project_id = o.project;
    options.focus = o.focus;
    if (o.snippets) options.snippets = *o.snippets;
    options.window_days = o.window_days;
    const auto digest_with = [&](agentctx::agdb::embedder& embedder) {
      auto digest = relay::orchestrate(s, options, embedder);
      if (!digest) return report_error(o, digest.error());
      if (o.json) return print_value(*digest);
      return print_digest(*digest);
    };
    // Without a focus nothing is embedded: no embedder (nor cache) is set up.
    if (o.focus.empty()) {
      agentctx::agdb::hash_embedder unused;
      return digest_with(unused);
    }
    return with_search_embedder(o, o.embedder, digest_with);
  });
}

}  // namespace

void register_orchestrate(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "orchestrate",
                                 "Print a digest of recent work in a project, or across every active project",
                                 run_orchestrate);
  sub->add_option("--project", opts->project, "The project (default: a global digest of every active project)")
      ->check(agentctx_cli::non_empty);
  sub->add_option("--focus", opts->focus, "A topic: adds the packages most similar to it as snippets");
  sub->add_option("--snippets", opts->snippets,
                  "How many snippets at the most (with --focus; default " +
                      std::to_string(relay::orchestrate_options{}.snippets) + ", at most " +
                      std::to_string(relay::max_pull_limit) + ")")
      ->check(agentctx_cli::positive_count_at_most(relay::max_pull_limit));
  sub->add_option("--window-days", opts->window_days, "Packages created in the last N days (at most 36500)")
      ->capture_default_str()
      ->check(agentctx_cli::positive_count_at_most(relay::max_window_days));
  agentctx_cli::add_embedder_options(*sub, opts->embedder);
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
