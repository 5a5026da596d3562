# Warnings on our own targets only; third-party headers come in as SYSTEM includes.
function(orchestra_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
endfunction()

# libtorch as a SYSTEM dependency, so its headers' warnings are not ours.
function(orchestra_torch_target target)
  target_include_directories(${target} SYSTEM PUBLIC ${TORCH_INCLUDE_DIRS})
  target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
endfunction()

# A library target for one folder: every .cpp in it, headers beside the sources.
function(orchestra_library name)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  orchestra_warnings(${name})
  if(ARG_TORCH)
    orchestra_torch_target(${name})
    target_precompile_headers(${name} REUSE_FROM torch_pch)
  endif()
endfunction()
