#include <cstdlib>
#include <cstring>
#include <new>

#include "device_context.hpp"

namespace glabench {
namespace {

class host_context final : public device_context {
 public:
  DLDevice device() const override { return {kDLCPU, 0}; }
  void* allocate(size_t bytes) override {
    // 64-byte aligned, like any vectorised CPU kernel would want.
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void release(void* ptr) noexcept override { std::free(ptr); }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_rows_to_host(void* dst, const void* src, size_t row_bytes, size_t rows,
                         size_t src_pitch) override {
    for (size_t r = 0; r < rows; ++r)
      std::memcpy(static_cast<char*>(dst) + r * row_bytes,
                  static_cast<const char*>(src) + r * src_pitch, row_bytes);
  }
  void fill(void* dst, unsigned char byte, size_t bytes) override { std::memset(dst, byte, bytes); }
  void* stream() override { return nullptr; }
  void synchronize() override {}
};

}  // namespace

std::unique_ptr<device_context> make_host_context() {
  return std::make_unique<host_context>();
}

}  // namespace glabench
