# glabench_add_decode_tests(BACKEND OPS [KNOB]): the bench preset's one-token fixtures of
# each op (OP_decode_*: K = V = 64, K = 100 with V = 30, K = V = 256, h0 given; K = 3,
# V = 8 without h0), made at test time, verified through BACKEND in every dtype it has:
# the decode kernels' variants (parallel_scan/decode_kernel.cuh, decode_bulk_kernel.cuh;
# the bulk kernel takes fp32 states with V a multiple of 4: whole states at K = 64 and 3, a
# row a copy at K = 256). Tests BACKEND/make_decode_fixtures (a ctest fixture setup),
# BACKEND/verify_decode and, given KNOB, BACKEND/verify_decode_registers; labels BACKEND
# and gpu.
function(glabench_add_decode_tests backend ops)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/decode_fixtures)
  set(make_args)
  set(verify_args)
  foreach(op IN LISTS ops)
    foreach(what decode_b3_k64 decode_b8_k100_v30 decode_b4_k256 decode_b5_k3_v8_no_h0)
      list(APPEND make_args --only ${op}_${what})
      list(APPEND verify_args --fixture ${dir}/${op}_${what}.h5)
    endforeach()
  endforeach()
  add_test(NAME ${backend}/make_decode_fixtures
           COMMAND glabench fixtures make --preset bench ${make_args} --out ${dir})
  set_tests_properties(${backend}/make_decode_fixtures PROPERTIES
                       LABELS "${backend};gpu" FIXTURES_SETUP ${backend}_decode)
  add_test(NAME ${backend}/verify_decode
           COMMAND glabench verify --backend ${backend} ${verify_args})
  set_tests_properties(${backend}/verify_decode PROPERTIES
                       LABELS "${backend};gpu;verify" SKIP_RETURN_CODE 77
                       FIXTURES_REQUIRED ${backend}_decode)
  # A third argument, the backend's <BACKEND>_DECODE_REGISTERS knob: the same fixtures
  # through the register kernel, which fp32 states otherwise leave for the bulk kernel.
  if(ARGC GREATER 2)
    add_test(NAME ${backend}/verify_decode_registers
             COMMAND glabench verify --backend ${backend} ${verify_args})
    set_tests_properties(${backend}/verify_decode_registers PROPERTIES
                         LABELS "${backend};gpu;verify" SKIP_RETURN_CODE 77
                         ENVIRONMENT "${ARGV2}=1" FIXTURES_REQUIRED ${backend}_decode)
  endif()
endfunction()
