// relay export: a backup of a project, or of every project, as NDJSON of
// wire-format objects (relay::export_ndjson; docs/format/relay-export.md),
// e.g.
//   relay export --project proj_demo > demo.ndjson
//   relay export -o backup.ndjson          # replaced atomically
// To standard output the NDJSON is the output; --json (one JSON document on
// stdout, the summary) needs -o FILE.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/relay/export.hpp"
#include "common/output_file.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct export_options : common_options {
  std::string project;
  std::optional<std::string> out;
};

int run_export(const export_options& o) {
  if (o.json && !o.out) {
    return usage_error(o, "--json needs -o FILE: the export itself is NDJSON, one document per line, and goes to "
                          "standard output without -o (drop --json for that)");
  }
  std::optional<agentctx_cli::output_file> target;
  if (o.out) {
    auto checked = agentctx_cli::check_output_file(*o.out, o.store);
    if (const std::string* refused = std::get_if<std::string>(&checked)) return usage_error(o, *refused);
    target = std::get<agentctx_cli::output_file>(std::move(checked));
  }
  return with_reader(o, [&](const relay::store& s) {
    std::string text;
    if (auto exported = relay::export_ndjson(s, o.project, text); !exported) return report_error(o, exported.error());
    if (!o.out) {
      if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
        return usage_error(o, "cannot write to standard output");
      }
      return static_cast<int>(exit_ok);
    }
    auto written = agentctx::io::write_file_atomically(agentctx::io::default_file_system(), target->path,
                                                       std::as_bytes(std::span(text.data(), text.size())));
    if (!written) return report_error(o, written.error());
    agentctx_cli::restore_mode(*target);
    const auto lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object().key("out").value(*o.out).key("lines").value(lines).key("bytes").value(text.size()).end_object();
      });
    }
    std::cout << "exported " << count_of(lines, "line") << " (" << count_of(text.size(), "byte") << ") to " << shown(*o.out)
              << '\n';
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_export(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "export", "Write a project (default: every project) as NDJSON", run_export);
  sub->add_option("--project", opts->project, "The project (default: every project)");
  sub->add_option("-o,--out", opts->out, "Write to this file, replaced atomically (default: standard output)");
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
