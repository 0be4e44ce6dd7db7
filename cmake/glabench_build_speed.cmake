# What keeps a cold build short (docs/design.md §7): the CUDA code is compiled for one
# architecture, not every one glabench could run on, and ccache serves repeated builds.

option(GLABENCH_CUDA_SM80 "also compile the CUDA code for sm_80 (A100) when CMAKE_CUDA_ARCHITECTURES is not given" OFF)

# The architectures to compile CUDA code for when none are given: the local GPUs' (as
# nvidia-smi reports them; sm_80 or newer), else sm_90; plus sm_80 with GLABENCH_CUDA_SM80.
function(glabench_default_cuda_architectures out)
  set(archs "")
  find_program(GLABENCH_NVIDIA_SMI nvidia-smi)
  if(GLABENCH_NVIDIA_SMI)
    execute_process(COMMAND ${GLABENCH_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND caps)
      string(REPLACE "." "" caps "${caps}")
      string(REPLACE "\n" ";" caps "${caps}")
      foreach(cap IN LISTS caps)
        string(STRIP "${cap}" cap)
        if(cap MATCHES "^[0-9]+$" AND cap GREATER_EQUAL 80)
          list(APPEND archs ${cap})
        endif()
      endforeach()
    endif()
  endif()
  if(NOT archs)
    set(archs 90)
  endif()
  if(GLABENCH_CUDA_SM80)
    list(APPEND archs 80)
  endif()
  list(REMOVE_DUPLICATES archs)
  message(STATUS "glabench: CUDA code for sm_${archs} (set CMAKE_CUDA_ARCHITECTURES to choose)")
  set(${out} ${archs} PARENT_SCOPE)
endfunction()

# ccache, where it is installed, in front of every compiler (unless a launcher is set).
find_program(GLABENCH_CCACHE ccache)
if(GLABENCH_CCACHE)
  foreach(lang C CXX CUDA)
    if(NOT CMAKE_${lang}_COMPILER_LAUNCHER)
      set(CMAKE_${lang}_COMPILER_LAUNCHER ${GLABENCH_CCACHE})
    endif()
  endforeach()
  message(STATUS "glabench: compiling through ${GLABENCH_CCACHE}")
endif()
