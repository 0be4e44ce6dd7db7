# glabench_add_decode_tests(BACKEND OPS): the bench preset's one-token fixtures of each op
# (OP_decode_*: K = V = 64, K = 100 with V = 30, K = V = 256; h0 given), made at test time,
# verified through BACKEND in every dtype it has: the decode kernel's variants
# (parallel_scan/decode_kernel.cuh). Tests BACKEND/make_decode_fixtures (a ctest fixture
# setup) and BACKEND/verify_decode, labels BACKEND and gpu.
function(glabench_add_decode_tests backend ops)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/decode_fixtures)
  set(make_args)
  set(verify_args)
  foreach(op IN LISTS ops)
    foreach(what decode_b3_k64 decode_b8_k100_v30 decode_b4_k256)
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
endfunction()
