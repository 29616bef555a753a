#include "lane/parent_hint.h"

namespace berth::lane {

bool WantsParentHint(const std::string& parent,
                     const std::vector<std::pair<std::string, std::string>>& environ) {
  if (parent != "codex") return false;
  for (const auto& [name, value] : environ)
    if (name == "CODEX_SANDBOX_NETWORK_DISABLED") return value == "1";
  return false;
}

std::string ParentHintText() {
  return std::string(
             "parent sandbox hint: this Codex session runs with networking disabled "
             "(CODEX_SANDBOX_NETWORK_DISABLED=1), which can keep external lanes from reaching "
             "their provider; restart the parent with network access, or choose a lane native "
             "to the parent (see ") +
         kParentHintAnchor + ")";
}

}  // namespace berth::lane
