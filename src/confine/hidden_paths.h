// The paths every sandbox hides even inside its read-only view of the host: credential
// locations by default, plus the user's configured extras, minus what read: grants un-hide.
#pragma once

#include <string>
#include <vector>

#include "confine/host_context.h"

namespace berth::confine {

// Credential locations hidden inside every sandbox unless un-hidden with read:PATH.
const std::vector<std::string>& DefaultHiddenPaths();

// The defaults, host.extra_hidden and, for a root caller, the host's secret files
// (HostSecretPaths in confine/homes.h), expanded and resolved through symlinks (mounts and
// Landlock both act on the target), without those inside a path of `unhide`.
std::vector<std::string> HiddenPaths(const HostContext& host,
                                     const std::vector<std::string>& unhide);

}  // namespace berth::confine
