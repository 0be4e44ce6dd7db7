// python_bridge: a Python callable as a glabench backend (docs/python.md).
//
// The harness loads this library with GLABENCH_PYTHON_BACKEND="NAME=SPEC" set (`glabench
// --python NAME=SPEC`; one worker process per Python backend). The entry starts the
// interpreter (python_runtime.hpp), imports glabench.bridge from the package folder next
// to this library (../python), and asks it to load SPEC ("package.module:function" or
// "file.py:function"). Each ABI call then becomes one call of the Bridge object's method
// of the same name, under the GIL. Tensors cross as DLPack capsules of glabench's own
// memory, made once per tensor and kept (the cache below), so a call's cost is one
// Python call and what the kernel does. A Python exception comes back as the call's
// message; a crash or hang in the interpreter is the worker's, CRASHED or TIMEOUT.
// The kernel's declaration may ask for ABI 1.5's features: packed batches (varlen=True:
// the offsets go to the kernel as cu_seqlens) and fp32 states (state_dtype="float32").
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glabench/backend.h"
#include "glabench/backend_support.hpp"
#include "python_runtime.hpp"

namespace {

using glabench::backend_support::fail;
using glabench::backend_support::guarded;
using python_bridge::object;
using python_bridge::python_api;

// One DLPack tensor the bridge has made a torch tensor of, by what identifies it.
struct cached_tensor {
  void* data;
  uint64_t byte_offset;
  DLDevice device;
  DLDataType dtype;
  std::vector<int64_t> shape;
  object tensor;  // owned reference
};

struct bridge_state {
  const python_api* py = nullptr;
  object bridge = nullptr;
  object forward = nullptr, backward = nullptr, prepare = nullptr, release = nullptr,
         supports = nullptr, device_available = nullptr, tensor = nullptr;
  std::string name, version, load_error;
  std::vector<glabench_capability> capabilities;
  glabench_backend table{};
  std::vector<cached_tensor> tensors;
  glabench_problem problem{};  // the problem problem_tuple describes
  int device = 0;
  object problem_tuple = nullptr;
};

bridge_state& state() {
  static bridge_state s;
  return s;
}

class gil {
 public:
  explicit gil(const python_api& py) : py_(py), held_(py.PyGILState_Ensure()) {}
  ~gil() { py_.PyGILState_Release(held_); }
  gil(const gil&) = delete;
  gil& operator=(const gil&) = delete;

 private:
  const python_api& py_;
  int held_;
};

const char* op_name(glabench_op op) {
  return op == GLABENCH_OP_GLA ? "gla" : op == GLABENCH_OP_RWKV6 ? "rwkv6" : "softmax_attn";
}

const char* dtype_name(DLDataType d) {
  if (d.code == kDLBfloat && d.bits == 16) return "bfloat16";
  if (d.code == kDLFloat && d.bits == 16) return "float16";
  if (d.code == kDLFloat && d.bits == 32) return "float32";
  if (d.code == kDLFloat && d.bits == 64) return "float64";
  return "unknown";
}

bool parse_dtype(const std::string& s, DLDataType& d) {
  if (s == "bfloat16")
    d = glabench::backend_support::kBFloat16;
  else if (s == "float16")
    d = glabench::backend_support::kFloat16;
  else if (s == "float32")
    d = glabench::backend_support::kFloat32;
  else if (s == "float64")
    d = glabench::backend_support::kFloat64;
  else
    return false;
  return true;
}

const char* mode_name(glabench_mode m) {
  return m == GLABENCH_MODE_BACKWARD ? "backward" : "forward";
}

// A new reference to None.
object none() {
  const python_api& py = *state().py;
  py.Py_IncRef(py.none);
  return py.none;
}

object str(const std::string& s) {
  return state().py->PyUnicode_FromString(s.c_str());
}

object tuple(std::initializer_list<object> items) {
  const python_api& py = *state().py;
  const object t = py.PyTuple_New(std::ptrdiff_t(items.size()));
  std::ptrdiff_t i = 0;
  for (object o : items) py.PyTuple_SetItem(t, i++, o);  // steals
  return t;
}

// The problem as glabench.bridge.PROBLEM_FIELDS, made again only when it changes.
object problem_tuple(const glabench_problem* p) {
  bridge_state& s = state();
  const python_api& py = *s.py;
  const int device = p->num_devices > 0 && p->device_ids ? p->device_ids[0] : 0;
  const int64_t num_seqs = GLABENCH_HAS_MEMBER(p, glabench_problem, num_seqs) ? p->num_seqs : 0;
  const glabench_problem& q = s.problem;
  const bool same = s.problem_tuple && q.op == p->op && q.B == p->B && q.T == p->T && q.H == p->H &&
                    q.K == p->K && q.V == p->V && q.scale == p->scale && q.causal == p->causal &&
                    q.dtype.code == p->dtype.code && q.dtype.bits == p->dtype.bits &&
                    q.has_h0 == p->has_h0 && q.has_dht == p->has_dht && s.device == device &&
                    q.num_seqs == num_seqs;
  if (!same) {
    if (s.problem_tuple) py.Py_DecRef(s.problem_tuple);
    s.problem_tuple =
        tuple({str(op_name(p->op)), py.PyLong_FromLongLong(p->B), py.PyLong_FromLongLong(p->T),
               py.PyLong_FromLongLong(p->H), py.PyLong_FromLongLong(p->K),
               py.PyLong_FromLongLong(p->V), py.PyFloat_FromDouble(p->scale),
               py.PyLong_FromLongLong(p->causal), str(dtype_name(p->dtype)),
               py.PyLong_FromLongLong(p->has_h0), py.PyLong_FromLongLong(p->has_dht),
               py.PyLong_FromLongLong(device), py.PyLong_FromLongLong(num_seqs)});
    s.problem = *p;
    s.problem.device_ids = nullptr;  // not kept: the device is `device`
    s.problem.num_seqs = num_seqs;
    s.device = device;
  }
  py.Py_IncRef(s.problem_tuple);
  return s.problem_tuple;
}

void free_managed(DLManagedTensor* m) {
  delete[] m->dl_tensor.shape;
  delete[] m->dl_tensor.strides;
  delete m;
}

void capsule_destructor(object capsule) {
  const python_api& py = *state().py;
  // A capsule torch consumed is renamed "used_dltensor" and torch calls the deleter.
  if (py.PyCapsule_IsValid(capsule, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(py.PyCapsule_GetPointer(capsule, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  }
}

// A new reference to the torch tensor over `t` (None for a null tensor), or nullptr with
// `error` set.
object tensor_of(const DLTensor* t, std::string& error) {
  if (!t) return none();
  bridge_state& s = state();
  const python_api& py = *s.py;
  for (const cached_tensor& c : s.tensors)
    if (c.data == t->data && c.byte_offset == t->byte_offset &&
        c.device.device_type == t->device.device_type &&
        c.device.device_id == t->device.device_id && c.dtype.code == t->dtype.code &&
        c.dtype.bits == t->dtype.bits && c.shape.size() == size_t(t->ndim) &&
        std::equal(c.shape.begin(), c.shape.end(), t->shape)) {
      py.Py_IncRef(c.tensor);
      return c.tensor;
    }
  auto* m = new DLManagedTensor{};
  m->dl_tensor = *t;
  m->dl_tensor.shape = new int64_t[size_t(std::max(t->ndim, 1))];
  std::copy(t->shape, t->shape + t->ndim, m->dl_tensor.shape);
  m->dl_tensor.strides = nullptr;  // compact row-major (docs/design.md §1)
  m->deleter = free_managed;
  const object capsule = py.PyCapsule_New(m, "dltensor", capsule_destructor);
  const object args = tuple({capsule});
  const object made = py.PyObject_CallObject(s.tensor, args);
  py.Py_DecRef(args);
  if (!made) {
    error = "DLPack: " + python_bridge::take_python_error(py);
    return nullptr;
  }
  if (s.tensors.size() >= 64) {
    for (cached_tensor& c : s.tensors) py.Py_DecRef(c.tensor);
    s.tensors.clear();
  }
  s.tensors.push_back({t->data, t->byte_offset, t->device, t->dtype,
                       std::vector<int64_t>(t->shape, t->shape + t->ndim), made});
  py.Py_IncRef(made);
  return made;
}

// Calls `method` with `args` (stolen): GLABENCH_OK when it returns None, else `failure`
// with the message it returned or raised.
glabench_status call(object method, object args, glabench_status failure, glabench_message* msg) {
  const python_api& py = *state().py;
  const object result = py.PyObject_CallObject(method, args);
  py.Py_DecRef(args);
  if (!result) return fail(msg, failure, python_bridge::take_python_error(py));
  const bool ok = result == py.none;
  const std::string text =
      ok ? "" : python_bridge::utf8(py, result, "the bridge returned a non-string");
  py.Py_DecRef(result);
  return ok ? GLABENCH_OK : fail(msg, failure, text);
}

// Arguments for a call: the problem, then each tensor, then the stream.
template <size_t N>
glabench_status call_with_tensors(object method, const glabench_problem* p,
                                  const DLTensor* const (&tensors)[N], void* stream,
                                  glabench_message* msg) {
  const python_api& py = *state().py;
  const object args = py.PyTuple_New(N + 2);
  py.PyTuple_SetItem(args, 0, problem_tuple(p));
  for (size_t i = 0; i < N; ++i) {
    std::string error;
    const object t = tensor_of(tensors[i], error);
    if (!t) {
      py.Py_DecRef(args);
      return fail(msg, GLABENCH_ERROR_RUNTIME, error);
    }
    py.PyTuple_SetItem(args, std::ptrdiff_t(i + 1), t);
  }
  py.PyTuple_SetItem(args, N + 1, py.PyLong_FromVoidPtr(stream));
  return call(method, args, GLABENCH_ERROR_RUNTIME, msg);
}

glabench_status device_available(glabench_message* reason) {
  return guarded(reason, [&] {
    gil g(*state().py);
    return call(state().device_available, tuple({}), GLABENCH_ERROR_NO_DEVICE, reason);
  });
}

glabench_status supports(const glabench_problem* p, glabench_mode mode, glabench_message* reason) {
  return guarded(reason, [&] {
    gil g(*state().py);
    return call(state().supports, tuple({problem_tuple(p), str(mode_name(mode))}),
                GLABENCH_ERROR_UNSUPPORTED, reason);
  });
}

glabench_status workspace_size(const glabench_problem*, glabench_mode, size_t* bytes,
                               glabench_message*) {
  *bytes = 0;
  return GLABENCH_OK;
}

glabench_status prepare(const glabench_problem* p, glabench_mode mode, const glabench_forward_args*,
                        const glabench_backward_args*, glabench_message* error) {
  return guarded(error, [&] {
    gil g(*state().py);
    return call(state().prepare, tuple({problem_tuple(p), str(mode_name(mode))}),
                GLABENCH_ERROR_RUNTIME, error);
  });
}

void release() {
  bridge_state& s = state();
  gil g(*s.py);
  for (cached_tensor& c : s.tensors) s.py->Py_DecRef(c.tensor);
  s.tensors.clear();
  const object result = s.py->PyObject_CallObject(s.release, nullptr);
  if (result) s.py->Py_DecRef(result);
  s.py->PyErr_Clear();
}

// The packed batch's offsets: NULL in arguments of an earlier minor.
template <typename Args>
const DLTensor* cu_seqlens_of(const Args& a) {
  return GLABENCH_HAS_MEMBER(&a, Args, cu_seqlens) ? a.cu_seqlens : nullptr;
}

glabench_status forward(const glabench_problem* p, const glabench_forward_args* a,
                        glabench_message* error) {
  return guarded(error, [&] {
    gil g(*state().py);
    const DLTensor* const tensors[] = {a->q,  a->k, a->v,  a->g,   a->u,
                                       a->h0, a->o, a->ht, a->lse, cu_seqlens_of(*a)};
    return call_with_tensors(state().forward, p, tensors, a->stream, error);
  });
}

glabench_status backward(const glabench_problem* p, const glabench_backward_args* a,
                         glabench_message* error) {
  return guarded(error, [&] {
    gil g(*state().py);
    const DLTensor* const tensors[] = {
        a->q,   a->k,  a->v,  a->g,  a->u,  a->h0, a->o,   a->lse,           a->d_o,
        a->dht, a->dq, a->dk, a->dv, a->dg, a->du, a->dh0, cu_seqlens_of(*a)};
    return call_with_tensors(state().backward, p, tensors, a->stream, error);
  });
}

// The folder of glabench's Python package: ../python beside this library.
std::string package_folder() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&package_folder), &info) || !info.dli_fname) return "";
  std::string here = info.dli_fname;
  here = here.substr(0, here.find_last_of('/') + 1);
  return here + "../python";
}

object method(object o, const char* name) {
  const object m = state().py->PyObject_GetAttrString(o, name);
  if (!m) throw std::runtime_error(std::string("glabench.bridge has no ") + name);
  return m;
}

// Starts Python and loads the callable; the table, or nullptr with load_error set.
const glabench_backend* load() {
  bridge_state& s = state();
  try {
    const char* what = std::getenv("GLABENCH_PYTHON_BACKEND");
    const std::string named = what ? what : "";
    const size_t eq = named.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == named.size())
      throw std::runtime_error("GLABENCH_PYTHON_BACKEND is '" + named +
                               "', not NAME=MODULE:FUNCTION (glabench --python sets it)");
    s.name = named.substr(0, eq);
    const std::string spec = named.substr(eq + 1);
    s.py = &python_bridge::start_python(package_folder());
    const python_api& py = *s.py;
    gil g(py);
    const object module = py.PyImport_ImportModule("glabench.bridge");
    if (!module)
      throw std::runtime_error("cannot import glabench.bridge: " +
                               python_bridge::take_python_error(py));
    const object loader = method(module, "load");
    const object loaded = py.PyObject_CallObject(loader, tuple({str(s.name), str(spec)}));
    if (!loaded) throw std::runtime_error(python_bridge::take_python_error(py));
    const object bridge = py.PyTuple_GetItem(loaded, 0);
    if (bridge == py.none)
      throw std::runtime_error(python_bridge::utf8(py, py.PyTuple_GetItem(loaded, 1), spec));
    py.Py_IncRef(bridge);
    s.bridge = bridge;
    py.Py_DecRef(loaded);
    s.forward = method(bridge, "forward");
    s.backward = method(bridge, "backward");
    s.prepare = method(bridge, "prepare");
    s.release = method(bridge, "release");
    s.supports = method(bridge, "supports");
    s.device_available = method(bridge, "device_available");
    s.tensor = method(bridge, "tensor");
    const object describe = method(bridge, "describe");
    const object described = py.PyObject_CallObject(describe, nullptr);
    if (!described) throw std::runtime_error(python_bridge::take_python_error(py));
    const auto d = nlohmann::json::parse(python_bridge::utf8(py, described, "{}"));
    py.Py_DecRef(described);
    s.version = d.at("version").get<std::string>();
    bool any_backward = false;
    for (const auto& c : d.at("capabilities")) {
      glabench_capability cap{};
      const std::string op = c.at(0), dtype = c.at(1), mode = c.at(2);
      cap.op = op == "gla"     ? GLABENCH_OP_GLA
               : op == "rwkv6" ? GLABENCH_OP_RWKV6
                               : GLABENCH_OP_SOFTMAX_ATTN;
      if (!parse_dtype(dtype, cap.dtype)) throw std::runtime_error("unknown dtype " + dtype);
      cap.mode = mode == "backward" ? GLABENCH_MODE_BACKWARD : GLABENCH_MODE_FORWARD;
      any_backward = any_backward || cap.mode == GLABENCH_MODE_BACKWARD;
      s.capabilities.push_back(cap);
    }
    glabench_backend& t = s.table;
    t.abi_major = GLABENCH_ABI_MAJOR;
    t.abi_minor = GLABENCH_ABI_MINOR;
    t.struct_size = sizeof(glabench_backend);
    t.name = s.name.c_str();
    t.version = s.version.c_str();
    t.device_type = d.at("device").get<std::string>() == "cuda" ? kDLCUDA : kDLCPU;
    t.capabilities = s.capabilities.data();
    t.num_capabilities = s.capabilities.size();
    t.device_available = device_available;
    t.supports = supports;
    t.workspace_size = workspace_size;
    t.forward = forward;
    t.backward = any_backward ? backward : nullptr;
    t.prepare = prepare;
    t.release = release;
    t.features = (d.value("varlen", false) ? GLABENCH_FEATURE_VARLEN : 0u) |
                 (d.value("state_fp32", false) ? GLABENCH_FEATURE_STATE_FP32 : 0u);
    return &t;
  } catch (const std::exception& e) {
    s.load_error = e.what();
    return nullptr;
  }
}

}  // namespace

extern "C" GLABENCH_EXPORT const glabench_backend* glabench_backend_entry(void) {
  static const glabench_backend* table = load();
  return table;
}

// Why glabench_backend_entry() returned NULL (read by the harness's loader).
extern "C" GLABENCH_EXPORT const char* glabench_python_bridge_error(void) {
  return state().load_error.c_str();
}
