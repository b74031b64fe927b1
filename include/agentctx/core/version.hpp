// agentctx/core/version.hpp: the library's version, for --version, layer
// metadata, exports and protocol descriptors.
#pragma once

#include <string_view>

namespace agentctx {

inline constexpr std::string_view version = "0.1.0";

}  // namespace agentctx
