// Which GPUs the CUDA driver is shown. It starts every device it sees, however few the
// program then uses: on a host with two idle H200s its start took 0.23-0.48 s with both
// visible and 0.12 s with one (kernels/NOTES.md, session 19).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

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

bool indices_name_first_gpus(const std::string& proc, int count) try {
  namespace fs = std::filesystem;
  std::error_code ec;
  int gpus = 0;
  std::string first_model;
  for (const auto& gpu : fs::directory_iterator(proc + "/gpus", ec)) {
    std::ifstream info(gpu.path() / "information");
    std::string line, model;
    while (std::getline(info, line))
      if (line.rfind("Model:", 0) == 0) model = line;
    if (model.empty() || (gpus > 0 && model != first_model)) return false;
    first_model = model;
    gpus++;
  }
  if (ec || gpus <= count) return false;
  // A GPU split into MIG instances lists them as gpuN/mig/giM: those are named by UUID.
  for (const auto& gpu : fs::directory_iterator(proc + "/capabilities", ec)) {
    std::error_code mig_ec;
    for (const auto& entry : fs::directory_iterator(gpu.path() / "mig", mig_ec))
      if (entry.path().filename().string().rfind("gi", 0) == 0) return false;
    // Not a GPU's entry (no mig folder there), or one that cannot be read: then unknown.
    if (mig_ec && mig_ec != std::errc::no_such_file_or_directory &&
        mig_ec != std::errc::not_a_directory)
      return false;
  }
  return true;
} catch (const std::exception&) {  // a listing that fails midway (a GPU unbound meanwhile)
  return false;
}

void show_first_gpus(int count) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible && !indices_name_first_gpus("/proc/driver/nvidia", count)) return;
  setenv("CUDA_VISIBLE_DEVICES", first_gpus(visible, count).c_str(), 1);
}

}  // namespace gpbzip2
