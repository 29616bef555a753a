#include "store/queue_waker.h"

#include <utility>

#include "store/pg_conn.h"

namespace berth::store {

namespace {

class PostgresWaker final : public QueueWaker {
 public:
  explicit PostgresWaker(PgConn conn) : conn_(std::move(conn)) {}
  int fd() const override { return conn_.Socket(); }
  Result<bool> Take() override { return TRY(conn_.TakeNotifications()) > 0; }

 private:
  PgConn conn_;
};

class NoWaker final : public QueueWaker {
 public:
  int fd() const override { return -1; }
  Result<bool> Take() override { return false; }
};

}  // namespace

Result<std::unique_ptr<QueueWaker>> OpenQueueWaker(const std::string& location) {
  if (!IsPostgresUrl(location)) return std::unique_ptr<QueueWaker>(std::make_unique<NoWaker>());
  PgConn conn = TRY(PgConn::Open(location, PgConn::Options{}));
  TRY(conn.ExecScript("LISTEN berth_queue"));
  return std::unique_ptr<QueueWaker>(std::make_unique<PostgresWaker>(std::move(conn)));
}

}  // namespace berth::store
