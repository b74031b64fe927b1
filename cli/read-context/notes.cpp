// read-context notes: the whole notes of an item, or a page of them.
//   read-context notes iguana-01 [--from 120 --lines 60]
#include "read-context/command.hpp"

namespace context_cli {
namespace {

struct notes_options : common_options {
  std::string item;
  std::size_t from = 1;
  std::size_t lines = 0;
};

int run_notes(const notes_options& o) {
  return with_root(o, [&](io::file_system& fs) -> int {
    auto page = context::loader(fs, o.loader).read_full_notes(o.item, o.from, o.lines);
    if (!page) return report(o, page.error());
    std::string text;
    for (const std::string& line : page->lines) text += line + "\n";
    if (page->next_line && !o.json) {
      std::cerr << program_name << ": " << page->total_lines << " lines in all; continue with --from "
                << *page->next_line << '\n';
    }
    return print(o, context::to_json(*page, agentctx::json::layout::pretty), text);
  });
}

}  // namespace

void register_notes(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "notes", "Print the full notes of an item (or a page of lines)", run_notes);
  sub->add_option("item", opts->item, "The item id")->required();
  add_common_options(*sub, *opts);
  sub->add_option("--from", opts->from, "The first line, from 1")->capture_default_str()->check(positive_count);
  sub->add_option("--lines", opts->lines, "How many lines at most (default: to the end)")->check(positive_count);
}

}  // namespace context_cli
