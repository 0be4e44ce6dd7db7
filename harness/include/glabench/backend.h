/* glabench backend ABI — the one header a backend needs (docs/design.md §3).
 *
 * A backend is a shared library that exports
 *
 *     const glabench_backend* glabench_backend_entry(void);
 *
 * returning a pointer to a static, const table of function pointers. Plain C types
 * only cross the boundary; tensors cross as DLPack DLTensors; the harness owns all
 * memory (inputs, outputs, workspace) and passes the CUDA stream.
 *
 * Versioning (as in the PJRT C API and DLPack): the table starts with the ABI major
 * and minor version and its own struct_size. Members are only ever appended, with a
 * minor bump; a change that breaks existing backends bumps the major, and the loader
 * refuses a major it was not built for. Every struct handed to a backend starts with
 * struct_size too, so a backend built against an older minor can tell which members
 * exist (GLABENCH_HAS_MEMBER). Minor 1 appended glabench_backend.build (how the plugin
 * was built); a table built against 1.0 ends at backward. Minor 2 appended prepare,
 * release and last_call_report (multi-device backends); a 1.1 table ends at build.
 * Minor 3 appended collect; a 1.2 table ends at last_call_report. Minor 4 appended knobs
 * and num_knobs; a 1.3 table ends at collect. Minor 5 appended features (packed
 * variable-length batches, fp32 states at 16-bit storage) to the table, num_seqs,
 * state_dtype and seqlens_dtype to glabench_problem, and cu_seqlens to the forward and
 * backward arguments; the harness offers a problem that uses them only to a table that
 * declares the feature, so a plugin built against an earlier minor never sees one.
 *
 * Errors: every call returns a glabench_status and, on failure, writes a
 * NUL-terminated message into the caller's buffer. A backend never aborts the
 * process and never lets a C++ exception escape.
 */
#ifndef GLABENCH_BACKEND_H_
#define GLABENCH_BACKEND_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GLABENCH_ABI_MAJOR 1
#define GLABENCH_ABI_MINOR 5

#define GLABENCH_ENTRY_SYMBOL "glabench_backend_entry"

/* Optional, outside the table: `const char* glabench_backend_git_commit(void)`, the commit
 * the plugin was built from ("873c3a09af71", "-dirty" appended when its tracked files
 * differed). glabench_add_backend exports it from a file it writes at every build; results
 * files record it (context.backend_builds), so a run says which plugin code it timed. */
#define GLABENCH_GIT_COMMIT_SYMBOL "glabench_backend_git_commit"

#if defined(_WIN32)
#define GLABENCH_EXPORT __declspec(dllexport)
#else
#define GLABENCH_EXPORT __attribute__((visibility("default")))
#endif

/* The optional commit symbol's prototype (GLABENCH_GIT_COMMIT_SYMBOL above). */
GLABENCH_EXPORT const char* glabench_backend_git_commit(void);

/* True when a struct of the given struct_size contains `member`. */
#define GLABENCH_HAS_MEMBER(ptr, type, member) \
  ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type*)0)->member))

typedef enum glabench_status {
  GLABENCH_OK = 0,
  GLABENCH_ERROR_UNSUPPORTED = 1,      /* this problem, dtype or mode is not handled */
  GLABENCH_ERROR_INVALID_ARGUMENT = 2, /* a tensor or field is malformed */
  GLABENCH_ERROR_NO_DEVICE = 3,        /* the device the backend needs is absent */
  GLABENCH_ERROR_RUNTIME = 4           /* a CUDA, NCCL or other run-time failure */
} glabench_status;

typedef enum glabench_op {
  GLABENCH_OP_GLA = 0,
  GLABENCH_OP_RWKV6 = 1,
  GLABENCH_OP_SOFTMAX_ATTN = 2
} glabench_op;

typedef enum glabench_mode { GLABENCH_MODE_FORWARD = 0, GLABENCH_MODE_BACKWARD = 1 } glabench_mode;

/* A caller-owned buffer for error and refusal messages. */
typedef struct glabench_message {
  char* text;
  size_t capacity;
} glabench_message;

/* One supported op × storage dtype × mode. */
typedef struct glabench_capability {
  glabench_op op;
  DLDataType dtype;
  glabench_mode mode;
} glabench_capability;

/* Features a backend may declare (glabench_backend.features, ABI 1.5), each a promise to
 * read the problem fields that go with it. The harness offers a problem that needs one
 * only to a backend that declares it. */
/* Packed variable-length batches: num_seqs > 0, B == 1, cu_seqlens given. */
#define GLABENCH_FEATURE_VARLEN (1u << 0)
/* States (h0, ht, dh0, dht) in float32 when the storage dtype is 16-bit. A backend without
 * it gets states in the storage dtype, as before 1.5. */
#define GLABENCH_FEATURE_STATE_FP32 (1u << 1)

/* The problem: sizes, scalars, dtype, which optional tensors are present, and the
 * devices to use. Token tensors are [B,T,H,K] / [B,T,H,V], states [B,H,K,V] ([N,H,K,V]
 * for a packed batch), u [H,K], lse [B,H,T]; all row-major and contiguous
 * (docs/design.md §1). */
typedef struct glabench_problem {
  size_t struct_size;
  glabench_op op;
  int64_t B, T, H, K, V;
  double scale;
  int32_t causal; /* softmax_attn only */
  /* Storage dtype of every tensor but lse, which is float32 when this is 16-bit: the
   * backward's probabilities exp(s - lse) need lse to more than bf16's 8 bits. */
  DLDataType dtype;
  int32_t has_h0;
  int32_t has_dht;
  /* Devices to run on (device_ids[0] holds every tensor and the stream). A single-device
   * backend uses device_ids[0]; a multi-GPU backend (the NCCL ring) shards over all of
   * them. The harness times on device_ids[0]'s stream: a multi-device call makes every
   * device's work start after what that stream has enqueued, makes the stream wait for
   * every device's last work, and leaves the calling thread's current CUDA device as it
   * found it (docs/design.md §3, "Multi-device timing"). CPU backends always get one
   * device, 0. */
  int32_t num_devices;
  const int32_t* device_ids;
  /* ---- ABI 1.5: read them only where GLABENCH_HAS_MEMBER(problem, glabench_problem, m). */
  /* N > 0: a packed batch of N sequences in one row (B == 1, as fla's cu_seqlens): sequence
   * n is tokens [cu_seqlens[n], cu_seqlens[n+1]), at least one each; each starts from its
   * own h0[n] (or zero) and ends in ht[n]; softmax_attn attends only within it. 0: B
   * sequences of T tokens. Nonzero only for a backend with GLABENCH_FEATURE_VARLEN. */
  int64_t num_seqs;
  /* dtype of h0, ht, dh0 and dht: float32 when dtype is 16-bit and the backend declares
   * GLABENCH_FEATURE_STATE_FP32, otherwise dtype. */
  DLDataType state_dtype;
  /* dtype of cu_seqlens (int32 or int64) when num_seqs > 0. */
  DLDataType seqlens_dtype;
} glabench_problem;

/* Forward: inputs and outputs. Absent optional tensors are NULL. rwkv6 passes r in
 * q and w in g; softmax_attn has no g, u, h0, ht. */
typedef struct glabench_forward_args {
  size_t struct_size;
  const DLTensor* q;
  const DLTensor* k;
  const DLTensor* v;
  const DLTensor* g;
  const DLTensor* u;
  const DLTensor* h0;
  DLTensor* o;
  DLTensor* ht;  /* gla, rwkv6 */
  DLTensor* lse; /* softmax_attn */
  void* workspace;
  size_t workspace_bytes;
  void* stream; /* cudaStream_t for CUDA backends; NULL for CPU backends */
  /* ---- ABI 1.5. [N+1] offsets (problem->seqlens_dtype) on the tensors' device when
   * problem->num_seqs > 0, else NULL. */
  const DLTensor* cu_seqlens;
} glabench_forward_args;

/* Backward: the forward's inputs, its outputs (o, lse) from a forward call of the
 * same backend on the same inputs, the cotangents, and the gradients to write. */
typedef struct glabench_backward_args {
  size_t struct_size;
  const DLTensor* q;
  const DLTensor* k;
  const DLTensor* v;
  const DLTensor* g;
  const DLTensor* u;
  const DLTensor* h0;
  const DLTensor* o;
  const DLTensor* lse;
  const DLTensor* d_o;
  const DLTensor* dht; /* NULL when there is no cotangent for ht */
  DLTensor* dq;
  DLTensor* dk;
  DLTensor* dv;
  DLTensor* dg;  /* gla: dg, rwkv6: dw */
  DLTensor* du;  /* rwkv6 */
  DLTensor* dh0; /* when h0 was given */
  void* workspace;
  size_t workspace_bytes;
  void* stream;
  /* ---- ABI 1.5. As in glabench_forward_args. */
  const DLTensor* cu_seqlens;
} glabench_backward_args;

/* How a plugin was built (ABI 1.1; docs/design.md §3), so that results can say whether
 * its times mean anything: a plugin built without optimisation runs many times slower,
 * and nothing else would show it. glabench records it per backend in every results file,
 * and `glabench bench` warns when a timed backend was built without optimisation.
 *
 * Nobody needs to fill it in by hand. In C++ (C++14 or later) glabench_backend.build
 * defaults to GLABENCH_BUILD_INFO_INIT, so a table written without it describes the
 * translation unit that defines it; glabench_add_backend (CMake) adds the build type,
 * the compilers and the CUDA architectures as compile definitions. A backend in C ends
 * its table's initializer with GLABENCH_BUILD_INFO_INIT (one line). A C table that leaves
 * it out is zero-filled: compiler NULL, "not described". */
typedef struct glabench_build_info {
  /* The compilers, e.g. "GNU 12.2.0" or "GNU 12.2.0 + NVIDIA 12.4.131". NULL: the
   * plugin does not describe its build, and the other members mean nothing. */
  const char* compiler;
  /* The CMake build type ("Release", "Debug", "RelWithDebInfo", …); "" when none was
   * chosen (glabench_add_backend then compiles with -O3) or unknown. NULL means "". */
  const char* build_type;
  /* The CUDA architectures the device code was built for, e.g. "90 80"; "" for a
   * plugin without CUDA code. NULL means "". */
  const char* cuda_architectures;
  /* 1 when the translation unit defining the table was compiled with optimisation
   * (GCC's and Clang's __OPTIMIZE__: -O1 or higher; and, when nvcc compiles it, without
   * -G), else 0. It is the compiler's word, not the build type's: -O0 added to a Release
   * build gives 0. */
  int32_t optimized;
} glabench_build_info;

/* The defaults of GLABENCH_BUILD_INFO_INIT: what the compiler itself knows.
 * glabench_add_backend defines the first three from CMake; `optimized` is always the
 * compiler's. */
#ifndef GLABENCH_BUILD_INFO_COMPILER
#if defined(__clang__)
#define GLABENCH_BUILD_INFO_COMPILER "Clang " __clang_version__
#elif defined(__GNUC__)
#define GLABENCH_BUILD_INFO_COMPILER "GNU " __VERSION__
#else
#define GLABENCH_BUILD_INFO_COMPILER "unknown"
#endif
#endif
#ifndef GLABENCH_BUILD_INFO_TYPE
#define GLABENCH_BUILD_INFO_TYPE ""
#endif
#ifndef GLABENCH_BUILD_INFO_CUDA_ARCHITECTURES
#define GLABENCH_BUILD_INFO_CUDA_ARCHITECTURES ""
#endif
#if defined(__OPTIMIZE__) && !defined(__CUDACC_DEBUG__)
#define GLABENCH_BUILD_INFO_OPTIMIZED 1
#else
#define GLABENCH_BUILD_INFO_OPTIMIZED 0
#endif

/* This translation unit's build, as a glabench_build_info initializer. */
#define GLABENCH_BUILD_INFO_INIT                                              \
  {                                                                           \
    GLABENCH_BUILD_INFO_COMPILER, GLABENCH_BUILD_INFO_TYPE,                   \
        GLABENCH_BUILD_INFO_CUDA_ARCHITECTURES, GLABENCH_BUILD_INFO_OPTIMIZED \
  }

typedef struct glabench_backend {
  uint32_t abi_major;
  uint32_t abi_minor;
  size_t struct_size;

  const char* name;         /* unique; "naive_recurrent" */
  const char* version;      /* the backend's own version */
  DLDeviceType device_type; /* kDLCPU or kDLCUDA */

  const glabench_capability* capabilities;
  size_t num_capabilities;

  /* Whether the backend can run on this machine now (e.g. a GPU is present). */
  glabench_status (*device_available)(glabench_message* reason);

  /* GLABENCH_OK, or GLABENCH_ERROR_UNSUPPORTED with the reason it refuses this
   * particular problem (say, a head size it cannot handle). */
  glabench_status (*supports)(const glabench_problem* problem, glabench_mode mode,
                              glabench_message* reason);

  /* Scratch memory the harness must pass to forward / backward, in bytes. */
  glabench_status (*workspace_size)(const glabench_problem* problem, glabench_mode mode,
                                    size_t* bytes, glabench_message* error);

  glabench_status (*forward)(const glabench_problem* problem, const glabench_forward_args* args,
                             glabench_message* error);

  /* NULL when no capability has mode BACKWARD. */
  glabench_status (*backward)(const glabench_problem* problem, const glabench_backward_args* args,
                              glabench_message* error);

  /* ---- ABI 1.1. A table built against 1.0 ends above: the harness reads what follows
   * only when GLABENCH_HAS_MEMBER(table, glabench_backend, build). */

  /* How the plugin was built (glabench_build_info, above). In C++ it need not be
   * written: it defaults to this translation unit's GLABENCH_BUILD_INFO_INIT. */
#if defined(__cplusplus) && __cplusplus >= 201402L
  glabench_build_info build = GLABENCH_BUILD_INFO_INIT;
#else
  glabench_build_info build;
#endif

  /* ---- ABI 1.2. A table built against 1.1 ends above: the harness reads each member
   * that follows only when GLABENCH_HAS_MEMBER(table, glabench_backend, member). Every
   * member is optional (NULL: the harness skips the step). In C++ they need not be
   * written: they default to NULL. A C table that ends with GLABENCH_BUILD_INFO_INIT
   * leaves them zero. */

  /* Untimed set-up of one problem's inputs before the calls that use them: a multi-GPU
   * backend copies each device's shard of the inputs here, so that timed calls start
   * with the data where it lives. Called after the harness has filled the inputs and
   * again whenever they change (each call replaces what the last one kept); `bwd` is
   * NULL for forward-only work (mode FORWARD). With mode BACKWARD both are given: the
   * forward and backward calls that follow use exactly these tensors. A failure is
   * recorded against the case, with the message, like a failed forward. */
#if defined(__cplusplus) && __cplusplus >= 201402L
  glabench_status (*prepare)(const glabench_problem* problem, glabench_mode mode,
                             const glabench_forward_args* fwd, const glabench_backward_args* bwd,
                             glabench_message* error) = nullptr;
  /* Frees what prepare kept (called when the problem is done; may be called without
   * prepare, and more than once). */
  void (*release)(void) = nullptr;
  /* After a forward or backward call: a JSON object describing that call (e.g.
   * {"rank_ms":[...],"comm_hidden_fraction":0.93}), written NUL-terminated into `json`
   * (glabench's buffer holds 16 KiB; a truncated text is not JSON); the harness records
   * it in the results next to the timing (backend_report). Called outside the timed
   * interval. GLABENCH_ERROR_UNSUPPORTED = nothing to say. */
  glabench_status (*last_call_report)(glabench_message* json) = nullptr;
#else
  glabench_status (*prepare)(const glabench_problem* problem, glabench_mode mode,
                             const glabench_forward_args* fwd, const glabench_backward_args* bwd,
                             glabench_message* error);
  void (*release)(void);
  glabench_status (*last_call_report)(glabench_message* json);
#endif

  /* ---- ABI 1.3. A table built against 1.2 ends above; optional like the 1.2 members. */

  /* Untimed: brings the outputs of the forward and backward calls made since the last
   * collect into the tensors those calls were given, and returns when they are there.
   * A multi-GPU backend's timed call may end with each device holding the outputs of
   * its own shard, as a sharded model would use them; the harness calls collect before
   * it reads any output (and between a verified forward and the backward that takes its
   * o and lse). Timed calls follow one another without it, so a backend's backward must
   * not need it after its own forward. A failure is recorded against the case. */
#if defined(__cplusplus) && __cplusplus >= 201402L
  glabench_status (*collect)(glabench_message* error) = nullptr;
#else
  glabench_status (*collect)(glabench_message* error);
#endif

  /* ---- ABI 1.4. A table built against 1.3 ends above; optional like the 1.2 members. */

  /* The backend's knobs: the names of the environment variables it reads that change what
   * it computes or how fast (e.g. "PARALLEL_SCAN_CUDA_FP32_STATE"), num_knobs of them.
   * Results files record these, where set (context.backend_environment), so that runs
   * with different knobs cannot pass for the same configuration; glabench records no
   * other variable, so a table without knobs (or built against an earlier minor) has
   * none recorded. Each name is the backend's name in capitals, '_', and more of
   * A-Z, 0-9 and '_' (the loader refuses a table that names any other variable). */
#if defined(__cplusplus) && __cplusplus >= 201402L
  const char* const* knobs = nullptr;
  size_t num_knobs = 0;
#else
  const char* const* knobs;
  size_t num_knobs;
#endif

  /* ---- ABI 1.5. A table built against 1.4 ends above; optional like the 1.2 members. */

  /* GLABENCH_FEATURE_* bits: what of ABI 1.5's problems the backend reads. 0: none, and
   * the harness gives it problems as before 1.5. */
#if defined(__cplusplus) && __cplusplus >= 201402L
  uint32_t features = 0;
#else
  uint32_t features;
#endif
} glabench_backend;

typedef const glabench_backend* (*glabench_backend_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GLABENCH_BACKEND_H_ */
