// agent-memory list-sessions: the agent's session logs, newest first.
//   agent-memory list-sessions --agent aristotle --limit 10 [--before 2025-01-15]
#include "agent-memory/command.hpp"

namespace memory_cli {
namespace {

struct list_options : common_options {
  std::size_t limit = 0;
  std::optional<std::string> before;
};

int run_list(const list_options& o) {
  return with_memory(o, {}, [&](memory::agent_memory& m) -> int {
    auto list = m.list_sessions(o.limit, o.before ? std::optional<std::string_view>(*o.before) : std::nullopt);
    if (!list) return report(o, list.error());
    for (const std::string& name : list->ignored) {
      std::cerr << program_name << ": note: " << agentctx::escape_for_message(m.layout().logs_dir + "/" + name, SIZE_MAX)
                << " is not a session log\n";
    }
    if (o.json) {
      std::cout << memory::to_json(*list, agentctx::json::layout::pretty) << '\n';
      return exit_ok;
    }
    for (const std::string& name : list->sessions) std::cout << name << '\n';
    if (list->next_before) {
      std::cerr << program_name << ": " << list->total << " sessions in all; for more, add --before "
                << *list->next_before << '\n';
    }
    return exit_ok;
  });
}

}  // namespace

void register_list_sessions(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "list-sessions", "List the agent's session logs, newest first", run_list);
  add_common_options(*sub, *opts, false);
  sub->add_option("--limit", opts->limit, "How many at most (default: all)")->check(positive_count);
  sub->add_option("--before", opts->before, "Only sessions before this day, YYYY-MM-DD (the next page)");
}

}  // namespace memory_cli
