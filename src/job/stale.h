// Turns live jobs whose supervisor is gone, or whose lease expired, into `stale`, with the
// reason. Every command that reads jobs calls this first. Workspaces are never touched.
#pragma once

#include "base/result.h"
#include "store/store.h"

namespace berth::job {

Status ReapStaleJobs(store::Store& store);

}  // namespace berth::job
