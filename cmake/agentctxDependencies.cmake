# Finds agentctx's dependencies and links them into a target. Used both by the
# build tree and, installed next to agentctxConfig.cmake, by consumers.
#
# zstd: Debian's package exports zstd::libzstd_shared (and _static), Conan's
# exports zstd::libzstd; the first one that exists is used.
include_guard(GLOBAL)
include(CMakeFindDependencyMacro)

macro(agentctx_find_dependencies)
  find_dependency(Threads)
  find_dependency(simdjson)
  find_dependency(zstd)
  find_dependency(OpenSSL)
  find_dependency(ZLIB)
endmacro()

function(agentctx_zstd_target out_var)
  foreach(candidate zstd::libzstd zstd::libzstd_shared zstd::libzstd_static)
    if(TARGET ${candidate})
      set(${out_var} ${candidate} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "agentctx: found zstd but none of its targets "
                      "(zstd::libzstd, zstd::libzstd_shared, zstd::libzstd_static)")
endfunction()

function(agentctx_link_dependencies target)
  agentctx_zstd_target(zstd_target)
  # zstd's target name depends on who packaged it, so it is linked only in the
  # build tree here; agentctxConfig.cmake resolves it again for consumers.
  target_link_libraries(${target} INTERFACE
    simdjson::simdjson $<BUILD_INTERFACE:${zstd_target}> OpenSSL::Crypto ZLIB::ZLIB Threads::Threads)
endfunction()

agentctx_find_dependencies()
