# The NCCL-headers tests (tests/CMakeLists.txt), as a script: cmake -DEXPECT=ON|OFF ... -P run_check.cmake
# configures tests/nccl_headers/ in WORK_DIR with INCLUDE_DIR and checks the verdict: OFF, naming the
# missing crt/host_config.h, for the partial stand-in headers (what pip's CUDA 13 runtime package
# holds); ON for the complete ones.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${ORCHESTRA_SOURCE_DIR}/tests/nccl_headers -B ${WORK_DIR} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX} -DORCHESTRA_SOURCE_DIR=${ORCHESTRA_SOURCE_DIR}
          -DHEADER=cuda_runtime.h -DINCLUDE_DIR=${INCLUDE_DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "nccl headers check: (ON|OFF)")
  message(FATAL_ERROR "configuring the check failed (exit ${rc}):\n${out}${err}")
endif()
set(verdict "${CMAKE_MATCH_1}")
string(REGEX MATCH "nccl headers check: .*" report "${out}")
if(NOT verdict STREQUAL EXPECT)
  message(FATAL_ERROR "expected ${EXPECT} for ${INCLUDE_DIR}, got ${report}")
endif()
if(EXPECT STREQUAL "OFF" AND NOT report MATCHES "crt/host_config.h")
  message(FATAL_ERROR "refused without naming the missing header:\n${report}")
endif()
message(STATUS "${report}")
