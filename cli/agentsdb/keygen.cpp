// agentsdb keygen --out KEY [--pub KEY.pub] [--force]: makes an Ed25519 key
// pair for signing layers (docs/format/signature.md). The private key file is
// written with mode 0600; existing key files are kept unless --force is given.
// Library: agdb::ed25519_private_key::generate and agdb::write_key_pair.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "agentctx/agdb/layer_signature.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct keygen_options {
  std::string out;
  std::string pub;
  bool force = false;
  bool json = false;
};

int run_keygen(const keygen_options& o) {
  const std::string public_path = o.pub.empty() ? o.out + ".pub" : o.pub;
  // A key is never written through a symbolic link (it could lead anywhere):
  // without --force a link there, dangling or not, is an existing file; with
  // it, the link itself is replaced.
  namespace fs = std::filesystem;
  for (const std::string* path : {&o.out, &public_path}) {
    std::error_code ignored;
    const fs::file_status here = fs::symlink_status(*path, ignored);
    if (!o.force && fs::is_symlink(here)) {
      return report_error(agentctx::make_error(agentctx::errc::already_exists,
                                               "a symbolic link is here; a key is not written through it (pass "
                                               "--force to replace the link)",
                                               *path));
    }
    // Refused before anything is written, so that no half of a pair is.
    if (fs::is_directory(here) || path->ends_with('/')) {
      return report_error(agentctx::make_error(agentctx::errc::invalid_argument, "is a folder, not a file", *path));
    }
  }
  // One file spelled two ways ("k" and "./k") would hold the public key only.
  const auto spelled_out = [](const std::string& path) {
    std::error_code ignored;
    const fs::path whole = fs::absolute(path, ignored);
    return fs::weakly_canonical(whole.parent_path(), ignored) / whole.filename();
  };
  if (spelled_out(o.out) == spelled_out(public_path)) {
    return report_error(agentctx::make_error(agentctx::errc::invalid_argument,
                                             "--out and --pub name the same file (" + public_path + ")", o.out));
  }
  auto key = agdb::ed25519_private_key::generate();
  if (!key) return report_error(key.error());
  auto written = agdb::write_key_pair(agentctx::io::default_file_system(), o.out, public_path, *key,
                                      o.force ? agdb::key_overwrite::replace : agdb::key_overwrite::refuse);
  if (!written) {
    agentctx::error e = written.error();
    if (e.code == agentctx::errc::already_exists) e.message += " (pass --force to replace it)";
    return report_error(e);
  }

  const std::string key_id = agdb::key_id_of(key->public_key());
  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("key_id").value(key_id);
    w.key("private_key").value(o.out);
    w.key("public_key").value(public_path);
    w.end_object();
    std::cout << out << '\n';
  } else {
    std::cout << "wrote private key " << shown(o.out) << " (mode 0600, keep it secret) and public key "
              << shown(public_path)
              << "\nkey id " << key_id << '\n';
  }
  return exit_ok;
}

}  // namespace

void register_keygen(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<keygen_options>();
  CLI::App* sub = app.add_subcommand("keygen", "Make an Ed25519 key pair for signing layers");
  sub->add_option("--out", opts->out, "The private key file to write (mode 0600)")->required();
  sub->add_option("--pub", opts->pub, "The public key file to write (default: the --out path with .pub appended)");
  sub->add_flag("--force", opts->force, "Replace existing key files");
  sub->add_flag("--json", opts->json, "Print the outcome as JSON");
  table.add(sub, [opts] { return run_keygen(*opts); });
}

}  // namespace agentsdb
