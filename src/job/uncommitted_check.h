// The check that tells the person who submits a job how many uncommitted changes of their
// working tree the job will not see (it starts from a commit).
//
// It costs what `git status` costs: a stat of every tracked file and a read of every
// directory, about 80-250 ms at 100,000 files. So it runs beside the job, in a thread of its
// own, instead of before it: a job that runs longer than one `git status` pays nothing for it,
// and a no-op job ends when the later of the two does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/mutex.h"

namespace berth::job {

class UncommittedCheck {
 public:
  // Starts counting the changes of the working tree at `workdir` that commit `base` lacks, as
  // the user's own git counts them (`git status --porcelain`, the user's configuration
  // included: an fsmonitor or untracked cache there makes it cheaper); with libgit2's status
  // when git is not on the PATH of `environ` or fails. Never writes to the repository.
  static std::unique_ptr<UncommittedCheck> Start(
      std::vector<std::pair<std::string, std::string>> environ, std::string workdir,
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
  void Run(const std::vector<std::pair<std::string, std::string>>& environ,
           const std::string& workdir, const std::string& base);

  Mutex mutex_;
  CondVar done_changed_;
  bool done_ GUARDED_BY(mutex_) = false;
  std::optional<std::string> warning_ GUARDED_BY(mutex_);
  std::thread thread_;
};

// How many changes `git status --porcelain -z` printed: one per entry, where a rename or a
// copy also names its source in a second field.
size_t CountPorcelainEntries(const std::string& porcelain_z);

}  // namespace berth::job
