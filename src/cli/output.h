// How berth talks to people: errors with their cause and what to do next.
#pragma once

#include <string>

#include "base/error.h"

namespace berth::cli {

// "berth: error: MESSAGE" and, when known, "  hint: HINT", on stderr.
void PrintError(const Error& error);
void PrintWarning(const std::string& message);
// The exit code for an error that ended a command before it ran anything.
int ExitCodeFor(const Error& error);

}  // namespace berth::cli
