// QueueWaker: what wakes a worker when a job for workers is queued (docs/workers.md). On
// PostgreSQL a connection of its own that LISTENs on berth_queue (a trigger NOTIFYs it); on
// SQLite nothing: the worker polls, as it does anyway, since a pooler in transaction mode
// (PgBouncer) drops notifications and a lost connection loses them.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"

namespace berth::store {

class QueueWaker {
 public:
  virtual ~QueueWaker() = default;
  // Readable when a wake-up may have arrived; -1 when there is nothing to wait on.
  virtual int fd() const = 0;
  // Reads what arrived; true when it held a wake-up. Errors are for the log: the worker goes
  // on polling, and opens a new waker later.
  virtual Result<bool> Take() = 0;
};

// The waker for the store at `location`; one that never wakes for SQLite.
Result<std::unique_ptr<QueueWaker>> OpenQueueWaker(const std::string& location);

}  // namespace berth::store
