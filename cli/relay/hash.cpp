// relay hash: the content hash of a package (section 6.6): SHA-256 over its
// Appendix A canonical form, as deposit computes it, e.g.
//   relay hash package.json          # sha256:9f86d081884c7d65...
// The package is validated first (read_package); it must carry its
// package_id, which the hash covers (deposit generates one when absent).
#include <iostream>
#include <string>
#include <utility>

#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/hash.hpp"
#include "agentctx/relay/model.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct hash_options : common_options {
  std::string file;
};

int run_hash(const hash_options& o) {
  if (const int refused = check_store_argument(o)) return refused;  // unused here, but checked as everywhere
  auto text = read_input(o.file, max_package_input);
  if (!text) return report_error(o, text.error());
  json::canonicalizer canonicalizer;
  auto wire = canonicalizer.parse(*text);
  if (!wire) return report_error(o, invalid_json(o.file, wire.error()));
  const json::value* id = wire->find("package_id");
  if (wire->is_object() && (id == nullptr || id->is_null())) {
    return report_error(o, agentctx::make_error(agentctx::errc::invalid_argument,
                                                "package_id is absent, and the hash covers it: deposit generates "
                                                "one (relay deposit prints the package's id and hash)",
                                                input_name(o.file)));
  }
  auto package = relay::read_package(std::move(*wire));
  if (!package) return report_error(o, package.error().with_path(input_name(o.file)));
  auto hash = relay::content_hash(package->wire, canonicalizer);
  if (!hash) return report_error(o, invalid_json(o.file, hash.error()));
  if (o.json) {
    return print_json([&](json::writer& w) {
      w.begin_object();
      w.key("package_id").value(package->package_id);
      w.key("project_id").value(package->project_id);
      w.key("hash").value(*hash);
      w.end_object();
    });
  }
  std::cout << *hash << '\n';
  return exit_ok;
}

}  // namespace

void register_hash(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "hash", "Print the content hash of a package (sha256:<hex>)", run_hash);
  sub->add_option("FILE", opts->file, "The package, or - for standard input")
      ->required()
      ->check(agentctx_cli::non_empty);
  add_common_options(*sub, *opts, store_use::unused);
}

}  // namespace relay_cli
