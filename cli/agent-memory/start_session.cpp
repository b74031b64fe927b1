// agent-memory start-session: creates (or finds) the session log of a day.
//   agent-memory start-session --agent aristotle [--date 2025-01-20]
#include "agent-memory/command.hpp"

namespace memory_cli {
namespace {

struct start_options : common_options {
  std::optional<std::string> date;
};

int run_start(const start_options& o) {
  return with_memory(o, {}, [&](memory::agent_memory& m) {
    auto opened = m.start_session(o.date ? std::optional<std::string_view>(*o.date) : std::nullopt);
    if (!opened) return report(o, opened.error());
    return print_result(o, *opened,
                        (opened->created ? "created " : "exists  ") + agentctx_cli::shown(opened->session_file));
  });
}

}  // namespace

void register_start_session(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "start-session",
                                 "Create the session log of a day (never overwriting one that exists)", run_start);
  add_common_options(*sub, *opts, true);
  sub->add_option("--date", opts->date, "The day, YYYY-MM-DD (default: today, UTC)");
}

}  // namespace memory_cli
