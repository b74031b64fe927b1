// relay project: the projects of a store (section 5.2), e.g.
//   relay project create proj_demo --name "Demo" --description "The demo project"
//   relay project archive proj_demo        # soft delete: writes are refused (exit 6)
//   relay project unarchive proj_demo
//   relay project list
//   relay project show proj_demo
// A deposit, assert or session start creates its project when it is new;
// create also sets its name and description.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>

#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct project_options : writer_options {
  std::string project;
  std::optional<std::string> name;
  std::optional<std::string> description;
};

/// Prints a project a command made or changed: "<verb> project ID", or its wire form.
int print_project_changed(const common_options& o, const relay::project& p, std::string_view verb) {
  if (o.json) return print_value(p.wire);
  std::cout << verb << " project " << shown(p.project_id) << (p.archived_at ? " at " + shown(*p.archived_at) : "") << '\n';
  return exit_ok;
}

int run_create(const project_options& o) {
  return with_writer(o, [&](relay::store& s) {
    auto created = s.create_project(o.project, o.name, o.description);
    if (!created) return report_error(o, created.error());
    return print_project_changed(o, **created, "created");
  });
}

int set_archived(const project_options& o, bool archived) {
  return with_writer(o, [&](relay::store& s) {
    auto changed = s.set_archived(o.project, archived);
    if (!changed) return report_error(o, changed.error());
    return print_project_changed(o, **changed, archived ? "archived" : "unarchived");
  });
}

int run_archive(const project_options& o) { return set_archived(o, true); }
int run_unarchive(const project_options& o) { return set_archived(o, false); }

int run_list_projects(const project_options& o) {
  return with_reader(o, [&](const relay::store& s) {
    const auto projects = s.projects();
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object().key("projects").begin_array();
        for (const relay::project* p : projects) write_value(w, p->wire);
        w.end_array().end_object();
      });
    }
    if (projects.empty()) std::cout << "no projects\n";
    for (const relay::project* p : projects) std::cout << project_line(*p) << '\n';
    return static_cast<int>(exit_ok);
  });
}

int run_show(const project_options& o) {
  return with_reader(o, [&](const relay::store& s) {
    auto project = existing_project(s, o.project);
    if (!project) return report_error(o, project.error());
    const relay::project& p = **project;
    auto packages = s.packages_of(p.project_id);
    auto awaiting = s.awaiting_review(p.project_id);
    if (!packages) return report_error(o, packages.error());
    if (!awaiting) return report_error(o, awaiting.error());
    // A quarantined package is never listed (pull, orient, export), so it
    // is counted apart.
    const auto quarantined = static_cast<std::size_t>(
        std::count_if(packages->begin(), packages->end(), [](const relay::stored_package* sp) { return sp->quarantined; }));
    const std::size_t listed = packages->size() - quarantined;
    const std::size_t facts = s.facts(p.project_id).size();
    const std::size_t sessions = s.sessions(p.project_id).size();
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object();
        w.key("project");
        write_value(w, p.wire);
        w.key("packages").value(listed);
        w.key("quarantined").value(quarantined);
        w.key("awaiting_review").value(awaiting->size());
        w.key("current_facts").value(facts);
        w.key("sessions").value(sessions);
        w.end_object();
      });
    }
    std::cout << project_line(p) << '\n';
    if (!p.description.empty()) std::cout << "  " << shown(p.description) << '\n';
    std::cout << "  " << count_of(listed, "package") << " (" << awaiting->size() << " awaiting review), "
              << count_of(facts, "current fact") << ", " << count_of(sessions, "session") << '\n';
    if (quarantined != 0) {
      std::cout << "  " << quarantined << " more quarantined: its bytes no longer match its hash (relay verify)\n";
    }
    return static_cast<int>(exit_ok);
  });
}

/// Adds `relay project NAME ID` (or `--project ID`) running `run`, with the options of a writer
/// (`writes`) or of a reader.
std::pair<CLI::App*, std::shared_ptr<project_options>> add_project_command(CLI::App& parent, command_table& table,
                                                                           const std::string& name,
                                                                           const std::string& description,
                                                                           int (*run)(const project_options&),
                                                                           bool writes) {
  auto [sub, opts] = add_command(parent, table, name, description, run);
  // The id as a positional, or as --project like every other command.
  sub->add_option("ID,--project", opts->project, "The project id, as ID or as --project ID (one of the two)")->required();
  if (writes) {
    add_writer_options(*sub, *opts, name == "create" ? store_use::created : store_use::read);
  } else {
    add_common_options(*sub, *opts);
  }
  return {sub, opts};
}

}  // namespace

void register_project(CLI::App& app, command_table& table) {
  CLI::App* project = app.add_subcommand("project", "Create, archive, unarchive, list and show projects");
  project->require_subcommand(1);
  project->footer(group_footer("project"));
  auto [create, create_opts] = add_project_command(*project, table, "create", "Create a project", run_create, true);
  create->add_option("--name", create_opts->name, "Its human-readable name (none by default: the id stands for it where a name is shown)");
  create->add_option("--description", create_opts->description, "What it is about");
  add_project_command(*project, table, "archive", "Archive a project: writes to it are refused", run_archive, true);
  add_project_command(*project, table, "unarchive", "Restore an archived project", run_unarchive, true);
  add_project_command(*project, table, "show", "Show a project and what it holds", run_show, false);
  auto [list, list_opts] = add_command(*project, table, "list", "List every project", run_list_projects);
  add_common_options(*list, *list_opts);
}

}  // namespace relay_cli
