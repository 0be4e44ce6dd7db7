#include "run_context.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "safe_text.hpp"

namespace glabench {

const char* build_git_commit();  // generated at build time by cmake/write_git_commit.cmake

nlohmann::json backend_environment(const std::vector<std::string>& knobs) {
  nlohmann::json found = nlohmann::json::object();
  for (const std::string& knob : knobs)
    if (const char* value = std::getenv(knob.c_str())) found[knob] = value;
  return found;
}

nlohmann::json run_context(const std::vector<const loaded_backend*>& backends) {
  std::vector<std::string> knobs;
  for (const loaded_backend* b : backends)
    knobs.insert(knobs.end(), b->knobs.begin(), b->knobs.end());
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"glabench_version", GLABENCH_VERSION},
          {"git_commit", build_git_commit()},
          {"build_type", GLABENCH_BUILD_TYPE},
          {"cuda_build", GLABENCH_WITH_CUDA != 0},
          {"host_name", host},
          {"date", date},
          {"backend_environment", backend_environment(knobs)}};
}

namespace {

namespace fs = std::filesystem;

fs::path folder_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// "out/" and "out" name the same folder.
std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// The name a temporary beside `target` starts with: ".<name>.tmp-", the name cut short
// enough to leave room for the random part within NAME_MAX.
std::string temp_stem(const fs::path& target, const char* kind = ".tmp-") {
  return fmt::format(".{}{}", target.filename().string().substr(0, 200), kind);
}

std::string random_hex() {
  std::random_device rd;  // getrandom(2): the name cannot be guessed from the pid or time
  const uint64_t x = (uint64_t(rd()) << 32) ^ rd();
  return fmt::format("{:016x}", x);
}

// Creates a new file beside `target` that did not exist before (never through a link
// planted at its name) and returns its descriptor, or -1 with errno set.
int create_exclusive_temp(const fs::path& target, std::string& temp) {
  const fs::path dir = folder_of(target);
  for (int attempt = 0; attempt < 64; ++attempt) {
    temp = (dir / (temp_stem(target) + random_hex())).string();
    const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// mkdtemp beside `target`; "" with errno set on failure.
std::string make_temp_dir(const fs::path& target, const char* kind) {
  const std::string templ = (folder_of(target) / (temp_stem(target, kind) + "XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return "";
  return buf.data();
}

mode_t current_umask() {
  const mode_t m = umask(0);
  umask(m);
  return m;
}

void sync_folder(const fs::path& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

// The parent folder of an output must exist and be a folder.
void check_parent(const fs::path& dir, const std::function<void(const std::string&)>& refuse) {
  std::error_code ec;
  const fs::file_status s = fs::status(dir, ec);
  if (s.type() == fs::file_type::not_found)
    refuse("the folder " + dir.string() + " does not exist (glabench creates no folders)");
  if (ec) refuse("the folder " + dir.string() + " cannot be examined: " + ec.message());
  if (!fs::is_directory(s)) refuse(dir.string() + " is not a folder");
}

}  // namespace

void check_output_path(const std::string& path, const std::string& what) {
  auto refuse = [&](const std::string& rule) {
    throw std::invalid_argument(what + " " + path + ": " + rule);
  };
  if (path.empty()) refuse("is empty; give a file name");
  const fs::path p(path);
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") refuse("names a folder; give a file name");
  check_parent(folder_of(p), refuse);
  std::error_code ec;
  const fs::file_status s = fs::status(p, ec);
  if (ec && s.type() != fs::file_type::not_found) refuse("cannot be examined: " + ec.message());
  if (fs::is_directory(s)) refuse("is a folder; give a file name");
  if (fs::exists(s) && !fs::is_regular_file(s))
    refuse("exists and is not a regular file (a device or a pipe); give a file name");
  // The write itself, tried: a folder that is read-only, on a read-only file system or
  // otherwise refuses new files fails here, before any work.
  std::string temp;
  const int fd = create_exclusive_temp(p, temp);
  if (fd < 0)
    refuse("cannot create a file in " + folder_of(p).string() + ": " + std::strerror(errno));
  close(fd);
  unlink(temp.c_str());
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  // json_safe_tree leaves no invalid UTF-8 for dump to throw on; the replace handler
  // is a second guard.
  auto dump = [](const nlohmann::json& x) {
    return x.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  };
  write_text_file(path, json_is_safe(j) ? dump(j) : dump(json_safe_tree(j)));
}

void write_text_file(const std::string& path, const std::string& text) {
  const fs::path p(path);
  std::string temp;
  int fd = create_exclusive_temp(p, temp);
  if (fd < 0)
    throw std::runtime_error(path + ": cannot write: cannot create a file in " +
                             folder_of(p).string() + ": " + std::strerror(errno));
  auto abandon = [&](const char* step) {
    const int e = errno;
    if (fd >= 0) close(fd);
    unlink(temp.c_str());
    throw std::runtime_error(path + ": cannot write (" + step + "): " + std::strerror(e));
  };
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) abandon("write");
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) abandon("fsync");
  const int closed = close(fd);
  fd = -1;
  if (closed != 0) abandon("close");
  if (std::rename(temp.c_str(), path.c_str()) != 0) abandon("rename");
  sync_folder(folder_of(p));
}

std::string report_dir_refusal(const std::string& dir) {
  std::error_code ec;
  const fs::file_status s = fs::symlink_status(dir, ec);
  if (s.type() == fs::file_type::not_found) return "";
  if (ec) return "cannot be examined: " + ec.message();
  if (fs::is_symlink(s)) return "is a symbolic link; give the folder itself";
  if (!fs::is_directory(s)) return "exists and is not a folder";
  bool report_md = false, manifest = false, empty = true;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    empty = false;
    const std::string name = entry.path().filename().string();
    const bool regular = fs::is_regular_file(entry.symlink_status());
    if (regular && name == "report.md")
      report_md = true;
    else if (regular && name == "plots.json")
      manifest = true;
    else if (!(regular && name.ends_with(".png")))
      return "exists and is not a glabench report folder (it holds '" + name +
             "'); remove it or choose another folder";
  }
  if (ec) return "cannot be listed: " + ec.message();
  if (!empty && !(report_md && manifest))
    return "exists and is not a glabench report folder (it lacks report.md or plots.json); "
           "remove it or choose another folder";
  return "";
}

void check_report_dir(const std::string& dir, const std::string& what) {
  auto refuse = [&](const std::string& rule) {
    throw std::invalid_argument(what + " " + dir + ": " + rule);
  };
  if (dir.empty()) refuse("is empty; give a folder name");
  const fs::path p(without_trailing_slashes(dir));
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == ".." || p == "/")
    refuse("give the name of the report folder itself");
  check_parent(folder_of(p), refuse);
  if (const std::string why = report_dir_refusal(p.string()); !why.empty()) refuse(why);
  const std::string probe = make_temp_dir(p, ".tmp-");
  if (probe.empty())
    refuse("cannot create a folder in " + folder_of(p).string() + ": " + std::strerror(errno));
  rmdir(probe.c_str());
}

staged_dir::staged_dir(const std::string& target) : target_(without_trailing_slashes(target)) {
  path_ = make_temp_dir(target_, ".tmp-");
  if (path_.empty())
    throw std::runtime_error(target_ +
                             ": cannot create a folder beside it: " + std::strerror(errno));
  chmod(path_.c_str(), 0777 & ~current_umask());  // mkdtemp makes it 0700
}

staged_dir::~staged_dir() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void staged_dir::publish() {
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(target_ + ": cannot move the report into place: " + why);
  };
  if (const std::string why = report_dir_refusal(target_); !why.empty()) fail(why);
  const fs::path parent = folder_of(target_);
  struct stat st;
  if (lstat(target_.c_str(), &st) != 0 && errno == ENOENT) {
    if (std::rename(path_.c_str(), target_.c_str()) != 0) fail(std::strerror(errno));
    published_ = true;
    sync_folder(parent);
    return;
  }
  // Replacing a report folder: one atomic exchange where the file system offers it; the
  // old report then sits at the staging name and is deleted.
  std::error_code ec;
  if (renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    published_ = true;
    sync_folder(parent);
    fs::remove_all(path_, ec);
    return;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) fail(std::strerror(errno));
  // Else: the old folder moved aside (onto an empty folder of an unguessable name), the
  // new one in, the old one deleted; the old one is put back if the second rename fails.
  const std::string aside = make_temp_dir(target_, ".old-");
  if (aside.empty()) fail(std::strerror(errno));
  if (std::rename(target_.c_str(), aside.c_str()) != 0) {
    const int e = errno;
    rmdir(aside.c_str());
    fail(std::strerror(e));
  }
  if (std::rename(path_.c_str(), target_.c_str()) != 0) {
    const int e = errno;
    std::rename(aside.c_str(), target_.c_str());
    fail(std::strerror(e));
  }
  published_ = true;
  sync_folder(parent);
  fs::remove_all(aside, ec);
}

}  // namespace glabench
