// The "layers" items of `berth doctor`: the environment layers under the state directory (key,
// commit, when built, how long, size, users) and whether the current repository's HEAD has its
// layer yet (docs/environments.md).
#pragma once

#include <vector>

#include "doctor/doctor.h"

namespace berth::doctor {

void CheckLayers(const Inputs& in, std::vector<Item>* items);

}  // namespace berth::doctor
