// The job store item of `berth doctor`: which store berth uses (SQLite or PostgreSQL), where,
// and whether it opened and answered a read, from what the caller's probe found (StoreProbe in
// doctor.h). A URL is always shown without its password.
#pragma once

#include "doctor/doctor.h"

namespace berth::doctor {

// The item for section "store", named after the kind.
Item StoreItem(const StoreProbe& probe);

}  // namespace berth::doctor
