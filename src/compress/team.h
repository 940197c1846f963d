// The threads that share one block's work (its sort and its coding) where other stations
// would otherwise sit idle: the last blocks of an input and the blocks of a small one.
#pragma once
#include <cstddef>
#include <functional>

namespace gpbzip2 {

// Runs body(0), ..., body(tasks - 1), each once, on the calling thread and on whichever
// threads join it; returns once all have finished.
using RunTogether = std::function<void(size_t tasks, const std::function<void(size_t)>& body)>;

// `run` hands out the tasks; `threads`, about how many will run them, sets how finely the
// work is cut and how many repeats the sort takes on.
struct Team {
  RunTogether run;
  int threads = 1;
};

}  // namespace gpbzip2
