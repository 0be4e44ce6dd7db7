# glabench_add_knob_refusal_tests(BACKEND FIXTURE NAME=VALUE...): for each knob value
# outside its set, a test that `glabench verify` of BACKEND on FIXTURE, with the value in
# its environment, refuses naming the variable (knob_refusal_test.sh; skipped without a
# GPU). Tests BACKEND/knob_refuses_NAME, labels BACKEND and gpu.
function(glabench_add_knob_refusal_tests backend fixture)
  foreach(knob ${ARGN})
    string(REGEX REPLACE "=.*" "" name ${knob})
    add_test(NAME ${backend}/knob_refuses_${name}
             COMMAND bash ${PROJECT_SOURCE_DIR}/backends/common/tests/knob_refusal_test.sh
                     $<TARGET_FILE:glabench> ${backend} ${fixture} ${name})
    set_tests_properties(${backend}/knob_refuses_${name} PROPERTIES
                         LABELS "${backend};gpu" SKIP_RETURN_CODE 77 ENVIRONMENT ${knob})
  endforeach()
endfunction()
