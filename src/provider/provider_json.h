// A provider as JSON: recorded with each job (the supervisor runs the definition that was
// accepted at submission, even if the config changes) and printed by `berth doctor --json`.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"
#include "provider/provider.h"

namespace berth::provider {

nlohmann::json ToJson(const Provider& provider);
Result<Provider> FromJson(const nlohmann::json& json);

}  // namespace berth::provider
