#include "worker_channel.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace glabench {
namespace {

// Frames beyond this are refused: no message of the protocol comes near it.
constexpr uint32_t kMaxFrameBytes = 1u << 30;

bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= size_t(w);
  }
  return true;
}

// false at end of file before any byte; throws if it ends inside the buffer.
bool read_all(int fd, char* data, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, data + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      throw std::runtime_error(std::string("worker pipe: read failed: ") + strerror(errno));
    if (r == 0) {
      if (got == 0) return false;
      throw std::runtime_error("worker pipe: the frame ended early");
    }
    got += size_t(r);
  }
  return true;
}

}  // namespace

std::vector<std::uint8_t> encode_frame(const nlohmann::json& message) {
  std::vector<std::uint8_t> frame(4);
  nlohmann::json::to_cbor(message, frame);  // appends
  const size_t size = frame.size() - 4;
  if (size > kMaxFrameBytes) return {};
  const uint32_t n = uint32_t(size);
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<std::uint8_t>(n >> (8 * i));
  return frame;
}

bool write_frame(int fd, const nlohmann::json& message) {
  const std::vector<std::uint8_t> frame = encode_frame(message);
  return !frame.empty() && write_all(fd, reinterpret_cast<const char*>(frame.data()), frame.size());
}

std::optional<nlohmann::json> frame_buffer::take() {
  if (bytes_.size() < 4) return std::nullopt;
  const uint32_t n = uint32_t(bytes_[0]) | uint32_t(bytes_[1]) << 8 | uint32_t(bytes_[2]) << 16 |
                     uint32_t(bytes_[3]) << 24;
  if (n > kMaxFrameBytes) throw std::runtime_error("worker pipe: frame too large");
  if (bytes_.size() < 4 + size_t(n)) return std::nullopt;
  if (bytes_.size() > 4 + size_t(n)) throw std::runtime_error("worker pipe: bytes after the reply");
  nlohmann::json message = nlohmann::json::from_cbor(bytes_.begin() + 4, bytes_.end());
  bytes_.clear();
  return message;
}

std::optional<nlohmann::json> read_frame(int fd) {
  unsigned char header[4];
  if (!read_all(fd, reinterpret_cast<char*>(header), 4)) return std::nullopt;
  const uint32_t n = uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16 |
                     uint32_t(header[3]) << 24;
  if (n > kMaxFrameBytes) throw std::runtime_error("worker pipe: frame too large");
  std::string text(n, '\0');
  if (n > 0 && !read_all(fd, text.data(), n))
    throw std::runtime_error("worker pipe: the frame ended early");
  return nlohmann::json::from_cbor(text);
}

}  // namespace glabench
