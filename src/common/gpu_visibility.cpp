// Which GPUs the CUDA driver is shown. It starts every device it sees, however few the
// program then uses: on a host with two idle H200s its start took 0.23-0.48 s with both
// visible and 0.12 s with one (kernels/NOTES.md, session 19).
#include <cstdlib>
#include <string>

#include "gpu.h"

namespace gpbzip2 {

std::string first_gpus(const char* visible, int count) {
  std::string out;
  if (!visible) {  // every device, in the driver's order: the first `count` of them
    for (int i = 0; i < count; i++) {
      if (i > 0) out += ',';
      out += std::to_string(i);
    }
    return out;
  }
  // The driver stops at the first entry it cannot use, so a prefix of the list is a
  // prefix of the devices it shows.
  const std::string list = visible;
  size_t end = 0;
  for (int i = 0; i < count && end < list.size(); i++) {
    end = list.find(',', end + (i ? 1 : 0));
    if (end == std::string::npos) end = list.size();
  }
  return list.substr(0, end);
}

void show_first_gpus(int count) {
  setenv("CUDA_VISIBLE_DEVICES", first_gpus(std::getenv("CUDA_VISIBLE_DEVICES"), count).c_str(),
         1);
}

}  // namespace gpbzip2
