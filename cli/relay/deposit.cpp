// relay deposit: writes a new package (section 8.1), e.g.
//   relay deposit package.json
//   make-package | relay deposit - --json
// The package is validated, given a package_id when it has none, hashed and
// appended durably; the identical package again is "already present".
#include "relay/deposit.hpp"

namespace relay_cli {

void register_deposit(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "deposit", "Deposit a package (a JSON file, or - for stdin)", run_deposit);
  add_deposit_options(*sub, *opts);
}

}  // namespace relay_cli
