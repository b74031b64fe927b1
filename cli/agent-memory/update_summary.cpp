// agent-memory update-summary: appends to or replaces one section of the
// agent's summary, optionally only if it is still the version read.
//   agent-memory update-summary --agent aristotle --section Decisions --mode append --content "- Parser first"
//   agent-memory update-summary ... --base-hash sha256:...   (exit 5, Conflict, if it changed)
#include "agent-memory/command.hpp"

namespace memory_cli {
namespace {

struct update_options : common_options {
  std::string section;
  std::string mode;
  std::optional<std::string> base_hash;
  content_options content;
};

int run_update(const update_options& o) {
  const auto mode = memory::parse_summary_mode(o.mode);
  if (!mode) return report(o, mode.error());
  std::string content;
  if (auto unreadable = read_content(o.content, content)) return report(o, *unreadable);
  return with_memory(o, content_limits(o.content), [&](memory::agent_memory& m) {
    auto updated = m.update_summary(o.section, content, *mode,
                                    o.base_hash ? std::optional<std::string_view>(*o.base_hash) : std::nullopt);
    if (!updated) return report(o, updated.error());
    return print_result(o, *updated,
                        std::string(updated->mode == memory::summary_mode::append ? "appended to " : "replaced ") +
                            agentctx_cli::shown(updated->section) + (updated->section_added ? " (section added)" : "") +
                            " in " + agentctx_cli::shown(updated->summary_file) + "; now " + updated->hash);
  });
}

}  // namespace

void register_update_summary(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "update-summary",
                                 "Append to or replace one section of the agent's summary", run_update);
  add_common_options(*sub, *opts, true);
  sub->add_option("--section", opts->section, "The section (one of the schema's, e.g. Decisions)")->required();
  sub->add_option("--mode", opts->mode, "append or replace")->required();
  sub->add_option("--base-hash", opts->base_hash,
                  "The hash read-summary --json printed: fail with Conflict (exit 5) if the summary changed since");
  add_content_options(*sub, opts->content);
}

}  // namespace memory_cli
