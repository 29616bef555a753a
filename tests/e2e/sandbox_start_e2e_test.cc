// What `berth sandbox -- true` asks the filesystem before its sandbox exists (issue 31): the
// spec names every hidden path, home and allowlist entry, and resolves each path once
// (sys::FsLookupCache), from its parent's resolution, instead of a readlink of every
// component of the home once per path that lies in it. Counted with strace, so the figures
// are the kernel's, not berth's own account of itself.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/e2e_util.h"

namespace berth::e2e {
namespace {

class SandboxStartTest : public SandboxTest {
 protected:
  // How many times the supervisor (not its sandboxed children) made each path lookup call
  // while it ran `berth sandbox -- true`, and the calls' lines for messages.
  std::map<std::string, int> Lookups(std::string* lines) {
    std::map<std::string, int> counts;
    std::optional<std::string> strace = FindInPath("strace");
    std::optional<std::string> true_bin = FindInPath("true");
    if (!strace.has_value() || !true_bin.has_value()) {
      ADD_FAILURE() << "strace or true is not installed (scripts/install-deps installs strace)";
      return counts;
    }
    const std::string log = root() + "/strace.log";
    std::vector<std::string> argv = {
        *strace, "-qq",    "-e",         "trace=readlink,readlinkat,newfstatat,lstat,stat,statx",
        "-o",    log,      BERTH_BINARY, "sandbox",
        "--",    *true_bin};
    RunResult result = RunProgram(argv, BaseEnv(), ws());
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    std::istringstream in(ReadText(log));
    for (std::string line; std::getline(in, line);) {
      const size_t paren = line.find('(');
      if (paren == std::string::npos) continue;
      ++counts[line.substr(0, paren)];
      *lines += line + "\n";
    }
    return counts;
  }
};

TEST_F(SandboxStartTest, TheSpecResolvesEachPathOnce) {
  std::string lines;
  std::map<std::string, int> counts = Lookups(&lines);
  const int readlinks = counts["readlink"] + counts["readlinkat"];
  const int stats = counts["newfstatat"] + counts["lstat"] + counts["stat"] + counts["statx"];
  // A readlink only where a component is a symlink (a lived-in home's dotfiles: 36 as root),
  // and berth's own /proc/self/exe: before, the C library's realpath read every component
  // of every path again (240 for root's home on the machine of issue 31, 312 below the
  // tests' HOME).
  EXPECT_LE(readlinks, 60) << readlinks << " readlinks, " << stats << " stats:\n" << lines;
  // One lstat per path component the spec names (once), the plan's look at each mount
  // target, and the loader's fstat of each library: 136 to 231 in the tests' homes (435
  // before).
  EXPECT_LE(readlinks + stats, 300) << readlinks << " readlinks, " << stats << " stats:\n" << lines;
  // Something was counted at all (strace saw the run).
  EXPECT_GT(stats, 0) << lines;
}

}  // namespace
}  // namespace berth::e2e
