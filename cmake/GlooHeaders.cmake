# Gloo's headers for a libtorch that does not ship them (PyTorch's pip wheels), checked against it.
#
# c10d's ProcessGroupGloo.hpp includes Gloo's headers (gloo/algorithm.h, context.h,
# rendezvous/store.h, transport/device.h, common/error.h). Debian's libtorch is built against
# Debian's libgloo-dev; a pip PyTorch has Gloo compiled into libtorch_cpu but ships no gloo/
# folder, and the Gloo headers that can be had (Debian 12's libgloo-dev, a 2022 snapshot) are
# older than the Gloo inside it: gloo::Context lost its virtual destructor since, and
# gloo::rendezvous::Store gained a base class and five virtual functions. Such headers are safe for
# env/real/gloo_process_group.cpp exactly when the code compiled from it does not depend on them:
# no Gloo function, vtable or typeinfo in its object or called from it, no inline code of
# c10d::ProcessGroupGloo emitted in it (whose use of Gloo's classes would follow the headers'
# layouts, not libtorch's), and no layout switch in ProcessGroupGloo.hpp on a Gloo macro. Then the
# only Gloo objects the toolkit touches are the std::shared_ptr<gloo::transport::Device> that one
# libtorch call returns and the next one takes, and the ProcessGroupGloo libtorch builds and runs.
#
#   orchestra_check_gloo_headers(RESULT_VAR REASON_VAR SOURCE file GLOO_INCLUDE_DIR dir
#                                TORCH_HEADER ProcessGroupGloo.hpp [INCLUDE_DIRS dir...])
#     compiles SOURCE (with TORCH_INCLUDE_DIRS, TORCH_CXX_FLAGS, INCLUDE_DIRS (default: the
#     project's folder) and GLOO_INCLUDE_DIR) and applies the rules above to its symbols (nm -C)
#     and to TORCH_HEADER.
#     RESULT_VAR: ON or OFF; REASON_VAR: what was found (each offending symbol or line).
#
# tests/gloo_headers/ runs the check on gloo_process_group.cpp (passes) and on a source that uses
# Gloo's own code through the same header (refused).

include(${CMAKE_CURRENT_LIST_DIR}/CompileErrors.cmake)

function(orchestra_check_gloo_headers result_var reason_var)
  cmake_parse_arguments(ARG "" "SOURCE;GLOO_INCLUDE_DIR;TORCH_HEADER" "INCLUDE_DIRS" ${ARGN})
  if(NOT ARG_INCLUDE_DIRS)
    set(ARG_INCLUDE_DIRS "${PROJECT_SOURCE_DIR}")
  endif()
  set(_problems "")
  # 1. ProcessGroupGloo.hpp switches on no Gloo macro but the two known ones: USE_C10D_GLOO (ours)
  #    and GLOO_STORE_HAS_STORE_V2, which only adds overrides to GlooStore, a class this code never
  #    builds (libtorch's constructor does).
  file(STRINGS "${ARG_TORCH_HEADER}" _conditionals REGEX "^[ \t]*#[ \t]*(if|ifdef|ifndef|elif)[ \t].*GLOO")
  foreach(_line ${_conditionals})
    if(NOT _line MATCHES "USE_C10D_GLOO|GLOO_STORE_HAS_STORE_V2")
      string(APPEND _problems "\n${ARG_TORCH_HEADER}: a layout switch on a Gloo macro: ${_line}")
    endif()
  endforeach()

  # 2. The object compiled against these headers.
  set(_bin "${CMAKE_BINARY_DIR}/CMakeFiles/gloo_headers_check")
  set(_archive "${_bin}/libgloo_headers_check.a")
  file(REMOVE "${_archive}")
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  unset(_gloo_headers_compile CACHE)
  try_compile(_gloo_headers_compile "${_bin}" SOURCES "${ARG_SOURCE}"
              CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${ARG_INCLUDE_DIRS};${TORCH_INCLUDE_DIRS};${ARG_GLOO_INCLUDE_DIR}"
              COMPILE_DEFINITIONS ${TORCH_CXX_FLAGS} -DUSE_C10D_GLOO
              CXX_STANDARD 17
              COPY_FILE "${_archive}"
              OUTPUT_VARIABLE _compile_output)
  set(_compiled "${_gloo_headers_compile}")
  unset(_gloo_headers_compile CACHE)
  if(NOT _compiled)
    orchestra_compile_errors(_errors "${_compile_output}" 5)
    set(${result_var} OFF PARENT_SCOPE)
    set(${reason_var} "${ARG_SOURCE} does not compile with them:\n${_errors}" PARENT_SCOPE)
    return()
  endif()
  if(NOT CMAKE_NM)
    set(${result_var} OFF PARENT_SCOPE)
    set(${reason_var} "no nm to read the compiled object's symbols with" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_NM} -C "${_archive}" OUTPUT_VARIABLE _symbols RESULT_VARIABLE _nm_status)
  if(NOT _nm_status EQUAL 0)
    set(${result_var} OFF PARENT_SCOPE)
    set(${reason_var} "${CMAKE_NM} -C ${_archive} failed" PARENT_SCOPE)
    return()
  endif()
  string(REGEX MATCHALL "[^\n]+" _lines "${_symbols}")
  foreach(_line ${_lines})
    if(NOT _line MATCHES "^[0-9a-fA-F ]* ([A-Za-z]) (.+)$")
      continue()
    endif()
    set(_kind "${CMAKE_MATCH_1}")
    set(_name "${CMAKE_MATCH_2}")
    if(_kind MATCHES "^[rbdn]$")
      continue()  # internal constants (gloo::kNoTimeout...): values compiled in, neither code nor layout
    endif()
    set(_what "defines")
    if(_kind STREQUAL "U")
      set(_what "calls")
    endif()
    # What the symbol is of: a function, or the class of a vtable, typeinfo or thunk.
    string(REGEX REPLACE "^((vtable|typeinfo|typeinfo name|VTT|construction vtable|guard variable) for |(non-)?virtual thunk to )" ""
           _entity "${_name}")
    if(_entity MATCHES "^gloo::")  # Gloo's own code
      string(APPEND _problems "\n${_what} Gloo's code: ${_name}")
    # c10d's inline ProcessGroupGloo code, emitted here (templates of std::, c10:: and ours over its
    # types hold pointers to them only); Options::create only calls libtorch's constructor.
    elseif(NOT _kind STREQUAL "U" AND _entity MATCHES "c10d::ProcessGroupGloo" AND NOT _entity MATCHES "^(void )?(c10|std|__gnu_cxx|env)::"
           AND NOT _entity MATCHES "^c10d::ProcessGroupGloo::Options::(create|~Options)\\(")
      string(APPEND _problems "\ndefines c10d's inline code, which may follow the headers' Gloo layouts: ${_name}")
    endif()
  endforeach()
  if(_problems)
    set(${result_var} OFF PARENT_SCOPE)
    set(${reason_var} "compiled against them, ${ARG_SOURCE} depends on Gloo's headers:${_problems}" PARENT_SCOPE)
  else()
    set(${result_var} ON PARENT_SCOPE)
    set(${reason_var} "${ARG_SOURCE} compiles against them into code that calls and contains no Gloo code" PARENT_SCOPE)
  endif()
endfunction()
