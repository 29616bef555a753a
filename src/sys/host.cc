#include "sys/host.h"

#include <sched.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/strings.h"
#include "sys/fs.h"
#include "sys/landlock_abi.h"
#include "sys/process.h"

namespace berth::sys {

int LandlockAbi() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, landlock::kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

Capability ProbeUserNamespaces() {
  Result<Cloned> child = Clone(CLONE_NEWUSER);
  if (!child) {
    Capability cap;
    cap.reason = "creating a user namespace failed: " + child.error().ToString();
    if (Result<std::string> v = ReadFile("/proc/sys/kernel/unprivileged_userns_clone");
        v && StartsWith(*v, "0"))
      cap.reason += " (kernel.unprivileged_userns_clone = 0)";
    if (Result<std::string> v = ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
        v && StartsWith(*v, "1"))
      cap.reason += " (AppArmor restricts unprivileged user namespaces)";
    if (Result<std::string> v = ReadFile("/proc/sys/user/max_user_namespaces");
        v && StartsWith(*v, "0"))
      cap.reason += " (user.max_user_namespaces = 0)";
    return cap;
  }
  if (child->pid == 0) ::_exit(0);
  IgnoreError(Reap(child->pid), "the child exits at once; the clone succeeding is the answer");
  return Capability{true, ""};
}

std::string KernelRelease() {
  struct utsname u;
  if (::uname(&u) != 0) return "unknown";
  return u.release;
}

}  // namespace berth::sys
