#include "run_context.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace glabench {

const char* build_git_commit();  // generated at build time by cmake/write_git_commit.cmake

nlohmann::json run_context() {
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
          {"date", date}};
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
