// ctxstore contexts: every context with its head, depth and creation time,
// one line each (ordered by id), e.g.
//   ctxstore contexts [--json]
#include <iostream>
#include <vector>

#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

int run_contexts(const common_options& o) {
  return with_reader(o, [&](const turns::turn_store& s) {
    const std::vector<turns::context_head> heads = s.contexts();
    if (o.json) {
      return print_json([&](agentctx::json::writer& w) {
        w.begin_object().key("contexts").begin_array();
        for (const turns::context_head& h : heads) write_context_json(w, h);
        w.end_array().end_object();
      });
    }
    for (const turns::context_head& h : heads) std::cout << describe_context(h) << '\n';
    if (heads.empty()) std::cout << "no contexts\n";
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_contexts(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "contexts", "List every context with its head", run_contexts);
  add_common_options(*sub, *opts);
}

}  // namespace ctxstore
