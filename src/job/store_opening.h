// A command's job store, opened on a thread of its own while the command does the work that
// does not need it.
//
// On PostgreSQL, opening the store is most of a short command's time: libpq and the two dozen
// libraries it needs are loaded, a TCP connection is made and authenticated, and the stale
// sweep makes its round trip. `berth run` meanwhile finds the repository, reads its policy,
// resolves the agent and the base commit, none of which needs the store. Side by side, the
// command takes as long as the longer of the two instead of both.
#pragma once

#include <memory>
#include <optional>
#include <thread>

#include "base/result.h"
#include "job/context.h"
#include "job/masking_store.h"
#include "store/store.h"

namespace berth::job {

class StoreOpening {
 public:
  // Starts opening ctx's store (OpenMaskingStore) and sweeping its stale jobs
  // (ReapStaleJobs). `ctx` must outlive this object.
  explicit StoreOpening(const JobContext& ctx);
  ~StoreOpening();  // waits for the opening: no thread outlives the command's use of it
  StoreOpening(const StoreOpening&) = delete;
  StoreOpening& operator=(const StoreOpening&) = delete;

  // Waits until the store is open and swept, and returns it, or why it could not be opened.
  // The store stays this object's; every call returns the same answer.
  Result<MaskingStore*> Get();
  // After a Get that succeeded: the same connection without the mask, for a caller that masks
  // what it writes itself (the supervisor of a job run in this process).
  store::Store& Unmasked() { return *raw_->value(); }

 private:
  // Set by the thread: the connection, and the mask over it.
  std::optional<Result<std::unique_ptr<store::Store>>> raw_;
  std::unique_ptr<MaskingStore> masking_;
  std::thread thread_;
};

}  // namespace berth::job
