# veda_apply_sanitizers(<target>): adds -fsanitize flags from VEDA_SANITIZE
# (for example "address;undefined" or "thread") to a host-compiled target.
function(veda_apply_sanitizers target)
  if(VEDA_SANITIZE)
    list(JOIN VEDA_SANITIZE "," _s)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${_s} -fno-omit-frame-pointer -fno-sanitize-recover=all>)
    target_link_options(${target} PRIVATE -fsanitize=${_s})
  endif()
endfunction()
