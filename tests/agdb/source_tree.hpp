// Helpers for the tests that compile sources from a real directory tree
// (source_collector_test.cpp, layer_compiler_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "io/io_test_support.hpp"

namespace agdb_test {

using io_test::temporary_directory;

/// Writes `contents` at `relative` below `root`, creating the folders on the way.
inline void write_source(const std::string& root, const std::string& relative, std::string_view contents) {
  const std::filesystem::path file = std::filesystem::path(root) / relative;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  REQUIRE(out.good());
}

}  // namespace agdb_test
