// agentsdb diff: what the delta (and user) layers change relative to the
// layers below them (seed 000 section 15.5), e.g.
//   agentsdb diff --base AGENTS.db --delta AGENTS.delta.db [--user AGENTS.user.db] [--json]
// New delta chunks, overrides of base ids with a line diff, user/delta
// conflicts and pending proposals (agdb::diff_layers).
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_diff.hpp"
#include "agentctx/agdb/layer_stack.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "agentsdb/output.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;
using agentctx::json::writer;

struct diff_cli_options {
  std::string base;
  std::string delta;
  std::optional<std::string> user;
  std::size_t preview_chars = 100;
  bool json = false;
};

void write_chunk(writer& w, const agdb::diff_chunk& c) {
  w.key("id").value(std::uint64_t{c.id});
  w.key("kind").value(c.kind);
  w.key("author").value(c.author);
  w.key("confidence").value(c.confidence);
  w.key("content").value(c.content);
}

void write_change(writer& w, const agdb::chunk_change& change) {
  w.begin_object();
  write_chunk(w, change.chunk);
  w.key("layer").value(agdb::layer_name(change.upper));
  w.key("over_layer").value(agdb::layer_name(change.lower));
  w.key("over_kind").value(change.lower_kind);
  w.key("same_content").value(change.same_content);
  w.key("diff").begin_array();
  if (!change.same_content) {
    for (const agentctx::line_edit& e : change.edits()) {
      w.begin_object().key("op").value(std::string(1, static_cast<char>(e.kind)));
      w.key("line").value(e.line).end_object();
    }
  }
  w.end_array();
  w.end_object();
}

void print_change(const agdb::chunk_change& change, char mark) {
  std::cout << "  " << mark << ' ' << change.chunk.id << ' ' << shown(change.chunk.kind) << ": "
            << agdb::layer_name(change.upper) << " over " << agdb::layer_name(change.lower);
  if (change.lower_kind != change.chunk.kind) std::cout << " (kind was " << shown(change.lower_kind) << ')';
  if (change.same_content) {
    std::cout << ", same content\n";
    return;
  }
  std::cout << '\n' << "    --- " << agdb::layer_name(change.lower) << '\n'
            << "    +++ " << agdb::layer_name(change.upper) << '\n';
  for (const agentctx::line_edit& e : change.edits()) {
    std::cout << "    " << static_cast<char>(e.kind) << ' ' << agentctx::printable_line(e.line) << '\n';
  }
}

int run_diff(const diff_cli_options& o) {
  std::vector<agdb::layer_location> locations = {{agdb::layer_id::base, o.base, true},
                                                 {agdb::layer_id::delta, o.delta, true}};
  if (o.user) locations.push_back({agdb::layer_id::user, *o.user, true});
  auto stack = agdb::layer_stack::open(agentctx::io::default_file_system(), locations);
  if (!stack) return report_error(stack.error());
  auto diff = agdb::diff_layers(*stack);
  if (!diff) return report_error(diff.error());

  if (o.json) {
    std::string out;
    writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("base").value(o.base);
    w.key("delta").value(o.delta);
    w.key("user");
    if (o.user) {
      w.value(*o.user);
    } else {
      w.value(nullptr);
    }
    w.key("added").begin_array();
    for (const agdb::diff_chunk& c : diff->added) {
      w.begin_object();
      write_chunk(w, c);
      w.end_object();
    }
    w.end_array();
    w.key("overrides").begin_array();
    for (const agdb::chunk_change& c : diff->overrides) write_change(w, c);
    w.end_array();
    w.key("conflicts").begin_array();
    for (const agdb::chunk_change& c : diff->conflicts) write_change(w, c);
    w.end_array();
    w.key("pending_proposals").begin_array();
    for (const agdb::proposal& p : diff->pending) {
      w.begin_object();
      w.key("proposal_id").value(std::uint64_t{p.id});
      w.key("context_id").value(std::uint64_t{p.context_id});
      w.key("proposed_by");
      if (p.proposed_by) {
        w.value(*p.proposed_by);
      } else {
        w.value(nullptr);
      }
      w.key("title");
      if (p.title) {
        w.value(*p.title);
      } else {
        w.value(nullptr);
      }
      w.end_object();
    }
    w.end_array();
    w.key("warnings").begin_array();
    for (const std::string& warning : diff->warnings) w.value(warning);
    w.end_array();
    w.end_object();
    std::cout << out << '\n';
    return exit_ok;
  }

  print_warnings(diff->warnings);
  std::cout << "new in delta (" << diff->added.size() << ")\n";
  for (const agdb::diff_chunk& c : diff->added) {
    std::cout << "  + " << c.id << ' ' << shown(c.kind) << " (" << shown(c.author) << ", " << c.confidence
              << "): " << preview(c.content, o.preview_chars) << '\n';
  }
  std::cout << "overrides (" << diff->overrides.size() << ")\n";
  for (const agdb::chunk_change& c : diff->overrides) print_change(c, '~');
  std::cout << "conflicts between user and delta (" << diff->conflicts.size() << "; the user copy is in effect)\n";
  for (const agdb::chunk_change& c : diff->conflicts) print_change(c, '!');
  std::cout << "pending proposals (" << diff->pending.size() << ")\n";
  for (const agdb::proposal& p : diff->pending) {
    std::cout << "  proposal " << p.id << ": chunk " << p.context_id;
    if (p.proposed_by) std::cout << " by " << shown(*p.proposed_by);
    if (p.title) std::cout << " - " << preview(*p.title, o.preview_chars);
    std::cout << '\n';
  }
  return exit_ok;
}

}  // namespace

void register_diff(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<diff_cli_options>();
  CLI::App* sub = app.add_subcommand("diff", "Show what the delta and user layers change over the base layer");
  sub->add_option("--base", opts->base, "The base layer (AGENTS.db)")->required();
  sub->add_option("--delta", opts->delta, "The delta layer (AGENTS.delta.db)")->required();
  sub->add_option("--user", opts->user, "The user layer (AGENTS.user.db), for user overrides and conflicts");
  sub->add_option("--preview", opts->preview_chars, "Characters of content to show for new chunks")
      ->capture_default_str()
      ->check(positive_count);
  sub->add_flag("--json", opts->json, "Print the diff as JSON");
  table.add(sub, [opts] { return run_diff(*opts); });
}

}  // namespace agentsdb
