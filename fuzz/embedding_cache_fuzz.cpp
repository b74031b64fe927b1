// fuzz/embedding_cache_fuzz.cpp: libFuzzer target for embedding cache files.
//
// Every input is taken as the bytes of the cache file of the hash profile at
// dim 2 (docs/format/embedding-cache.md), placed in a memory_file_system,
// and must never crash, hang, leak or trip a sanitizer:
//   1. embedding_cache::open(); header errors are fine, but only the codes
//      the format names (anything else traps: __builtin_trap keeps the input);
//   2. lookups of the texts the seeds hold;
//   3. insert() of a new text must succeed, whatever tail the file had, and
//      a reopened cache must hold at least what the first one knew, the new
//      vector among them; the file grew by one record at most.
//
// Seeds: fuzz/seeds/embedding_cache_fuzz/ holds, for that profile:
//   example           the worked example of the format document ("hello")
//   two_records       "hello" and "hello world"
//   header_only       no records
//   torn_header       the first 50 header bytes (a crash during creation)
//   torn_record       two records, the second cut 10 bytes short
//   damaged_record    a second record whose CRC does not match
//   duplicate_key     "hello" stored twice with different vectors
//   other_dim         a header declaring dim 3
//   zeros             150 zero bytes
//
// Build and run (clang only), as for agdb_layer_fuzz:
//   cmake --build build-fuzz --target embedding_cache_fuzz
//   build-fuzz/fuzz/embedding_cache_fuzz -dict=fuzz/embedding_cache_fuzz.dict corpus/ fuzz/seeds/embedding_cache_fuzz/
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "agentctx/agdb/embedding_cache.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/io/memory_file_system.hpp"

namespace {

namespace agdb = agentctx::agdb;
using agentctx::errc;

[[noreturn]] void library_bug() { __builtin_trap(); }

volatile float observed = 0;

bool is_header_error(errc code) {
  return code == errc::bad_magic || code == errc::unsupported_version || code == errc::incompatible ||
         code == errc::checksum_mismatch || code == errc::corrupt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const agdb::embedding_profile profile = agdb::hash_embedding_profile(2);
  const std::string directory = "/cache";
  const std::string path = directory + "/" + agdb::embedding_cache::file_name(profile);
  agentctx::io::memory_file_system fs;
  if (!fs.create_dir(directory) ||
      !fs.write_whole(path, std::span(reinterpret_cast<const std::byte*>(data), size))) {
    library_bug();
  }

  auto cache = agdb::embedding_cache::open(fs, directory, profile);
  if (!cache) {
    if (!is_header_error(cache.error().code) || cache.error().path != path) library_bug();
    return 0;
  }
  for (const char* text : {"hello", "hello world", "x"}) {
    if (const auto row = cache->find(cache->key_of(text))) {
      if (row->size() != 2) library_bug();
      observed = observed + (*row)[0];
    }
  }

  const auto key = cache->key_of("inserted by the fuzzer");
  const std::array<float, 2> vector = {0.5f, -0.25f};
  if (!cache->insert(std::span(&key, 1), vector)) library_bug();
  auto reopened = agdb::embedding_cache::open(fs, directory, profile);
  if (!reopened || reopened->size() < cache->size()) library_bug();
  const auto row = reopened->find(key);
  if (!row || (*row)[0] != vector[0] || (*row)[1] != vector[1]) library_bug();
  // The insert kept at most the input (its intact prefix) or wrote a fresh
  // header, and added one record.
  const std::uint64_t header_size = 24 + agdb::cache_key_profile_json(profile).size();
  const std::uint64_t record_size = 36 + 4 * 2;
  auto file_size = fs.file_size(path);
  if (!file_size || *file_size > std::max<std::uint64_t>(size, header_size) + record_size) library_bug();
  return 0;
}
