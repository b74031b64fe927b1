// relay import: restores an export into the store (relay::import_ndjson),
// e.g.
//   relay import demo.ndjson --store other/.relay
//   ssh host relay export | relay import -
// Every line is checked, every hash recomputed, before anything is written;
// what the store already holds identically is skipped, so importing the
// same file twice changes nothing. The input is read and parsed line by
// line before the store is opened (relay::read_import_input): a line the
// import is sure to refuse stops the reading there. A file of
// bare wire objects (packages, facts, sessions, projects, one per line:
// another implementation's backup) is imported as the export of those
// objects.
#include <iostream>
#include <span>
#include <string>

#include "agentctx/relay/export.hpp"
#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct import_options : writer_options {
  std::string file;
  bool partial = false;
};

int run_import(const import_options& o) {
  auto in = agentctx_cli::input_stream::open(o.file, max_export_input);
  if (!in) return report_error(o, in.error());
  // Read before the store is opened: the lock is not held while a pipe
  // trickles, and an interrupted read leaves no store made.
  const relay::import_reader read = [&](std::span<char> buffer) { return in->read(buffer); };
  relay::import_input input = relay::read_import_input(read);
  if (const agentctx::error* failed = input.failure(); failed != nullptr && input.lines() == 1) {
    return report_error(o, failed->with_path(input_name(o.file)));  // nothing read: no store to open
  }
  return with_writer(o, [&](relay::store& s) {
    relay::import_options options;
    options.allow_incomplete = o.partial;
    auto imported = relay::import_ndjson(s, std::move(input), options);
    if (!imported) {
      agentctx::error e = std::move(imported).error().with_path(input_name(o.file));
      if (e.message.ends_with("the file was cut short")) {
        e.message += " (--partial imports the lines before it)";
      } else if (e.message.starts_with("the export is incomplete")) {
        e.message += " (--partial imports what it holds)";
      }
      return report_error(o, e);
    }
    const relay::import_report& r = *imported;
    if (r.cut_line != 0) {
      std::cerr << o.program << ": warning: line " << r.cut_line
                << " is cut short (no line break after it, and not JSON): left out\n";
    }
    if (r.incomplete) {
      std::cerr << o.program << ": warning: the export has no end line, so it may be missing lines at its end: "
                << "imported what it holds\n";
    }
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object();
        w.key("projects").value(r.projects);
        w.key("sessions").value(r.sessions);
        w.key("packages").value(r.packages);
        w.key("status_changes").value(r.status_changes);
        w.key("facts").value(r.facts);
        w.key("skipped").value(r.skipped);
        w.key("incomplete").value(r.incomplete);
        w.key("cut_line");
        if (r.cut_line == 0) {
          w.value(nullptr);
        } else {
          w.value(r.cut_line);
        }
        w.key("wire_objects").value(r.wire_objects);
        w.key("differing_projects").begin_array();
        for (const std::string& id : r.differing_projects) w.value(id);
        w.end_array();
        w.end_object();
      });
    }
    std::cout << "imported " << (r.wire_objects ? "bare wire objects: " : "") << count_of(r.projects, "project") << ", " << count_of(r.sessions, "session") << ", "
              << count_of(r.packages, "package") << ", " << count_of(r.status_changes, "status change") << ", "
              << count_of(r.facts, "fact") << "; skipped " << count_of(r.skipped, "line")
              << " the store already held\n";
    for (const std::string& id : r.differing_projects) {
      std::cout << "project " << shown(id) << ": the store's differs from the export's and was kept as it is\n";
    }
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_import(CLI::App& app, command_table& table) {
  auto [sub, opts] = add_command(app, table, "import", "Restore an export, or a file of bare wire objects (NDJSON; - for stdin)", run_import);
  sub->add_option("FILE", opts->file,
                  "The export, or packages, facts, sessions and projects one per line; - for standard input")
      ->required()
      ->check(agentctx_cli::non_empty);
  sub->add_flag("--partial", opts->partial,
                "Import an export that lacks its end line (a file cut short): what it holds, checked as usual");
  add_writer_options(*sub, *opts, store_use::created);
}

}  // namespace relay_cli
