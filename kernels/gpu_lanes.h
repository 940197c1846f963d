// What the GPU stations of both directions share: lanes (host threads, each with its
// own stream and buffers) that open on one device, the one notice per failed GPU, and
// the gate that GpuMode::On waits at until a lane is open.
#pragma once
#include <condition_variable>
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

// How the lanes' opening went.
struct OpenGate {
  std::mutex mu;
  std::condition_variable cv;
  int opened = 0, failed = 0;
  std::string why;
  void report(const std::string* failure) {
    std::lock_guard lk(mu);
    if (failure) {
      failed++;
      why = *failure;
    } else {
      opened++;
    }
    cv.notify_all();
  }
  // For GpuMode::On: waits until one of `lanes` is open; false when all failed.
  bool wait_for_one(int lanes) {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return opened > 0 || failed == lanes; });
    return opened > 0;
  }
};

}  // namespace gpbzip2
