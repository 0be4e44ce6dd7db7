#include "backend_loader.hpp"

#include <dlfcn.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>

#include "abi_vocabulary.hpp"
#include "glabench/backend_support.hpp"
#include "python_backend.hpp"
#include "safe_text.hpp"

namespace glabench {
namespace fs = std::filesystem;
namespace {

// The table size each minor version of ABI major 1 promises: 1.0 ends at backward, 1.1
// appended build, 1.2 prepare, release and last_call_report, 1.3 collect, 1.4 knobs and
// num_knobs, 1.5 features. A later minor promises at least what this glabench knows of.
size_t table_size_for_minor(uint32_t minor) {
  if (minor == 0) return offsetof(glabench_backend, backward) + sizeof(glabench_backend::backward);
  if (minor == 1) return offsetof(glabench_backend, build) + sizeof(glabench_backend::build);
  if (minor == 2)
    return offsetof(glabench_backend, last_call_report) +
           sizeof(glabench_backend::last_call_report);
  if (minor == 3) return offsetof(glabench_backend, collect) + sizeof(glabench_backend::collect);
  if (minor == 4)
    return offsetof(glabench_backend, num_knobs) + sizeof(glabench_backend::num_knobs);
  return offsetof(glabench_backend, features) + sizeof(glabench_backend::features);
}

bool is_elf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  return f.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

// Who may change a plugin (like ssh's StrictModes). A backend runs its code inside
// glabench, so its file, and the folder it sits in, must be changeable only by the user
// running glabench or by root:
//  * owned by the current (effective) user or by root;
//  * not writable by others;
//  * not writable by the group, unless the group is the owner's private group (the
//    owner's primary group, with no other member: what umask 002 under user private
//    groups gives, and what Debian's OpenSSH allows too);
//  * a folder writable by others is allowed when it has the sticky bit (like /tmp):
//    there only a file's owner may rename or delete it, and each file is checked itself;
//  * a symbolic link must be owned by the user or root, and the folder of its target is
//    checked as well.
// Folders above the plugin's own folder are not checked.
constexpr const char* kPermissionRule =
    "a backend runs its code inside glabench, so backend files and their folders must be "
    "writable only by you or root";

std::string user_label(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found)
    return "user '" + std::string(found->pw_name) + "' (uid " + std::to_string(uid) + ")";
  return "uid " + std::to_string(uid);
}

std::string group_label(gid_t gid) {
  std::vector<char> buf(16384);
  group gr{};
  group* found = nullptr;
  if (getgrgid_r(gid, &gr, buf.data(), buf.size(), &found) == 0 && found)
    return "group '" + std::string(found->gr_name) + "'";
  return "group " + std::to_string(gid);
}

// The owner's primary group, with no member other than the owner.
bool is_private_group(gid_t gid, uid_t owner) {
  std::vector<char> pbuf(16384), gbuf(65536);
  passwd pw{};
  passwd* pw_found = nullptr;
  if (getpwuid_r(owner, &pw, pbuf.data(), pbuf.size(), &pw_found) != 0 || !pw_found ||
      pw.pw_gid != gid)
    return false;
  group gr{};
  group* gr_found = nullptr;
  if (getgrgid_r(gid, &gr, gbuf.data(), gbuf.size(), &gr_found) != 0 || !gr_found) return false;
  for (char** m = gr.gr_mem; m && *m; ++m)
    if (std::string(*m) != pw.pw_name) return false;
  return true;
}

std::string mode_octal(mode_t m) {
  char s[8];
  std::snprintf(s, sizeof s, "%04o", static_cast<unsigned>(m & 07777));
  return s;
}

// Why the file or folder `path` (stat'ed into `st`) may be changed by someone other than
// the current user or root, or "" when it may not.
std::string permission_problem(const std::string& path, const struct stat& st, bool folder) {
  const uid_t me = geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    return "owned by " + user_label(st.st_uid) + ", neither you (uid " + std::to_string(me) +
           ") nor root";
  const bool others = st.st_mode & S_IWOTH;
  const bool group = (st.st_mode & S_IWGRP) != 0 && !is_private_group(st.st_gid, st.st_uid);
  if (folder && (st.st_mode & S_ISVTX)) return "";  // sticky, like /tmp
  if (!others && !group) return "";
  const std::string who = group && others ? "group and others"
                          : group         ? group_label(st.st_gid)
                                          : "others";
  return std::string("writable by ") + who + " (mode " + mode_octal(st.st_mode) + ")" +
         (folder ? " and not sticky" : "") + "; chmod " + (group ? "g" : "") + (others ? "o" : "") +
         "-w " + path;
}

std::string folder_permission_problem(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return "";  // missing folders are skipped elsewhere
  return permission_problem(dir, st, true);
}

// Throws backend_load_error when the file `path` or its folder may be changed by someone
// other than the current user or root. discover_backends checks before it hands a file
// to its loader (which may be a worker process), and load_backend checks again.
void check_plugin_permissions(const std::string& path) {
  auto refuse = [&](const std::string& why) {
    throw backend_load_error(path + ": refusing to load: " + why + " (" + kPermissionRule + ")");
  };
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid() &&
      st.st_uid != 0)
    refuse("the symbolic link is owned by " + user_label(st.st_uid) + ", neither you nor root");
  if (::stat(path.c_str(), &st) != 0) return;  // missing: the loader says so
  if (const std::string why = permission_problem(path, st, false); !why.empty())
    refuse("the file is " + why);
  std::error_code ec;
  std::vector<fs::path> folders = {fs::absolute(path, ec).parent_path()};
  const fs::path target = fs::canonical(path, ec);
  if (!ec && target.parent_path() != fs::weakly_canonical(folders[0], ec))
    folders.push_back(target.parent_path());
  for (const auto& dir : folders)
    if (const std::string why = folder_permission_problem(dir.string()); !why.empty())
      refuse("its folder " + dir.string() + " is " + why);
}

// Why `knob` cannot be one of backend `name`'s knobs (backend.h: its name in capitals,
// '_', then more of A-Z, 0-9 and '_'), or "" when it can. Results record the knobs'
// values, so a table may not name a variable that belongs to someone else
// (AWS_SECRET_ACCESS_KEY).
std::string knob_name_problem(const std::string& name, const char* knob) {
  std::string prefix;
  for (const char c : name) prefix += char(std::toupper(static_cast<unsigned char>(c)));
  prefix += '_';
  if (!knob) return "is NULL";
  const std::string k = knob;
  const bool charset = k.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == k.npos;
  if (!charset || !k.starts_with(prefix) || k.size() == prefix.size())
    return "'" + k + "' is not " + prefix + "… (a knob is named after its backend: " + prefix +
           " and then A-Z, 0-9 and _)";
  return "";
}

// The capability table, each entry an op and a mode this glabench knows: an unknown one
// would be listed and matched as if it were gla or bwd. A dtype glabench lacks is allowed
// (a backend may offer more than glabench tests); `list` shows it as '?' and nothing runs it.
void validate_capabilities(const glabench_backend* t,
                           const std::function<void(const std::string&)>& refuse) {
  const std::string backend = "backend '" + std::string(t->name) + "'";
  if (t->num_capabilities > 0 && !t->capabilities)
    refuse(backend + " declares capabilities but gives no table");
  for (size_t i = 0; i < t->num_capabilities; ++i) {
    const glabench_capability& c = t->capabilities[i];
    const std::string entry = backend + " capability " + std::to_string(i);
    if (c.op != GLABENCH_OP_GLA && c.op != GLABENCH_OP_RWKV6 && c.op != GLABENCH_OP_SOFTMAX_ATTN)
      refuse(
          entry + " has op " + std::to_string(int(c.op)) +
          ", not one of GLABENCH_OP_GLA (0), GLABENCH_OP_RWKV6 (1), GLABENCH_OP_SOFTMAX_ATTN (2)");
    if (c.mode != GLABENCH_MODE_FORWARD && c.mode != GLABENCH_MODE_BACKWARD)
      refuse(entry + " has mode " + std::to_string(int(c.mode)) +
             ", not one of GLABENCH_MODE_FORWARD (0), GLABENCH_MODE_BACKWARD (1)");
    if (c.mode == GLABENCH_MODE_BACKWARD && !t->backward)
      refuse(backend + " declares a backward capability but backward is NULL");
  }
}

void validate_knobs(const glabench_backend* t,
                    const std::function<void(const std::string&)>& refuse) {
  if (!GLABENCH_HAS_MEMBER(t, glabench_backend, num_knobs)) return;
  const std::string backend = "backend '" + std::string(t->name) + "'";
  if (t->num_knobs > 0 && !t->knobs) refuse(backend + " declares knobs but gives no list");
  for (size_t i = 0; i < t->num_knobs; ++i)
    if (const std::string why = knob_name_problem(t->name, t->knobs[i]); !why.empty())
      refuse(backend + " knob " + std::to_string(i) + " " + why);
}

void validate_table(const std::string& path, const glabench_backend* t) {
  auto refuse = [&](const std::string& why) { throw backend_load_error(path + ": " + why); };
  if (t->abi_major != GLABENCH_ABI_MAJOR)
    refuse("ABI major version " + std::to_string(t->abi_major) +
           ", but this glabench speaks ABI major " + std::to_string(GLABENCH_ABI_MAJOR) +
           " (rebuild the backend against this glabench's backend.h)");
  const size_t promised = table_size_for_minor(t->abi_minor);
  if (t->struct_size < promised)
    refuse("table struct_size " + std::to_string(t->struct_size) + " is shorter than the " +
           std::to_string(promised) + " bytes ABI " + std::to_string(t->abi_major) + "." +
           std::to_string(t->abi_minor) + " promises");
  if (!t->name || !*t->name) refuse("the table has no name");
  if (!t->version) refuse("backend '" + std::string(t->name) + "' has no version string");
  if (t->device_type != kDLCPU && t->device_type != kDLCUDA)
    refuse("backend '" + std::string(t->name) + "' declares device type " +
           std::to_string(t->device_type) + "; only CPU and CUDA are supported");
  if (!t->device_available || !t->supports || !t->workspace_size || !t->forward)
    refuse(
        "backend '" + std::string(t->name) +
        "' leaves a required function (device_available, supports, workspace_size, forward) NULL");
  validate_capabilities(t, refuse);
  validate_knobs(t, refuse);
}

// The knobs a validated table names (none before ABI 1.4).
std::vector<std::string> knobs_of(const glabench_backend& t) {
  std::vector<std::string> knobs;
  if (GLABENCH_HAS_MEMBER(&t, glabench_backend, num_knobs))
    for (size_t i = 0; i < t.num_knobs; ++i) knobs.emplace_back(t.knobs[i]);
  return knobs;
}

// Before a Python backend's bridge is loaded: the callable it is to host. One per process
// (the bridge's table is the library's): isolated runs give each its own worker.
void bind_python_callable(const std::string& path, const python_locator& py) {
  static std::string bound;
  if (!bound.empty() && bound != path)
    throw backend_load_error("Python backend '" + py.name +
                             "': this process already hosts another Python backend (one per "
                             "process; leave out --no-isolate to run several)");
  setenv("GLABENCH_PYTHON_BACKEND", (py.name + "=" + py.spec).c_str(), 1);
  bound = path;
}

// Whether two symbols lie in the same loaded file: dlsym also searches a plugin's
// dependencies, whose commit symbol is not the plugin's.
bool same_object(void* a, void* b) {
  Dl_info ia{}, ib{};
  return dladdr(a, &ia) && dladdr(b, &ib) && ia.dli_fbase == ib.dli_fbase;
}

}  // namespace

loaded_backend load_backend(const std::string& path) {
  const std::optional<python_locator> py = parse_python_locator(path);
  const std::string file = library_file(path);
  if (!fs::is_regular_file(file)) throw backend_load_error(file + ": no such file");
  check_plugin_permissions(file);
  if (!is_elf(file)) throw backend_load_error(file + ": not a shared library (no ELF header)");
  if (py) bind_python_callable(path, *py);
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw backend_load_error(file + ": cannot be loaded: " + dlerror());
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  dlerror();
  auto entry = reinterpret_cast<glabench_backend_entry_fn>(dlsym(handle, GLABENCH_ENTRY_SYMBOL));
  if (!entry)
    throw backend_load_error(file + ": no entry symbol '" GLABENCH_ENTRY_SYMBOL
                                    "' (is it a glabench backend?)");
  const glabench_backend* table = entry();
  if (!table && py) {
    // The bridge says why the callable did not load.
    using error_fn = const char* (*)();
    const auto why = reinterpret_cast<error_fn>(dlsym(handle, "glabench_python_bridge_error"));
    throw backend_load_error("Python backend '" + py->name + "' (" + py->spec +
                             "): " + (why && why() ? why() : "the bridge did not load it"));
  }
  if (!table) throw backend_load_error(file + ": " GLABENCH_ENTRY_SYMBOL "() returned NULL");
  validate_table(file, table);
  if (py && table->name != py->name)
    throw backend_load_error("Python backend '" + py->name + "': the bridge named it '" +
                             table->name + "'");
  backend_build build = build_of(*table);
  using git_commit_fn = const char* (*)();
  const auto commit = reinterpret_cast<git_commit_fn>(dlsym(handle, GLABENCH_GIT_COMMIT_SYMBOL));
  if (commit && same_object(reinterpret_cast<void*>(commit), reinterpret_cast<void*>(entry)))
    if (const char* text = commit())  // the plugin's own words: bounded and made safe
      build.git_commit = json_safe(std::string_view(text, strnlen(text, 64)));
  return {path, table, std::move(library), std::move(build), knobs_of(*table)};
}

bool loaded_backend::supports(op_kind op, dtype d, glabench_mode mode) const {
  return backend_support::has_capability(*table, to_abi(op), to_dlpack(d), mode);
}

std::vector<dtype> loaded_backend::forward_dtypes(op_kind op) const {
  std::vector<dtype> out;
  for (dtype d : kAllDtypes)
    if (supports(op, d, GLABENCH_MODE_FORWARD)) out.push_back(d);
  return out;
}

uint32_t loaded_backend::features() const {
  return GLABENCH_HAS_MEMBER(table, glabench_backend, features) ? table->features : 0u;
}

dtype loaded_backend::state_dtype(dtype storage) const {
  return is_16_bit(storage) && (features() & GLABENCH_FEATURE_STATE_FP32) ? dtype::fp32 : storage;
}

std::string loaded_backend::not_offered(const problem& p) const {
  if (p.varlen() && !(features() & GLABENCH_FEATURE_VARLEN))
    return "no packed variable-length batches (ABI 1.5 feature GLABENCH_FEATURE_VARLEN)";
  return "";
}

bool looks_like_backend_file(const std::string& filename) {
  return filename.starts_with("glabench_backend_") && filename.ends_with(".so");
}

const loaded_backend* backend_registry::find(const std::string& name) const {
  for (const auto& b : backends)
    if (b.name() == name) return &b;
  return nullptr;
}

std::string backend_registry::names() const {
  std::string s;
  for (const auto& b : backends) s += (s.empty() ? "" : ", ") + b.name();
  return s.empty() ? "(none)" : s;
}

std::vector<std::string> backend_path_folders() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("GLABENCH_BACKEND_PATH")) {
    const std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) dirs.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  return dirs;
}

backend_registry discover_backends(const std::string& default_dir,
                                   const std::vector<std::string>& explicit_libs,
                                   const backend_loader_fn& load) {
  std::vector<std::string> dirs;
  if (!default_dir.empty()) dirs.push_back(default_dir);
  for (auto& dir : backend_path_folders()) dirs.push_back(std::move(dir));

  backend_registry reg;
  std::set<std::string> seen_paths;
  auto add = [&](loaded_backend b) {
    if (const loaded_backend* other = reg.find(b.name()))
      throw backend_load_error("two backends are named '" + b.name() + "': " + other->path +
                               " and " + b.path);
    reg.backends.push_back(std::move(b));
  };
  auto canonical = [](const std::string& p) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(p, ec);
    return ec ? p : c.string();
  };

  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    if (const std::string why = folder_permission_problem(dir); !why.empty()) {
      reg.broken.push_back(dir + ": refusing to search this backend folder: it is " + why + " (" +
                           kPermissionRule + ")");
      continue;
    }
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (looks_like_backend_file(entry.path().filename().string()))
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      if (!seen_paths.insert(canonical(file)).second) continue;
      std::optional<loaded_backend> backend;
      try {
        check_plugin_permissions(file);
        backend = load(file);
      } catch (const backend_load_error& e) {
        reg.broken.push_back(e.what());
        continue;
      }
      add(std::move(*backend));
    }
  }
  for (const auto& lib : explicit_libs) {
    const bool python = parse_python_locator(lib).has_value();
    if (!seen_paths.insert(python ? lib : canonical(lib)).second) continue;
    check_plugin_permissions(library_file(lib));
    add(load(lib));
  }
  return reg;
}

}  // namespace glabench
