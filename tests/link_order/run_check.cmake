# The link-order tests (tests/CMakeLists.txt), as a script: cmake -DMODE=... -P run_check.cmake
#   MODE=project|naive  configure tests/link_order/ with that LINK_ORDER and PREEMPTING_LIBRARY in
#                       WORK_DIR: `project` must configure, `naive` must stop with the check's reason
#                       naming the preempted function and the library it resolved into
#   MODE=needed         BINARIES (a ;-list, here |-separated): libstdc++ is in each one's DT_NEEDED,
#                       before any torch library (READELF reads them)
cmake_minimum_required(VERSION 3.22)

if(MODE STREQUAL "needed")
  string(REPLACE "|" ";" BINARIES "${BINARIES}")
  foreach(binary ${BINARIES})
    execute_process(COMMAND ${READELF} -d ${binary} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${READELF} -d ${binary} failed")
    endif()
    string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]]*\\]" needed "${dynamic}")
    string(REGEX REPLACE "\\(NEEDED\\)[^[]*\\[([^]]*)\\]" "\\1" needed "${needed}")
    list(FIND needed "libstdc++.so.6" stdlib_at)
    if(stdlib_at EQUAL -1)
      message(FATAL_ERROR "${binary}: libstdc++.so.6 is not among its DT_NEEDED libraries: ${needed}")
    endif()
    list(LENGTH needed count)
    set(index 0)
    foreach(library ${needed})
      if(library MATCHES "^lib(torch|c10)" AND index LESS stdlib_at)
        message(FATAL_ERROR "${binary}: ${library} comes before libstdc++.so.6 in DT_NEEDED: ${needed}")
      endif()
      math(EXPR index "${index} + 1")
    endforeach()
    message(STATUS "${binary}: libstdc++.so.6 is DT_NEEDED entry ${stdlib_at} of ${count}, before every torch library")
  endforeach()
  return()
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${ORCHESTRA_SOURCE_DIR}/tests/link_order -B ${WORK_DIR} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX} -DORCHESTRA_SOURCE_DIR=${ORCHESTRA_SOURCE_DIR}
          -DPREEMPTING_LIBRARY=${PREEMPTING_LIBRARY} -DLINK_ORDER=${MODE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " all "${out}${err}")  # CMake wraps its messages
if(MODE STREQUAL "project")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the project's link order did not win over ${PREEMPTING_LIBRARY}:\n${all}")
  endif()
  string(REGEX MATCH "Link order: .* \\(checked\\)" line "${all}")
  message(STATUS "${line}")
elseif(MODE STREQUAL "naive")
  string(REGEX MATCH "PREEMPTED: std::filesystem::remove_all resolves into [^ ]*preempting_filesystem[^ ]*" line "${all}")
  if(rc EQUAL 0 OR NOT line OR NOT all MATCHES "Link-order check failed")
    message(FATAL_ERROR "the check did not catch ${PREEMPTING_LIBRARY} linked before libstdc++ (exit ${rc}):\n${all}")
  endif()
  message(STATUS "the check failed as it must: ${line}")
else()
  message(FATAL_ERROR "MODE must be project, naive or needed, got '${MODE}'")
endif()
