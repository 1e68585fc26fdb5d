# tracetwin_light_optimization(target LEVEL): -O<LEVEL> for code whose speed
# is not what tracetwin measures or predicts, after the build type's -O3.
# Most of its compile time is code generation for GoogleTest's, CLI11's,
# nlohmann/json's and fmt's templates; the work per node or op it calls is in
# the libraries, which keep -O3. Figures from this 2-core VM, one file:
#   LEVEL 1: the command files of the two executables (they parse options
#            and print results once per run): cli/link_command.cpp 10.7 s
#            at -O3, 6.5 s at -O1, 6.9 s at -O0.
#   LEVEL 0: the test programs (unity batches of 8 files): a batch of
#            tests_predictors 11.9 s at -O1, 8.6 s at -O0; all of them 166 s
#            of compiler CPU at -O3 one file at a time, 99 s batched at -O1.
function(tracetwin_light_optimization target level)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -O${level})
  endif()
endfunction()
