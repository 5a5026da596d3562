include(${CMAKE_CURRENT_LIST_DIR}/TorchPch.cmake)  # orchestra_torch_pch

# Unity builds (BENCHMARKS.md, "Build time"): each library's and test suite's sources compiled in
# batches, each batch one translation unit, so that the libtorch header is loaded, and the
# templates its files share are instantiated and optimized, once per batch instead of once per file.
# On by default: a clean build (the first command, CI) is what a 2-core machine waits for. An edit
# then recompiles its whole batch; configure with -DORCHESTRA_UNITY_BUILD=OFF to iterate on one
# file. So that batches can form in any order, names in a file's anonymous namespace must not be
# used by another file of the same target (every target built as one batch, -DORCHESTRA_UNITY_BATCH=0,
# on 2026-12-04; no CI step repeats that, a clash shows as a redefinition error naming both files).
option(ORCHESTRA_UNITY_BUILD "Compile each target's sources in batches of ORCHESTRA_UNITY_BATCH files" ON)
set(ORCHESTRA_UNITY_BATCH 8 CACHE STRING "Sources per unity batch")

# Warnings on our own targets only; third-party headers come in as SYSTEM includes.
function(orchestra_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
endfunction()

# libtorch as a SYSTEM dependency, so its headers' warnings are not ours.
function(orchestra_torch_target target)
  target_include_directories(${target} SYSTEM PUBLIC ${TORCH_INCLUDE_DIRS})
  target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
endfunction()

# A library target for one folder: every .cpp in it (SOURCES only where some are compiled
# conditionally), headers beside the sources. A file added to a folder is part of its target
# without a line here, so adding a dataset's reader, a model or a policy touches no CMake file.
function(orchestra_library name)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  if(ORCHESTRA_UNITY_BUILD)
    set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${ORCHESTRA_UNITY_BATCH})
  endif()
  set_property(GLOBAL APPEND PROPERTY ORCHESTRA_LIBRARIES ${name})  # the layout test's list of targets
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  orchestra_warnings(${name})
  if(ARG_TORCH)
    orchestra_torch_target(${name})
    orchestra_torch_pch(${name})
  endif()
endfunction()
