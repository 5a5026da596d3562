# The first MAX lines of a compiler's output that mention an error, one per line: the reason a
# configure-time check (GlooHeaders.cmake, NcclHeaders.cmake) gives when its try_compile fails.
function(orchestra_compile_errors out_var compile_output max)
  string(REGEX MATCHALL "[^\n]*error[^\n]*" _errors "${compile_output}")
  list(LENGTH _errors _count)
  if(_count GREATER max)
    list(SUBLIST _errors 0 ${max} _errors)
  endif()
  string(REPLACE ";" "\n" _errors "${_errors}")
  set(${out_var} "${_errors}" PARENT_SCOPE)
endfunction()
