// agentctx/agentctx.hpp: the umbrella header. Includes the whole public API.
//
//   core/   result<T>, errors, little-endian helpers, hashing, UTF-8
//   io/     the file-system interface and its POSIX, in-memory and
//           fault-injecting implementations; atomic replace; locks
//   agdb/   the AGENTS.db layer format (seed 000)
#pragma once

#include "agentctx/core/endian.hpp"
#include "agentctx/core/error.hpp"
#include "agentctx/core/result.hpp"
#include "agentctx/core/utf8.hpp"
#include "agentctx/io/file_system.hpp"
#include "agentctx/agdb/format.hpp"
