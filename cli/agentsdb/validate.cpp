// agentsdb validate FILE...: checks each layer against every rule of the AGDB
// v1 format (docs/format/agdb.md) and lists each violation with the file and
// byte offset. Exit 0 when all are valid, 1 when any is invalid, 2 on usage or
// I/O errors (a file that cannot be read; reported on stderr).
#include <iostream>
#include <string>
#include <vector>

#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/json/writer.hpp"
#include "agentsdb/command.hpp"

namespace agentsdb {
namespace {

namespace agdb = agentctx::agdb;

struct validate_options {
  std::vector<std::string> files;
  std::size_t max_violations = 1000;
  bool json = false;
};

bool is_io_problem(const agdb::validation_report& r) {
  if (r.opened || r.violations.empty()) return false;
  return !agentctx::is_data_error(r.violations.front().code);
}

int run_validate(const validate_options& o) {
  std::vector<agdb::validation_report> reports;
  reports.reserve(o.files.size());
  for (const auto& file : o.files) reports.push_back(agdb::validate_file(file, o.max_violations));

  // A file that cannot be read is an error, not a finding about the file:
  // it goes to stderr like every other error (the JSON lists it as well).
  int rc = exit_ok;
  for (const auto& r : reports) {
    if (is_io_problem(r)) {
      std::cerr << "agentsdb: " << agentctx_cli::printable_error(agdb::to_error(r.violations.front(), r.path)) << '\n';
      rc = exit_usage;
    } else if (!r.ok() && rc == exit_ok) {
      rc = exit_failure;
    }
  }

  if (o.json) {
    std::string out;
    agentctx::json::writer w(out, agentctx::json::layout::pretty);
    w.begin_object();
    w.key("valid").value(rc == exit_ok);
    w.key("files").begin_array();
    for (const auto& r : reports) {
      w.begin_object();
      w.key("path").value(r.path);
      w.key("opened").value(r.opened);
      w.key("valid").value(r.ok());
      w.key("violations").begin_array();
      for (const auto& v : r.violations) {
        w.begin_object();
        w.key("code").value(agentctx::to_string(v.code));
        w.key("offset");
        if (v.offset == agentctx::error::no_offset) {
          w.value(nullptr);
        } else {
          w.value(v.offset);
        }
        w.key("message").value(v.message);
        w.end_object();
      }
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
    std::cout << out << '\n';
    return rc;
  }

  for (const auto& r : reports) {
    if (is_io_problem(r)) continue;
    const std::string shown_path = agentctx::escape_for_message(r.path, SIZE_MAX);
    if (r.ok()) {
      std::cout << shown_path << ": valid\n";
      continue;
    }
    for (const auto& v : r.violations) {
      std::cout << agentctx_cli::printable_error(agdb::to_error(v, r.path)) << " ["
                << agentctx::to_string(v.code) << "]\n";
    }
    if (r.opened) {
      std::cout << shown_path << ": INVALID (" << r.violations.size()
                << (r.violations.size() >= o.max_violations ? "+" : "") << " violations)\n";
    } else {
      std::cout << shown_path << ": INVALID (cannot be opened as a layer)\n";
    }
  }
  return rc;
}

}  // namespace

void register_validate(CLI::App& app, command_table& table) {
  auto opts = std::make_shared<validate_options>();
  CLI::App* sub = app.add_subcommand("validate", "Check layer files against every rule of the AGDB v1 format");
  sub->add_option("files", opts->files, "Layer files to check")->required();
  sub->add_option("--max-violations", opts->max_violations, "Stop listing a file's violations after this many")
      ->check(positive_count);
  sub->add_flag("--json", opts->json, "Machine-readable JSON output");
  table.add(sub, [opts] { return run_validate(*opts); });
}

}  // namespace agentsdb
