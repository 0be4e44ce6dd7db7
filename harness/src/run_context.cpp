#include "run_context.hpp"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

extern char** environ;

namespace glabench {

const char* build_git_commit();  // generated at build time by cmake/write_git_commit.cmake

nlohmann::json backend_environment(const std::vector<std::string>& backend_names) {
  nlohmann::json found = nlohmann::json::object();
  for (const std::string& name : backend_names) {
    std::string prefix;
    for (const char c : name) prefix += char(std::toupper(static_cast<unsigned char>(c)));
    prefix += '_';
    for (char** e = environ; e && *e; ++e) {
      const std::string entry = *e;
      const size_t eq = entry.find('=');
      if (eq != std::string::npos && entry.compare(0, prefix.size(), prefix) == 0)
        found[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  return found;
}

nlohmann::json run_context(const std::vector<std::string>& backend_names) {
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
          {"backend_environment", backend_environment(backend_names)}};
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(temp);
    out << j.dump(2) << '\n';
    if (!out) throw std::runtime_error(path + ": cannot write");
  }
  std::filesystem::rename(temp, path);
}

}  // namespace glabench
