// relay session: sessions (section 5.5), a callsign generated for each, e.g.
//   relay session start --project proj_demo --actor claude --actor-type agent
//   relay session end sess_1a2b...
//   relay session list --project proj_demo
// Packages name their session in created_by.session_id; a session lists
// them as packages_deposited.
#include <iostream>
#include <string>

#include "relay/command.hpp"
#include "relay/output.hpp"
#include "relay/store_access.hpp"

namespace relay_cli {
namespace {

struct session_options : writer_options {
  std::string session;
  std::string project;
  std::string actor;
  std::string actor_type;
};

/// A session as JSON (its wire form, packages_deposited filled in) or its line.
int print_session(const common_options& o, const relay::store& s, const relay::session& session) {
  if (o.json) return print_value(s.session_wire(session));
  std::cout << session_line(session) << '\n';
  return exit_ok;
}

int run_start(const session_options& o) {
  return with_writer(o, [&](relay::store& s) {
    auto started = s.start_session(o.project, o.actor, *relay::parse_actor_type(o.actor_type));
    if (!started) return report_error(o, started.error());
    return print_session(o, s, **started);
  });
}

int run_end(const session_options& o) {
  return with_writer(o, [&](relay::store& s) {
    auto ended = s.end_session(o.session);
    if (!ended) return report_error(o, ended.error());
    return print_session(o, s, **ended);
  });
}

int run_list_sessions(const session_options& o) {
  return with_reader(o, [&](const relay::store& s) {
    if (!o.project.empty()) {
      if (auto p = existing_project(s, o.project); !p) return report_error(o, p.error());
    }
    const auto sessions = s.sessions(o.project);
    if (o.json) {
      return print_json([&](json::writer& w) {
        w.begin_object().key("sessions").begin_array();
        for (const relay::session* session : sessions) write_value(w, s.session_wire(*session));
        w.end_array().end_object();
      });
    }
    if (sessions.empty()) std::cout << "no sessions\n";
    for (const relay::session* session : sessions) std::cout << session_line(*session) << '\n';
    return static_cast<int>(exit_ok);
  });
}

}  // namespace

void register_session(CLI::App& app, command_table& table) {
  CLI::App* session = app.add_subcommand("session", "Start, end and list sessions");
  session->require_subcommand(1);
  session->footer(group_footer("session"));
  auto [start, start_opts] = add_command(*session, table, "start", "Start a session (prints its id and callsign)",
                                         run_start);
  start->add_option("--project", start_opts->project, "The project (created if new)")->required();
  start->add_option("--actor", start_opts->actor, "The actor's id")->required();
  start->add_option("--actor-type", start_opts->actor_type, "agent, human or script")
      ->required()
      ->check(CLI::IsMember({"agent", "human", "script"}));
  add_writer_options(*start, *start_opts, store_use::created);
  auto [end, end_opts] = add_command(*session, table, "end", "End a session", run_end);
  end->add_option("ID,--session", end_opts->session, "The session id, as ID or as --session ID (one of the two)")->required();
  add_writer_options(*end, *end_opts);
  auto [list, list_opts] = add_command(*session, table, "list", "List sessions (of one project with --project)",
                                       run_list_sessions);
  list->add_option("--project", list_opts->project, "Only this project's sessions")
      ->check(agentctx_cli::non_empty);
  add_common_options(*list, *list_opts);
}

}  // namespace relay_cli
