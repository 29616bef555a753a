// A valid policy as JSON, for `berth policy check --json` (docs/cli.md): every setting after
// defaults are applied, so a program sees what berth will do, not only what the file says.
#pragma once

#include <nlohmann/json.hpp>

#include "policy/policy.h"

namespace berth::policy {

nlohmann::json PolicyToJson(const Policy& policy);

}  // namespace berth::policy
