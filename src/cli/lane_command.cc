#include "cli/lane_command.h"

#include <fmt/core.h>

#include <cstdio>
#include <string_view>

#include "lane/lane_run.h"
#include "sys/fs.h"
#include "sys/self.h"

namespace berth::cli {

int RunLaneCommand(const GlobalOptions& global, const std::vector<std::string>& args,
                   int64_t entry_wall_ms, int64_t entry_steady_ms) {
  lane::LaneInvocation inv;
  inv.args = args;
  inv.entry_wall_ms = entry_wall_ms;
  inv.entry_steady_ms = entry_steady_ms;
  inv.caller_cwd = sys::CurrentDir().value_or("/");
  inv.environ = sys::Environment();
  inv.make_context = [&global] { return MakeJobContext(global); };
  lane::LaneResult result = lane::RunLane(inv);
  fmt::print(stdout, "{}", result.stdout_text);
  std::fflush(stdout);
  fmt::print(stderr, "{}", result.stderr_text);
  std::fflush(stderr);
  return result.exit_code;
}

bool InvokedAsPstackRunner(const char* argv0) {
  if (argv0 == nullptr) return false;
  std::string_view name(argv0);
  if (size_t slash = name.rfind('/'); slash != std::string_view::npos)
    name = name.substr(slash + 1);
  return name == "pstack-runner";
}

}  // namespace berth::cli
