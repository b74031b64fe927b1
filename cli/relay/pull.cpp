// relay pull: reads packages (section 8.2) in one of three modes, e.g.
//   relay pull --mode latest --project proj_demo --limit 10
//   relay pull --mode specific --package pkg_1a2b...
//   relay pull --mode relevant --project proj_demo --query "archive rollout" --limit 5
// latest: the newest packages of a project; specific: one package in full
// (its status changes too); relevant: the packages the hybrid search
// (relay::pull_relevant) ranks highest, those of every project not archived
// when --project is not given (each line then names its project), embedded
// with the embedder the shared flags describe.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "agentctx/relay/pull_json.hpp"
#include "agentctx/relay/search.hpp"
#include "common/embedder_options.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/search_embedder.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

/// The protocol's default limit (section 8.2), for relevant pulls too.
constexpr std::size_t default_limit = 5;

struct pull_options : common_options {
  std::string mode;
  std::string project;
  std::string package;
  std::string query;
  std::optional<std::size_t> limit;
  agentctx_cli::embedder_options embedder;
};

int pull_latest(const pull_options& o) {
  if (o.project.empty()) return usage_error(o, "--mode latest needs --project P");
  const std::size_t limit = o.limit.value_or(default_limit);
  return with_reader(o, [&](const relay::store& s) {
    auto packages = s.latest(o.project, limit);
    if (!packages) return report_error(o, packages.error());
    if (o.json) return print_value(relay::latest_pull_json(o.project, limit, *packages));
    print_package_lines(*packages, "no packages in project " + shown(o.project));
    return static_cast<int>(exit_ok);
  });
}

int pull_specific(const pull_options& o) {
  if (o.package.empty()) return usage_error(o, "--mode specific needs --package ID");
  if (o.limit) return usage_error(o, "--limit does not apply to --mode specific");
  return with_reader(o, [&](const relay::store& s) {
    auto found = s.pull_specific(o.package, o.project);
    if (!found) return report_error(o, found.error());
    const relay::stored_package& p = **found;
    if (!o.json) {
      print_package_detail(p);
      return static_cast<int>(exit_ok);
    }
    return print_value(relay::specific_pull_json(o.project, p));
  });
}

int pull_relevant(const pull_options& o) {
  if (o.query.empty()) return usage_error(o, "--mode relevant needs --query TEXT");
  const std::size_t limit = o.limit.value_or(default_limit);
  return with_reader(o, [&](const relay::store& s) {
    return with_search_embedder(o, o.embedder, [&](agentctx::agdb::embedder& embedder) {
      auto hits = relay::pull_relevant(s, o.project, o.query, limit, embedder);
      if (!hits) return report_error(o, hits.error());
      if (o.json) return print_value(relay::relevant_pull_json(o.project, o.query, limit, *hits));
      if (hits->empty()) std::cout << "no packages\n";
      std::size_t rank = 0;
      for (const relay::relevant_hit& hit : *hits) {
        const relay::package& p = hit.package->package;
        // A global pull names each package's project.
        const std::string project = o.project.empty() ? shown(p.project_id) + "  " : std::string();
        std::printf("%zu. %.4f  %s%s\n", ++rank, hit.score, project.c_str(), package_line(p).c_str());
      }
      return static_cast<int>(exit_ok);
    });
  });
}

int run_pull(const pull_options& o) {
  if (o.mode != "relevant" && !o.query.empty()) return usage_error(o, "--query applies to --mode relevant only");
  if (o.mode != "specific" && !o.package.empty()) return usage_error(o, "--package applies to --mode specific only");
  if (o.mode != "relevant") {
    if (const auto flag = agentctx_cli::first_embedder_flag_given(o.embedder)) {
      return usage_error(o, *flag + " applies to --mode relevant only (the other modes embed nothing)");
    }
  }
  if (o.mode == "latest") return pull_latest(o);
  if (o.mode == "specific") return pull_specific(o);
  return pull_relevant(o);
}

}  // namespace

void register_pull(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "pull", "Read packages: the latest, one by id, or the most relevant", run_pull);
  sub->add_option("--mode", opts->mode, "latest, specific or relevant")
      ->required()
      ->check(CLI::IsMember({"latest", "specific", "relevant"}));
  sub->add_option("--project", opts->project,
                  "The project: required for latest; relevant searches every project not archived without it; "
                  "specific needs it when several projects hold the id")
      ->check(agentctx_cli::non_empty);
  sub->add_option("--package", opts->package, "The package id (specific)");
  sub->add_option("--query", opts->query, "The text to rank packages against (relevant)");
  sub->add_option("--limit", opts->limit,
                  "How many packages at the most (latest, relevant; default 5, at most " +
                      std::to_string(relay::max_pull_limit) + ")")
      ->check(agentctx_cli::positive_count_at_most(relay::max_pull_limit));
  agentctx_cli::add_embedder_options(*sub, opts->embedder);
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
