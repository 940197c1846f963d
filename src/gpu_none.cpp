// The CPU-only build: no CUDA compiler was found, so there is no GPU station.
#include "gpu.h"

namespace gpbzip2 {

bool built_with_cuda() { return false; }
std::vector<GpuDevice> list_gpus() { return {}; }

}  // namespace gpbzip2
