// An environment's services in a job's sandbox (docs/environments.md, "Services"): each
// service's data directory from the layer, copy-on-write with a fresh upper directory, its
// server started by the sandbox's init on the job's own loopback before the command, and the
// variables naming it in the command's environment.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "policy/policy.h"
#include "sandbox/spec.h"

namespace berth::job {

// Adds `environment`'s services to `spec`: the data directories of the layer at `layer_dir`
// under fresh upper directories in `scratch_dir` (made now, removed by RemoveServiceScratch),
// the servers, and their URL variables (and PGHOST, PGPORT, PGUSER, PGDATABASE for the first).
Status AddServices(const policy::Environment& environment, const std::string& layer_dir,
                   const std::string& scratch_dir, sandbox::SandboxSpec* spec);

// Removes what AddServices made under `scratch_dir`: nothing of a job's servers is left.
Status RemoveServiceScratch(const std::string& scratch_dir);

// The uid a service (and initdb) runs as in a nested user namespace: nobody's when berth runs
// as root (PostgreSQL refuses root), else 0 (none: the caller's own uid).
uint32_t ServiceNonRootId();

// The server of `service` (the index-th, by name) on a data directory at `data_target`.
Result<sandbox::SandboxService> ServerOf(const policy::Service& service, size_t index,
                                         const std::string& data_target);

}  // namespace berth::job
