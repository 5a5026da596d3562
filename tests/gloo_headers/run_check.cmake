# The Gloo-headers tests (tests/CMakeLists.txt), as a script: cmake -DEXPECT=ON|OFF ... -P run_check.cmake
# configures tests/gloo_headers/ in WORK_DIR with SOURCE and checks the verdict: ON for the
# toolkit's gloo_process_group.cpp, OFF (naming Gloo's code it found) for uses_gloo_code.cpp.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${ORCHESTRA_SOURCE_DIR}/tests/gloo_headers -B ${WORK_DIR} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX} -DORCHESTRA_SOURCE_DIR=${ORCHESTRA_SOURCE_DIR} -DSOURCE=${SOURCE}
          -DGLOO_INCLUDE_DIR=${GLOO_INCLUDE_DIR} -DTORCH_HEADER=${TORCH_HEADER}
          -DTORCH_INCLUDE_DIRS=${TORCH_INCLUDE_DIRS} -DTORCH_CXX_FLAGS=${TORCH_CXX_FLAGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "gloo headers check: (ON|OFF)")
  message(FATAL_ERROR "configuring the check failed (exit ${rc}):\n${out}${err}")
endif()
set(verdict "${CMAKE_MATCH_1}")
string(REGEX MATCH "gloo headers check: .*" report "${out}")
if(NOT verdict STREQUAL EXPECT)
  message(FATAL_ERROR "expected ${EXPECT} for ${SOURCE}, got ${report}")
endif()
if(EXPECT STREQUAL "OFF" AND NOT report MATCHES "Gloo's code: gloo::")
  message(FATAL_ERROR "refused without naming the Gloo code found:\n${report}")
endif()
message(STATUS "${report}")
