#include "job/uncommitted_check.h"

#include "git/repository.h"
#include "gitcli/git_command.h"
#include "sys/process.h"

namespace berth::job {

namespace {

// A listing longer than this is not counted by git's output (libgit2 counts it instead).
constexpr size_t kMaxListing = 64u << 20;

}  // namespace

size_t CountPorcelainEntries(const std::string& porcelain_z) {
  size_t count = 0;
  for (size_t at = 0; at < porcelain_z.size();) {
    size_t end = porcelain_z.find('\0', at);
    if (end == std::string::npos) end = porcelain_z.size();
    const bool two_paths =
        end - at > 2 && (porcelain_z[at] == 'R' || porcelain_z[at] == 'C' ||
                         porcelain_z[at + 1] == 'R' || porcelain_z[at + 1] == 'C');
    if (end > at) ++count;
    at = end + 1;
    if (two_paths) {  // the source's field follows
      end = porcelain_z.find('\0', at);
      at = end == std::string::npos ? porcelain_z.size() : end + 1;
    }
  }
  return count;
}

std::unique_ptr<UncommittedCheck> UncommittedCheck::Start(
    std::vector<std::pair<std::string, std::string>> environ, std::string workdir,
    std::string base) {
  std::unique_ptr<UncommittedCheck> check(new UncommittedCheck);
  UncommittedCheck* self = check.get();
  check->thread_ = std::thread([self, environ = std::move(environ), workdir = std::move(workdir),
                                base = std::move(base)] { self->Run(environ, workdir, base); });
  return check;
}

UncommittedCheck::~UncommittedCheck() {
  if (thread_.joinable()) thread_.join();
}

void UncommittedCheck::Run(const std::vector<std::pair<std::string, std::string>>& environ,
                           const std::string& workdir, const std::string& base) {
  // The signals that end a job belong to the runner's signalfd (as for every thread of a
  // supervisor), and git, a child of this thread, gets them at their defaults all the same.
  sys::BlockStopSignals();
  std::optional<size_t> count;
  // --no-optional-locks: a status that would refresh the index's stat data leaves the index
  // as it is; the user's own git commands write it.
  if (Result<gitcli::GitCommand> git = gitcli::GitCommand::Find(environ))
    if (Result<std::string> listing = git->Output(
            workdir,
            {"--no-optional-locks", "status", "--porcelain", "-z", "--ignore-submodules=all"},
            kMaxListing))
      count = CountPorcelainEntries(*listing);
  if (!count)
    if (Result<git::Repository> repo = git::Repository::Discover(workdir))
      if (Result<size_t> counted = repo->CountUncommitted()) count = *counted;
  MutexLock lock(mutex_);
  if (count && *count > 0)
    warning_ = std::to_string(*count) + " uncommitted change(s) in " + workdir +
               " are not in the job, which starts from " + base.substr(0, 12) +
               "; pass --with-uncommitted to include them";
  done_ = true;
  done_changed_.NotifyAll();
}

std::optional<std::string> UncommittedCheck::TakeWarning(bool wait) {
  MutexLock lock(mutex_);
  if (wait) done_changed_.Wait(mutex_, [this]() REQUIRES(mutex_) { return done_; });
  if (!done_) return std::nullopt;
  return std::exchange(warning_, std::nullopt);
}

}  // namespace berth::job
