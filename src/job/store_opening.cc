#include "job/store_opening.h"

#include <utility>

#include "job/secret_mask.h"
#include "job/stale.h"
#include "store/open_store.h"

namespace berth::job {

StoreOpening::StoreOpening(const JobContext& ctx)
    : thread_([this, &ctx] {
        Result<std::unique_ptr<store::Store>> raw = store::OpenStore(ctx.store_location);
        if (raw) {
          masking_ = std::make_unique<MaskingStore>(**raw, KnownSecrets(ctx, {}));
          IgnoreError(ReapStaleJobs(*masking_), "stale jobs are reaped again by the next command");
        }
        raw_.emplace(std::move(raw));
      }) {}

StoreOpening::~StoreOpening() {
  if (thread_.joinable()) thread_.join();
  masking_.reset();  // before the connection it borrows
}

Result<MaskingStore*> StoreOpening::Get() {
  // The join is what orders the thread's writes of raw_ and masking_ before the reads below.
  if (thread_.joinable()) thread_.join();
  if (!*raw_) return raw_->error();
  return masking_.get();
}

}  // namespace berth::job
