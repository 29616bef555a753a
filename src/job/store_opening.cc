#include "job/store_opening.h"

#include <utility>

#include "job/stale.h"

namespace berth::job {

StoreOpening::StoreOpening(const JobContext& ctx)
    : thread_([this, &ctx] {
        Result<std::unique_ptr<MaskingStore>> store = OpenMaskingStore(ctx);
        if (store)
          IgnoreError(ReapStaleJobs(**store), "stale jobs are reaped again by the next command");
        opened_.emplace(std::move(store));
      }) {}

StoreOpening::~StoreOpening() {
  if (thread_.joinable()) thread_.join();
}

Result<MaskingStore*> StoreOpening::Get() {
  // The join is what orders the thread's write of opened_ before the reads below.
  if (thread_.joinable()) thread_.join();
  if (!*opened_) return opened_->error();
  return opened_->value().get();
}

}  // namespace berth::job
