// The key of an environment layer (docs/environments.md, "The key"): what decides whether two
// jobs may share one built dependency tree.
#pragma once

#include <string>

#include "base/result.h"
#include "git/repository.h"
#include "policy/policy.h"

namespace berth::env {

// The canonical text hashed into a key: a version line, then the setup argv, paths, hosts,
// grants and passed names, then the path and blob id of every key file of `commit`'s tree
// (sorted by path). Read from the object database: nothing is checked out.
Result<std::string> KeyText(git::Repository& repo, const std::string& commit,
                            const policy::Environment& environment);

// sha256 (hex) of KeyText: the layer's name under <state>/envs/.
Result<std::string> LayerKey(git::Repository& repo, const std::string& commit,
                             const policy::Environment& environment);

// Whether `text` has the form of a key (64 lowercase hex digits).
bool IsLayerKey(const std::string& text);

}  // namespace berth::env
