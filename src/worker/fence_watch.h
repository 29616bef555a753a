// FenceWatch: a worker's job connection that reports every write the store refused because
// the worker's claim on the job ended (Cause::kFenced): the refusal stands, and the worker's
// log says which write it was and why. The job's run treats it like any failed write.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "store/forwarding_store.h"

namespace berth::worker {

class FenceWatch : public store::ForwardingStore {
 public:
  using Log = std::function<void(const std::string&)>;
  FenceWatch(std::unique_ptr<store::Store> inner, Log log)
      : ForwardingStore(std::move(inner)), log_(std::move(log)) {}

  int refused() const { return refused_; }

 protected:
  void Observe(const Error& error) override {
    if (error.cause() != Cause::kFenced) return;
    ++refused_;
    log_("refused a late write: " + error.ToString());
  }

 private:
  Log log_;
  int refused_ = 0;
};

}  // namespace berth::worker
