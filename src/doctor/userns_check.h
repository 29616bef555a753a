// The sysctls that refuse unprivileged user namespaces, read before any job meets them: Ubuntu's
// AppArmor restriction (23.10 and later), a zero user.max_user_namespaces, and Debian's
// kernel.unprivileged_userns_clone. Each that refuses berth is `blocked` with the exact fix
// (docs/doctor.md, "user namespace sysctls").
#pragma once

#include <vector>

#include "doctor/doctor.h"

namespace berth::doctor {

// Reads under in.proc_root: sys/kernel/apparmor_restrict_unprivileged_userns,
// sys/user/max_user_namespaces, sys/kernel/unprivileged_userns_clone, and this process's
// AppArmor label (self/attr/apparmor/current). A sysctl this kernel does not have is skipped.
void CheckUsernsSysctls(const Inputs& in, std::vector<Item>* items);

}  // namespace berth::doctor
