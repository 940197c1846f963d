// The CPU-only build: no CUDA compiler was found, so there is no GPU station.
#include "gpu.h"

#include <cstdlib>

namespace gpbzip2 {

bool built_with_cuda() { return false; }
std::vector<GpuDevice> list_gpus() { return {}; }
void exit_program(int status) { std::exit(status); }

GpuStations start_gpu_stations(WorkQueue&, const CompressOptions& opts, int) {
  if (opts.gpu == GpuMode::On)
    throw Error(ErrorKind::Io, "no usable GPU: this gpbzip2 was built without CUDA");
  return {};
}

GpuStations start_gpu_decode_stations(DecodeQueue&, const DecompressOptions& opts) {
  if (opts.gpu == GpuMode::On)
    throw Error(ErrorKind::Io, "no usable GPU: this gpbzip2 was built without CUDA");
  return {};
}

}  // namespace gpbzip2
