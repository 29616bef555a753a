// How a job's terminal state maps to `berth run`'s exit code (PRODUCT.md §11); the codes
// themselves are in base/exit_codes.h.
#pragma once

#include "store/job_record.h"

namespace berth::job {

int ExitCodeForState(store::JobState state);

}  // namespace berth::job
