// A fresh id for every start of `berth worker` (docs/workers.md): the host's name and 48
// random bits, so that a restarted worker never passes for the one whose claims it may meet.
#pragma once

#include <string>

namespace berth::worker {

// [0-9a-z-], at most 64 characters (store::CheckWorkerId).
std::string NewWorkerId();

}  // namespace berth::worker
