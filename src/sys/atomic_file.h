// Durable file writes: a temporary file in the same directory, fsync, rename, fsync of the
// directory. Readers see the old content or the new one, never a mix, even after a crash.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/result.h"

namespace berth::sys {

Status WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode = 0600);

// Appends to (creating) a file; used for logs that are not required to be atomic.
Status AppendFile(const std::string& path, const std::string& data);

}  // namespace berth::sys
