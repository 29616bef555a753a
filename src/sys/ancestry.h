// Which programs started this process: the names (/proc/PID/comm) of its parent, the parent's
// parent and so on, for `berth doctor --host` to tell which agent host runs berth.
#pragma once

#include <string>
#include <vector>

namespace berth::sys {

// Up to `depth` names, nearest first; shorter when /proc cannot say (another pid namespace,
// a parent that is gone) or the chain reaches pid 1.
std::vector<std::string> AncestorNames(int depth);

}  // namespace berth::sys
