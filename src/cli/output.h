// How berth talks to people: errors with their cause and what to do next; and how a command
// that was given --json reports the same error to a program.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "base/quote.h"

namespace berth::cli {

// Who reads a command's stdout: people, or a program (--json: exactly one JSON document, or
// one JSON object per line for `berth logs --json`).
enum class Format { kHuman, kJson };

inline Format FormatOf(bool json) { return json ? Format::kJson : Format::kHuman; }

// "berth: error: MESSAGE" and, when known, "  hint: HINT", on stderr.
void PrintError(const Error& error);
void PrintWarning(const std::string& message);
// The exit code for an error that ended a command before it ran anything.
int ExitCodeFor(const Error& error);

// {"error": {"message", "cause", "hint", "exit_code"}}: what --json prints on stdout when a
// command fails (docs/cli.md).
nlohmann::json ErrorToJson(const Error& error, int exit_code);
// Reports `error` (on stderr for people; with kJson also as ErrorToJson on stdout) and
// returns `exit_code`.
int Fail(const Error& error, Format format, int exit_code);
// The same with ExitCodeFor(error).
int Fail(const Error& error, Format format);
// A JSON document on stdout, indented, never aborting on invalid UTF-8.
void PrintJson(const nlohmann::json& value);

}  // namespace berth::cli
