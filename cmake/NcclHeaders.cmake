# Whether the CUDA runtime's and NCCL's headers found compile the header that our NCCL source
# includes (c10d's ProcessGroupNCCL.hpp). Finding cuda_runtime_api.h and nccl.h is not enough: a
# pip PyTorch's nvidia-* packages hold the CUDA runtime's headers without all they include (CUDA
# 13's nvidia/cu13/include has cuda_runtime.h but not crt/host_config.h, which comes with nvcc),
# and the build then failed in env/real/nccl_process_group.cpp on an H200 configured without nvcc.
# With this check such a configure compiles NCCL out, naming the compiler's first errors, and the
# rest builds.
#
#   orchestra_check_nccl_headers(RESULT_VAR REASON_VAR HEADER <header> INCLUDE_DIRS <dirs...>
#                                [COMPILE_DEFINITIONS <flags...>])
# sets RESULT_VAR to ON or OFF and REASON_VAR to the errors where OFF.
include(${CMAKE_CURRENT_LIST_DIR}/CompileErrors.cmake)

function(orchestra_check_nccl_headers result_var reason_var)
  cmake_parse_arguments(ARG "" "HEADER" "INCLUDE_DIRS;COMPILE_DEFINITIONS" ${ARGN})
  set(_dir "${CMAKE_BINARY_DIR}/CMakeFiles/nccl_headers_check")
  file(WRITE "${_dir}/check.cpp" "#include <${ARG_HEADER}>\n")
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # compiled, not linked: the headers are the question
  unset(_nccl_headers_compile CACHE)
  try_compile(_nccl_headers_compile "${_dir}/build" SOURCES "${_dir}/check.cpp"
              CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${ARG_INCLUDE_DIRS}"
              COMPILE_DEFINITIONS ${ARG_COMPILE_DEFINITIONS}
              CXX_STANDARD 17
              OUTPUT_VARIABLE _compile_output)
  set(_compiled "${_nccl_headers_compile}")
  unset(_nccl_headers_compile CACHE)
  if(_compiled)
    set(${result_var} ON PARENT_SCOPE)
    set(${reason_var} "" PARENT_SCOPE)
    return()
  endif()
  orchestra_compile_errors(_errors "${_compile_output}" 3)
  set(${result_var} OFF PARENT_SCOPE)
  set(${reason_var} "${ARG_HEADER} does not compile with the CUDA and NCCL headers found (${ARG_INCLUDE_DIRS}):\n${_errors}" PARENT_SCOPE)
endfunction()
