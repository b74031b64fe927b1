// relay export: a backup of a project, or of every project, as NDJSON of
// wire-format objects (relay::export_ndjson; docs/format/relay-export.md),
// e.g.
//   relay export --project proj_demo > demo.ndjson
//   relay export -o backup.ndjson          # replaced atomically
// To standard output the NDJSON is the output; --json (one JSON document on
// stdout, the summary) needs -o FILE. A quarantined package cannot be
// restored, so it is left out, named on stderr, and the command exits 1
// after writing the rest.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

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
    agentctx_cli::output_check check;
    check.hint = "leave out -o to write to standard output";
    check.protected_dir = o.store;
    auto checked = agentctx_cli::check_output_file(*o.out, check);
    if (const std::string* refused = std::get_if<std::string>(&checked)) return usage_error(o, *refused);
    target = std::get<agentctx_cli::output_file>(std::move(checked));
  }
  return with_reader(o, [&](const relay::store& s) {
    std::string text;
    auto exported = relay::export_ndjson(s, o.project, text);
    if (!exported) return report_error(o, exported.error());
    const std::vector<std::string>& left_out = exported->left_out;
    for (const std::string& q : left_out) {
      std::cerr << o.program << ": left out quarantined package " << shown(q) << '\n';
    }
    // The rest is written; the exit code says the backup is not whole.
    const int done = left_out.empty() ? static_cast<int>(exit_ok) : static_cast<int>(exit_failure);
    if (!left_out.empty()) {
      std::cerr << o.program << ": the export leaves out " << count_of(left_out.size(), "quarantined package")
                << " ('relay verify' lists why)\n";
    }
    if (!o.out) {
      if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
        return output_failure(o);
      }
      return done;
    }
    auto written = agentctx::io::write_file_atomically(agentctx::io::default_file_system(), target->path,
                                                       std::as_bytes(std::span(text.data(), text.size())));
    if (!written) {
      // Named by the file asked for, not the temporary one beside it.
      agentctx::error e = written.error();
      e.path = target->path;
      return report_error(o, e);
    }
    agentctx_cli::restore_mode(*target);
    const auto lines = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\n'));
    const relay::export_counts& c = exported->lines;
    if (o.json) {
      const int printed = print_json([&](json::writer& w) {
        w.begin_object().key("out").value(*o.out).key("lines").value(lines).key("bytes").value(text.size());
        w.key("projects").value(c.projects).key("sessions").value(c.sessions).key("packages").value(c.packages);
        w.key("status_changes").value(c.status_changes).key("facts").value(c.facts);
        w.key("left_out").begin_array();
        for (const std::string& q : left_out) w.value(q);
        w.end_array().end_object();
      });
      return printed != exit_ok ? printed : done;
    }
    std::cout << "exported " << count_of(c.projects, "project") << ", " << count_of(c.sessions, "session") << ", "
              << count_of(c.packages, "package") << ", " << count_of(c.status_changes, "status change") << ", "
              << count_of(c.facts, "fact") << ": " << count_of(lines, "line") << " (" << count_of(text.size(), "byte")
              << ") to " << shown(*o.out) << '\n';
    return done;
  });
}

}  // namespace

void register_export(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "export", "Write a project (default: every project) as NDJSON", run_export);
  sub->add_option("--project", opts->project, "The project (default: every project)")
      ->check(agentctx_cli::non_empty);
  sub->add_option("-o,--out", opts->out, "Write to this file, replaced atomically (default: standard output)");
  add_common_options(*sub, *opts);
}

}  // namespace relay_cli
