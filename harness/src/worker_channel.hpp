// The pipe protocol between glabench and its worker processes: one JSON message a frame,
// a 4-byte little-endian length, then that many bytes of the message in CBOR — binary, so
// that strings which are not valid UTF-8 (a plugin's messages, file names) cross intact
// and are escaped only where they are printed or stored.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace glabench {

// Writes one frame; false when the other end is gone (EPIPE) or the write fails.
bool write_frame(int fd, const nlohmann::json& message);

// Reads one frame; nullopt at end of file (the other end closed or died). Throws
// std::runtime_error on a malformed frame.
std::optional<nlohmann::json> read_frame(int fd);

}  // namespace glabench
