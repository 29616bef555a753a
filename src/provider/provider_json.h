// A provider as JSON: recorded with each job (the supervisor runs the definition that was
// accepted at submission, even if the config changes) and printed by `berth doctor --json`.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "base/result.h"
#include "provider/provider.h"

namespace berth::provider {

nlohmann::json ToJson(const Provider& provider);
// Strict (base/json_read.h): a field of the wrong type is an error naming it, `where` first
// ("request.provider_def.read_args must be an array, not number"); unknown keys are ignored.
Result<Provider> FromJson(const nlohmann::json& json, const std::string& where = "provider");

}  // namespace berth::provider
