// agentsdb verify --in AGENTS.db --pub KEY.pub [--sig AGENTS.db.sig]: checks
// a layer against its detached signature (docs/format/signature.md). Exit 0
// when it verifies; 1 on any mismatch (key id, size, SHA-256, signature) or a
// damaged signature or key file; 2 on usage and I/O errors.
// Library: agdb::verify_layer_file.
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

struct verify_options {
  std::string in;
  std::string sig;
  std::string pub;
  bool json = false;
};

// A finding about the files (exit 1) rather than a failure to read them: the
// data errors of the parsers and of the checks, and a key id that differs.
bool is_verification_failure(const agentctx::error& e) {
  return agentctx::is_data_error(e.code) || e.code == agentctx::errc::incompatible;
}

int run_verify(const verify_options& o) {
  const std::string signature_path = o.sig.empty() ? o.in + ".sig" : o.sig;
  auto verified = agdb::verify_layer_file(agentctx::io::default_file_system(), o.in, signature_path, o.pub);
  if (!verified && !is_verification_failure(verified.error())) return report_error(verified.error());

  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("valid").value(verified.has_value());
    w.key("layer").value(o.in);
    w.key("signature").value(signature_path);
    w.key("public_key").value(o.pub);
    if (verified) {
      w.key("key_id").value(verified->key_id);
      w.key("layer_size").value(verified->layer_size);
      w.key("layer_sha256").value(agentctx::to_hex(verified->layer_sha256));
    } else {
      const agentctx::error& e = verified.error();
      w.key("error").begin_object();
      w.key("code").value(agentctx::to_string(e.code));
      w.key("path").value(e.path);
      w.key("offset");
      if (e.has_offset()) {
        w.value(e.offset);
      } else {
        w.value(nullptr);
      }
      w.key("message").value(e.message);
      w.end_object();
    }
    w.end_object();
    std::cout << out << '\n';
    return verified ? exit_ok : exit_failure;
  }
  if (!verified) {
    std::cerr << "agentsdb: " << agentctx_cli::printable_error(verified.error()) << '\n';
    return exit_failure;
  }
  std::cout << shown(o.in) << ": signature valid (key id " << verified->key_id << ", " << verified->layer_size
            << " bytes, sha256 " << agentctx::to_hex(verified->layer_sha256) << ")\n";
  return exit_ok;
}

}  // namespace

void register_verify(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<verify_options>();
  CLI::App* sub = app.add_subcommand("verify", "Check a layer file against its detached signature");
  sub->add_option("--in", opts->in, "The layer file to check")->required();
  sub->add_option("--sig", opts->sig, "The signature file (default: the --in path with .sig appended)");
  sub->add_option("--pub", opts->pub, "The public key file of the signer")->required();
  sub->add_flag("--json", opts->json, "Print the outcome as JSON (also when the check fails)");
  table.add(sub, [opts] { return run_verify(*opts); });
}

}  // namespace agentsdb
