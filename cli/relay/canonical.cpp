// relay canonical: the canonical form of any JSON text (json::canonicalize):
// the Agentic Protocol's Appendix A by default (members sorted by their
// UTF-8 bytes, null members left out, no whitespace), RFC 8785 with
// --rfc8785, e.g.
//   relay canonical package.json | sha256sum     # the digits `relay hash` prints
//   echo '{"b":1,"a":[1.0,null]}' | relay canonical --rfc8785 -
// The text output is exactly the canonical bytes, with no newline after them.
#include <cstdio>
#include <string>

#include "agentctx/json/canonical.hpp"
#include "agentctx/relay/hash.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct canonical_options : common_options {
  std::string file;
  bool rfc8785 = false;
};

int run_canonical(const canonical_options& o) {
  if (const int refused = check_store_argument(o)) return refused;  // unused here, but checked as everywhere
  auto text = read_input(o.file, max_document_input);
  if (!text) return report_error(o, text.error());
  const json::canonical_form form = o.rfc8785 ? json::canonical_form::jcs : json::canonical_form::relay;
  json::canonicalizer canonicalizer;
  auto canonical = canonicalizer.canonicalize(*text, form);
  if (!canonical) return report_error(o, invalid_json(o.file, canonical.error()));
  if (o.json) {
    return print_json([&](json::writer& w) {
      w.begin_object();
      w.key("form").value(o.rfc8785 ? "rfc8785" : "relay");
      w.key("canonical").value(*canonical);
      w.key("sha256").value(relay::content_hash_of_canonical(*canonical));
      w.end_object();
    });
  }
  if (std::fwrite(canonical->data(), 1, canonical->size(), stdout) != canonical->size() || std::fflush(stdout) != 0) {
    return output_failure(o);
  }
  return exit_ok;
}

}  // namespace

void register_canonical(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "canonical",
                                 "Print the canonical form of JSON text (Appendix A, or RFC 8785)", run_canonical);
  sub->add_option("FILE", opts->file, "The JSON text, or - for standard input")
      ->required()
      ->check(agentctx_cli::non_empty);
  sub->add_flag("--rfc8785", opts->rfc8785, "RFC 8785 (JCS): names sorted by UTF-16 code units, null members kept");
  add_common_options(*sub, *opts, store_use::unused);
}

}  // namespace relay_cli
