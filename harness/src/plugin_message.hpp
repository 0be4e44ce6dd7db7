// The message buffer glabench hands a plugin call (glabench_message: an error, a refusal's
// reason, or last_call_report's JSON), and the text read back from it.
//
// The ABI asks a plugin to write a NUL-terminated text, but a plugin that fills the buffer
// without a terminator must not make glabench read past it: the bytes beyond are the
// caller's stack, and they would end up in results files and on the console. So the
// caller terminates the buffer at capacity − 1 after every call, whatever the plugin wrote
// (backend_runner's call_plugin, the one place plugins are called with a message), and
// describes the buffer afresh before each call, in case a plugin changed the struct's
// members. A text that fills the buffer is cut to capacity − 1 bytes.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "glabench/backend.h"

namespace glabench {

template <size_t Capacity>
class plugin_message {
  static_assert(Capacity > 0);

 public:
  // The buffer for the next call, emptied.
  glabench_message* for_call() {
    text_.front() = '\0';
    abi_ = {text_.data(), text_.size()};
    return &abi_;
  }
  // After a call: the last byte is NUL, whatever the plugin wrote.
  void terminate() { text_.back() = '\0'; }
  // The text up to the first NUL (never past capacity − 1 once terminated); c_str() reads
  // it in place, so a call that succeeds builds no string.
  std::string text() const { return std::string(text_.data()); }
  const char* c_str() const { return text_.data(); }
  bool empty() const { return text_.front() == '\0'; }

 private:
  // On the stack, as the buffers were before, and zeroed, so that bytes a plugin leaves
  // unwritten after a text without a NUL read as its end, not as old stack contents.
  std::array<char, Capacity> text_{};
  glabench_message abi_{};
};

}  // namespace glabench
