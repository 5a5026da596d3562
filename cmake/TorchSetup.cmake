# libtorch for the whole build, and what it provides (README "With a GPU"). Two ways in:
#
#  - find_package(Torch): Debian's CPU libtorch by default, or a PyTorch installation's own
#    share/cmake/Torch with -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)').
#    With a CUDA PyTorch this needs the CUDA toolkit (nvcc and its headers): PyTorch's
#    Caffe2Config.cmake looks for it and stops with "cannot find the CUDA libraries" otherwise.
#  - -DORCHESTRA_TORCH_ROOT=<site-packages>/torch: the installation's headers and libraries read
#    directly, for a CUDA PyTorch on a machine without the CUDA toolkit (pip wheels bring the CUDA
#    runtime, cuBLAS and NCCL as nvidia-* packages beside torch/, which is searched too).
#
# Either way this sets TORCH_INCLUDE_DIRS, TORCH_LIBRARIES and TORCH_CXX_FLAGS (as TorchConfig
# does), ORCHESTRA_TORCH_CUDA (libtorch has CUDA), and for env/real the c10d backends this build
# can compile: ORCHESTRA_HAVE_GLOO / ORCHESTRA_HAVE_NCCL, each with ORCHESTRA_NO_*_REASON (one
# clause for the error a user sees when asking for a backend that is not there) and, for NCCL,
# ORCHESTRA_NCCL_INCLUDE_DIRS / ORCHESTRA_NCCL_LIBRARIES for the one source that includes it.

set(ORCHESTRA_TORCH_ROOT "" CACHE PATH
    "A PyTorch installation's torch/ folder, read without its TorchConfig.cmake (README \"With a GPU\")")

if(ORCHESTRA_TORCH_ROOT)
  set(_torch_prefix "${ORCHESTRA_TORCH_ROOT}")
  foreach(_lib torch torch_cpu c10)
    find_library(ORCHESTRA_LIB_${_lib} ${_lib} PATHS "${_torch_prefix}/lib" NO_DEFAULT_PATH)
    if(NOT ORCHESTRA_LIB_${_lib})
      message(FATAL_ERROR "ORCHESTRA_TORCH_ROOT=${_torch_prefix}: lib/lib${_lib}.so not found (expected a PyTorch installation's torch/ folder)")
    endif()
  endforeach()
  set(_torch_libraries ${ORCHESTRA_LIB_torch} ${ORCHESTRA_LIB_torch_cpu} ${ORCHESTRA_LIB_c10})
  find_library(ORCHESTRA_LIB_torch_cuda torch_cuda PATHS "${_torch_prefix}/lib" NO_DEFAULT_PATH)
  find_library(ORCHESTRA_LIB_c10_cuda c10_cuda PATHS "${_torch_prefix}/lib" NO_DEFAULT_PATH)
  set(ORCHESTRA_TORCH_CUDA OFF)
  if(ORCHESTRA_LIB_torch_cuda AND ORCHESTRA_LIB_c10_cuda)
    set(ORCHESTRA_TORCH_CUDA ON)
    list(APPEND _torch_libraries ${ORCHESTRA_LIB_torch_cuda} ${ORCHESTRA_LIB_c10_cuda})
  endif()
  # The C++ string ABI libtorch was built with: its libc10 exports std::__cxx11 strings under the new one.
  set(_abi 1)
  find_program(ORCHESTRA_NM nm)
  if(ORCHESTRA_NM)
    execute_process(COMMAND ${ORCHESTRA_NM} -D --defined-only ${ORCHESTRA_LIB_c10} OUTPUT_VARIABLE _c10_symbols ERROR_QUIET)
    string(FIND "${_c10_symbols}" "__cxx11" _cxx11_at)
    if(_cxx11_at EQUAL -1)
      set(_abi 0)
    endif()
  else()
    message(WARNING "nm not found: assuming ${_torch_prefix} uses the new C++ ABI")
  endif()
  set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=${_abi}")
  set(TORCH_INCLUDE_DIRS "${_torch_prefix}/include" "${_torch_prefix}/include/torch/csrc/api/include")
  add_library(orchestra_torch INTERFACE)
  target_include_directories(orchestra_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  target_compile_options(orchestra_torch INTERFACE ${TORCH_CXX_FLAGS})
  target_link_libraries(orchestra_torch INTERFACE ${_torch_libraries})
  # Every libtorch library stays linked although the code calls none of libtorch_cuda's symbols:
  # it registers CUDA with libtorch when it loads, and toolchains that link --as-needed by default
  # would drop it (TorchConfig.cmake does the same with -Wl,--no-as-needed).
  add_link_options("LINKER:--no-as-needed")
  set(TORCH_LIBRARIES orchestra_torch)
  set(_torch_link_check_libraries ${_torch_libraries})
  set(_torch_link_check_options "LINKER:--no-as-needed")
  message(STATUS "libtorch read directly from ${_torch_prefix} (CUDA: ${ORCHESTRA_TORCH_CUDA}, ${TORCH_CXX_FLAGS})")
else()
  find_package(Torch REQUIRED)
  set(_torch_prefix "${TORCH_INSTALL_PREFIX}")  # set by TorchConfig.cmake: /usr for Debian's, .../site-packages/torch for pip's
  set(ORCHESTRA_TORCH_CUDA OFF)
  if(CAFFE2_USE_CUDA OR TARGET torch_cuda)
    set(ORCHESTRA_TORCH_CUDA ON)
  endif()
  # The check links the library files, not TorchConfig's imported targets: a pip PyTorch's targets
  # name others (protobuf::libprotobuf) that a try_run project cannot see, and fail to generate.
  set(_torch_link_check_libraries "")
  foreach(_name torch torch_cpu c10 torch_cuda c10_cuda)
    find_library(ORCHESTRA_CHECK_LIB_${_name} ${_name} HINTS "${_torch_prefix}/lib")
    if(ORCHESTRA_CHECK_LIB_${_name})
      list(APPEND _torch_link_check_libraries ${ORCHESTRA_CHECK_LIB_${_name}})
    endif()
  endforeach()
  set(_torch_link_check_options "LINKER:--no-as-needed")  # as TorchConfig links libtorch_cuda
endif()

# libstdc++ wins over any copies of its symbols these libraries export (cmake/StdlibFirst.cmake).
orchestra_require_stdlib_first(LIBRARIES ${_torch_link_check_libraries} LINK_OPTIONS ${_torch_link_check_options})

# A libtorch built with the old C++ string ABI (PyTorch's pip wheels before 2.7 are) cannot link
# with Debian's yaml-cpp and ZeroMQ, nor with this project's plain-C++ targets, which use the new one.
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR "This libtorch (${_torch_prefix}) is built with _GLIBCXX_USE_CXX11_ABI=0, the old C++ ABI, and cannot "
                      "link with Debian's libraries. Use a libtorch built with the new ABI (PyTorch 2.7 or later from pip, or "
                      "PyTorch's cxx11-abi builds; python3 -c 'import torch; print(torch.compiled_with_cxx11_abi())' prints True).")
endif()

# Where pip puts the CUDA runtime, cuBLAS, NCCL... of a CUDA wheel: site-packages/nvidia/*/{include,lib}.
get_filename_component(_site_packages "${_torch_prefix}/.." ABSOLUTE)
file(GLOB _pip_cuda_includes LIST_DIRECTORIES true "${_site_packages}/nvidia/*/include")

# Gloo: libtorch's c10d headers include Gloo's. Debian's libtorch is built against libgloo-dev's
# (/usr/include, one of its include folders); a PyTorch installation that ships them has them in
# its include/; pip's wheels ship none. Headers from elsewhere (Debian's libgloo-dev, which
# scripts/gpu_deps.sh carries, or -DORCHESTRA_GLOO_INCLUDE_DIR) are used only after
# cmake/GlooHeaders.cmake found that our ProcessGroupGloo source, compiled against them, contains and
# calls no Gloo code; otherwise Gloo is compiled out, with that reason. ORCHESTRA_CHECK_GLOO_HEADERS
# runs the same check on headers that come with libtorch.
include(${CMAKE_CURRENT_LIST_DIR}/GlooHeaders.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/NcclHeaders.cmake)
option(ORCHESTRA_CHECK_GLOO_HEADERS "Check Gloo's headers against libtorch even when they come with it" OFF)
find_file(ORCHESTRA_PROCESS_GROUP_GLOO_HEADER torch/csrc/distributed/c10d/ProcessGroupGloo.hpp HINTS ${TORCH_INCLUDE_DIRS} NO_DEFAULT_PATH)
find_path(ORCHESTRA_GLOO_INCLUDE_DIR gloo/algorithm.h HINTS ${TORCH_INCLUDE_DIRS})
set(ORCHESTRA_HAVE_GLOO 0)
set(ORCHESTRA_NO_GLOO_REASON "")
if(NOT ORCHESTRA_PROCESS_GROUP_GLOO_HEADER)
  set(ORCHESTRA_NO_GLOO_REASON "this libtorch (${_torch_prefix}) has no c10d ProcessGroupGloo.hpp")
elseif(NOT ORCHESTRA_GLOO_INCLUDE_DIR)
  set(ORCHESTRA_NO_GLOO_REASON "this build was configured without Gloo's headers (gloo/algorithm.h: install libgloo-dev, or use scripts/gpu_deps.sh's prefix; README \"With a GPU\")")
elseif(ORCHESTRA_GLOO_INCLUDE_DIR IN_LIST TORCH_INCLUDE_DIRS AND NOT ORCHESTRA_CHECK_GLOO_HEADERS)
  set(ORCHESTRA_HAVE_GLOO 1)  # libtorch's own
  message(STATUS "Gloo headers: ${ORCHESTRA_GLOO_INCLUDE_DIR}, among this libtorch's include folders")
else()
  orchestra_check_gloo_headers(_gloo_fits _gloo_reason SOURCE "${PROJECT_SOURCE_DIR}/env/real/gloo_process_group.cpp"
                               GLOO_INCLUDE_DIR "${ORCHESTRA_GLOO_INCLUDE_DIR}" TORCH_HEADER "${ORCHESTRA_PROCESS_GROUP_GLOO_HEADER}")
  if(_gloo_fits)
    set(ORCHESTRA_HAVE_GLOO 1)
    message(STATUS "Gloo headers: ${ORCHESTRA_GLOO_INCLUDE_DIR}, checked against this libtorch's c10d: ${_gloo_reason}")
  else()
    string(REGEX REPLACE "\n.*" "" _first "${_gloo_reason}")
    set(ORCHESTRA_NO_GLOO_REASON "the Gloo headers found (${ORCHESTRA_GLOO_INCLUDE_DIR}) do not fit this libtorch: ${_first} (see configure's output)")
    string(REPLACE "\n" "\n  " _gloo_reason "  ${_gloo_reason}")
    message(WARNING "c10d's Gloo backend is compiled out: the Gloo headers in ${ORCHESTRA_GLOO_INCLUDE_DIR} do not fit "
                    "${_torch_prefix} (cmake/GlooHeaders.cmake):\n${_gloo_reason}")
  endif()
endif()
if(NOT ORCHESTRA_HAVE_GLOO AND ORCHESTRA_NO_GLOO_REASON MATCHES "without Gloo's headers|has no c10d")
  message(WARNING "c10d's Gloo backend is compiled out: ${ORCHESTRA_NO_GLOO_REASON}")
endif()

# NCCL: a CUDA libtorch, and the CUDA runtime's and NCCL's headers for ProcessGroupNCCL.hpp.
set(ORCHESTRA_HAVE_NCCL 0)
set(ORCHESTRA_NCCL_INCLUDE_DIRS "")
set(ORCHESTRA_NCCL_LIBRARIES "")
if(NOT ORCHESTRA_TORCH_CUDA)
  set(ORCHESTRA_NO_NCCL_REASON "this libtorch has no CUDA (Debian's is CPU-only; build against a CUDA PyTorch: README, \"With a GPU\")")
else()
  # A whole toolkit's headers before pip's, which lack some of what they include (NcclHeaders.cmake).
  set(_cuda_hints ${CUDAToolkit_INCLUDE_DIRS} ${CUDA_INCLUDE_DIRS} /usr/local/cuda/include ${_pip_cuda_includes})
  find_path(ORCHESTRA_CUDA_RUNTIME_INCLUDE_DIR cuda_runtime_api.h HINTS ${_cuda_hints})
  find_path(ORCHESTRA_NCCL_INCLUDE_DIR nccl.h HINTS ${_cuda_hints})
  find_library(ORCHESTRA_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS "${_site_packages}/nvidia/nccl/lib" /usr/local/cuda/lib64)
  find_library(ORCHESTRA_CUDART_LIBRARY NAMES cudart libcudart.so.12 libcudart.so.11.0
               HINTS "${_site_packages}/nvidia/cuda_runtime/lib" ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  set(_nccl_fits OFF)
  if(ORCHESTRA_CUDA_RUNTIME_INCLUDE_DIR AND ORCHESTRA_NCCL_INCLUDE_DIR)
    set(_nccl_include_dirs ${ORCHESTRA_CUDA_RUNTIME_INCLUDE_DIR} ${ORCHESTRA_NCCL_INCLUDE_DIR} ${_pip_cuda_includes})
    orchestra_check_nccl_headers(_nccl_fits _nccl_reason HEADER torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp
                                 INCLUDE_DIRS ${TORCH_INCLUDE_DIRS} ${_nccl_include_dirs}
                                 COMPILE_DEFINITIONS ${TORCH_CXX_FLAGS} -DUSE_C10D_NCCL)
  endif()
  if(_nccl_fits)
    set(ORCHESTRA_HAVE_NCCL 1)
    set(ORCHESTRA_NO_NCCL_REASON "")
    set(ORCHESTRA_NCCL_INCLUDE_DIRS ${_nccl_include_dirs})
    foreach(_lib ORCHESTRA_NCCL_LIBRARY ORCHESTRA_CUDART_LIBRARY)
      if(${_lib})
        list(APPEND ORCHESTRA_NCCL_LIBRARIES ${${_lib}})
      endif()
    endforeach()
  elseif(ORCHESTRA_CUDA_RUNTIME_INCLUDE_DIR AND ORCHESTRA_NCCL_INCLUDE_DIR)
    string(REGEX MATCH "\n[^\n]*" _first_error "${_nccl_reason}")
    string(STRIP "${_first_error}" _first_error)
    set(ORCHESTRA_NO_NCCL_REASON "the CUDA and NCCL headers found do not compile c10d's ProcessGroupNCCL.hpp (${_first_error}); install the CUDA toolkit (nvcc and its headers)")
    message(WARNING "c10d's NCCL backend is compiled out: ${_nccl_reason}")
  else()
    set(ORCHESTRA_NO_NCCL_REASON "this build was configured without the CUDA runtime's or NCCL's headers (cuda_runtime_api.h, nccl.h); install the CUDA toolkit and NCCL, or PyTorch's nvidia-* pip packages")
    message(WARNING "c10d's NCCL backend is compiled out: cuda_runtime_api.h or nccl.h not found (${_cuda_hints})")
  endif()
endif()
message(STATUS "libtorch: ${_torch_prefix}; CUDA: ${ORCHESTRA_TORCH_CUDA}; c10d Gloo: ${ORCHESTRA_HAVE_GLOO}; c10d NCCL: ${ORCHESTRA_HAVE_NCCL}")
