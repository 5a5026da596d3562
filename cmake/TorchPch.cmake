# Which files compile with the one libtorch precompiled header (torch_pch, CMakeLists.txt).
# Included by ProjectOptions.cmake; tests/cmake/torch_pch_choice.cmake runs orchestra_includes_torch
# alone (cmake -P).

# Whether `file` includes libtorch (<torch/...>, <ATen/...>, <c10/...>), itself or through the
# project's own headers it includes ("folder/header.hpp", looked up beside it, in `search_dir` and
# at the project's root), in ${out}. Remembered per file for the whole configure. An include it
# cannot find counts as libtorch: the precompiled header is then kept, which is never wrong.
function(orchestra_includes_torch file search_dir out)
  get_property(known GLOBAL PROPERTY "ORCHESTRA_INCLUDES_TORCH:${file}" SET)
  if(known)
    get_property(answer GLOBAL PROPERTY "ORCHESTRA_INCLUDES_TORCH:${file}")
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "ORCHESTRA_INCLUDES_TORCH:${file}" OFF)  # a header cycle ends here
  set(answer OFF)
  get_filename_component(file_dir "${file}" DIRECTORY)
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(line IN LISTS includes)
    if(line MATCHES "<(torch|ATen|c10)/")
      set(answer ON)
    elseif(line MATCHES "\"([^\"]+)\"")
      set(header "")
      foreach(dir "${file_dir}" "${search_dir}" "${PROJECT_SOURCE_DIR}")
        if(NOT header AND EXISTS "${dir}/${CMAKE_MATCH_1}")
          set(header "${dir}/${CMAKE_MATCH_1}")
        endif()
      endforeach()
      if(header)
        orchestra_includes_torch("${header}" "${search_dir}" answer)
      else()
        set(answer ON)
      endif()
    endif()
    if(answer)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "ORCHESTRA_INCLUDES_TORCH:${file}" ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

# The one libtorch precompiled header (torch_pch, CMakeLists.txt) for the files of `target` that
# include libtorch; its other files are compiled without it. GCC instantiates what the header
# leaves pending in every file that loads it, 4-8 s each on this machine even for a file that never
# names a tensor, while such a file alone takes 0.5-5 s (BENCHMARKS.md, "Build time"). Decided at
# configure time: a file that starts including libtorch later compiles right without the header,
# only slower, until the next configure.
function(orchestra_torch_pch target)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(source MATCHES "^\\$<" OR NOT source MATCHES "\\.(cpp|cc|cxx)$")
      continue()  # generator expressions (doctest's main objects), headers
    endif()
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    orchestra_includes_torch("${path}" "${source_dir}" uses_torch)
    if(NOT uses_torch)
      set_source_files_properties("${source}" PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
  target_precompile_headers(${target} REUSE_FROM torch_pch)
endfunction()
