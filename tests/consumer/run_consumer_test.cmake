# Installs agentctx (headers and CMake package only) into WORK_DIR/prefix and
# builds tests/consumer against it, as a downstream project would.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/agentctx-build
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix
    -DAGENTCTX_BUILD_TESTS=OFF -DAGENTCTX_BUILD_BENCH=OFF -DAGENTCTX_BUILD_EXAMPLES=OFF
    -DAGENTCTX_BUILD_CLI=OFF -DAGENTCTX_INSTALL=ON)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/agentctx-build)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/consumer-build
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run(${WORK_DIR}/consumer-build/consumer)
message(STATUS "consumer project built and ran against the installed agentctx")
