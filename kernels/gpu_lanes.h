// What the GPU stations of both directions share: lanes (host threads, each with its
// own stream and buffers) that open on one device, and the one notice per failed GPU.
#pragma once
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "common/gpu.h"

namespace gpbzip2 {

// Reports a GPU's failure once, however many of its lanes fail.
class GpuNotices {
 public:
  // `fallback`: what happens to the GPU's work instead, for the notice.
  GpuNotices(std::function<void(const std::string&)> notice, std::string fallback)
      : notice_(std::move(notice)), fallback_(std::move(fallback)) {}
  void gpu_failed(const GpuDevice& d, const std::string& why) {
    std::lock_guard lk(mu_);
    if (!notice_ || !failed_.insert(d.index).second) return;
    notice_("GPU " + std::to_string(d.index) + " (" + d.name + ") failed: " + why + "; " +
            fallback_);
  }

 private:
  std::mutex mu_;
  std::set<int> failed_;
  std::function<void(const std::string&)> notice_;
  std::string fallback_;
};

}  // namespace gpbzip2
