// The strict JSON reader lives in base/json_read.h, where modules below job (host, provider)
// and above it use it too; the receipt's code names it from here.
#pragma once

#include "base/json_read.h"

namespace berth::job {

using berth::JsonReader;
using berth::JsonTypeError;

}  // namespace berth::job
