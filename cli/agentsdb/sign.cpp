// agentsdb sign --in AGENTS.db --key KEY [--out AGENTS.db.sig]: writes a
// detached Ed25519 signature of a layer (seed 000 sections 13 and 15.1;
// docs/format/signature.md). The layer is validated first and a damaged one
// is refused (exit 1). Library: agdb::sign_layer_file, write_signature_file.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <variant>

#include "agentctx/agdb/layer_signature.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"
#include "common/output_file.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct sign_options {
  std::string in;
  std::optional<std::string> out;  ///< default: the --in path with .sig appended
  std::string key;
  bool json = false;
};

// True when both paths name one existing file.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ignored;
  return std::filesystem::equivalent(a, b, ignored);
}

int run_sign(const sign_options& o) {
  const std::string signature_path = o.out ? *o.out : o.in + ".sig";
  for (const std::string* input : {&o.in, &o.key}) {
    if (signature_path == *input || same_file(signature_path, *input)) {
      return usage_error("the signature file " + signature_path + " would overwrite " + *input);
    }
  }
  // Named as the user gave it: --out, or the default the user did not name.
  auto checked = agentctx_cli::check_output_file(signature_path,
                                                 agentctx_cli::output_option(o.out ? "--out" : "the signature file"));
  if (const std::string* refused = std::get_if<std::string>(&checked)) return usage_error(*refused);
  const agentctx_cli::output_file target = std::get<agentctx_cli::output_file>(std::move(checked));
  auto& fs = agentctx::io::default_file_system();
  auto key = agdb::read_private_key_file(fs, o.key);
  if (!key) return report_error(key.error());
  auto signature = agdb::sign_layer_file(fs, o.in, *key);
  if (!signature) return report_error(signature.error());
  auto written = agdb::write_signature_file(fs, target.path, *signature);
  if (!written) return report_error(written.error());
  agentctx_cli::restore_mode(target);

  const std::string digest = agentctx::to_hex(signature->layer_sha256);
  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("layer").value(o.in);
    w.key("signature").value(signature_path);
    w.key("key_id").value(signature->key_id);
    w.key("layer_size").value(signature->layer_size);
    w.key("layer_sha256").value(digest);
    w.end_object();
    std::cout << out << '\n';
  } else {
    std::cout << "signed " << shown(o.in) << " (" << signature->layer_size << " bytes, sha256 " << digest << ") with key "
              << signature->key_id << ": " << shown(signature_path) << '\n';
  }
  return exit_ok;
}

}  // namespace

void register_sign(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<sign_options>();
  CLI::App* sub = app.add_subcommand("sign", "Write a detached Ed25519 signature of a valid layer file");
  sub->add_option("--in", opts->in, "The layer file to sign")->required();
  sub->add_option("--out", opts->out, "The signature file to write (default: the --in path with .sig appended)");
  sub->add_option("--key", opts->key, "The private key file (from agentsdb keygen)")->required();
  sub->add_flag("--json", opts->json, "Print the outcome as JSON");
  table.add(sub, [opts] { return run_sign(*opts); });
}

}  // namespace agentsdb
