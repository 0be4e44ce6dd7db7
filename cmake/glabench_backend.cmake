# glabench_add_backend(<name> SOURCES ... LABEL cpu|gpu OPS <op>... DTYPES <dtype>...)
#
# Builds backends/<name> as the MODULE library glabench_backend_<name>.so in
# GLABENCH_BACKEND_DIR, where `glabench` finds it. OPS and DTYPES say which committed
# fixtures datasets/CMakeLists.txt turns into `glabench verify` ctest tests for it.
function(glabench_add_backend name)
  cmake_parse_arguments(ARG "" "LABEL" "SOURCES;OPS;DTYPES" ${ARGN})
  set(target glabench_backend_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE glabench_backend_api)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${GLABENCH_BACKEND_DIR}
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden)
  set_property(GLOBAL APPEND PROPERTY GLABENCH_BACKENDS ${name})
  set_property(GLOBAL PROPERTY GLABENCH_BACKEND_${name}_LABEL ${ARG_LABEL})
  set_property(GLOBAL PROPERTY GLABENCH_BACKEND_${name}_OPS ${ARG_OPS})
  set_property(GLOBAL PROPERTY GLABENCH_BACKEND_${name}_DTYPES ${ARG_DTYPES})
endfunction()
