# The C++ standard library first on every link line, and a configure-time check that it wins.
#
# PyTorch's pip wheels export copies of libstdc++ symbols from libtorch.so and libtorch_cpu.so
# (std::filesystem among them: 64 and 142 such symbols in PyTorch 2.11). g++ puts -lstdc++ at the
# end of a link line, after the torch libraries, so libstdc++.so.6 came after them in DT_NEEDED,
# the dynamic linker bound the program's std::filesystem calls to libtorch's copies, and
# std::filesystem::remove_all crashed (issue 40: 66 tests). Naming libstdc++ before any library
# (--no-as-needed, so that the linker records it even though nothing before it needs it) makes it
# the first library searched for every symbol, whatever the other libraries export.
#
#   ORCHESTRA_STDLIB_FIRST                the link option (add_link_options() in CMakeLists.txt:
#                                         every executable and shared library of the project)
#   orchestra_check_stdlib_first(RESULT_VAR REASON_VAR LINK_OPTIONS ... LIBRARIES ...)
#                                         builds cmake/stdlib_first_check.cpp with those options and
#                                         libraries, runs it, and says whether std::filesystem
#                                         resolves into libstdc++: ON, OFF, or UNKNOWN where the
#                                         check program did not build (REASON_VAR: what it printed)
#   orchestra_require_stdlib_first(LIBRARIES ... [LINK_OPTIONS ...])
#                                         the check with the project's own link option (and any
#                                         other the project adds to every link); a failure
#                                         stops configuring with the reason
#
# tests/link_order/ proves that the check fails where a library linked first exports such a copy,
# and that the project's link option wins over it.

set(ORCHESTRA_STDLIB_FIRST "SHELL:-Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state")
set(_orchestra_stdlib_check_source "${CMAKE_CURRENT_LIST_DIR}/stdlib_first_check.cpp")

function(orchestra_check_stdlib_first result_var reason_var)
  cmake_parse_arguments(ARG "" "" "LINK_OPTIONS;LIBRARIES" ${ARGN})
  set(_bin "${CMAKE_BINARY_DIR}/CMakeFiles/stdlib_first_check")
  # Never the cached answer of an earlier configure: the libraries may have changed since.
  unset(_stdlib_first_run CACHE)
  unset(_stdlib_first_compile CACHE)
  try_run(_stdlib_first_run _stdlib_first_compile "${_bin}" "${_orchestra_stdlib_check_source}"
          CMAKE_FLAGS "-DCMAKE_CXX_STANDARD=17" "-DCMAKE_CXX_STANDARD_REQUIRED=ON"
          LINK_OPTIONS ${ARG_LINK_OPTIONS}
          LINK_LIBRARIES ${ARG_LIBRARIES} ${CMAKE_DL_LIBS}
          COMPILE_OUTPUT_VARIABLE _compile_output
          RUN_OUTPUT_VARIABLE _run_output)
  set(_compiled "${_stdlib_first_compile}")
  set(_exit "${_stdlib_first_run}")
  unset(_stdlib_first_run CACHE)
  unset(_stdlib_first_compile CACHE)
  if(NOT _compiled)
    set(${result_var} UNKNOWN PARENT_SCOPE)
    string(REGEX MATCHALL "[^\n]*(error|undefined reference)[^\n]*" _errors "${_compile_output}")
    if(NOT _errors)
      set(_errors "${_compile_output}")
    endif()
    set(${reason_var} "the check program did not build: ${_errors}" PARENT_SCOPE)
    return()
  endif()
  string(STRIP "${_run_output}" _run_output)
  if("${_exit}" STREQUAL "0")
    set(${result_var} ON PARENT_SCOPE)
  else()
    set(${result_var} OFF PARENT_SCOPE)
    if(NOT _run_output)
      set(_run_output "no output: it crashed (${_exit}) before printing where the functions resolve")
    endif()
  endif()
  set(${reason_var} "${_run_output}" PARENT_SCOPE)
endfunction()

function(orchestra_require_stdlib_first)
  cmake_parse_arguments(ARG "" "" "LIBRARIES;LINK_OPTIONS" ${ARGN})
  orchestra_check_stdlib_first(_ok _reason LINK_OPTIONS "${ORCHESTRA_STDLIB_FIRST}" ${ARG_LINK_OPTIONS} LIBRARIES ${ARG_LIBRARIES})
  if(_ok STREQUAL "UNKNOWN")
    # Not evidence of preemption: the check itself could not be linked here (the project's link
    # order stands; tests/link_order/ checks the executables' DT_NEEDED after the build).
    string(REPLACE "\n" "\n  " _reason "  ${_reason}")
    message(WARNING "Link-order check not run: ${_reason}")
    return()
  endif()
  if(NOT _ok)
    string(REPLACE "\n" "\n  " _reason "  ${_reason}")  # indented: printed as it is, not re-wrapped
    message(FATAL_ERROR "Link-order check failed: a program linked as this project links (libstdc++ first, then "
                        "${ARG_LIBRARIES}) does not bind std::filesystem to the C++ standard library, so the "
                        "toolkit would call another library's copies (pip's libtorch exports some) and can crash "
                        "(cmake/StdlibFirst.cmake). What the check found:\n${_reason}")
  endif()
  message(STATUS "Link order: std::filesystem resolves into libstdc++ with libstdc++ linked before the torch libraries (checked)")
endfunction()
