// agentctx/agentctx.hpp: the umbrella header. Includes the whole public API.
//
//   core/   result<T>, errors, little-endian helpers, hashing, UTF-8
//   io/     the file-system interface and its POSIX, in-memory and
//           fault-injecting implementations; atomic replace; locks
//   agdb/   the AGENTS.db layer format (seed 000)
//   json/   the streaming JSON writer used for --json output and MCP
#pragma once

#include "agentctx/core/crc32.hpp"
#include "agentctx/core/endian.hpp"
#include "agentctx/core/error.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/sha256.hpp"
#include "agentctx/core/time.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/json/writer.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/io/posix_file_system.hpp"
#include "agentctx/io/memory_file_system.hpp"
#include "agentctx/io/fault_injecting_file_system.hpp"
#include "agentctx/io/atomic_file.hpp"
#include "agentctx/io/subprocess.hpp"
#include "agentctx/agdb/format.hpp"
#include "agentctx/agdb/layer_writer.hpp"
#include "agentctx/agdb/embedding_row_view.hpp"
#include "agentctx/agdb/layer_reader.hpp"
#include "agentctx/agdb/layer_validator.hpp"
#include "agentctx/agdb/embedding_profile.hpp"
#include "agentctx/agdb/embedding_cache_key.hpp"
#include "agentctx/agdb/embedder.hpp"
#include "agentctx/agdb/hash_embedder.hpp"
#include "agentctx/agdb/command_embedder.hpp"
#include "agentctx/agdb/embedding_cache.hpp"
#include "agentctx/agdb/caching_embedder.hpp"
#include "agentctx/agdb/embedder_config.hpp"
#include "agentctx/agdb/markdown_chunker.hpp"
#include "agentctx/agdb/source_collector.hpp"
#include "agentctx/agdb/layer_compiler.hpp"
#include "agentctx/vector/similarity_kernels.hpp"
#include "agentctx/vector/top_k.hpp"
