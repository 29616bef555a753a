// OverlayAvailable: whether the overlay backend works here, probed once per state directory
// and kernel, and BackendName.
#include "base/strings.h"
#include "sys/atomic_file.h"
#include "sys/fs.h"
#include "sys/host.h"
#include "sys/overlay.h"
#include "workspace/workspace.h"

namespace berth::workspace {

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kAuto:
      return "auto";
    case Backend::kOverlay:
      return "overlay";
    case Backend::kCopy:
      return "copy";
  }
  return "auto";
}

bool OverlayAvailable(const std::string& state_dir) {
  // The cache: "yes <kernel release>" or "no <kernel release>", then the reason. A new kernel
  // (or a deleted file) means a new probe.
  std::string cache = state_dir + "/overlay-probe";
  std::string release = sys::KernelRelease();
  if (Result<std::string> cached = sys::ReadFile(cache); cached) {
    std::string first_line = cached->substr(0, cached->find('\n'));
    if (first_line == "yes " + release) return true;
    if (first_line == "no " + release) return false;
  }
  if (!sys::MakeDirs(state_dir, 0700)) return false;
  sys::Capability probe = sys::ProbeOverlay(state_dir);
  std::string record =
      std::string(probe.available ? "yes " : "no ") + release + "\n" + probe.reason + "\n";
  IgnoreError(sys::WriteFileAtomic(cache, record, 0600),
              "a cache: failing to write it is harmless");
  return probe.available;
}

}  // namespace berth::workspace
