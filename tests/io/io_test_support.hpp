// Helpers shared by the I/O tests: byte/text conversion, a scratch folder
// on disk, and the three fixtures the shared file-system suite runs against.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"

namespace io_test {

inline std::vector<std::byte> bytes_of(std::string_view text) {
  auto view = std::as_bytes(std::span<const char>(text.data(), text.size()));
  return {view.begin(), view.end()};
}

inline std::string text_of(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// The current contents of `path` as text, read through map().
inline std::string read_text(agentctx::io::file_system& fs, const std::string& path) {
  auto mapped = fs.map(path);
  REQUIRE_MESSAGE(mapped.has_value(), mapped.error().describe());
  return text_of(mapped->bytes());
}

/// The current contents of `path` in a memory file system, as text.
inline std::string whole(agentctx::io::memory_file_system& fs, const std::string& path) {
  auto bytes = fs.read_whole(path);
  REQUIRE_MESSAGE(bytes.has_value(), bytes.error().describe());
  return text_of(*bytes);
}

/// Creates or truncates `path` and writes `text` (nothing is synced).
inline void write_text(agentctx::io::file_system& fs, const std::string& path, std::string_view text) {
  auto handle = fs.open(path, agentctx::io::create_truncate);
  REQUIRE_MESSAGE(handle.has_value(), handle.error().describe());
  REQUIRE((*handle)->append(bytes_of(text)).has_value());
  REQUIRE((*handle)->close().has_value());
}

/// A fresh folder under /tmp, removed with everything in it when destroyed.
class temporary_directory {
 public:
  temporary_directory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "agentctx-io-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  temporary_directory(const temporary_directory&) = delete;
  temporary_directory& operator=(const temporary_directory&) = delete;
  ~temporary_directory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

// Fixtures: `fs` is the file system under test, `base` an empty directory in it.
struct posix_fixture {
  temporary_directory directory;
  agentctx::io::posix_file_system posix;
  agentctx::io::file_system& fs = posix;
  std::string base = directory.path();
};

struct memory_fixture {
  memory_fixture() { REQUIRE(memory.create_dir(base).has_value()); }
  agentctx::io::memory_file_system memory;
  agentctx::io::file_system& fs = memory;
  std::string base = "/base";
};

/// An unarmed fault-injecting file system must behave exactly like its inner one.
struct fault_fixture {
  fault_fixture() { REQUIRE(memory.create_dir(base).has_value()); }
  agentctx::io::memory_file_system memory;
  agentctx::io::fault_injecting_file_system faulty{memory};
  agentctx::io::file_system& fs = faulty;
  std::string base = "/base";
};

}  // namespace io_test

/// The fixtures for TEST_CASE_TEMPLATE suites that must hold for every file system.
#define IO_TEST_FILE_SYSTEMS io_test::posix_fixture, io_test::memory_fixture, io_test::fault_fixture
