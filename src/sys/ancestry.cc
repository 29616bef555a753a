#include "sys/ancestry.h"

#include <unistd.h>

#include "sys/fs.h"

namespace berth::sys {

namespace {

// The ppid field of /proc/PID/stat: after the ")" that ends the command name (which may hold
// spaces and parentheses itself), the state, then the ppid.
int ParentOf(int pid) {
  Result<std::string> stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return 0;
  size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 4 > stat->size()) return 0;
  size_t start = stat->find(' ', close + 2);
  if (start == std::string::npos) return 0;
  int ppid = 0;
  for (size_t i = start + 1; i < stat->size() && (*stat)[i] >= '0' && (*stat)[i] <= '9'; ++i)
    ppid = ppid * 10 + ((*stat)[i] - '0');
  return ppid;
}

}  // namespace

std::vector<std::string> AncestorNames(int depth) {
  std::vector<std::string> names;
  int pid = static_cast<int>(::getppid());
  while (pid > 1 && static_cast<int>(names.size()) < depth) {
    Result<std::string> comm = ReadFile("/proc/" + std::to_string(pid) + "/comm");
    if (!comm) break;
    std::string name = *comm;
    while (!name.empty() && name.back() == '\n') name.pop_back();
    names.push_back(name);
    pid = ParentOf(pid);
  }
  return names;
}

}  // namespace berth::sys
