// Depositing one package from a file or standard input: what `relay deposit`
// and `relay-deposit` both run (relay::store::deposit_json). Prints
//   pkg_1a2b...  sha256:9f86...  created            (or: already present)
// or, with --json, {"package_id", "project_id", "hash", "created", "package"}:
// the package as deposited and its hash (what `relay hash FILE` prints), also
// when the identical package was already there and has changed status since.
#pragma once

#include <iostream>
#include <string>

#include "agentctx/relay/store.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {

struct deposit_options : writer_options {
  std::string file;  ///< a path, or "-" for standard input
};

inline void add_deposit_options(CLI::App& app, deposit_options& o) {
  app.add_option("FILE", o.file, "The package: a JSON object (section 6), or - for standard input")
      ->required()
      ->check(agentctx_cli::non_empty);
  add_writer_options(app, o, store_use::created);
  app.footer(std::string(deposit_exit_codes_help));
}

inline int run_deposit(const deposit_options& o) {
  auto text = read_input(o.file, max_package_input);
  if (!text) return report_error(o, text.error());
  return with_writer(o, [&](relay::store& s) {
    auto deposited = s.deposit_json(*text);
    if (!deposited) return report_error(o, deposited.error().with_path(input_name(o.file)));
    const relay::stored_package& p = *deposited->package;
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object();
        w.key("package_id").value(p.package.package_id);
        w.key("project_id").value(p.package.project_id);
        w.key("hash").value(p.deposited_hash);
        w.key("created").value(deposited->created);
        w.key("package");
        write_value(w, p.deposited_wire());
        w.end_object();
      });
    }
    std::cout << shown(p.package.package_id) << "  " << shown(p.deposited_hash) << "  " << (deposited->created ? "created" : "already present")
              << '\n';
    return static_cast<int>(exit_ok);
  });
}

}  // namespace relay_cli
