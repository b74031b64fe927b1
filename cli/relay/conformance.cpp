// relay conformance: the conformance descriptor of this implementation
// (section 11.5; relay::conformance_descriptor), e.g.
//   relay conformance --json
#include <iostream>
#include <string>
#include <vector>

#include "agentctx/relay/conformance.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

int run_conformance(const common_options& o) {
  if (const int refused = check_store_argument(o)) return refused;  // unused here, but checked as everywhere
  const json::value descriptor = relay::conformance_descriptor();
  if (o.json) return print_value(descriptor);
  const json::value& implementation = member(descriptor, "implementation");
  std::cout << "protocol version   " << text_of(descriptor, "protocol_version") << '\n'
            << "conformance level  " << text_of(descriptor, "conformance_level") << '\n'
            << "implementation     " << text_of(implementation, "name") << ' ' << text_of(implementation, "version")
            << '\n';
  std::vector<std::string> capabilities;
  for (const auto& [name, offered] : member(descriptor, "capabilities").as_object()) {
    capabilities.push_back(name + (offered.is_bool() && offered.as_bool() ? " yes" : " no"));
  }
  std::cout << "capabilities       " << joined(capabilities) << '\n';
  return exit_ok;
}

}  // namespace

void register_conformance(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "conformance", "Print the conformance descriptor (level and capabilities)",
                                 run_conformance);
  add_common_options(*sub, *opts, store_use::unused);
}

}  // namespace relay_cli
