// With GPU stations, the threads that feed everyone (reader or block finder, writer,
// GPU lanes; brief but on the critical path) should not wait for a core behind the CPU
// stations, so the CPU stations run a little nicer once a GPU is found and its stations
// begin to open (kernels/NOTES.md has the runs); before that, or with no GPU, they do
// not, so that the program does not yield to other programs for nothing.
#pragma once

namespace gpbzip2 {

// Lowers the calling thread's priority a little (nice +5); where threads have no
// priorities of their own, does nothing.
void run_nicer();

}  // namespace gpbzip2
