// The pair steps of pair_steps.hpp: the only translation unit that launches the block,
// merge and fold kernels, instantiated for fp64, fp32, bf16 and fp16.
#include "block_backward.cuh"
#include "block_forward.cuh"
#include "lse_merge.cuh"
#include "pair_steps.hpp"

namespace glabench::ring {
namespace {

// The dynamic shared memory limit of a kernel, raised once per kernel and device.
template <typename Kernel>
cudaError_t allow_smem(Kernel kernel, size_t bytes) {
  constexpr int kDevices = 64;
  static size_t allowed[kDevices] = {};
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return e;
  if (bytes <= 48 * 1024 || (device < kDevices && bytes <= allowed[device])) return cudaSuccess;
  const cudaError_t e =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  if (e == cudaSuccess && device < kDevices) allowed[device] = bytes;
  return e;
}

inline dim3 grid_of(int64_t rows, const problem& p) {
  return dim3(unsigned((rows + kOwnRows - 1) / kOwnRows), unsigned(p.B * p.H));
}
inline unsigned row_grid(int64_t rows) {
  return unsigned(rows / 8 + 1 < 4096 ? rows / 8 + 1 : 4096);
}

}  // namespace

// Rows `rows` of a [B,T,H,X] tensor: `partial` (NULL: nothing) folded into `acc`, or
// with `when.last` the total written to `out` (fold_partial_kernel).
template <typename T>
std::string fold_rows(const problem& p, span rows, int X, visit when, const T* partial,
                      acc_t<T>* acc, T* out, cudaStream_t stream) {
  const int64_t n = int64_t(p.B) * rows.size() * p.H * X;
  if (n == 0) return {};
  const unsigned blocks = unsigned(n / 256 + 1 < 8192 ? n / 256 + 1 : 8192);
  fold_partial_kernel<T><<<blocks, 256, 0, stream>>>(p.B, p.T, p.H, X, rows.begin, rows.size(),
                                                     when, partial, acc, out);
  GLABENCH_TRY_CUDA(cudaGetLastError(), "fold_partial_kernel launch");
  return {};
}

template <typename T, typename P, typename O>
std::string sum_values(int64_t n, const P* a, const T* b, O* out, cudaStream_t stream) {
  if (n == 0) return {};
  const unsigned blocks = unsigned(n / 256 + 1 < 16384 ? n / 256 + 1 : 16384);
  sum_values_kernel<acc_t<T>><<<blocks, 256, 0, stream>>>(n, a, b, out);
  GLABENCH_TRY_CUDA(cudaGetLastError(), "sum_values_kernel launch");
  return {};
}

// ---- forward -------------------------------------------------------------------------

// The pair's block folded into its query rows. `alone` (the chunk's only pair, cuDNN):
// the block is written straight to o and lse.
template <typename T>
std::string forward_pair(const problem& p, const block_pair& bp, visit w, bool alone,
                         const forward_tensors<T>& x, cudaStream_t stream) {
  using A = acc_t<T>;
  const pair_geometry g = geometry(p, bp, x.cu_seqlens);
  if (p.block == block_kernel::own) {
    const size_t smem = forward_smem_values<A>(p.D, p.V) * sizeof(A);
    GLABENCH_TRY_CUDA(allow_smem(block_forward_kernel<T>, smem), "cudaFuncSetAttribute");
    block_forward_kernel<T><<<grid_of(bp.q.size(), p), kThreads, smem, stream>>>(
        g, w, A(p.scale), x.q, x.k, x.v, x.acc_o, x.acc_lse, x.o, x.lse);
    GLABENCH_TRY_CUDA(cudaGetLastError(), "block_forward_kernel launch");
    return {};
  }
  if constexpr (is_16bit_type<T>) {
    T* block_o = alone ? x.o : x.block_o;
    float* block_stats = alone ? x.lse : x.block_stats;
    const size_t q_row = size_t(bp.q.begin) * p.H, kv_row = size_t(bp.kv.begin) * p.H;
    if (std::string why = cudnn_block::run_forward(
            cudnn_shape(p, bp), x.q + q_row * p.D, x.k + kv_row * p.D, x.v + kv_row * p.V,
            block_o + q_row * p.V, block_stats + bp.q.begin, x.cudnn_workspace, stream);
        !why.empty())
      return why;
    if (alone) return {};
    const unsigned grid = row_grid(int64_t(p.B) * bp.q.size() * p.H);
    if (x.running_o)
      merge_block_kernel<T, A, T><<<grid, 256, 0, stream>>>(
          g, w, x.block_o, x.block_stats, x.running_o, x.acc_o, x.acc_lse, x.o, x.lse);
    else
      merge_block_kernel<T, A, A><<<grid, 256, 0, stream>>>(g, w, x.block_o, x.block_stats, x.acc_o,
                                                            x.acc_o, x.acc_lse, x.o, x.lse);
    GLABENCH_TRY_CUDA(cudaGetLastError(), "merge_block_kernel launch");
    return {};
  } else {
    return "cuDNN blocks are 16-bit only";
  }
}

// ---- backward ------------------------------------------------------------------------

// do·o for the rows of `rows` (the own kernel's D_i).
template <typename T>
std::string row_dots_of(const problem& p, span rows, const T* d_o, const T* o, acc_t<T>* out,
                        cudaStream_t stream) {
  if (rows.size() == 0) return {};
  row_dot_kernel<T><<<row_grid(int64_t(p.B) * rows.size() * p.H), 256, 0, stream>>>(
      p.B, p.T, p.H, p.V, rows.begin, rows.size(), d_o, o, out);
  GLABENCH_TRY_CUDA(cudaGetLastError(), "row_dot_kernel launch");
  return {};
}

// The pair's dq folded into its query rows (visit wq) and its dk, dv into its key rows
// (visit wkv). `alone` (the only pair of both chunks, cuDNN): written straight out.
template <typename T>
std::string backward_pair(const problem& p, const block_pair& bp, visit wq, visit wkv, bool alone,
                          const backward_tensors<T>& x, cudaStream_t stream) {
  using A = acc_t<T>;
  const pair_geometry g = geometry(p, bp, x.cu_seqlens);
  if (p.block == block_kernel::own) {
    const size_t dq_smem = dq_smem_values<A>(p.D, p.V) * sizeof(A);
    const size_t dkdv_smem = dkdv_smem_values<A>(p.D, p.V) * sizeof(A);
    GLABENCH_TRY_CUDA(allow_smem(block_dq_kernel<T>, dq_smem), "cudaFuncSetAttribute");
    GLABENCH_TRY_CUDA(allow_smem(block_dkdv_kernel<T>, dkdv_smem), "cudaFuncSetAttribute");
    block_dq_kernel<T><<<grid_of(bp.q.size(), p), kThreads, dq_smem, stream>>>(
        g, wq, A(p.scale), x.q, x.k, x.v, x.d_o, x.lse, x.row_dots, x.acc_dq, x.dq);
    GLABENCH_TRY_CUDA(cudaGetLastError(), "block_dq_kernel launch");
    block_dkdv_kernel<T><<<grid_of(bp.kv.size(), p), kThreads, dkdv_smem, stream>>>(
        g, wkv, A(p.scale), x.q, x.k, x.v, x.d_o, x.lse, x.row_dots, x.acc_dk, x.acc_dv, x.dk,
        x.dv);
    GLABENCH_TRY_CUDA(cudaGetLastError(), "block_dkdv_kernel launch");
    return {};
  }
  GLABENCH_TRY(cudnn_backward_block<T>(p, bp, alone, x, stream));
  if (alone) return {};
  GLABENCH_TRY(fold_rows<T>(p, bp.q, p.D, wq, x.block_dq, x.acc_dq, x.dq, stream));
  GLABENCH_TRY(fold_rows<T>(p, bp.kv, p.D, wkv, x.block_dk, x.acc_dk, x.dk, stream));
  return fold_rows<T>(p, bp.kv, p.V, wkv, x.block_dv, x.acc_dv, x.dv, stream);
}

// cuDNN: the pair's gradients into x.block_dq, block_dk, block_dv (`alone`: straight
// into dq, dk, dv), the query rows' lse packed first where they are not all of T.
template <typename T>
std::string cudnn_backward_block(const problem& p, const block_pair& bp, bool alone,
                                 const backward_tensors<T>& x, cudaStream_t stream) {
  if constexpr (is_16bit_type<T>) {
    const size_t q_row = size_t(bp.q.begin) * p.H, kv_row = size_t(bp.kv.begin) * p.H;
    T* to_dq = alone ? x.dq : x.block_dq;
    T* to_dk = alone ? x.dk : x.block_dk;
    T* to_dv = alone ? x.dv : x.block_dv;
    const float* stats = x.lse;
    // cuDNN reads the block's rows of lse packed, [B,H,q_len]: as they are only where the
    // block's queries are the whole sequence.
    if (!alone || bp.q.size() != p.T) {
      const int64_t n = int64_t(p.B) * p.H * bp.q.size();
      pack_lse_rows_kernel<<<unsigned(n / 256 + 1 < 4096 ? n / 256 + 1 : 4096), 256, 0, stream>>>(
          p.B, p.H, p.T, bp.q.begin, bp.q.size(), x.lse, x.packed_lse);
      GLABENCH_TRY_CUDA(cudaGetLastError(), "pack_lse_rows_kernel launch");
      stats = x.packed_lse;
    }
    return cudnn_block::run_backward(cudnn_shape(p, bp), x.q + q_row * p.D, x.k + kv_row * p.D,
                                     x.v + kv_row * p.V, x.o + q_row * p.V, x.d_o + q_row * p.V,
                                     stats, to_dq + q_row * p.D, to_dk + kv_row * p.D,
                                     to_dv + kv_row * p.V, x.cudnn_workspace, stream);
  } else {
    return "cuDNN blocks are 16-bit only";
  }
}

#define RING_PAIR_STEPS(T)                                                                     \
  template std::string fold_rows<T>(const problem&, span, int, visit, const T*, acc_t<T>*, T*, \
                                    cudaStream_t);                                             \
  template std::string forward_pair<T>(const problem&, const block_pair&, visit, bool,         \
                                       const forward_tensors<T>&, cudaStream_t);               \
  template std::string row_dots_of<T>(const problem&, span, const T*, const T*, acc_t<T>*,     \
                                      cudaStream_t);                                           \
  template std::string backward_pair<T>(const problem&, const block_pair&, visit, visit, bool, \
                                        const backward_tensors<T>&, cudaStream_t);             \
  template std::string cudnn_backward_block<T>(const problem&, const block_pair&, bool,        \
                                               const backward_tensors<T>&, cudaStream_t);
#define RING_SUM_VALUES(T, P, O) \
  template std::string sum_values<T, P, O>(int64_t, const P*, const T*, O*, cudaStream_t);
RING_SUM_VALUES(__nv_bfloat16, __nv_bfloat16, __nv_bfloat16)
RING_SUM_VALUES(__nv_bfloat16, __nv_bfloat16, float)
RING_SUM_VALUES(__nv_bfloat16, float, __nv_bfloat16)
RING_SUM_VALUES(__nv_bfloat16, float, float)
RING_SUM_VALUES(__half, __half, __half)
RING_SUM_VALUES(__half, __half, float)
RING_SUM_VALUES(__half, float, __half)
RING_SUM_VALUES(__half, float, float)

RING_PAIR_STEPS(double)
RING_PAIR_STEPS(float)
RING_PAIR_STEPS(__nv_bfloat16)
RING_PAIR_STEPS(__half)

}  // namespace glabench::ring
