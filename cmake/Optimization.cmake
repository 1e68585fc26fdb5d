# tracetwin_light_optimization(target): -O1 for code whose speed is not what
# tracetwin measures or predicts, after the build type's -O3: the tests, and
# the command files of the two executables (they parse options and print
# results once per run; the work per node or op is in the libraries, which
# keep -O3). Most of their compile time is code generation for CLI11's,
# nlohmann/json's and fmt's templates: a command file took 10.7 s at -O3 and
# 6.5 s at -O1 (cli/link_command.cpp, this 2-core VM), the test programs 166 s
# and 99 s of compiler CPU.
function(tracetwin_light_optimization target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -O1)
  endif()
endfunction()
