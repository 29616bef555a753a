// The check that tells the person who submits a job how many uncommitted changes of their
// working tree the job will not see (it starts from a commit).
//
// It costs a status of the working tree: a stat of every tracked file and a read of every
// directory, about 250 ms at 100,000 files. So it runs beside the job, in a thread of its
// own, instead of before it: a job that runs longer than that pays nothing for it, and a no-op
// job ends when the later of the two does.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "base/mutex.h"

namespace berth::job {

class UncommittedCheck {
 public:
  // What counts: the number of changes, or nothing when it could not tell.
  using Counter = std::function<std::optional<size_t>()>;

  // Starts counting the changes of the working tree at `workdir` that commit `base` lacks, with
  // libgit2's status (git::Repository::CountUncommitted), in-process: no filter, hook or
  // fsmonitor command of the repository runs, as the user's `git status` would run them. It
  // never writes to the repository.
  static std::unique_ptr<UncommittedCheck> Start(std::string workdir, std::string base);
  // The same with `count` in place of libgit2's status (tests).
  static std::unique_ptr<UncommittedCheck> Start(Counter count, std::string workdir,
                                                 std::string base);
  ~UncommittedCheck();  // waits for the count
  UncommittedCheck(const UncommittedCheck&) = delete;
  UncommittedCheck& operator=(const UncommittedCheck&) = delete;

  // The warning line, once: when there are uncommitted changes and the count is known. With
  // `wait`, blocks until it is; without, returns nothing while it is still counting. Later
  // calls return nothing. A check that failed says nothing: it is advice, not a step of the
  // job.
  std::optional<std::string> TakeWarning(bool wait);

 private:
  UncommittedCheck() = default;
  void Run(const Counter& count, const std::string& workdir, const std::string& base);

  Mutex mutex_;
  CondVar done_changed_;
  bool done_ GUARDED_BY(mutex_) = false;
  std::optional<std::string> warning_ GUARDED_BY(mutex_);
  std::thread thread_;
};

}  // namespace berth::job
