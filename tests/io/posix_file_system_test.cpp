// posix_file_system: what only the real disk can show: flock across
// processes, descriptors closed after mmap, O_CLOEXEC, large streamed files.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agentctx/io/atomic_file.hpp"
#include "io/io_test_support.hpp"

namespace io_posix_file_system_test {

using agentctx::errc;
using namespace agentctx::io;
using io_test::bytes_of;
using io_test::read_text;
using io_test::temporary_directory;
using io_test::write_text;

namespace {

// Runs `child` in a forked process and returns its exit status (the child
// never returns into doctest).
template <class Child>
int run_in_child(Child&& child) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(child());
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// Descriptors of this process whose target is `path`.
std::vector<int> descriptors_of(const std::string& path) {
  std::vector<int> found;
  std::error_code ec;
  const auto wanted = std::filesystem::canonical(path, ec);
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code link_error;
    auto target = std::filesystem::read_symlink(entry.path(), link_error);
    if (!link_error && target == wanted) found.push_back(std::stoi(entry.path().filename().string()));
  }
  return found;
}

}  // namespace

TEST_CASE("flock conflicts with a lock held by another process") {
  temporary_directory dir;
  posix_file_system fs;
  const std::string path = dir.path() + "/LOCK";

  SUBCASE("the parent holds, the child is refused") {
    auto held = fs.lock(path, lock_mode::exclusive, false);
    REQUIRE(held.has_value());
    int status = run_in_child([&] {
      posix_file_system child_fs;
      auto attempt = child_fs.lock(path, lock_mode::shared, false);
      return !attempt && attempt.error().code == errc::locked ? 0 : 1;
    });
    CHECK(status == 0);
  }
  SUBCASE("shared locks coexist across processes") {
    auto held = fs.lock(path, lock_mode::shared, false);
    REQUIRE(held.has_value());
    int status = run_in_child([&] { return posix_file_system().lock(path, lock_mode::shared, false) ? 0 : 1; });
    CHECK(status == 0);
  }
  SUBCASE("the child holds, the parent is refused until the child exits") {
    int to_parent[2];
    int to_child[2];
    REQUIRE(::pipe(to_parent) == 0);
    REQUIRE(::pipe(to_child) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto held = posix_file_system().lock(path, lock_mode::exclusive, false);
      char byte = held ? 'y' : 'n';
      if (::write(to_parent[1], &byte, 1) != 1) ::_exit(2);
      if (::read(to_child[0], &byte, 1) != 1) ::_exit(3);
      ::_exit(0);
    }
    char byte = 0;
    REQUIRE(::read(to_parent[0], &byte, 1) == 1);
    REQUIRE(byte == 'y');
    auto refused = fs.lock(path, lock_mode::exclusive, false);
    CHECK_FALSE(refused.has_value());
    if (!refused) CHECK(refused.error().code == errc::locked);
    REQUIRE(::write(to_child[1], &byte, 1) == 1);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(fs.lock(path, lock_mode::exclusive, true).has_value());  // released when the child died
    for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
  }
}

TEST_CASE("map closes its descriptor; handles and locks are close-on-exec") {
  temporary_directory dir;
  posix_file_system fs;
  const std::string path = dir.path() + "/data";
  write_text(fs, path, "mapped");

  auto mapped = fs.map(path);
  REQUIRE(mapped.has_value());
  CHECK(descriptors_of(path).empty());

  auto handle = fs.open(path, read_write);
  REQUIRE(handle.has_value());
  auto lock = fs.lock(path, lock_mode::shared, false);
  REQUIRE(lock.has_value());
  auto descriptors = descriptors_of(path);
  CHECK(descriptors.size() == 2);
  for (int fd : descriptors) {
    CAPTURE(fd);
    CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  }
  REQUIRE((*handle)->close().has_value());
  lock->reset();
  CHECK(descriptors_of(path).empty());
}

TEST_CASE("default_file_system is one process-wide instance") {
  CHECK(&default_file_system() == &default_file_system());
  temporary_directory dir;
  write_text(default_file_system(), dir.path() + "/f", "x");
  CHECK(read_text(default_file_system(), dir.path() + "/f") == "x");
}

TEST_CASE("a large file streams through the atomic writer intact") {
  temporary_directory dir;
  posix_file_system fs;
  const std::string path = dir.path() + "/big";
  auto writer = atomic_file_writer::begin(fs, path);
  REQUIRE(writer.has_value());
  // Mixed sizes: records below the buffer, and blocks above it.
  std::vector<std::byte> expected;
  std::uint32_t state = 1;
  for (int round = 0; round < 24; ++round) {
    std::size_t size = round % 3 == 2 ? (std::size_t{3} << 20) / 2 : 1 + round * 97;
    std::vector<std::byte> piece(size);
    for (auto& b : piece) {
      state = state * 1664525u + 1013904223u;
      b = static_cast<std::byte>(state >> 24);
    }
    REQUIRE(writer->append(piece).has_value());
    expected.insert(expected.end(), piece.begin(), piece.end());
  }
  REQUIRE(writer->commit().has_value());
  auto mapped = fs.map(path);
  REQUIRE(mapped.has_value());
  REQUIRE(mapped->size() == expected.size());
  CHECK(std::equal(expected.begin(), expected.end(), mapped->data()));
}

TEST_CASE("permission errors map to permission_denied") {
  if (::geteuid() == 0) return;  // root bypasses permission bits
  temporary_directory dir;
  posix_file_system fs;
  const std::string path = dir.path() + "/secret";
  write_text(fs, path, "x");
  REQUIRE(::chmod(path.c_str(), 0) == 0);
  auto opened = fs.open(path, read_only);
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == errc::permission_denied);
  CHECK(opened.error().sys_errno == EACCES);
}

}  // namespace io_posix_file_system_test
