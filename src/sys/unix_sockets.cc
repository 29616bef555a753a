#include "sys/unix_sockets.h"

#include <algorithm>
#include <sstream>

#include "sys/fs.h"

namespace berth::sys {

std::vector<std::string> ParseProcNetUnix(const std::string& text) {
  // "Num RefCount Protocol Flags Type St Inode Path": the path, when present, is the eighth
  // field and runs to the end of the line (it may hold spaces); abstract names start with '@'.
  std::vector<std::string> paths;
  std::istringstream lines(text);
  std::string line;
  bool header = true;
  while (std::getline(lines, line)) {
    if (header) {
      header = false;
      continue;
    }
    size_t at = 0;
    for (int field = 0; field < 7 && at != std::string::npos; ++field) {
      at = line.find_first_not_of(' ', at);
      if (at != std::string::npos) at = line.find(' ', at);
    }
    if (at == std::string::npos) continue;
    at = line.find_first_not_of(' ', at);
    if (at == std::string::npos || line[at] != '/') continue;
    paths.push_back(line.substr(at));
  }
  return paths;
}

std::vector<std::string> ListUnixSockets() {
  Result<std::string> text = ReadFile("/proc/net/unix");
  if (!text) return {};
  std::vector<std::string> sockets;
  for (const std::string& path : ParseProcNetUnix(*text)) {
    // A socket bound in another mount namespace, or since removed, names no socket here.
    // Canonical, so that a socket bound through a symlink (/var/run) is found where it is.
    if (TypeOfFollowing(path) != FileType::kSocket) continue;
    if (Result<std::string> real = RealPath(path); real) sockets.push_back(*real);
  }
  std::sort(sockets.begin(), sockets.end());
  sockets.erase(std::unique(sockets.begin(), sockets.end()), sockets.end());
  return sockets;
}

}  // namespace berth::sys
