// Durable file writes: a temporary file in the same directory, fsync, rename, fsync of the
// directory. Readers see the old content or the new one, never a mix, even after a crash.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/result.h"

namespace berth::sys {

Status WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode = 0600);

// The same durable replacement for a file of a git checkout: created with `mode` less the
// process umask (as git checks files out), and a failed fsync of the directory is an error.
Status WriteCheckoutFileAtomic(const std::string& path, const std::string& data, mode_t mode);

// Replaces `path` with a symbolic link to `target`, durably in the same way.
Status WriteSymlinkAtomic(const std::string& path, const std::string& target);

// Appends to (creating) a file; used for logs that are not required to be atomic.
Status AppendFile(const std::string& path, const std::string& data);

}  // namespace berth::sys
