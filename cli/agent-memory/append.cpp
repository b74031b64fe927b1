// agent-memory append: appends an entry to one section of a session log.
//   agent-memory append --agent aristotle --section Decisions --content "- Ship the parser first"
//   git log -1 --format=%B | agent-memory append --agent aristotle --section Context --file -
#include "agent-memory/command.hpp"

namespace memory_cli {
namespace {

struct append_options : common_options {
  std::optional<std::string> date;
  std::string section;
  content_options content;
};

int run_append(const append_options& o) {
  std::string content;
  if (auto unreadable = read_content(o.content, content)) return report(o, *unreadable);
  return with_memory(o, content_limits(o.content), [&](memory::agent_memory& m) {
    auto appended =
        m.append_entry(o.section, content, o.date ? std::optional<std::string_view>(*o.date) : std::nullopt);
    if (!appended) return report(o, appended.error());
    return print_result(o, *appended, "appended to " + agentctx_cli::shown(appended->section) + " in " +
                                          agentctx_cli::shown(appended->session_file) +
                                          (appended->created ? " (log created)" : ""));
  });
}

}  // namespace

void register_append(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "append",
                                 "Append an entry at the end of one section of a session log", run_append);
  add_common_options(*sub, *opts, true);
  sub->add_option("--section", opts->section, "The section (one of the schema's, e.g. Decisions)")->required();
  sub->add_option("--date", opts->date, "The session's day, YYYY-MM-DD (default: today, UTC)");
  add_content_options(*sub, opts->content);
}

}  // namespace memory_cli
