// The pathname Unix sockets bound in the caller's network namespace, from /proc/net/unix.
//
// The sandbox masks those its view would still show (docs/sandbox.md); read before the clone,
// so the list is what existed when the job started.
#pragma once

#include <string>
#include <vector>

namespace berth::sys {

// The canonical paths of bound pathname sockets that exist as sockets now, sorted, without
// duplicates. Abstract and unnamed sockets are left out. Empty when /proc/net/unix is
// unreadable.
std::vector<std::string> ListUnixSockets();

// Parses the text of /proc/net/unix: the path column of each line that has one.
std::vector<std::string> ParseProcNetUnix(const std::string& text);

}  // namespace berth::sys
