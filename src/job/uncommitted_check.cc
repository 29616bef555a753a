#include "job/uncommitted_check.h"

#include <utility>

#include "git/repository.h"
#include "sys/process.h"

namespace berth::job {

std::unique_ptr<UncommittedCheck> UncommittedCheck::Start(std::string workdir, std::string base) {
  Counter count = [workdir]() -> std::optional<size_t> {
    Result<git::Repository> repo = git::Repository::Discover(workdir);
    if (!repo) return std::nullopt;
    Result<size_t> counted = repo->CountUncommitted();
    if (!counted) return std::nullopt;
    return *counted;
  };
  return Start(std::move(count), std::move(workdir), std::move(base));
}

std::unique_ptr<UncommittedCheck> UncommittedCheck::Start(Counter count, std::string workdir,
                                                          std::string base) {
  std::unique_ptr<UncommittedCheck> check(new UncommittedCheck);
  UncommittedCheck* self = check.get();
  check->thread_ = std::thread([self, count = std::move(count), workdir = std::move(workdir),
                                base = std::move(base)] { self->Run(count, workdir, base); });
  return check;
}

UncommittedCheck::~UncommittedCheck() {
  if (thread_.joinable()) thread_.join();
}

void UncommittedCheck::Run(const Counter& count, const std::string& workdir,
                           const std::string& base) {
  // The signals that end a job belong to the runner's signalfd, as for every thread of a
  // supervisor.
  sys::BlockStopSignals();
  std::optional<size_t> counted = count();
  MutexLock lock(mutex_);
  if (counted && *counted > 0)
    warning_ = std::to_string(*counted) + " uncommitted change(s) in " + workdir +
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
