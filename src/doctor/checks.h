// The probes behind `berth doctor`, one family per function; each appends its items.
#pragma once

#include <string>
#include <vector>

#include "doctor/doctor.h"
#include "provider/provider.h"

namespace berth::doctor {

// User namespaces, Landlock, seccomp, overlayfs, cgroups, and a real sandboxed `true`.
// Returns the tier jobs get here.
std::string CheckHost(const Inputs& in, std::vector<Item>* items);
// libgit2 (berth's own) and the git command agents use inside jobs.
void CheckGit(const Inputs& in, std::vector<Item>* items);
// Whether berth runs inside another tool's sandbox or a container.
void CheckEnvironment(const Inputs& in, std::vector<Item>* items);
// What a default job sees of the caller's home (the allowlist entries present); fills
// `visible` with their paths as the user writes them ("~/.gitconfig").
void CheckHome(const Inputs& in, std::vector<Item>* items, std::vector<std::string>* visible);
// The job store: its kind, its location (never a password) and whether it opens and reads.
StoreSummary CheckStore(const Inputs& in, std::vector<Item>* items);
// Resolves one provider endpoint ("api.openai.com:443") as the proxy would ([net.hosts], then
// DNS) and connects to it; appends an `endpoint` and a `connect` item to `section`.
void CheckEndpoint(const Inputs& in, const std::string& section, const std::string& endpoint,
                   const std::string& parent_marker, std::vector<Item>* items);
// One provider: CLI and version, credentials, state directories, endpoints.
ProviderVerdict CheckProvider(const Inputs& in, const provider::Provider& p,
                              std::vector<Item>* items);

}  // namespace berth::doctor
