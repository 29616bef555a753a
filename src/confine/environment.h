// A sandbox's environment: exactly what the child gets. An allowlist of the host's variables
// (PATH, HOME, LANG, LC_*, ...), the names passed through, the grants' variables, the
// variables set, then the proxy's; later entries win.
#pragma once

#include <string>
#include <vector>

#include "confine/host_context.h"
#include "sandbox/spec.h"

namespace berth::confine {

// Replaces spec->env (which holds the grants' variables) with the whole environment.
// `pass` names host variables to pass through ("--env"); a missing one is a warning. `set`
// comes after the grants' variables. Needs spec->network set.
void BuildEnvironment(const std::vector<std::string>& pass, const std::vector<sandbox::EnvVar>& set,
                      const HostContext& host, sandbox::SandboxSpec* spec);

// Leaves out of PATH every directory the sandbox hides (inside a hidden home or a hidden path,
// not shown again by a grant), with a warning: a command found there would fail with "Permission
// denied" where the user expects "not found", or where a later PATH entry would have worked.
// Needs spec->env, hidden_homes, hidden_paths and paths set.
void DropUnreachableSearchPath(sandbox::SandboxSpec* spec);

}  // namespace berth::confine
