// agdb::append_chunk from several processes, then several threads, at once:
// the layer lock serialises the rewrites, so no write is lost, ids stay
// unique and the file stays valid (`agentsdb write` runs the same function;
// cli/agentsdb_write_test.cpp runs the binary from several processes).
//
// The layer lives in memory-backed storage (/dev/shm) when there is some:
// under test are the lock and the atomic replacement, not durability (see
// layer_append_crash_test.cpp), and 800 synced rewrites on a disk would spend
// their time waiting for it.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "agdb/concurrent_writes.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/layer_append.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "io/io_test_support.hpp"

namespace agdb_layer_append_concurrency_test {

namespace agdb = agentctx::agdb;

namespace {

constexpr std::size_t writers = 4;
constexpr std::size_t writes_each = 200;
constexpr std::uint32_t dim = 16;  // small rows keep each rewrite cheap, also under the sanitizers

/// What one writer saw: its successful writes and its errors, in order.
struct writer_log {
  std::vector<agdb_test::reported_write> written;
  std::vector<std::string> errors;
};

/// Makes writer `writer`'s writes_each writes to the local layer of `layers`.
/// No test assertion here: a forked child runs it too.
writer_log run_writer(const std::vector<agdb::layer_location>& layers, std::size_t writer) {
  agdb::hash_embedder embedder(dim);  // an embedder is not shared between threads
  writer_log log;
  for (std::size_t i = 0; i < writes_each; ++i) {
    agdb::chunk_write w;
    w.scope = agdb::layer_id::local;
    w.content = agdb_test::agent_note(writer, i);
    w.kind = "derived-summary";
    w.confidence = 0.7f;
    w.sources = {agdb::source_ref::to_string("docs/ARCHITECTURE.md:12")};
    auto written = agdb::append_chunk(agentctx::io::default_file_system(), layers, w, embedder);
    if (written) {
      log.written.push_back({std::move(w.content), written->id, written->chunk_count});
    } else {
      log.errors.push_back(written.error().describe());
    }
  }
  return log;
}

/// A scratch folder on /dev/shm when that is a writable folder, else in the
/// usual temporary folder.
io_test::temporary_directory scratch_folder() {
  std::error_code ignored;
  if (std::filesystem::is_directory("/dev/shm", ignored) && ::access("/dev/shm", W_OK) == 0) {
    return io_test::temporary_directory("/dev/shm");
  }
  return io_test::temporary_directory();
}

/// A local layer in a fresh folder, holding three chunks before the writers
/// start, so that its records must survive every rewrite.
struct existing_layer {
  existing_layer() {
    agdb::hash_embedder embedder(dim);
    for (std::size_t i = 0; i < 3; ++i) {
      agdb::chunk_write w;
      w.scope = agdb::layer_id::local;
      w.content = agdb_test::agent_note(writers, i);
      w.kind = "canonical";
      w.confidence = 1.0f;
      REQUIRE(agdb::append_chunk(agentctx::io::default_file_system(), layers, w, embedder).has_value());
    }
    auto reader = agdb::layer_reader::open(agentctx::io::default_file_system(), path);
    REQUIRE(reader.has_value());
    auto contents = agdb::read_layer_contents(*reader);
    REQUIRE(contents.has_value());
    before = std::move(*contents);
  }

  /// Checks the layer after the writers reported `logs`, one per writer.
  void check(const std::vector<writer_log>& logs) const {
    std::vector<std::vector<agdb_test::reported_write>> reported;
    for (const writer_log& log : logs) {
      for (const std::string& error : log.errors) FAIL_CHECK(error);
      reported.push_back(log.written);
    }
    const agdb::layer_contents after =
        agdb_test::check_concurrent_writes(agentctx::io::default_file_system(), path, before, reported);
    CHECK(after.chunks.size() == before.chunks.size() + writers * writes_each);
    CHECK(after.metadata_json == before.metadata_json);
    // Nothing but the layer and its lock file is left in the folder.
    const auto names = agentctx::io::default_file_system().list_dir(folder.path());
    REQUIRE(names.has_value());
    CHECK(*names == std::vector<std::string>{"AGENTS.local.db", "AGENTS.local.db.lock"});
  }

  io_test::temporary_directory folder = scratch_folder();
  std::vector<agdb::layer_location> layers = agdb::standard_layer_locations(folder.path());
  std::string path = folder.path() + "/AGENTS.local.db";
  agdb::layer_contents before;
};

}  // namespace

TEST_CASE("append_chunk: 4 processes x 200 writes into one layer lose nothing") {
  existing_layer layer;
  // Each child is a writer process. It reports each write as a line
  // "<id> <chunk count> <content>" or "error <message>" through a pipe.
  std::vector<pid_t> children;
  std::vector<int> reports;
  for (std::size_t w = 0; w < writers; ++w) {
    int channel[2];
    REQUIRE(::pipe(channel) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(channel[0]);
      const writer_log log = run_writer(layer.layers, w);
      std::string lines;
      for (const agdb_test::reported_write& write : log.written) {
        lines += std::to_string(write.id) + " " + std::to_string(write.chunk_count) + " " + write.content + "\n";
      }
      for (const std::string& error : log.errors) lines += "error " + error + "\n";
      const bool sent = ::write(channel[1], lines.data(), lines.size()) == static_cast<ssize_t>(lines.size());
      ::_exit(sent ? 0 : 1);  // no doctest teardown in the child
    }
    ::close(channel[1]);
    children.push_back(child);
    reports.push_back(channel[0]);
  }

  std::vector<writer_log> logs(writers);
  for (std::size_t w = 0; w < writers; ++w) {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(reports[w], buffer, sizeof buffer)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      REQUIRE(n > 0);
      text.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(reports[w]);
    int status = 0;
    REQUIRE(::waitpid(children[w], &status, 0) == children[w]);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));

    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("error ", 0) == 0) {
        logs[w].errors.push_back(line.substr(6));
        continue;
      }
      std::istringstream fields(line);
      agdb_test::reported_write write;
      fields >> write.id >> write.chunk_count;
      fields.get();  // the space before the content
      std::getline(fields, write.content);
      logs[w].written.push_back(std::move(write));
    }
  }
  layer.check(logs);
}

TEST_CASE("append_chunk: 4 threads x 200 writes into one layer lose nothing") {
  existing_layer layer;
  std::vector<writer_log> logs(writers);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] { logs[w] = run_writer(layer.layers, w); });
  }
  for (std::thread& thread : threads) thread.join();
  layer.check(logs);
}

}  // namespace agdb_layer_append_concurrency_test
