# veda_target_sources_cuda(<target> [PRIVATE|PUBLIC|INTERFACE] <sources>...)
#
# Adds sources to <target> that use veda::gpu / VEDA_FN device lambdas. When
# veda was built with its CUDA backend (VEDA_HAS_CUDA) and CUDA is enabled in
# this project, the sources are compiled by nvcc, so the wrapped functions get
# a GPU candidate; otherwise the host compiler builds them and every call runs
# on the CPU. The same source file works either way.
function(veda_target_sources_cuda target)
  set(scope PRIVATE)
  set(srcs ${ARGN})
  list(GET srcs 0 first)
  if(first MATCHES "^(PRIVATE|PUBLIC|INTERFACE)$")
    set(scope ${first})
    list(REMOVE_AT srcs 0)
  endif()
  target_sources(${target} ${scope} ${srcs})
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(VEDA_HAS_CUDA AND "CUDA" IN_LIST _langs)
    set_source_files_properties(${srcs} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
    target_compile_features(${target} PRIVATE cxx_std_20)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --expt-relaxed-constexpr>)
    set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  endif()
endfunction()
