// RAII ownership of HDF5 C-API identifiers.
#pragma once

#include <hdf5.h>

#include <utility>

namespace glabench {

class h5_handle {
 public:
  using closer = herr_t (*)(hid_t);
  h5_handle() = default;
  h5_handle(hid_t id, closer close) : id_(id), close_(close) {}
  h5_handle(h5_handle&& o) noexcept
      : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  h5_handle& operator=(h5_handle&& o) noexcept {
    reset();
    id_ = std::exchange(o.id_, H5I_INVALID_HID);
    close_ = o.close_;
    return *this;
  }
  h5_handle(const h5_handle&) = delete;
  h5_handle& operator=(const h5_handle&) = delete;
  ~h5_handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  closer close_ = nullptr;
};

// HDF5 prints its error stack to stderr by default; glabench reports its own errors.
inline void silence_hdf5_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

}  // namespace glabench
