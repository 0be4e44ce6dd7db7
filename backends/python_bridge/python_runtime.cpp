#include "python_runtime.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace python_bridge {
namespace {

// What the interpreter says of itself: tab-separated "key value" lines.
constexpr const char* kProbe = R"(
import os, sys, sysconfig
v = sysconfig.get_config_var
print("version\t%d.%d" % sys.version_info[:2])
print("executable\t" + sys.executable)
home = sys.base_prefix
if sys.base_exec_prefix != sys.base_prefix:
    home += ":" + sys.base_exec_prefix
print("home\t" + home)
mm = "%d.%d" % sys.version_info[:2]
names = [v("INSTSONAME"), v("LDLIBRARY"), "libpython%s.so.1.0" % mm, "libpython%s.so" % mm]
libdir = v("LIBDIR") or ""
dirs = [libdir, os.path.join(libdir, v("MULTIARCH") or ""), os.path.join(sys.base_prefix, "lib")]
seen = set()
for n in names:
    if n and ".so" in n:
        for d in dirs:
            p = os.path.join(d, n)
            if p not in seen and os.path.isfile(p):
                seen.add(p)
                print("lib\t" + p)
for p in sys.path:
    print("path\t" + (os.path.abspath(p) if p else os.getcwd()))
)";

struct probe_result {
  std::string interpreter, version, executable, home;
  std::vector<std::string> libraries, path;
};

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

probe_result probe_interpreter() {
  probe_result r;
  const char* chosen = std::getenv("GLABENCH_PYTHON");
  r.interpreter = chosen && *chosen ? chosen : "python3";
  // The probe runs with this process's environment (PYTHONPATH, a virtual environment's
  // PATH), so its sys.path is the one `python3` would have here.
  const std::string probe = shell_quoted(r.interpreter) + " -c " + shell_quoted(kProbe) + " 2>&1";
  FILE* pipe = popen(probe.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run the Python interpreter " + r.interpreter);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe);
  if (status != 0)
    throw std::runtime_error(
        "the Python interpreter '" + r.interpreter +
        "' did not run (set GLABENCH_PYTHON to one that does): " + out.substr(0, 400));
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    const std::string key = line.substr(0, tab), value = line.substr(tab + 1);
    if (key == "version") r.version = value;
    if (key == "executable") r.executable = value;
    if (key == "home") r.home = value;
    if (key == "lib") r.libraries.push_back(value);
    if (key == "path") r.path.push_back(value);
  }
  return r;
}

template <class F>
void resolve(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) throw std::runtime_error(std::string("libpython has no ") + name);
}

python_api load_api(void* lib) {
  python_api a{};
#define GLABENCH_PY(name) resolve(lib, #name, a.name)
  GLABENCH_PY(Py_IsInitialized);
  GLABENCH_PY(Py_InitializeEx);
  GLABENCH_PY(PyEval_SaveThread);
  GLABENCH_PY(PyGILState_Ensure);
  GLABENCH_PY(PyGILState_Release);
  GLABENCH_PY(PyImport_ImportModule);
  GLABENCH_PY(PyObject_GetAttrString);
  GLABENCH_PY(PyObject_CallObject);
  GLABENCH_PY(PyObject_Str);
  GLABENCH_PY(PyTuple_New);
  GLABENCH_PY(PyTuple_SetItem);
  GLABENCH_PY(PyTuple_GetItem);
  GLABENCH_PY(PyList_New);
  GLABENCH_PY(PyList_Append);
  GLABENCH_PY(PyLong_FromLongLong);
  GLABENCH_PY(PyLong_FromVoidPtr);
  GLABENCH_PY(PyFloat_FromDouble);
  GLABENCH_PY(PyUnicode_FromString);
  GLABENCH_PY(PyUnicode_AsUTF8AndSize);
  GLABENCH_PY(PyCapsule_New);
  GLABENCH_PY(PyCapsule_IsValid);
  GLABENCH_PY(PyCapsule_GetPointer);
  GLABENCH_PY(PySys_SetObject);
  GLABENCH_PY(PyErr_Occurred);
  GLABENCH_PY(PyErr_Fetch);
  GLABENCH_PY(PyErr_Clear);
  GLABENCH_PY(Py_IncRef);
  GLABENCH_PY(Py_DecRef);
#undef GLABENCH_PY
  a.none = dlsym(lib, "_Py_NoneStruct");
  if (!a.none) throw std::runtime_error("libpython has no _Py_NoneStruct");
  return a;
}

bool version_at_least_310(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 3 || (major == 3 && minor >= 10);
}

// sys.path and sys.executable as the probe saw them, glabench's package first.
void set_sys(const python_api& py, const probe_result& p, const std::string& extra_path) {
  const object list = py.PyList_New(0);
  auto append = [&](const std::string& s) {
    const object str = py.PyUnicode_FromString(s.c_str());
    py.PyList_Append(list, str);
    py.Py_DecRef(str);
  };
  if (!extra_path.empty()) append(extra_path);
  for (const auto& entry : p.path) append(entry);
  py.PySys_SetObject("path", list);
  py.Py_DecRef(list);
  const object exe = py.PyUnicode_FromString(p.executable.c_str());
  py.PySys_SetObject("executable", exe);
  py.Py_DecRef(exe);
}

}  // namespace

const python_api& start_python(const std::string& extra_path) {
  static std::mutex mutex;
  static python_api api{};
  static bool started = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (started) return api;
  const probe_result p = probe_interpreter();
  if (!version_at_least_310(p.version))
    throw std::runtime_error("the Python interpreter '" + p.interpreter + "' is " +
                             (p.version.empty() ? "of unknown version" : p.version) +
                             "; the bridge needs Python 3.10 or later");
  void* lib = nullptr;
  std::string tried;
  for (const auto& candidate : p.libraries) {
    lib = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib) break;
    tried += "; " + candidate + ": " + dlerror();
  }
  if (!lib)
    throw std::runtime_error("the Python interpreter '" + p.interpreter + "' (" + p.version +
                             ") has no loadable shared libpython" + tried +
                             " (a Python built with --enable-shared is needed; Debian: apt "
                             "install libpython" +
                             p.version + "; or set GLABENCH_PYTHON)");
  api = load_api(lib);
  if (!api.Py_IsInitialized()) {
    // The interpreter's home as the probe found it: the embedded one would otherwise
    // search PATH for its standard library and may find another version's.
    if (!std::getenv("PYTHONHOME")) setenv("PYTHONHOME", p.home.c_str(), 1);
    api.Py_InitializeEx(0);  // 0: no signal handlers; glabench's stay
    set_sys(api, p, extra_path);
    api.PyEval_SaveThread();
  } else {
    const int gil = api.PyGILState_Ensure();
    set_sys(api, p, extra_path);
    api.PyGILState_Release(gil);
  }
  started = true;
  return api;
}

std::string utf8(const python_api& py, object o, const std::string& fallback) {
  if (!o) return fallback;
  std::ptrdiff_t size = 0;
  const char* text = py.PyUnicode_AsUTF8AndSize(o, &size);
  if (!text) {
    py.PyErr_Clear();
    return fallback;
  }
  return std::string(text, size_t(size));
}

std::string take_python_error(const python_api& py) {
  if (!py.PyErr_Occurred()) return "";
  object type = nullptr, value = nullptr, trace = nullptr;
  py.PyErr_Fetch(&type, &value, &trace);
  std::string text = "a Python exception";
  if (const object s = py.PyObject_Str(value ? value : type)) {
    text = utf8(py, s, text);
    py.Py_DecRef(s);
  }
  py.PyErr_Clear();
  for (object o : {type, value, trace})
    if (o) py.Py_DecRef(o);
  return text;
}

}  // namespace python_bridge
