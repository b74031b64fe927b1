// agentsdb proposals: human review of agents' promotion proposals (seed 000
// sections 11.2 and 15.5), e.g.
//   agentsdb proposals list [--all]
//   agentsdb proposals show --id 77
//   agentsdb proposals accept --ids 77,78 [--reason TEXT] [--supersede]
//   agentsdb proposals reject --ids 79 --reason "duplicates the style guide"
// and agentsdb promote: a human copies delta chunks into the user layer,
//   agentsdb promote --from AGENTS.delta.db --to AGENTS.user.db --ids 1234,1250
// The review state is folded from meta.proposal_event records in the delta
// layer and every decision is appended there (agdb/proposals.hpp).
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/proposals.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "agentsdb/layer_files.hpp"
#include "agentsdb/output.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;
using agentctx::json::writer;

struct review_cli_options {
  layer_files files;
  bool all = false;
  std::uint32_t id = 0;
  std::vector<std::uint32_t> ids;
  std::string target = "user";
  std::optional<std::string> title, why, what, where;
  std::string from;
  std::string to;
  std::optional<std::string> reason;
  std::optional<std::string> by;
  bool supersede = false;
  bool json = false;
};

/// The reviewer: --by, else $USER, else "human".
std::string reviewer(const review_cli_options& o) {
  if (o.by) return *o.by;
  const char* user = std::getenv("USER");
  return user != nullptr && *user != '\0' ? std::string(user) : std::string("human");
}

agdb::review_options review(const review_cli_options& o) {
  agdb::review_options r;
  r.actor = reviewer(o);
  r.reason = o.reason;
  r.supersede = o.supersede;
  return r;
}

// The delta and user layers as they are now, for the exists_in_* flags and
// the proposed chunks.
struct review_view {
  std::optional<agdb::layer_reader> delta;
  std::optional<agdb::layer_reader> user;
  agdb::proposal_ledger ledger;

  bool in_delta(std::uint32_t id) const { return delta && delta->find_chunk(id).has_value(); }
  bool in_user(std::uint32_t id) const { return user && user->find_chunk(id).has_value(); }
};

agentctx::result<review_view> open_review(const review_cli_options& o) {
  auto& fs = agentctx::io::default_file_system();
  const auto locations = o.files.all_four();
  review_view view;
  for (const agdb::layer_id layer : {agdb::layer_id::delta, agdb::layer_id::user}) {
    const std::string& path = agdb::find_location(locations, layer)->path;
    auto present = fs.exists(path);
    if (!present) return agentctx::unexpected(std::move(present).error());
    if (!*present) continue;
    auto reader = agdb::layer_reader::open(path);
    if (!reader) return agentctx::unexpected(std::move(reader).error());
    (layer == agdb::layer_id::delta ? view.delta : view.user) = std::move(*reader);
  }
  if (view.delta) {
    auto ledger = agdb::fold_proposals(*view.delta);
    if (!ledger) return agentctx::unexpected(std::move(ledger).error());
    view.ledger = std::move(*ledger);
  }
  return view;
}

void write_proposal_json(writer& w, const agdb::proposal& p, const review_view& view) {
  w.begin_object();
  w.key("proposal_id").value(std::uint64_t{p.id});
  w.key("context_id").value(std::uint64_t{p.context_id});
  w.key("status").value(agdb::status_name(p.status));
  w.key("from_path").value(p.from_path);
  w.key("to_path").value(p.to_path);
  w.key("proposed_by").value(p.proposed_by);
  w.key("created_at_unix_ms").value(p.proposed_at_unix_ms);
  w.key("title").value(p.title);
  w.key("why").value(p.why);
  w.key("what").value(p.what);
  w.key("where").value(p.where);
  w.key("decision_id").value(p.decision_id);
  w.key("decided_by").value(p.decided_by);
  w.key("decided_at_unix_ms").value(p.decided_at_unix_ms);
  w.key("decision_reason").value(p.reason);
  w.key("decision_outcome").value(p.outcome);
  w.key("exists_in_source").value(view.in_delta(p.context_id));
  w.key("exists_in_target").value(view.in_user(p.context_id));
  w.end_object();
}

void write_warnings_json(writer& w, const std::vector<std::string>& warnings) {
  w.key("warnings").begin_array();
  for (const std::string& warning : warnings) w.value(warning);
  w.end_array();
}

std::string when(const std::optional<std::uint64_t>& ms) {
  return ms ? agentctx::format_rfc3339_utc_ms(*ms) : std::string("(no time)");
}

int run_list(const review_cli_options& o) {
  auto view = open_review(o);
  if (!view) return report_error(view.error());
  std::vector<const agdb::proposal*> listed;
  for (const agdb::proposal& p : view->ledger.proposals) {
    if (o.all || p.status == agdb::proposal_status::pending) listed.push_back(&p);
  }
  if (o.json) {
    std::string out;
    writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("delta").value(agdb::find_location(o.files.all_four(), agdb::layer_id::delta)->path);
    w.key("pending").value(std::uint64_t{view->ledger.count(agdb::proposal_status::pending)});
    w.key("total").value(std::uint64_t{view->ledger.proposals.size()});
    w.key("proposals").begin_array();
    for (const agdb::proposal* p : listed) write_proposal_json(w, *p, *view);
    w.end_array();
    write_warnings_json(w, view->ledger.warnings);
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }
  print_warnings(view->ledger.warnings);
  std::cout << view->ledger.count(agdb::proposal_status::pending) << " pending of "
            << view->ledger.proposals.size() << " proposals\n";
  for (const agdb::proposal* p : listed) {
    std::cout << "  proposal " << p->id << ": chunk " << p->context_id << ' ' << shown(p->from_path) << " -> "
              << shown(p->to_path) << ", " << agdb::status_name(p->status);
    if (p->proposed_by) std::cout << ", by " << shown(*p->proposed_by);
    std::cout << ", " << when(p->proposed_at_unix_ms);
    if (p->title) std::cout << " - " << preview(*p->title, 80);
    if (!view->in_delta(p->context_id)) std::cout << " (missing in delta)";
    if (view->in_user(p->context_id)) std::cout << " (already in user)";
    std::cout << '\n';
  }
  return exit_ok;
}

int run_show(const review_cli_options& o) {
  auto view = open_review(o);
  if (!view) return report_error(view.error());
  const agdb::proposal* p = view->ledger.find(o.id);
  if (p == nullptr) {
    std::cerr << "agentsdb: there is no proposal " << o.id << '\n';
    return exit_failure;
  }
  std::optional<agdb::chunk_view> chunk;
  std::vector<agdb::source_ref> sources;
  if (view->delta) {
    if (const auto index = view->delta->find_chunk(p->context_id)) {
      auto found = view->delta->chunk(*index);
      if (!found) return report_error(found.error());
      auto found_sources = view->delta->sources(*found);
      if (!found_sources) return report_error(found_sources.error());
      chunk = *found;
      sources = std::move(*found_sources);
    }
  }
  if (o.json) {
    std::string out;
    writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("proposal");
    write_proposal_json(w, *p, *view);
    w.key("chunk");
    if (chunk) {
      write_chunk_json(w, *chunk, sources, std::nullopt);
    } else {
      w.value(nullptr);
    }
    write_warnings_json(w, view->ledger.warnings);
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }
  print_warnings(view->ledger.warnings);
  std::cout << "proposal       " << p->id << '\n';
  std::cout << "status         " << agdb::status_name(p->status) << '\n';
  std::cout << "chunk          " << p->context_id << " (" << shown(p->from_path) << " -> " << shown(p->to_path)
            << ")\n";
  std::cout << "proposed       " << when(p->proposed_at_unix_ms) << " by "
            << (p->proposed_by ? shown(*p->proposed_by) : "(unknown)") << '\n';
  const auto line = [](std::string_view label, const std::optional<std::string>& text) {
    if (text) std::cout << label << preview(*text, 200) << '\n';
  };
  line("title          ", p->title);
  line("why            ", p->why);
  line("what           ", p->what);
  line("where          ", p->where);
  if (p->decision_id) {
    std::cout << "decided        " << when(p->decided_at_unix_ms) << " by "
              << (p->decided_by ? shown(*p->decided_by) : "(unknown)") << " (event " << *p->decision_id << ")\n";
    line("reason         ", p->reason);
    line("outcome        ", p->outcome);
  }
  std::cout << "in user layer  " << (view->in_user(p->context_id) ? "yes" : "no") << '\n';
  if (!chunk) {
    std::cout << "the proposed chunk is not in the delta layer\n";
    return exit_ok;
  }
  std::cout << "kind           " << shown(chunk->kind) << '\n';
  std::cout << "author         " << shown(chunk->author) << ", confidence " << chunk->confidence << '\n';
  std::cout << "sources        ";
  if (sources.empty()) std::cout << "(none)";
  for (std::size_t i = 0; i < sources.size(); ++i) std::cout << (i == 0 ? "" : ", ") << describe_source(sources[i]);
  std::cout << "\n----\n" << agentctx::printable_text(chunk->content);
  if (chunk->content.empty() || chunk->content.back() != '\n') std::cout << '\n';
  std::cout << "----\n";
  return exit_ok;
}

int print_promotion(const agdb::promotion_report& report, bool json) {
  if (json) {
    std::string out;
    writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("ok").value(true);
    w.key("from").value(report.delta_path);
    w.key("to").value(report.user_path);
    w.key("created").value(report.user_created);
    w.key("chunks").begin_array();
    for (const agdb::promoted_chunk& c : report.chunks) {
      w.begin_object();
      w.key("context_id").value(std::uint64_t{c.context_id});
      w.key("outcome").value(agdb::outcome_name(c.outcome));
      w.key("proposal_id").value(c.proposal_id);
      w.key("decision_id").value(std::uint64_t{c.decision_id});
      w.end_object();
    }
    w.end_array();
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }
  for (const agdb::promoted_chunk& c : report.chunks) {
    std::cout << "chunk " << c.context_id << ": " << agdb::outcome_name(c.outcome);
    if (c.proposal_id) std::cout << ", accepting proposal " << *c.proposal_id;
    std::cout << " (decision " << c.decision_id << ")\n";
  }
  std::cout << shown(report.user_path) << (report.user_created ? " (new file)" : "")
            << " updated; decisions recorded in " << shown(report.delta_path) << '\n';
  return exit_ok;
}

int run_accept(const review_cli_options& o) {
  auto report = agdb::accept_proposals(agentctx::io::default_file_system(), o.files.all_four(), o.ids, review(o));
  if (!report) return report_error(report.error());
  return print_promotion(*report, o.json);
}

int run_reject(const review_cli_options& o) {
  auto report = agdb::reject_proposals(agentctx::io::default_file_system(), o.files.all_four(), o.ids, review(o));
  if (!report) return report_error(report.error());
  if (o.json) {
    std::string out;
    writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("ok").value(true);
    w.key("delta").value(report->delta_path);
    w.key("rejected").begin_array();
    for (const auto& [proposal, event] : report->decisions) {
      w.begin_object().key("proposal_id").value(std::uint64_t{proposal});
      w.key("decision_id").value(std::uint64_t{event}).end_object();
    }
    w.end_array();
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }
  for (const auto& [proposal, event] : report->decisions) {
    std::cout << "proposal " << proposal << ": rejected (decision " << event << ")\n";
  }
  return exit_ok;
}

int run_promote(const review_cli_options& o) {
  // Base and local, which the new event ids must not collide with, default to
  // the standard files beside the --from layer.
  layer_files files = o.files;
  files[agdb::layer_id::delta] = o.from;
  files[agdb::layer_id::user] = o.to;
  const std::string directory = std::filesystem::path(o.from).parent_path().string();
  for (const agdb::layer_location& location : files.all_four(directory)) {
    if (location.id != agdb::layer_id::base) continue;
    std::error_code ignored;
    if (std::filesystem::equivalent(location.path, o.to, ignored)) {
      return usage_error("--to names the base layer " + o.to + "; the base layer is never a promotion target");
    }
  }
  if (std::filesystem::path(o.to).filename() == agdb::standard_file_name(agdb::layer_id::base)) {
    return usage_error("--to names a base layer (" + o.to + "); the base layer is never a promotion target");
  }
  auto report =
      agdb::promote_chunks(agentctx::io::default_file_system(), files.all_four(directory), o.ids, review(o));
  if (!report) return report_error(report.error());
  return print_promotion(*report, o.json);
}

int run_propose(const review_cli_options& o) {
  agdb::proposal_request request;
  request.context_id = o.id;
  request.target = o.target;
  request.actor = o.by.value_or("mcp");
  request.title = o.title;
  request.why = o.why;
  request.what = o.what;
  request.where = o.where;
  auto outcome = agdb::propose_promotion(agentctx::io::default_file_system(), o.files.all_four(), request);
  if (!outcome) return report_error(outcome.error());
  if (o.json) {
    std::string out;
    writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("proposal_id").value(std::uint64_t{outcome->proposal_id});
    w.key("context_id").value(std::uint64_t{outcome->context_id});
    w.key("already_pending").value(outcome->already_pending);
    w.key("path").value(outcome->path);
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }
  std::cout << "proposal " << outcome->proposal_id << ": chunk " << outcome->context_id << " for the user layer"
            << (outcome->already_pending ? " (already pending; nothing written)" : "") << " in "
            << shown(outcome->path) << '\n';
  return exit_ok;
}

void add_review_options(CLI::App& sub, review_cli_options& o) {
  sub.add_option("--by", o.by, "Who decides (recorded with the decision; default $USER)");
  sub.add_flag("--json", o.json, "Print the outcome as JSON");
}

}  // namespace

void register_proposals(CLI::App& app, command_table& table) {
  CLI::App* group = app.add_subcommand("proposals", "Review agents' promotion proposals (list, show, accept, reject)");
  group->require_subcommand(1);

  auto list = std::make_shared<review_cli_options>();
  CLI::App* sub = group->add_subcommand("list", "List pending proposals (--all: decided ones too)");
  sub->add_flag("--all", list->all, "Also list accepted and rejected proposals");
  list->files.add_options(*sub);
  sub->add_flag("--json", list->json, "Print the proposals as JSON");
  table.add(sub, [list] { return run_list(*list); });

  auto show = std::make_shared<review_cli_options>();
  sub = group->add_subcommand("show", "Show one proposal and the chunk it proposes");
  sub->add_option("--id", show->id, "The proposal id")
      ->required()
      ->check(agentctx_cli::count_between(0, UINT32_MAX));
  show->files.add_options(*sub);
  sub->add_flag("--json", show->json, "Print the proposal as JSON");
  table.add(sub, [show] { return run_show(*show); });

  auto accept = std::make_shared<review_cli_options>();
  sub = group->add_subcommand("accept", "Accept proposals: copy their chunks into the user layer");
  sub->add_option("--ids", accept->ids, "Proposal ids, comma-separated")
      ->required()
      ->delimiter(',')
      ->check(agentctx_cli::count_between(0, UINT32_MAX));
  sub->add_option("--reason", accept->reason, "Why (recorded with the decision)");
  sub->add_flag("--supersede", accept->supersede, "Replace a user chunk of the same id that has other content");
  accept->files.add_options(*sub);
  add_review_options(*sub, *accept);
  table.add(sub, [accept] { return run_accept(*accept); });

  auto reject = std::make_shared<review_cli_options>();
  sub = group->add_subcommand("reject", "Reject proposals, with a reason");
  sub->add_option("--ids", reject->ids, "Proposal ids, comma-separated")
      ->required()
      ->delimiter(',')
      ->check(agentctx_cli::count_between(0, UINT32_MAX));
  sub->add_option("--reason", reject->reason, "Why (recorded with the decision)")->required();
  reject->files.add_options(*sub);
  add_review_options(*sub, *reject);
  table.add(sub, [reject] { return run_reject(*reject); });
}

void register_propose(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<review_cli_options>();
  CLI::App* sub = app.add_subcommand("propose", "Propose a delta chunk for promotion to the user layer");
  sub->add_option("--id", opts->id, "The chunk id in the delta layer")
      ->required()
      ->check(agentctx_cli::count_between(0, UINT32_MAX));
  sub->add_option("--target", opts->target, "The layer to promote to (only user)")->capture_default_str();
  sub->add_option("--title", opts->title, "A one-line title for reviewers");
  sub->add_option("--why", opts->why, "Why the chunk deserves promotion");
  sub->add_option("--what", opts->what, "What it says, in short");
  sub->add_option("--where", opts->where, "Where it applies");
  sub->add_option("--by", opts->by, "Who proposes (default mcp)");
  opts->files.add_options(*sub);
  sub->add_flag("--json", opts->json, "Print the outcome as JSON");
  table.add(sub, [opts] { return run_propose(*opts); });
}

void register_promote(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<review_cli_options>();
  CLI::App* sub = app.add_subcommand("promote", "Copy delta chunks into the user layer (human review, author human)");
  sub->add_option("--from", opts->from, "The delta layer")->required();
  sub->add_option("--to", opts->to, "The user layer (created when missing)")->required();
  sub->add_option("--ids", opts->ids, "Chunk ids in the delta layer, comma-separated")
      ->required()
      ->delimiter(',')
      ->check(agentctx_cli::count_between(0, UINT32_MAX));
  sub->add_option("--reason", opts->reason, "Why (recorded with the decision)");
  sub->add_flag("--supersede", opts->supersede, "Replace a user chunk of the same id that has other content");
  sub->add_option("--base", opts->files[agdb::layer_id::base],
                  "The base layer, whose ids new records avoid (default AGENTS.db beside --from)");
  sub->add_option("--local", opts->files[agdb::layer_id::local],
                  "The local layer, whose ids new records avoid (default AGENTS.local.db beside --from)");
  add_review_options(*sub, *opts);
  table.add(sub, [opts] { return run_promote(*opts); });
}

}  // namespace agentsdb
