#include "cli/compact_command.h"

#include <fmt/core.h>

#include "cli/output.h"
#include "git/repository.h"
#include "workspace/workspace.h"

namespace berth::cli {

void AddCompactCommand(CLI::App& app, CompactOptions* o) {
  CLI::App* sub = app.add_subcommand("compact-snapshot", "");  // internal: started by jobs
  sub->group("");
  sub->add_option("repo", o->repo)->required();
  sub->add_option("commit", o->commit)->required();
}

int RunCompactCommand(const GlobalOptions& global, const CompactOptions& options) {
  Result<job::JobContext> ctx = MakeJobContext(global);
  if (!ctx) {
    PrintError(ctx.error());
    return ExitCodeFor(ctx.error());
  }
  Result<git::Repository> repo = git::Repository::Discover(options.repo);
  if (!repo) {
    PrintError(repo.error());
    return ExitCodeFor(repo.error());
  }
  Result<std::optional<workspace::Snapshot>> made =
      workspace::CompactSnapshot(*repo, ctx->state_dir, options.commit);
  if (!made) {
    PrintError(made.error());
    return ExitCodeFor(made.error());
  }
  if (*made)
    fmt::print("berth: compacted the snapshot of {} into {} ({} layers)\n", options.commit,
               (*made)->name, (*made)->stack.size());
  else
    fmt::print("berth: the snapshot of {} needs no compaction\n", options.commit);
  return 0;
}

}  // namespace berth::cli
