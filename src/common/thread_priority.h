// With GPU stations, the threads that feed everyone (reader or block finder, writer,
// GPU lanes; brief but on the critical path) should not wait for a core behind the CPU
// stations, so the CPU stations run a little nicer (kernels/NOTES.md has the runs).
#pragma once

namespace gpbzip2 {

// Lowers the calling thread's priority a little (nice +5); where threads have no
// priorities of their own, does nothing.
void run_nicer();

}  // namespace gpbzip2
