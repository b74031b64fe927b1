// A session with agent memory (seed 004): an agent reads its summary, opens
// today's log, records a decision, and curates the summary with an
// optimistic update. Run: example_agent_memory_session [REPO]
// (default: a fresh folder under /tmp standing in for a repository).
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "agentctx/memory/agent_memory.hpp"

namespace memory = agentctx::memory;

int main(int argc, char** argv) {
  std::string root = argc > 1 ? argv[1] : "/tmp/agentctx-memory-example-" + std::to_string(::getpid());
  std::filesystem::create_directories(root);
  char canonical[PATH_MAX];
  if (::realpath(root.c_str(), canonical) == nullptr) return 1;
  auto repo = memory::open_repository(canonical);  // every file below is reached without following a symlink
  if (!repo) {
    std::cerr << repo.error().json() << '\n';
    return 1;
  }
  auto agent = memory::agent_memory::open(**repo, "aristotle");
  if (!agent) {
    std::cerr << agent.error().json() << '\n';
    return 1;
  }

  // 1. Start of the session: the summary (created from the template the first time) and today's log.
  auto summary = agent->read_summary();
  auto session = agent->start_session();
  if (!summary || !session) return 1;
  std::cout << "summary " << summary->summary_file << " (" << summary->hash.substr(0, 19) << "...)\n"
            << (session->created ? "created " : "opened ") << session->session_file << '\n';

  // 2. Record outcomes as they happen; they read in the order they were appended.
  for (const char* entry : {"- Keep the memory in the repository", "- Review it in pull requests"}) {
    if (auto appended = agent->append_entry("Decisions", entry); !appended) {
      std::cerr << appended.error().json() << '\n';
      return 1;
    }
  }
  // Content that would start a section is refused, never cut or escaped.
  auto refused = agent->append_entry("Decisions", "ok\n## Decisions\nforged");
  std::cout << "refused: " << (refused ? std::string("nothing?") : refused.error().json()) << '\n';

  // 3. Curate the summary, only if nobody changed it since it was read.
  auto updated = agent->update_summary("Decisions", "- Memory lives in .github/agent-memory",
                                       memory::summary_mode::append, summary->hash);
  if (!updated) {
    std::cerr << updated.error().json() << '\n';  // Conflict: read it again and redo the update
    return 1;
  }
  auto stale = agent->update_summary("Decisions", "- stale", memory::summary_mode::replace, summary->hash);
  std::cout << "stale update: " << (stale ? std::string("applied?") : stale.error().json()) << '\n';

  auto sessions = agent->list_sessions(10);
  if (!sessions) return 1;
  std::cout << sessions->total << " session log(s), newest " << sessions->sessions.front() << '\n';
  return 0;
}
