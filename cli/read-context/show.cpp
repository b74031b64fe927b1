// read-context show: the session-start bundle of an item, in reading order.
//   read-context show iguana-01 [--max-tokens 4000] [--json]
#include <cmath>

#include "agentctx/core/time.hpp"
#include "read-context/command.hpp"

namespace context_cli {
namespace {

struct show_options : common_options {
  std::string item;
};

std::string tier_heading(std::string_view name, const context::text_tier& t) {
  std::string out = "== " + std::string(name) + " (" + shown(t.path);
  if (!t.exists) return out + ", missing) ==\n";
  if (t.last_modified_ms) out += ", modified " + agentctx::format_rfc3339_utc_ms(*t.last_modified_ms);
  out += ", " + t.hash.substr(0, 19) + "..., " + agentctx_cli::count_of(t.full_length_lines, "line");
  if (t.elided_lines > 0) out += ", " + std::to_string(t.elided_lines) + " elided";
  if (t.budget_cut_lines > 0) out += ", " + std::to_string(t.budget_cut_lines) + " cut by the budget";
  return out + ") ==\n";
}

std::string human(const context::context_bundle& b) {
  std::string out = "context of " + shown(b.item_id) + " at " + b.loaded_at + "\n\n";
  for (auto [name, tier] : {std::pair{"taste", &b.taste}, {"brief", &b.brief}, {"notes", &b.notes}}) {
    out += tier_heading(name, *tier) + tier->content;
    if (!tier->content.empty() && tier->content.back() != '\n') out += '\n';
    out += '\n';
  }
  const auto& log = b.recent_log;
  const std::size_t in_window = log.entries.size() + log.budget_dropped;
  out += "== recent_log (" + shown(log.path) + ", " +
         (in_window == 1 ? std::string("1 entry") : std::to_string(in_window) + " entries") +
         " from " + agentctx_cli::count_of(log.sessions, "session");
  if (log.budget_dropped > 0) out += "; the oldest " + std::to_string(log.budget_dropped) + " left out by the budget";
  if (log.partial_last_line) out += "; a torn last line skipped";
  if (log.skipped_lines > 0) out += "; " + agentctx_cli::count_of(log.skipped_lines, "line") + " not JSON";
  if (log.capped) out += "; capped";
  out += ") ==\n";
  for (const auto& e : log.entries) {
    // One line each: a line break inside a field is shown as \n.
    out += shown(e.timestamp.value_or("-")) + "  " + shown(e.session_id.value_or("-")) + "  " +
           shown(e.summary.value_or("")) + "\n";
  }
  out += "\n== vocabulary_gaps (" + shown(b.vocabulary_gaps.path) + ", " +
         std::to_string(b.vocabulary_gaps.entries.size()) +
         " unresolved) ==\n";
  // A gap is a line of compact JSON: one line already, its strings escaped.
  for (const std::string& gap : b.vocabulary_gaps.entries) out += agentctx::printable_line(gap) + "\n";
  if (!b.omitted.empty()) {
    out += "\nbudget: left out";
    for (const auto& o : b.omitted) out += " " + o.tier + " (" + o.what + ")";
    out += "\n";
  }
  return out;
}

int run_show(const show_options& o) {
  return with_root(o, [&](io::file_system& fs) -> int {
    context::loader_options options = o.loader;
    options.recent_window_ms = static_cast<std::uint64_t>(std::llround(o.recent_hours * 3'600'000.0));
    auto bundle = context::loader(fs, options).read_context(o.item);
    if (!bundle) return report(o, bundle.error());
    return print(o, context::to_json(*bundle, agentctx::json::layout::pretty), human(*bundle));
  });
}

}  // namespace

void register_show(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "show", "Print the session-start context of an item, in reading order",
                                 run_show);
  sub->add_option("item", opts->item, "The item id")->required();
  add_common_options(*sub, *opts);
  auto& l = opts->loader;
  const std::string policy = "Policy";
  sub->add_option("--notes-threshold", l.notes.threshold_lines, "Notes longer than this many lines are elided")
      ->capture_default_str()->check(positive_count)->group(policy);
  sub->add_option("--notes-head", l.notes.head_lines, "Lines kept at the start of long notes")
      ->capture_default_str()->check(count_between(0, UINT32_MAX))->group(policy);
  sub->add_option("--notes-tail", l.notes.tail_lines, "Lines kept at the end of long notes")
      ->capture_default_str()->check(count_between(0, UINT32_MAX))->group(policy);
  sub->add_option("--taste-max-lines", l.taste.max_lines, "Taste longer than this is truncated within its sections")
      ->capture_default_str()->check(positive_count)->group(policy);
  sub->add_option("--recent-sessions", l.recent_sessions, "recent_log: the entries of this many latest sessions...")
      ->capture_default_str()->check(count_between(0, UINT64_MAX))->group(policy);
  sub->add_option("--recent-hours", opts->recent_hours, "...or of this many hours, whichever is more")
      ->capture_default_str()->check(CLI::NonNegativeNumber)->group(policy);
  sub->add_option("--max-log-entries", l.max_log_entries, "The hard cap of recent_log")
      ->capture_default_str()->check(positive_count)->group(policy);
  sub->add_option("--max-gaps", l.max_gaps, "Unresolved vocabulary gaps shown")
      ->capture_default_str()->check(count_between(0, UINT64_MAX))->group(policy);
  sub->add_option("--max-bytes", l.max_bytes, "Budget of the bundle's bodies and entries, in bytes (spent in reading order)")
      ->check(positive_count)->group(policy);
  sub->add_option("--max-tokens", l.max_tokens, "Budget in estimated tokens (agentctx-tokens-v1)")
      ->check(positive_count)->group(policy);
}

}  // namespace context_cli
