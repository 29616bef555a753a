#include "sys/process.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "base/strings.h"
#include "sys/fs.h"

namespace berth::sys {
namespace {

// This process's cgroup v2 directory ("" when the host mounts no v2 hierarchy).
std::string OwnV2Cgroup() {
  const std::string root = Exists("/sys/fs/cgroup/cgroup.controllers") ? "/sys/fs/cgroup"
                           : Exists("/sys/fs/cgroup/unified/cgroup.procs")
                               ? "/sys/fs/cgroup/unified"
                               : "";
  if (root.empty()) return "";
  for (const std::string& line : Split(ReadFile("/proc/self/cgroup").value_or(""), '\n'))
    if (line.rfind("0::", 0) == 0) return NormalizePath(root + "/" + line.substr(3));
  return "";
}

// The v2 line ("0::PATH") of /proc/PID/cgroup.
std::string V2LineOf(pid_t pid) {
  for (const std::string& line :
       Split(ReadFile("/proc/" + std::to_string(pid) + "/cgroup").value_or(""), '\n'))
    if (line.rfind("0::", 0) == 0) return line;
  return "";
}

// Clones a child that waits on a pipe, returns the v2 line of its /proc/PID/cgroup, and
// lets it exit.
std::string ClonedChildsCgroup(int cgroup_fd) {
  Result<Pipe> hold = MakePipe();
  if (!hold) return "pipe: " + hold.error().ToString();
  Result<Cloned> cloned = Clone(0, cgroup_fd);
  if (!cloned) return "clone: " + cloned.error().ToString();
  if (cloned->pid == 0) {
    ::close(hold->write.get());  // so that the parent's close is EOF here
    char byte;
    (void)::read(hold->read.get(), &byte, 1);
    ::_exit(0);
  }
  std::string line = V2LineOf(cloned->pid);
  hold->write.Reset();
  Process(cloned->pid, std::move(cloned->pidfd), 0).Wait().value();
  return line;
}

TEST(Clone, StartsTheChildInTheGivenCgroup) {
  const std::string own = OwnV2Cgroup();
  const std::string dir = own + "/berth-clone-test-" + std::to_string(::getpid());
  if (own.empty() || !MakeDirs(dir, 0755))
    GTEST_SKIP() << "SKIPPED LOUDLY: no cgroup v2 hierarchy where this user may create a "
                    "cgroup: CLONE_INTO_CGROUP is not exercised";
  Result<UniqueFd> fd = OpenReadOnly(dir);
  ASSERT_TRUE(fd) << fd.error().ToString();
  const std::string relative = dir.substr(dir.find("/berth-clone-test-"));
  // Control: without the descriptor the child starts where its parent is.
  EXPECT_EQ(ClonedChildsCgroup(-1).find(relative), std::string::npos);
  std::string line = ClonedChildsCgroup(fd->get());
  EXPECT_TRUE(line.size() > relative.size() &&
              line.compare(line.size() - relative.size(), relative.size(), relative) == 0)
      << line;
  fd->Reset();
  EXPECT_TRUE(RemoveDir(dir));
}

}  // namespace
}  // namespace berth::sys
