// agent-memory read-summary: prints the agent's summary (creating it from the
// template when missing); --json adds its hash, the base of a later update.
//   agent-memory read-summary --agent aristotle
#include "agent-memory/command.hpp"

namespace memory_cli {
namespace {

int run_read(const common_options& o) {
  return with_memory(o, {}, [&](memory::agent_memory& m) {
    auto summary = m.read_summary();
    if (!summary) return report(o, summary.error());
    if (summary->initialized) {
      std::cerr << program_name << ": created " << agentctx_cli::shown(summary->summary_file) << '\n';
    }
    // The summary as it is, but for control characters (a file in the
    // repository may hold escape sequences): printable_text keeps its lines.
    return print_result(o, *summary, agentctx::printable_text(summary->summary));
  });
}

}  // namespace

void register_read_summary(CLI::App& app, command_table& table) {
  auto [sub, opts] =
      add_command(app, table, "read-summary", "Print the agent's summary (created from the template if missing)", run_read);
  add_common_options(*sub, *opts, true);
}

}  // namespace memory_cli
