// The Python interpreter, loaded at run time (backends/python_bridge).
//
// One bridge build serves Python 3.10 to 3.13: nothing here includes Python.h or links
// libpython. The interpreter is the `python3` on PATH, or the one GLABENCH_PYTHON names;
// a probe run of it says where its shared libpython is, its home and its sys.path. That
// library is dlopen'ed with RTLD_GLOBAL (extension modules such as torch's resolve their
// Py* symbols against it), and the few functions of the stable ABI the bridge calls are
// looked up by name. The interpreter then starts with the probe's home and sys.path, so it
// sees exactly the packages that `python3` itself sees (a virtual environment included).
#pragma once

#include <cstddef>
#include <string>

namespace python_bridge {

// An opaque PyObject*.
using object = void*;

// The stable-ABI functions the bridge uses, resolved from libpython.
struct python_api {
  int (*Py_IsInitialized)();
  void (*Py_InitializeEx)(int);
  void* (*PyEval_SaveThread)();
  int (*PyGILState_Ensure)();
  void (*PyGILState_Release)(int);
  object (*PyImport_ImportModule)(const char*);
  object (*PyObject_GetAttrString)(object, const char*);
  object (*PyObject_CallObject)(object, object);
  object (*PyObject_Str)(object);
  object (*PyTuple_New)(std::ptrdiff_t);
  int (*PyTuple_SetItem)(object, std::ptrdiff_t, object);
  object (*PyTuple_GetItem)(object, std::ptrdiff_t);
  object (*PyList_New)(std::ptrdiff_t);
  int (*PyList_Append)(object, object);
  object (*PyLong_FromLongLong)(long long);
  object (*PyLong_FromVoidPtr)(void*);
  object (*PyFloat_FromDouble)(double);
  object (*PyUnicode_FromString)(const char*);
  const char* (*PyUnicode_AsUTF8AndSize)(object, std::ptrdiff_t*);
  object (*PyCapsule_New)(void*, const char*, void (*)(object));
  int (*PyCapsule_IsValid)(object, const char*);
  void* (*PyCapsule_GetPointer)(object, const char*);
  int (*PySys_SetObject)(const char*, object);
  object (*PyErr_Occurred)();
  void (*PyErr_Fetch)(object*, object*, object*);
  void (*PyErr_Clear)();
  void (*Py_IncRef)(object);
  void (*Py_DecRef)(object);
  object none;  // &_Py_NoneStruct
};

// Starts the interpreter once per process (later calls return the same API) and adds
// `extra_path` (glabench's own Python package folder) to the front of sys.path. On return
// the calling thread does not hold the GIL. Throws std::runtime_error naming the
// interpreter and what is missing.
const python_api& start_python(const std::string& extra_path);

// The text of a pending Python exception ("Type: message"), cleared; "" when none.
std::string take_python_error(const python_api& py);

// A Python str as UTF-8, or `fallback` when `o` is not a str.
std::string utf8(const python_api& py, object o, const std::string& fallback = "");

}  // namespace python_bridge
