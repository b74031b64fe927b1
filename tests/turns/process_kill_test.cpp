// Real processes, real disk (issue 5 section 6): a child process appends
// turns from two threads and acknowledges each one over a pipe once append()
// has returned; the parent SIGKILLs it at a random moment, reopens the store
// and checks that every acknowledged turn is there, byte for byte. Each round
// continues the same store, so recovery after a kill is exercised too.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <thread>

#include "agentctx/io/posix_file_system.hpp"
#include "io/io_test_support.hpp"
#include "turns/turn_test_support.hpp"

namespace turns_process_kill_test {

using namespace turns_test;

namespace {

struct acknowledgement {
  std::uint64_t turn = 0;
  std::uint64_t seed = 0;
};

/// The child: never returns. Appends payload(seed) for seeds from
/// `first_seed` on, from two threads, writing (turn, seed) to `ack_fd` after each.
[[noreturn]] void child_appender(const std::string& dir, context_id a, context_id b, std::uint64_t first_seed,
                                 int ack_fd) {
  io::posix_file_system fs;
  store_options options;
  options.seal_threshold = 64;  // index runs and checkpoints get written (and killed) too
  options.checkpoint_interval = 50;
  options.snapshot_threshold = 50;
  auto store = turn_store::open(fs, dir, options);
  if (!store) ::_exit(3);
  std::atomic<std::uint64_t> next_seed{first_seed};
  auto work = [&](context_id ctx) {
    for (;;) {
      std::uint64_t seed = next_seed.fetch_add(1);
      auto id = (*store)->append(ctx, payload(seed, 200 + seed % 3000));
      if (!id) ::_exit(4);
      acknowledgement ack{*id, seed};
      if (::write(ack_fd, &ack, sizeof ack) != static_cast<ssize_t>(sizeof ack)) ::_exit(5);
    }
  };
  std::thread second(work, b);
  work(a);
  second.join();
  ::_exit(0);
}

}  // namespace

TEST_CASE("turn store: SIGKILL at random moments never loses an acknowledged turn") {
  io_test::temporary_directory tmp;
  io::posix_file_system fs;
  const std::string dir = tmp.path() + "/store";
  context_id a = 0;
  context_id b = 0;
  {
    auto store = fresh_store(fs, dir, store_options{});
    a = require_value(store->create_context()).id;
    b = require_value(store->create_context()).id;
  }
  std::map<std::uint64_t, std::uint64_t> acknowledged;  // turn -> seed
  std::mt19937_64 random(99);
  std::uint64_t next_seed = 1;
  constexpr int rounds = 100;
  int killed_while_running = 0;
  for (int round = 0; round < rounds; ++round) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(fds[0]);
      child_appender(dir, a, b, next_seed, fds[1]);
    }
    ::close(fds[1]);
    // Kill at a random moment: sometimes during open and recovery, mostly
    // after a random number of acknowledged appends (so that slow builds,
    // sanitizers included, still kill mid-append), plus a random delay.
    std::uint64_t wait_for = random() % 5 == 0 ? 0 : 1 + random() % 12;
    acknowledgement ack;
    std::uint64_t max_seed = next_seed;
    for (std::uint64_t seen = 0; seen < wait_for; ++seen) {
      if (::read(fds[0], &ack, sizeof ack) != static_cast<ssize_t>(sizeof ack)) break;
      acknowledged[ack.turn] = ack.seed;
      max_seed = std::max(max_seed, ack.seed + 1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 1500));
    ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    if (WIFSIGNALED(status)) {
      ++killed_while_running;
    } else {
      INFO("child exit status " << WEXITSTATUS(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
    // Every acknowledgement written before the kill is in the pipe.
    while (::read(fds[0], &ack, sizeof ack) == static_cast<ssize_t>(sizeof ack)) {
      acknowledged[ack.turn] = ack.seed;
      max_seed = std::max(max_seed, ack.seed + 1);
    }
    ::close(fds[0]);
    next_seed = max_seed + 2;  // seeds the child took but never acknowledged are skipped

    auto store = require_value(turn_store::open(fs, dir, store_options{}));
    for (const auto& entry : acknowledged) {
      const std::uint64_t turn_number = entry.first;
      const std::uint64_t seed = entry.second;
      auto t = store->get_turn(turn_number);
      REQUIRE_MESSAGE(t.has_value(), "round " << round << ": acknowledged turn " << turn_number << " lost: "
                                              << t.error().describe());
      auto bytes = require_value(store->read_payload(*t));
      REQUIRE_MESSAGE(bytes == payload(seed, 200 + seed % 3000), "round " << round << ": turn " << turn_number);
    }
    // Both chains are intact from their heads down to the root.
    for (context_id ctx : {a, b}) {
      context_head h = require_value(store->head(ctx));
      auto chain = require_value(store->replay(h.head));
      CHECK(chain.size() == (h.head == 0 ? 0 : h.depth + 1));
    }
  }
  MESSAGE(rounds << " rounds, " << killed_while_running << " killed mid-run, " << acknowledged.size()
                 << " acknowledged turns all recovered");
  CHECK(killed_while_running > rounds / 2);
  CHECK(acknowledged.size() > 100);
}

}  // namespace turns_process_kill_test
