// ctxstore init: creates an empty store in --store (the folder is created if
// missing; its parent must exist), e.g.
//   ctxstore init --store ~/.agent/turns
#include <iostream>

#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/turns/turn_store.hpp"
#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"

namespace ctxstore {
namespace {

int run_init(const common_options& o) {
  auto created = turns::turn_store::init(agentctx::io::default_file_system(), o.store);
  if (!created) return report_error(created.error());
  if (o.json) {
    return print_json([&](agentctx::json::writer& w) { w.begin_object().key("store").value(o.store).end_object(); });
  }
  std::cout << "initialized an empty turn store in " << agentctx_cli::shown(o.store) << '\n';
  return exit_ok;
}

}  // namespace

void register_init(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "init", "Create an empty turn store", run_init);
  add_common_options(*sub, *opts);
}

}  // namespace ctxstore
