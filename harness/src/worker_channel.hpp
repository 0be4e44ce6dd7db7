// The pipe protocol between glabench and its worker processes: one JSON message a frame,
// a 4-byte little-endian length, then that many bytes of the message in CBOR — binary, so
// that strings which are not valid UTF-8 (a plugin's messages, file names) cross intact
// and are escaped only where they are printed or stored.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace glabench {

// One frame's bytes (header and message); empty when the message exceeds the frame limit.
std::vector<std::uint8_t> encode_frame(const nlohmann::json& message);

// Writes one frame; false when the other end is gone (EPIPE) or the write fails.
bool write_frame(int fd, const nlohmann::json& message);

// Reads one frame; nullopt at end of file (the other end closed or died). Throws
// std::runtime_error on a malformed frame.
std::optional<nlohmann::json> read_frame(int fd);

// A frame read in pieces, as they arrive on a non-blocking descriptor (the parent's side,
// which never blocks on a worker).
class frame_buffer {
 public:
  void append(const char* data, size_t n) { bytes_.insert(bytes_.end(), data, data + n); }
  // The frame, once all of it has arrived; throws std::runtime_error on a malformed one.
  std::optional<nlohmann::json> take();
  bool empty() const { return bytes_.empty(); }

 private:
  std::vector<std::uint8_t> bytes_;
};

}  // namespace glabench
