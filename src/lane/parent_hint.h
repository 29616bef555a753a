// The Codex-parent network hint: after a plain child-failed lane, a Codex parent whose own
// sandbox has networking off is the likely cause, and the parent is told so first.
//
// Given only when the parent is `codex`, the lane's own environment (read before anything is
// passed to the job) has CODEX_SANDBOX_NETWORK_DISABLED exactly "1", and the failure carries no
// provider reason. The provider's reason, when there is one, stays first and gets no hint.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace berth::lane {

inline constexpr const char* kParentHintAnchor = "docs/lane.md#codex-parent-without-network";

bool WantsParentHint(const std::string& parent,
                     const std::vector<std::pair<std::string, std::string>>& environ);

// The hint sentence (it names the anchor).
std::string ParentHintText();

}  // namespace berth::lane
