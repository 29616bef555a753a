// Exclusive creation of an empty file: the reservation primitive of `berth lane`, whose
// output, receipt and sidecar paths must not exist and are claimed before anything runs.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/result.h"

namespace berth::sys {

// Creates `path` as an empty regular file with `mode` (umask aside, fchmod makes it exact),
// failing with EEXIST if anything exists there, a dangling symlink included (O_EXCL does not
// follow it).
Status CreateExclusive(const std::string& path, mode_t mode);

// Writes all of `data` to the existing file `path` from offset 0, in place (no rename, no
// truncation: the caller writes a file it created empty), looping over partial writes.
Status WriteAllInPlace(const std::string& path, const std::string& data);

}  // namespace berth::sys
