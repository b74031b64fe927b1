# Project-internal build settings (warnings, sanitizers) for the targets this
# repository builds. They are never attached to the exported interface target.
include_guard(GLOBAL)

function(agentctx_project_target target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(AGENTCTX_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(AGENTCTX_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-sanitize-recover=all
                                             -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  target_link_libraries(${target} PRIVATE agentctx::agentctx)
endfunction()
