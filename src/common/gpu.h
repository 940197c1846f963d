// What the program may ask about GPUs, and the GPU stations of both pipelines.
// A CPU-only build (no nvcc) links gpu_none.cpp and reports none; a CUDA build gets these
// from kernels/.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpbzip2.h"

namespace gpbzip2 {

class WorkQueue;
class DecodeQueue;

struct GpuDevice {
  int index = 0;
  std::string name;
  size_t memory_bytes = 0;
};

bool built_with_cuda();
// Usable devices (CUDA_VISIBLE_DEVICES respected); empty when none or no driver.
std::vector<GpuDevice> list_gpus();

// The first `count` devices of a CUDA_VISIBLE_DEVICES list (`visible`: its value, or
// nullptr where it is unset and every device is visible: then "0,1,...").
std::string first_gpus(const char* visible, int count);
// Whether, with CUDA_VISIBLE_DEVICES unset, the indices 0..count-1 name the driver's first
// `count` devices and leave some out, by the kernel module's list under `proc`
// (/proc/driver/nvidia): more GPUs than `count`, all of one model (the driver puts the
// fastest first, and equals in bus order, as the indices go), none split into MIG
// instances (named by UUID only).
bool indices_name_first_gpus(const std::string& proc, int count);
// Lets the CUDA driver see only the first `count` devices it would (CUDA_VISIBLE_DEVICES
// narrowed: a list the user set keeps its first entries; where unset, only where
// indices_name_first_gpus): its start costs for every device it sees. Only before the
// driver starts and before any thread does (it sets the environment); the process sees
// no other GPU afterwards.
void show_first_gpus(int count);

// Ends the program with `status` once its work is done and its outputs are closed: as
// std::exit, except where this process started the CUDA driver. Then the kernel's release
// of the device as the process ends (0.06-0.14 s, kernels/NOTES.md) would delay the exit
// status, so a child that shares this process's memory and open files takes it over: the
// process closes its standard streams and ends, the child ends just after, and the
// release happens then.
[[noreturn]] void exit_program(int status);

// How a GPU station's lanes opened. GpuMode::On waits here before the first output, so
// that a run without a usable GPU fails having written nothing, while the CPU stations
// work from the start.
class GpuGate {
 public:
  explicit GpuGate(int lanes) : lanes_(lanes) {}
  // From each lane: opened (nullptr) or failed, and why.
  void report(const std::string* failure) {
    std::lock_guard lk(mu_);
    if (failure) {
      failed_++;
      why_ = *failure;
    } else {
      opened_++;
    }
    cv_.notify_all();
  }
  bool any_opened() {
    std::lock_guard lk(mu_);
    return opened_ > 0;
  }
  // Returns once a lane is open; throws Error(ErrorKind::Io, "no usable GPU: ...") once
  // all failed.
  void wait_usable() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return opened_ > 0 || failed_ == lanes_; });
    if (opened_ == 0) throw Error(ErrorKind::Io, "no usable GPU: " + why_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int lanes_;
  int opened_ = 0, failed_ = 0;
  std::string why_;
};

// A started GPU station: its threads, which end once its queue has no work left for them
// (join them before the queue dies), and with GpuMode::On the gate to wait at before
// the first output.
struct GpuStations {
  std::vector<std::thread> threads;
  std::shared_ptr<GpuGate> must_open;
};

// Starts the GPU stations for one compression, on the first `gpus` usable devices: they
// take batches of raw blocks from `queue` and hand them back sorted (and moved to front
// where WorkQueue::gpu_moves_to_front says).
// GpuMode::Off starts none and touches no GPU. GpuMode::On opens the lanes in the
// background like Auto, but throws Error(ErrorKind::Io, "no usable GPU: ...") at once
// when no device is listed (no CUDA device visible, no driver, CUDA_VISIBLE_DEVICES
// empty, a CPU-only build), and must_open tells whether one opened. GpuMode::Auto opens
// the device in the background while the CPU stations work, and quietly uses none if
// there is none. A GPU that fails to open or fails later only costs speed: its blocks go
// to the CPU stations and opts.notice gets one line.
GpuStations start_gpu_stations(WorkQueue& queue, const CompressOptions& opts, int gpus);

// The same for decompression: the GPU station inverts the BWT of batches of blocks whose
// symbols the CPU stations decoded, with the same modes, failures and notices. The
// threads end once the queue stops.
GpuStations start_gpu_decode_stations(DecodeQueue& queue, const DecompressOptions& opts);

}  // namespace gpbzip2
