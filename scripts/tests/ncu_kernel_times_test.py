#!/usr/bin/env python3
"""ncu_kernel_times.py (Python alone) on the lines ncu 2025 writes: kernels in anonymous
namespaces (`unnamed>::`, `<unnamed>::`, `(anonymous namespace)::`), a namespaced template, a
plain C name (cuBLAS's), units of ms, us and ns; lines that are neither a launch nor its time
are skipped; each time goes with the launch above it."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ncu_kernel_times.py")


def launch(signature, grid, unit, value):
    return (f"  {signature} {grid}x(256, 1, 1), Context 1, Stream 22, Device 0, CC 9.0\n"
            "    Section: Command line profiler metrics\n"
            "    ---------------------- ----------- ------------\n"
            "    Metric Name            Metric Unit Metric Value\n"
            "    ---------------------- ----------- ------------\n"
            f"    gpu__time_duration.sum          {unit}        {value}\n"
            "    ---------------------- ----------- ------------\n")


LOG = ("==PROF== Connected to process 2068\n"
       "chunked_fuse_cuda  rwkv6  bf16  fwdbwd  B4 T1024 H4 K100 V100  0.2 ms  ok\n" +
       launch("void unnamed>::backward_terms_kernel<__nv_bfloat16, float, 4>"
              "(unnamed>::terms_args<T1, T2>, unnamed>::terms_out<T1, T2>)", "(180, 4, 1)", "us",
              "24.58") +
       launch("void glabench::chunked::walk::chunk_walk_grads_kernel<true>"
              "(glabench::chunked::walk::grads_args)", "(16, 4, 4)", "ms", "1,076.20") +
       launch("sm90_xmma_gemm_f64f64_f64f64_f64_nn_n_tilesize128x64x16_execute_kernel__5x_cublas",
              "(64, 128, 1)", "ns", "950") +
       launch("void (anonymous namespace)::shift_kernel<uint4>(shift_tensor<uint4>)", "(64, 2, 1)",
              "us", "6.10") +
       launch("void rwkv6::<unnamed>::first_rows_kernel<float>(rwkv6::<unnamed>::terms_args"
              "<__nv_bfloat16, T1>, __nv_bfloat16 *)", "(4, 4, 1)", "us", "12.5"))


def main():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ncu.log")
        with open(path, "w") as f:
            f.write(LOG)
        p = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = [line.split() for line in p.stdout.splitlines()]
    got = [(r[0], " ".join(r[1:-2]), float(r[-2])) for r in rows]
    want = [("backward_terms_kernel", "(180, 4, 1)", 24.6),
            ("chunk_walk_grads_kernel", "(16, 4, 4)", 1076200.0),
            ("sm90_xmma_gemm_f64f64_f64f64_f64_nn_n_tilesize128x64x16_execute_kernel__5x_cublas",
             "(64, 128, 1)", 1.0),  # 950 ns, to 0.1 us
            ("shift_kernel", "(64, 2, 1)", 6.1), ("first_rows_kernel", "(4, 4, 1)", 12.5)]
    assert got == want, f"\n got {got}\nwant {want}"
    print("ncu_kernel_times: 5 launches named and timed")


if __name__ == "__main__":
    main()
