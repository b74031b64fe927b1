// agentsdb compact: a new immutable base with the user layer merged over the
// old one (seed 000 section 15.6), e.g.
//   agentsdb compact --base AGENTS.db --user AGENTS.user.db --out AGENTS.db.new [--archive DIR]
// The inputs are never written; with --archive the consumed user and delta
// layers are moved into DIR (agdb::compact_layers).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "agentctx/agdb/layer_compact.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "common/output_file.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct compact_cli_options {
  agdb::compact_request request;
  bool json = false;
};

int run_compact(compact_cli_options o) {
  if (o.request.delta.empty()) {
    const std::string directory = std::filesystem::path(o.request.user).parent_path().string();
    o.request.delta = (directory.empty() ? std::string() : directory + "/") +
                      std::string(agdb::standard_file_name(agdb::layer_id::delta));
  }
  std::error_code ignored;
  for (const std::string& input : {o.request.base, o.request.user, o.request.delta}) {
    if (std::filesystem::equivalent(input, o.request.out, ignored)) {
      return usage_error("--out " + o.request.out + " is an input; compact never writes its inputs");
    }
  }
  auto checked = agentctx_cli::check_output_file(o.request.out, agentctx_cli::output_option("--out"));
  if (const std::string* refused = std::get_if<std::string>(&checked)) return usage_error(*refused);
  const agentctx_cli::output_file target = std::get<agentctx_cli::output_file>(std::move(checked));
  const std::string named_out = o.request.out;
  o.request.out = target.path;
  auto report = agdb::compact_layers(agentctx::io::default_file_system(), o.request);
  o.request.out = named_out;
  if (!report) return report_error(report.error());
  agentctx_cli::restore_mode(target);
  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("out").value(o.request.out);
    w.key("chunks").value(std::uint64_t{report->out_chunks});
    w.key("base_chunks").value(std::uint64_t{report->base_chunks});
    w.key("user_chunks").value(std::uint64_t{report->user_chunks});
    w.key("replaced").value(std::uint64_t{report->replaced});
    w.key("removed").value(std::uint64_t{report->removed});
    w.key("added").value(std::uint64_t{report->added});
    w.key("requantized").value(report->requantized);
    w.key("archived").begin_array();
    for (const auto& [from, to] : report->archived) {
      w.begin_object().key("from").value(from).key("to").value(to).end_object();
    }
    w.end_array();
    w.key("pending_proposals_archived").value(std::uint64_t{report->pending_proposals_archived});
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }
  std::cout << "wrote " << shown(o.request.out) << ": " << report->out_chunks << " chunks (base " << report->base_chunks
            << ", user " << report->user_chunks << ": " << report->replaced << " replaced, " << report->removed
            << " removed by tombstones, " << report->added << " added)"
            << (report->requantized ? "; i8 rows re-quantised with one new scale" : "") << '\n';
  for (const auto& [from, to] : report->archived) std::cout << "archived " << shown(from) << " -> " << shown(to) << '\n';
  if (report->pending_proposals_archived != 0) {
    std::cerr << "agentsdb: warning: " << report->pending_proposals_archived
              << " pending proposals were archived with the delta layer\n";
  }
  return exit_ok;
}

}  // namespace

void register_compact(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<compact_cli_options>();
  CLI::App* sub = app.add_subcommand("compact", "Write a new base layer with the user layer merged over the base");
  sub->add_option("--base", opts->request.base, "The base layer (AGENTS.db)")->required();
  sub->add_option("--user", opts->request.user, "The user layer (AGENTS.user.db)")->required();
  sub->add_option("--out", opts->request.out, "The new base layer (e.g. AGENTS.db.new)")->required();
  sub->add_option("--archive", opts->request.archive,
                  "Then move the user and delta layers into this directory (created when missing)");
  sub->add_option("--delta", opts->request.delta,
                  "The delta layer rotated by --archive (default AGENTS.delta.db beside --user)");
  sub->add_flag("--json", opts->json, "Print the outcome as JSON");
  table.add(sub, [opts] { return run_compact(*opts); });
}

}  // namespace agentsdb
