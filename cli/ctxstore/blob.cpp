// ctxstore blob get: a payload by its SHA-256 (seed GET_BLOB), verified
// against the hash, as raw bytes on standard output or in a file replaced
// atomically, e.g.
//   ctxstore blob get 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 > payload.bin
//   ctxstore blob get HASH --out payload.bin
//   ctxstore blob get HASH --json     # {"hash", "size", "payload_base64"}
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <variant>

#include "agentctx/core/base64.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/turns/format.hpp"
#include "common/output_file.hpp"
#include "ctxstore/command.hpp"
#include "ctxstore/output.hpp"
#include "ctxstore/store_access.hpp"

namespace ctxstore {
namespace {

struct blob_get_options : common_options {
  std::string hash;
  std::optional<std::string> out;
};

int run_blob_get(const blob_get_options& o) {
  const auto hash = agentctx::parse_hex_digest(o.hash);
  if (!hash) return usage_error("not a blob hash: '" + o.hash + "'");  // the option's check passed it
  std::optional<agentctx_cli::output_file> target;
  if (o.out) {
    agentctx_cli::output_check check = agentctx_cli::output_option("--out", "leave out --out to write to standard output");
    check.protected_dir = o.store;  // its own files only: the store may be the current folder, the default
    check.is_protected_name = turns::is_store_file_name;
    auto checked = agentctx_cli::check_output_file(*o.out, check);
    if (const std::string* refused = std::get_if<std::string>(&checked)) return usage_error(*refused);
    target = std::get<agentctx_cli::output_file>(std::move(checked));
  }
  return with_reader(o, [&](const turns::turn_store& s) {
    auto bytes = s.get_blob(*hash);
    if (!bytes) return report_error(bytes.error());
    if (o.out) {
      auto written = agentctx::io::write_file_atomically(agentctx::io::default_file_system(), target->path, *bytes);
      if (!written) return report_error(written.error());
      agentctx_cli::restore_mode(*target);
    }
    if (o.json) {
      return print_json([&](agentctx::json::writer& w) {
        w.begin_object();
        w.key("hash").value(o.hash);
        w.key("size").value(bytes->size());
        if (o.out) {
          w.key("out").value(*o.out);
        } else {
          w.key("payload_base64").value(agentctx::base64_encode(*bytes));
        }
        w.end_object();
      });
    }
    if (o.out) {
      std::cout << "wrote " << count_of(bytes->size(), "byte") << " to " << agentctx_cli::shown(*o.out) << '\n';
      return static_cast<int>(exit_ok);
    }
    if (std::fwrite(bytes->data(), 1, bytes->size(), stdout) != bytes->size() || std::fflush(stdout) != 0) {
      return agentctx_cli::output_failure(program_name);
    }
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_blob(CLI::App& app, command_table& table) {
  CLI::App* blob = app.add_subcommand("blob", "Read payloads by hash");
  blob->require_subcommand(1);
  auto [get, opts] =
      add_command(*blob, table, "get", "Write a payload's bytes to standard output or a file", run_blob_get);
  get->add_option("hash", opts->hash, "The payload's SHA-256 (64 lowercase hex digits)")
      ->required()
      ->check(blob_hash_text);
  get->add_option("--out", opts->out, "Write to this file, replaced atomically (default: standard output)");
  add_common_options(*get, *opts);
}

}  // namespace ctxstore
