// Propose and confirm (seed 003, ADR-031): proposals persist, confirm
// applies them only to the version they were made against (conflict
// otherwise), decline exists, every decision is logged with actor and time,
// and a confirmation cut short by a crash completes on the next try.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agentctx/context/proposals.hpp"
#include "agentctx/context/result_json.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "io/io_test_support.hpp"
#include "support/result_checks.hpp"
#include "support/crash_images.hpp"

namespace context_proposals_test {

namespace context = agentctx::context;
namespace io = agentctx::io;
using agentctx::errc;
using test_support::require_value;

namespace {


context::loader_options options_at(std::uint64_t ms = 1'777'300'000'000) {
  context::loader_options options;
  options.clock = [ms] { return ms; };
  return options;
}

std::string text(io::file_system& fs, const std::string& path) { return io_test::read_text(fs, path); }

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  for (std::string_view line : agentctx::split_lines(s)) out.emplace_back(line);
  return out;
}

}  // namespace

TEST_CASE("propose, list, confirm and decline; proposals persist and decisions are logged") {
  io::memory_file_system fs;
  io_test::write_text(fs, "taste.md", "# Taste\n- subtle\n");
  context::proposal_book book(fs, options_at());
  const auto taste = require_value(book.propose(
      {.target = "taste", .item_id = "", .mode = "append", .content = "- warmer whites", .reason = "two images agree", .proposed_by = "agent"}));
  CHECK(taste.id.starts_with("prop_"));
  CHECK(taste.status == "pending");
  CHECK(taste.path == "taste.md");
  CHECK(taste.base_hash == agentctx::sha256_text("# Taste\n- subtle\n"));
  CHECK(text(fs, "taste.md") == "# Taste\n- subtle\n");  // nothing changes before a confirmation
  const auto notes = require_value(
      book.propose({.target = "notes", .item_id = "iguana-01", .mode = "replace", .content = "fresh notes", .reason = "", .proposed_by = "agent"}));
  CHECK(notes.path == "iguana-01/notes.md");
  CHECK(notes.base_hash == agentctx::sha256_text(""));

  // A new book (a restart) sees both, oldest first.
  context::proposal_book after_restart(fs, options_at());
  auto pending = require_value(after_restart.list());
  REQUIRE(pending.size() == 2);

  const auto confirmed = require_value(after_restart.confirm(taste.id, "jordan", "yes"));
  CHECK(confirmed.status == "confirmed");
  CHECK(confirmed.decided_by == "jordan");
  CHECK(text(fs, "taste.md") == "# Taste\n- subtle\n\n- warmer whites\n");
  CHECK(confirmed.result_hash == agentctx::sha256_text(text(fs, "taste.md")));
  const auto declined = require_value(after_restart.decline(notes.id, "jordan", "not yet"));
  CHECK(declined.status == "declined");
  CHECK_FALSE(fs.exists("iguana-01/notes.md").value());
  CHECK(require_value(after_restart.list()).empty());
  CHECK(require_value(after_restart.list(false)).size() == 2);

  // Decided is final.
  auto again = after_restart.confirm(notes.id, "jordan");
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == errc::invalid_transition);
  CHECK(after_restart.decline(taste.id, "jordan").error().code == errc::invalid_transition);
  CHECK(after_restart.confirm("prop_0000000000000000", "jordan").error().code == errc::not_found);
  CHECK(after_restart.confirm("../x", "jordan").error().code == errc::invalid_argument);

  const auto log = lines_of(text(fs, ".read-context/decisions.jsonl"));
  REQUIRE(log.size() == 4);
  CHECK(log[0].find("\"decision\":\"proposed\"") != std::string::npos);
  CHECK(log[2].find("\"decision\":\"confirmed\",\"actor\":\"jordan\"") != std::string::npos);
  CHECK(log[2].find("\"at\":\"2026-04-27T14:26:40.000Z\"") != std::string::npos);
  CHECK(log[3].find("\"decision\":\"declined\"") != std::string::npos);
  CHECK(log[3].find("\"note\":\"not yet\"") != std::string::npos);

  // Read back through the library, newest first, with a limit.
  const auto recent = require_value(after_restart.decisions(3));
  CHECK(recent.exists);
  REQUIRE(recent.decisions.size() == 3);
  CHECK(recent.decisions[0].decision == "declined");
  CHECK(recent.decisions[0].proposal_id == notes.id);
  CHECK(recent.decisions[0].note == "not yet");
  CHECK(recent.decisions[1].decision == "confirmed");
  CHECK(recent.decisions[1].result_hash == confirmed.result_hash);
  CHECK(recent.decisions[2].decision == "proposed");
  CHECK(recent.decisions[2].item_id == "iguana-01");
  CHECK(require_value(after_restart.decisions()).decisions.size() == 4);
}

TEST_CASE("the decision log read back: damaged and torn lines are counted, never shown") {
  io::memory_file_system fs;
  context::proposal_book book(fs, options_at());
  const auto none = require_value(book.decisions());
  CHECK_FALSE(none.exists);
  CHECK(none.decisions.empty());
  REQUIRE(fs.create_dir(".read-context").has_value());
  io_test::write_text(fs, ".read-context/decisions.jsonl",
                      "{\"at\":\"2026-04-27T14:26:40.000Z\",\"proposal_id\":\"prop_1\",\"decision\":\"proposed\",\"actor\":\"agent\"}\n"
                      "not json\n"
                      "{\"at\":\"2026-04-27T14:26:41.000Z\",\"decision\":\"confirmed\"}\n"
                      "[1,2]\n"
                      "{\"at\":\"2026-04-27T14:26:42.000Z\",\"proposal_id\":\"prop_1\",\"decision\":\"confirmed\",\"actor\":\"jordan\"}\n"
                      "{\"at\":\"2026-04-27T14:2");
  const auto log = require_value(book.decisions());
  CHECK(log.partial_last_line);
  CHECK(log.skipped_lines == 3);
  REQUIRE(log.decisions.size() == 2);
  CHECK(log.decisions[0].actor == "jordan");
  CHECK(log.decisions[1].actor == "agent");
}

TEST_CASE("confirm refuses a target that changed since the proposal") {
  io::memory_file_system fs;
  io_test::write_text(fs, "taste.md", "v1\n");
  context::proposal_book book(fs, options_at());
  const auto p = require_value(book.propose({.target = "taste", .item_id = "", .mode = "replace", .content = "v2", .reason = "", .proposed_by = "agent"}));
  io_test::write_text(fs, "taste.md", "edited by a human\n");
  auto refused = book.confirm(p.id, "jordan");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == errc::conflict);
  CHECK(context::error_json(refused.error()).starts_with(R"({"success":false,"error":{"code":"conflict",)"));
  CHECK(text(fs, "taste.md") == "edited by a human\n");
  CHECK(require_value(book.get(p.id)).status == "pending");
}

TEST_CASE("bad proposals are refused before anything is written") {
  io::memory_file_system fs;
  context::proposal_book book(fs, options_at());
  const std::vector<context::proposal_request> bad = {
      {.target = "brief", .item_id = "x", .mode = "append", .content = "c", .reason = "", .proposed_by = "agent"},
      {.target = "notes", .item_id = "../x", .mode = "append", .content = "c", .reason = "", .proposed_by = "agent"},
      {.target = "notes", .item_id = "", .mode = "append", .content = "c", .reason = "", .proposed_by = "agent"},
      {.target = "taste", .item_id = "", .mode = "merge", .content = "c", .reason = "", .proposed_by = "agent"},
      {.target = "taste", .item_id = "", .mode = "append", .content = " \n", .reason = "", .proposed_by = "agent"},
      {.target = "taste", .item_id = "", .mode = "append", .content = "bad \xC3\x28", .reason = "", .proposed_by = "agent"},
      {.target = "taste", .item_id = "", .mode = "append", .content = "c", .reason = "", .proposed_by = "a/b"},
  };
  for (const auto& request : bad) {
    auto r = book.propose(request);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == errc::invalid_argument);
  }
  CHECK(fs.list_dir(".").value().empty());
}

TEST_CASE("crash at every write and sync of confirm: applied once, recorded, or still pending") {
  io::memory_file_system memory;
  const std::string initial_taste = "# Taste\n";
  REQUIRE(io::write_file_atomically(memory, "taste.md", io_test::bytes_of(initial_taste)).has_value());
  context::proposal_book setup(memory, options_at());
  const auto p = require_value(
      setup.propose({.target = "taste", .item_id = "", .mode = "append", .content = "- more", .reason = "", .proposed_by = "agent"}));
  const io::memory_file_system_state initial = memory.snapshot();
  io::fault_injecting_file_system faulty(memory);
  const auto workload = [&](io::file_system& fs) {
    context::proposal_book book(fs, options_at());
    return book.confirm(p.id, "jordan").has_value();
  };
  REQUIRE(workload(faulty));
  const auto check = [&](io::memory_file_system& fs, bool acknowledged, const std::string& image) {
    crash_support::image_expectations expect(image);
    const std::string taste = text(fs, "taste.md");
    if (!expect(taste == "# Taste\n" || taste == "# Taste\n\n- more\n", "taste.md is \"" + taste + "\"")) return;
    context::proposal_book book(fs, options_at());
    auto state = book.get(p.id);
    if (!expect(state.has_value(), "the proposal is unreadable")) return;
    if (acknowledged) expect(state->status == "confirmed", "an acknowledged confirmation was lost");
    // Confirming again completes or refuses, never applies twice.
    auto again = book.confirm(p.id, "jordan");
    if (state->status == "pending") expect(again.has_value(), again ? "" : "re-confirm: " + again.error().describe());
    expect(text(fs, "taste.md") == "# Taste\n\n- more\n", "applied twice or not at all");
  };
  const std::uint64_t images = crash_support::crash_at_every_operation(memory, initial, faulty, 11, 100, workload, check);
  MESSAGE("crash images checked: " << images);
  CHECK(images >= 50);
}

}  // namespace context_proposals_test
