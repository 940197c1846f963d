// What the program may ask about GPUs, and the GPU stations of both pipelines.
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
class DecodeQueue;

struct GpuDevice {
  int index = 0;
  std::string name;
  size_t memory_bytes = 0;
};

bool built_with_cuda();
// Usable devices (CUDA_VISIBLE_DEVICES respected); empty when none or no driver.
std::vector<GpuDevice> list_gpus();

// Starts the GPU station for one compression, on the first usable device: it takes
// batches of raw blocks from `queue` and hands them back sorted. The returned threads
// end once the queue has no raw work left for them; join them before the queue dies.
// GpuMode::Off starts none and touches no GPU. GpuMode::On returns once the GPU is ready
// to take blocks, and throws Error(ErrorKind::Io, "no usable GPU: ...") when it is not
// (no CUDA device visible, no driver, CUDA_VISIBLE_DEVICES empty, a CPU-only build, or
// the device would not open). GpuMode::Auto opens the device in the background while
// the CPU stations work, and quietly uses none if there is none. A GPU that fails to
// open or fails later only costs speed: its blocks go to the CPU stations and
// opts.notice gets one line.
std::vector<std::thread> start_gpu_stations(WorkQueue& queue, const CompressOptions& opts);

// The same for decompression: the GPU station inverts the BWT of batches of blocks whose
// symbols the CPU stations decoded, with the same modes, failures and notices. The
// threads end once the queue stops; join them before it dies.
std::vector<std::thread> start_gpu_decode_stations(DecodeQueue& queue,
                                                   const DecompressOptions& opts);

}  // namespace gpbzip2
