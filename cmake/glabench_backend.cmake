# glabench_add_backend(<name> SOURCES <src>... [CUDA] [LABEL <label>]
#                      [OPS <op>...] [DTYPES <dtype>...] [FIXTURES <file-or-folder>...])
#
# Builds the MODULE library glabench_backend_<name>.so (the file name glabench's search
# accepts) from SOURCES, against the ABI target glabench::backend_api, with hidden
# visibility (export only glabench_backend_entry, with GLABENCH_EXPORT) and -O3 -DNDEBUG
# when no build type is chosen. CUDA: the sources include .cu files (the project must
# enable CUDA) and the module links the static CUDA runtime.
#
# The plugin describes its build to glabench (backend.h's glabench_build_info, ABI 1.1)
# without a line of its own: the build type, the compilers and (CUDA) the architectures
# become the compile definitions GLABENCH_BUILD_INFO_TYPE, _COMPILER and
# _CUDA_ARCHITECTURES, which the table's default build member reads; whether it is
# optimised is the compiler's own word (__OPTIMIZE__). It also exports the commit it was
# built from (backend.h's GLABENCH_GIT_COMMIT_SYMBOL), from a file written at every build
# by write_git_commit.cmake beside this one: a commit only relinks the plugin.
#
# One file for both uses: the glabench tree includes it (its backends land in
# GLABENCH_BACKEND_DIR and datasets/CMakeLists.txt turns OPS and DTYPES into verify
# tests), and the installed package (glabenchConfig.cmake) includes it for out-of-tree
# backends, which land in their own binary folder; there, OPS and DTYPES add one ctest
# test per fixture of those ops and dtype, run by the installed glabench with
# GLABENCH_BACKEND_PATH set to that folder (FIXTURES: default GLABENCH_FIXTURE_DIR, the
# installed committed fixtures). LABEL (default cpu, or gpu with CUDA) labels the tests.
function(glabench_add_backend name)
  cmake_parse_arguments(ARG "CUDA" "LABEL" "SOURCES;OPS;DTYPES;FIXTURES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "glabench_add_backend(${name}): no SOURCES")
  endif()
  if(NOT ARG_LABEL)
    set(ARG_LABEL cpu)
    if(ARG_CUDA)
      set(ARG_LABEL gpu)
    endif()
  endif()
  set(target glabench_backend_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  # Every plugin of this build, for a target that builds them all (glabench's own:
  # glabench_plugins, which scripts/run.sh builds without the tests).
  set_property(GLOBAL APPEND PROPERTY GLABENCH_BACKEND_TARGETS ${target})
  target_link_libraries(${target} PRIVATE glabench::backend_api)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
  if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    # An unoptimised plugin benches many times slower, silently: default to Release's flags.
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:C,CXX,CUDA>:-O3;-DNDEBUG>")
  endif()
  if(ARG_CUDA)
    if(NOT CMAKE_CUDA_COMPILER_LOADED)
      message(FATAL_ERROR "glabench_add_backend(${name} CUDA): enable CUDA first, "
                          "e.g. project(... LANGUAGES CXX CUDA)")
    endif()
    if(NOT TARGET CUDA::cudart_static)
      find_package(CUDAToolkit REQUIRED)
    endif()
    target_link_libraries(${target} PRIVATE CUDA::cudart_static)
  endif()
  if(DEFINED GLABENCH_BACKEND_DIR)
    set(output_dir ${GLABENCH_BACKEND_DIR})
  else()
    set(output_dir ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  # A backend with .cu sources is a CUDA backend whether or not it says CUDA: its build
  # description names nvcc and the architectures wherever its table is defined.
  set(has_cuda_code ${ARG_CUDA})
  foreach(source IN LISTS ARG_SOURCES)
    if(source MATCHES "\\.cu$")
      set(has_cuda_code TRUE)
    endif()
  endforeach()
  glabench_describe_build(${target} ${has_cuda_code})
  glabench_stamp_git_commit(${target})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY ${output_dir}
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  set_property(GLOBAL APPEND PROPERTY GLABENCH_BACKENDS ${name})
  set_property(GLOBAL PROPERTY GLABENCH_BACKEND_${name}_LABEL ${ARG_LABEL})
  set_property(GLOBAL PROPERTY GLABENCH_BACKEND_${name}_OPS ${ARG_OPS})
  set_property(GLOBAL PROPERTY GLABENCH_BACKEND_${name}_DTYPES ${ARG_DTYPES})

  # Out of tree: verify tests through the installed glabench.
  if(TARGET glabench::glabench AND ARG_OPS)
    if(NOT ARG_FIXTURES)
      set(ARG_FIXTURES ${GLABENCH_FIXTURE_DIR})
    endif()
    glabench_add_verify_tests(${name} "${ARG_LABEL}" "${ARG_OPS}" "${ARG_DTYPES}"
                              "${ARG_FIXTURES}" glabench::glabench
                              "GLABENCH_BACKEND_PATH=$<TARGET_FILE_DIR:${target}>")
  endif()
endfunction()

# The compile definitions backend.h's GLABENCH_BUILD_INFO_INIT reads: the build type
# ($<CONFIG>: "" when none), the compilers ("GNU 12.2.0 + NVIDIA 12.4.131") and, when
# <cuda> is true, the target's CUDA architectures as it is generated ("90").
function(glabench_describe_build target cuda)
  set(languages CXX)
  if(NOT CMAKE_CXX_COMPILER_LOADED)
    set(languages C)  # a backend in C
  endif()
  if(cuda)
    list(APPEND languages CUDA)
  endif()
  set(compilers)
  foreach(lang IN LISTS languages)
    list(APPEND compilers "${CMAKE_${lang}_COMPILER_ID} ${CMAKE_${lang}_COMPILER_VERSION}")
  endforeach()
  list(JOIN compilers " + " compilers)
  target_compile_definitions(${target} PRIVATE
    "GLABENCH_BUILD_INFO_TYPE=\"$<CONFIG>\""
    "GLABENCH_BUILD_INFO_COMPILER=\"${compilers}\"")
  if(cuda)
    target_compile_definitions(${target} PRIVATE
      "GLABENCH_BUILD_INFO_CUDA_ARCHITECTURES=\"$<JOIN:$<TARGET_PROPERTY:${target},CUDA_ARCHITECTURES>, >\"")
  endif()
endfunction()

# <target>'s glabench_backend_git_commit(): the commit of the checkout its CMakeLists.txt
# is in, from a C++ file (CUDA or C where the project builds no C++) that every build
# rewrites when the commit changes.
function(glabench_stamp_git_commit target)
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${target}_git_commit.cpp)
  if(NOT CMAKE_CXX_COMPILER_LOADED AND CMAKE_CUDA_COMPILER_LOADED)
    set(source ${CMAKE_CURRENT_BINARY_DIR}/${target}_git_commit.cu)
  elseif(NOT CMAKE_CXX_COMPILER_LOADED)
    set(source ${CMAKE_CURRENT_BINARY_DIR}/${target}_git_commit.c)
  endif()
  add_custom_target(${target}_git_commit
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR} -DOUTPUT=${source} -DPLUGIN=1
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/write_git_commit.cmake
    BYPRODUCTS ${source}
    COMMENT "Stamping ${target}'s git commit"
    VERBATIM)
  target_sources(${target} PRIVATE ${source})
  add_dependencies(${target} ${target}_git_commit)
endfunction()

# One ctest test per (fixture of one of <ops>, dtype): `<glabench> verify` of <backend>
# on it, named verify/<backend>/<fixture>/<dtype>, labelled verify, <backend> and
# <label>, run with <environment>. Exit code 77 (e.g. no GPU) counts as skipped.
function(glabench_add_verify_tests backend label ops dtypes fixtures glabench environment)
  set(fixture_files)
  foreach(f IN LISTS fixtures)
    if(IS_DIRECTORY ${f})
      file(GLOB found CONFIGURE_DEPENDS ${f}/*.h5)
      list(SORT found)
      list(APPEND fixture_files ${found})
    else()
      list(APPEND fixture_files ${f})
    endif()
  endforeach()
  foreach(fixture_path IN LISTS fixture_files)
    get_filename_component(fixture ${fixture_path} NAME_WE)
    set(fixture_op "")
    foreach(op IN LISTS ops)
      if(fixture MATCHES "^${op}_")
        set(fixture_op ${op})
      endif()
    endforeach()
    if(NOT fixture_op)
      continue()
    endif()
    foreach(dtype IN LISTS dtypes)
      set(test verify/${backend}/${fixture}/${dtype})
      add_test(NAME ${test}
               COMMAND ${glabench} verify --backend ${backend} --fixture ${fixture_path} --dtype ${dtype})
      set_tests_properties(${test} PROPERTIES LABELS "verify;${backend};${label}" SKIP_RETURN_CODE 77)
      if(environment)
        set_tests_properties(${test} PROPERTIES ENVIRONMENT "${environment}")
      endif()
    endforeach()
  endforeach()
endfunction()
