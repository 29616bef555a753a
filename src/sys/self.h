// The calling process: its ids, its terminals, its environment, and stopping it where a test
// asked it to pause.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace berth::sys {

pid_t CurrentPid();
uid_t CurrentUid();
gid_t CurrentGid();

// Whether `fd` is open on a terminal (isatty): output for people then gets progress lines
// and colour-free escapes of control characters.
bool IsTerminal(int fd);

// The value of the environment variable `name` when it is an absolute path (XDG_STATE_HOME,
// TMPDIR, ...); "" when it is unset, empty or relative, which such variables treat as unset.
std::string EnvironmentPath(const char* name);

// The value of the environment variable `name`; "" when it is unset or empty.
std::string EnvironmentValue(const char* name);

// Sets the environment variable `name` of this process, which children started later
// inherit. setenv(3) is not thread-safe: only for a process's start, before threads.
void SetEnvironmentValue(const char* name, const std::string& value);

// The environment (environ) as NAME/VALUE pairs, in order; an entry without '=' is skipped.
std::vector<std::pair<std::string, std::string>> Environment();

// Ignores SIGPIPE in this process: a peer that closed its end makes writes fail with EPIPE
// instead of ending the process (the MCP server reports it and stops serving).
void IgnoreBrokenPipe();

// Sends SIGSTOP to the calling process: it stops until someone sends SIGCONT (the tests that
// inspect a land between two of its steps).
void StopSelf();

}  // namespace berth::sys
