#include "doctor/userns_check.h"

#include <optional>
#include <string>

#include "base/strings.h"
#include "sys/file_status.h"
#include "sys/fs.h"

namespace berth::doctor {

namespace {

constexpr char kSection[] = "kernel";

// A sysctl's value with its newline trimmed; nullopt when this kernel has no such file.
std::optional<std::string> Sysctl(const Inputs& in, const std::string& name) {
  Result<std::string> text = sys::ReadFile(in.proc_root + "/sys/" + name);
  if (!text) return std::nullopt;
  return OneLine(*text);
}

// This process's AppArmor label: "unconfined", or "PROFILE (MODE)"; "" when AppArmor is off.
std::string AppArmorLabel(const Inputs& in) {
  for (const char* file : {"/self/attr/apparmor/current", "/self/attr/current"}) {
    Result<std::string> text = sys::ReadFile(in.proc_root + file);
    if (text && !OneLine(*text).empty()) return OneLine(*text);
  }
  return "";
}

void AppArmorRestriction(const Inputs& in, std::vector<Item>* items) {
  std::optional<std::string> restrict = Sysctl(in, "kernel/apparmor_restrict_unprivileged_userns");
  if (!restrict) return;
  const std::string name = "apparmor userns restriction";
  if (*restrict == "0") {
    items->push_back({kSection, name, ItemStatus::kOk,
                      "kernel.apparmor_restrict_unprivileged_userns = 0: not restricted", ""});
    return;
  }
  const std::string label = AppArmorLabel(in);
  if (!label.empty() && label != "unconfined") {
    items->push_back({kSection, name, ItemStatus::kOk,
                      "kernel.apparmor_restrict_unprivileged_userns = " + * restrict +
                          "; berth runs under the AppArmor profile '" + label +
                          "', which must allow `userns`",
                      ""});
    return;
  }
  if (in.identity.uid == 0) {
    items->push_back({kSection, name, ItemStatus::kOk,
                      "kernel.apparmor_restrict_unprivileged_userns = " + * restrict +
                          ": restricts unprivileged users only; other users need berth's "
                          "AppArmor profile",
                      ""});
    return;
  }
  std::string exe = "this berth";
  if (Result<std::string> self = sys::ReadLink(in.proc_root + "/self/exe"); self)
    exe = "this berth (" + *self + ")";
  items->push_back(
      {kSection, name, ItemStatus::kBlocked,
       "kernel.apparmor_restrict_unprivileged_userns = " + * restrict +
           ": AppArmor refuses unprivileged user namespaces to programs without a profile "
           "allowing them, and " +
           exe + " runs unconfined: every job would fail to start its sandbox",
       "load berth's profile, which the package and `make install` put in "
       "/etc/apparmor.d/berth for the installed binary: `sudo apparmor_parser -r "
       "/etc/apparmor.d/berth`, then run the installed berth (a berth elsewhere is not "
       "covered); or lift the restriction for every program: `sudo sysctl -w "
       "kernel.apparmor_restrict_unprivileged_userns=0` (and a file in /etc/sysctl.d to keep "
       "it)"});
}

void MaxUserNamespaces(const Inputs& in, std::vector<Item>* items) {
  std::optional<std::string> max = Sysctl(in, "user/max_user_namespaces");
  if (!max) return;
  const std::string name = "user.max_user_namespaces";
  if (*max == "0") {
    items->push_back({kSection, name, ItemStatus::kBlocked,
                      "user.max_user_namespaces = 0: no user namespace can be created",
                      "`sudo sysctl -w user.max_user_namespaces=15000` (and a file in "
                      "/etc/sysctl.d to keep it)"});
    return;
  }
  items->push_back({kSection, name, ItemStatus::kOk, "user.max_user_namespaces = " + *max, ""});
}

void UnprivilegedClone(const Inputs& in, std::vector<Item>* items) {
  std::optional<std::string> clone = Sysctl(in, "kernel/unprivileged_userns_clone");
  if (!clone) return;
  const std::string name = "kernel.unprivileged_userns_clone";
  if (*clone == "0" && in.identity.uid != 0) {
    items->push_back({kSection, name, ItemStatus::kBlocked,
                      "kernel.unprivileged_userns_clone = 0: unprivileged users may not create "
                      "user namespaces",
                      "`sudo sysctl -w kernel.unprivileged_userns_clone=1` (and a file in "
                      "/etc/sysctl.d to keep it)"});
    return;
  }
  items->push_back({kSection, name, ItemStatus::kOk,
                    "kernel.unprivileged_userns_clone = " + *clone +
                        (*clone == "0" ? ": applies to unprivileged users only" : ""),
                    ""});
}

}  // namespace

void CheckUsernsSysctls(const Inputs& in, std::vector<Item>* items) {
  AppArmorRestriction(in, items);
  MaxUserNamespaces(in, items);
  UnprivilegedClone(in, items);
}

}  // namespace berth::doctor
