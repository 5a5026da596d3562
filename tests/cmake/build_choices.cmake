# The release build's two choices for a clean build on 2 cores (cmake/ProjectOptions.cmake,
# tests/CMakeLists.txt; BENCHMARKS.md, "Build time"), read from the configured build.ninja:
#   cmake -DBUILD_NINJA=<build.ninja> -DUNITY=ON|OFF -P build_choices.cmake
# With UNITY, the runner library compiles in batches (with the libtorch header), not file by file;
# either way the libraries are optimized at -O3 and the test suites' own code at -O1.
cmake_minimum_required(VERSION 3.18)
file(READ "${BUILD_NINJA}" ninja)

# The build statement of `object` (a path under the build folder), with its indented variables.
function(statement_of object out)
  string(REGEX MATCH "\nbuild ${object}:[^\n]*\n([ ][^\n]*\n)*" found "${ninja}")
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# The last -O option of a statement's FLAGS: the one GCC applies.
function(last_optimization statement out)
  string(REGEX MATCH "\n  FLAGS = [^\n]*" flags "${statement}")
  string(REGEX MATCHALL "-O[0-3sg]" levels "${flags}")
  list(POP_BACK levels level)
  set(${out} "${level}" PARENT_SCOPE)
endfunction()

if(UNITY)
  set(library_object "experiments/runner/CMakeFiles/runner.dir/Unity/unity_0_cxx.cxx.o")
  set(suite_object "tests/CMakeFiles/test_runner.dir/Unity/unity_0_cxx.cxx.o")
  statement_of("experiments/runner/CMakeFiles/runner.dir/evaluation.cpp.o" single)
  if(single)
    message(FATAL_ERROR "build_choices: a unity build compiles runner's evaluation.cpp on its own")
  endif()
else()
  set(library_object "experiments/runner/CMakeFiles/runner.dir/evaluation.cpp.o")
  set(suite_object "tests/CMakeFiles/test_runner.dir/experiments/runner/test_evaluation.cpp.o")
endif()

foreach(case "${library_object};-O3" "${suite_object};-O1")
  list(GET case 0 object)
  list(GET case 1 expected)
  statement_of("${object}" found)
  if(NOT found)
    message(FATAL_ERROR "build_choices: no build statement for ${object} in ${BUILD_NINJA}")
  endif()
  if(NOT found MATCHES "cmake_pch\\.hxx")
    message(FATAL_ERROR "build_choices: ${object} is compiled without the libtorch precompiled header")
  endif()
  last_optimization("${found}" level)
  if(NOT level STREQUAL expected)
    message(FATAL_ERROR "build_choices: ${object} is compiled at ${level}, expected ${expected}")
  endif()
endforeach()
message(STATUS "build_choices: as expected (unity ${UNITY})")
