# TRACETWIN_SANITIZE=ON: ASan + UBSan on every target. Build it in its own
# directory (make asan) - sanitized and plain objects must not mix.
if(TRACETWIN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
