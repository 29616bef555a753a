#include "cli/hook_command.h"

#include "config/user_config.h"
#include "host/permission_mode.h"
#include "sys/line_reader.h"
#include "sys/process.h"

namespace berth::cli {

namespace {

// Hook input is a small JSON document; anything longer is not one.
constexpr size_t kMaxHookInput = 1024 * 1024;
constexpr int kHookReadMs = 5000;

}  // namespace

void AddHookCommand(CLI::App& app, HookOptions* o) {
  CLI::App* hook = app.add_subcommand("hook", "Entry points for agent hosts' hooks (internal)");
  hook->add_option("which", o->which, "permission-mode")
      ->required()
      ->check(CLI::IsMember({"permission-mode"}));
}

int RunHookCommand(const GlobalOptions& global, const HookOptions&) {
  sys::LineReader reader(0, kMaxHookInput);
  std::string input;
  const int64_t deadline = sys::MonotonicMillis() + kHookReadMs;
  while (true) {
    const int64_t left = deadline - sys::MonotonicMillis();
    if (left <= 0) return 0;
    Result<sys::LineReader::Item> item = reader.Next(static_cast<int>(left));
    if (!item || item->kind == sys::LineReader::Kind::kTooLong ||
        item->kind == sys::LineReader::Kind::kTimeout)
      return 0;
    if (item->kind == sys::LineReader::Kind::kEnd) break;
    input += item->text + "\n";
    if (input.size() > kMaxHookInput) return 0;
  }
  const std::string state_dir = config::StateDir(global.state_dir, sys::CurrentIdentity().home);
  IgnoreError(host::WriteRecord(state_dir, input, sys::WallMillis()),
              "the hook never blocks the host: without a record berth assumes the default mode");
  return 0;
}

}  // namespace berth::cli
