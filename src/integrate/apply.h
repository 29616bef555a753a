// Writes a plan of `berth integrate`: each file atomically (readers see the old content or the
// new, never a mix), through a symbolic link to its target (a ~/.claude.json kept in a dotfiles
// repository stays a link), keeping the mode of a file that exists.
#pragma once

#include <vector>

#include "base/result.h"
#include "integrate/plan.h"

namespace berth::integrate {

// Stops at the first failure, naming the file; the files written before it stay written (each
// is whole), and a second run finishes the rest.
Status Apply(const std::vector<FileEdit>& edits);

}  // namespace berth::integrate
