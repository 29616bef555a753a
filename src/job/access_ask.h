// Who asked for a job's full access (job/full_access.h): recorded with the request and in the
// receipt by the name the user would recognise.
#pragma once

#include <optional>
#include <string>

namespace berth::job {

inline constexpr const char* kFullAccessFlag = "--full-access";
inline constexpr const char* kFullAccessVariable = "BERTH_FULL_ACCESS";

enum class AccessAsk { kNone, kFlag, kEnvironment };

// "--full-access", "BERTH_FULL_ACCESS", or "" for nobody; what the receipt records.
const char* AccessAskName(AccessAsk ask);
// The inverse of AccessAskName; nullopt for any other text.
std::optional<AccessAsk> ParseAccessAsk(const std::string& name);

}  // namespace berth::job
