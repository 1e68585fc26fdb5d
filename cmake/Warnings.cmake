# Warning flags applied to tracetwin's own targets (not to dependencies).
function(tracetwin_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
