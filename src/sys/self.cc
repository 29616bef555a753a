#include "sys/self.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

extern char** environ;

namespace berth::sys {

pid_t CurrentPid() { return ::getpid(); }
uid_t CurrentUid() { return ::getuid(); }
gid_t CurrentGid() { return ::getgid(); }

bool IsTerminal(int fd) { return ::isatty(fd) == 1; }

std::string EnvironmentPath(const char* name) {
  const char* value = ::getenv(name);
  return value != nullptr && value[0] == '/' ? value : "";
}

std::string EnvironmentValue(const char* name) {
  const char* value = ::getenv(name);
  return value != nullptr ? value : "";
}

void SetEnvironmentValue(const char* name, const std::string& value) {
  // Fails only for a name with '=' or without memory, neither of which a caller passes.
  (void)::setenv(name, value.c_str(), /*overwrite=*/1);
}

std::vector<std::pair<std::string, std::string>> Environment() {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    if (eq != std::string::npos) pairs.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return pairs;
}

// raise(3) fails only for an invalid signal number; SIGSTOP is valid.
void StopSelf() { ::raise(SIGSTOP); }

void IgnoreBrokenPipe() { ::signal(SIGPIPE, SIG_IGN); }

}  // namespace berth::sys
