// What the program may ask about GPUs, and the GPU stations of the compression pipeline.
// A CPU-only build (no nvcc) links gpu_none.cpp and reports none; a CUDA build gets these
// from kernels/.
#pragma once
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "gpbzip2.h"

namespace gpbzip2 {

class WorkQueue;

struct GpuDevice {
  int index = 0;
  std::string name;
  size_t memory_bytes = 0;
};

bool built_with_cuda();
// Usable devices (CUDA_VISIBLE_DEVICES respected); empty when none or no driver.
std::vector<GpuDevice> list_gpus();

// Starts the GPU stations for one compression: one per device, each taking batches of
// raw blocks from `queue` and handing them back sorted. The returned threads end once
// the queue has no raw work left for them; join them before the queue dies.
// GpuMode::Off starts none and touches no GPU. GpuMode::On returns once a GPU is ready
// to take blocks, and throws Error(ErrorKind::Io, "no usable GPU: ...") when none is
// (no CUDA device visible, no driver, CUDA_VISIBLE_DEVICES empty, a CPU-only build, or
// no device would open). GpuMode::Auto opens devices in the background while the CPU
// stations work, and quietly uses none if there are none. A GPU that fails to open or
// fails later only costs speed: its blocks go to the CPU stations and opts.notice gets
// one line.
std::vector<std::thread> start_gpu_stations(WorkQueue& queue, const CompressOptions& opts);

}  // namespace gpbzip2
