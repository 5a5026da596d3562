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
# The shared libstdc++ is named by its path, not as -lstdc++: on the H100 machine of issue 40 the
# compiler is a wrapper (/opt/gcc/bin/g++ -B/opt/gcc/lib/gcc/x86_64-linux-gnu/13/) whose search
# folders hold only libstdc++.a, so -lstdc++ linked the C++ library statically, libstdc++.so.6 was
# not in DT_NEEDED at all, the shared one came in behind libtorch, and 67 tests still crashed.
# Linked by path there, the check below passed (measured 2026-11-26 with that wrapper).
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
# ORCHESTRA_STDLIB_CHECK=warn in the environment turns a failed check into a warning, for diagnosis
# only (to build anyway and see which tests crash).
#
# tests/link_order/ proves that the check fails where a library linked first exports such a copy,
# and that the project's link option wins over it.

execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so.6
                OUTPUT_VARIABLE ORCHESTRA_LIBSTDCXX_SHARED OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT IS_ABSOLUTE "${ORCHESTRA_LIBSTDCXX_SHARED}" OR NOT EXISTS "${ORCHESTRA_LIBSTDCXX_SHARED}")
  unset(ORCHESTRA_LIBSTDCXX_SHARED)
  find_library(ORCHESTRA_LIBSTDCXX_SHARED NAMES libstdc++.so.6)
endif()
if(ORCHESTRA_LIBSTDCXX_SHARED)
  get_filename_component(ORCHESTRA_LIBSTDCXX_SHARED "${ORCHESTRA_LIBSTDCXX_SHARED}" REALPATH)
  set(ORCHESTRA_STDLIB_FIRST "SHELL:-Wl,--push-state,--no-as-needed ${ORCHESTRA_LIBSTDCXX_SHARED} -Wl,--pop-state")
else()
  set(ORCHESTRA_STDLIB_FIRST "SHELL:-Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state")
endif()
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
    if("$ENV{ORCHESTRA_STDLIB_CHECK}" STREQUAL "warn")  # diagnosis only: build anyway, see what crashes
      message(WARNING "Link-order check failed (ORCHESTRA_STDLIB_CHECK=warn: building anyway):\n${_reason}")
      return()
    endif()
    message(FATAL_ERROR "Link-order check failed: a program linked as this project links (libstdc++ first, then "
                        "${ARG_LIBRARIES}) does not bind std::filesystem to the C++ standard library, so the "
                        "toolkit would call another library's copies (pip's libtorch exports some) and can crash "
                        "(cmake/StdlibFirst.cmake). What the check found:\n${_reason}")
  endif()
  message(STATUS "Link order: std::filesystem resolves into libstdc++ with libstdc++ linked before the torch libraries (checked)")
endfunction()
