#include "store/pg_conn.h"

#include <charconv>
#include <cstring>
#include <utility>

#include "base/check.h"
#include "base/strings.h"
#include "store/store.h"
#include "sys/process.h"

namespace berth::store {

namespace {

// How much of a statement an error quotes: enough to name it.
constexpr size_t kSqlShown = 60;

// libpq's messages end with a newline and sometimes hold several lines.
std::string MessageLine(const char* message) { return OneLine(message != nullptr ? message : ""); }

// Discards the server's notices ("relation already exists, skipping"), which libpq would
// print on stderr.
void IgnoreNotice(void*, const char*) {}

// The password `url` names ("" for none), so that messages can mask it. kInvalidArgument,
// with libpq's reason, when `url` is not a connection URL libpq accepts.
Result<std::string> ParsePassword(const LibPq& pq, const std::string& url,
                                  const std::string& location) {
  char* parse_error = nullptr;
  PQconninfoOption* options = pq.conninfo_parse(url.c_str(), &parse_error);
  if (options == nullptr) {
    std::string why = parse_error != nullptr ? MessageLine(parse_error) : "out of memory";
    if (parse_error != nullptr) pq.freemem(parse_error);
    // libpq's reason quotes the part it did not understand, which may be the password.
    return Error(
        Cause::kInvalidArgument,
        "job store '" + location + "' is not a valid PostgreSQL URL: " + RedactPostgresUrl(why), 0,
        "write it as postgresql://USER@HOST[:PORT]/DATABASE[?PARAMETER=VALUE...]");
  }
  std::string password;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::strcmp(o->keyword, "password") == 0 && o->val != nullptr) password = o->val;
  }
  pq.conninfo_free(options);
  return password;
}

}  // namespace

bool IsPostgresUrl(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::string RedactPostgresUrl(std::string_view url) {
  std::string out(url);
  size_t scheme = out.find("://");
  if (scheme == std::string::npos) return out;
  size_t start = scheme + 3;
  size_t end = out.find_first_of("/?#", start);
  if (end == std::string::npos) end = out.size();
  // The user-info ends at the authority's last '@'; its password follows the first ':'.
  size_t at = out.rfind('@', end);
  if (at != std::string::npos && at >= start) {
    size_t colon = out.find(':', start);
    if (colon != std::string::npos && colon < at) out.erase(colon, at - colon);
  }
  // A password=... query parameter.
  for (size_t pos = out.find("password="); pos != std::string::npos;
       pos = out.find("password=", pos + 1)) {
    if (pos == 0 || (out[pos - 1] != '?' && out[pos - 1] != '&')) continue;
    size_t value = pos + std::strlen("password=");
    size_t value_end = out.find_first_of("&#", value);
    if (value_end == std::string::npos) value_end = out.size();
    out.replace(value, value_end - value, "***");
  }
  return out;
}

PgParams& PgParams::Text(std::string_view value) {
  values_.emplace_back(std::string(value));
  binary_.push_back(0);
  return *this;
}

PgParams& PgParams::Bytes(std::string_view value) {
  values_.emplace_back(std::string(value));
  binary_.push_back(1);
  return *this;
}

PgParams& PgParams::Int(int64_t value) {
  values_.emplace_back(std::to_string(value));
  binary_.push_back(0);
  return *this;
}

PgParams& PgParams::Null() {
  values_.emplace_back(std::nullopt);
  binary_.push_back(0);
  return *this;
}

PgParams& PgParams::OptionalText(const std::optional<std::string>& value) {
  return value.has_value() ? Text(*value) : Null();
}

PgParams& PgParams::OptionalInt(std::optional<int64_t> value) {
  return value.has_value() ? Int(*value) : Null();
}

PgResult::PgResult(PgResult&& other) noexcept
    : pq_(other.pq_), result_(std::exchange(other.result_, nullptr)) {}

PgResult::~PgResult() {
  if (result_ != nullptr) pq_->clear(result_);
}

int PgResult::Rows() const { return pq_->ntuples(result_); }

int64_t PgResult::AffectedRows() const {
  const char* text = pq_->cmd_tuples(result_);
  int64_t rows = 0;
  if (text != nullptr) std::from_chars(text, text + std::strlen(text), rows);
  return rows;
}

bool PgResult::IsNull(int row, int column) const {
  return pq_->getisnull(result_, row, column) != 0;
}

std::string PgResult::Text(int row, int column) const {
  const char* value = pq_->getvalue(result_, row, column);
  if (value == nullptr) return {};
  return std::string(value, static_cast<size_t>(pq_->getlength(result_, row, column)));
}

std::string PgResult::Bytes(int row, int column) const {
  const std::string hex = Text(row, column);
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 0;
  };
  std::string out;
  if (hex.size() < 2 || hex[0] != '\\' || hex[1] != 'x') return out;  // bytea_output = hex
  out.reserve((hex.size() - 2) / 2);
  for (size_t i = 2; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

int64_t PgResult::Int(int row, int column) const {
  const char* value = pq_->getvalue(result_, row, column);
  int64_t out = 0;
  if (value != nullptr) {
    std::from_chars(value, value + pq_->getlength(result_, row, column), out);
  }
  return out;
}

std::optional<std::string> PgResult::OptionalText(int row, int column) const {
  if (IsNull(row, column)) return std::nullopt;
  return Text(row, column);
}

std::optional<int64_t> PgResult::OptionalInt(int row, int column) const {
  if (IsNull(row, column)) return std::nullopt;
  return Int(row, column);
}

Result<PgConn> PgConn::Open(const std::string& url, const Options& options, FirstQuery* first) {
  const std::string location = RedactPostgresUrl(url);
  if (!IsPostgresUrl(url)) {
    return Error(Cause::kInvalidArgument,
                 "job store '" + location + "' is not a postgresql:// or postgres:// URL");
  }
  const LibPq* pq = TRY(LoadLibPq());
  std::string password = TRY(ParsePassword(*pq, url, location));
  // Keywords before dbname are defaults: what the URL itself says wins.
  const std::string timeout = std::to_string(options.connect_timeout_s);
  const char* keywords[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), "berth", url.c_str(), nullptr};
  PGconn* raw = pq->connectdb_params(keywords, values, /*expand_dbname=*/1);
  if (raw == nullptr) {
    return Error(Cause::kInternal, "job store " + location + ": out of memory connecting");
  }
  PgConn conn(pq, raw, location, password, options);
  if (pq->status(raw) != CONNECTION_OK) {
    std::string why = conn.Scrub(MessageLine(pq->error_message(raw)));
    if (why.find("authentication failed") != std::string::npos ||
        why.find("no pg_hba.conf entry") != std::string::npos) {
      return Error(
          Cause::kUnauthenticated,
          "the PostgreSQL server refused berth's login to job store " + location + ": " + why, 0,
          "check the user and password (or ~/.pgpass) and the server's pg_hba.conf");
    }
    return Error(Cause::kUnavailable, "cannot connect to job store " + location + ": " + why, 0,
                 "check that the server runs and accepts connections from this host, and the "
                 "URL given by --store, BERTH_STORE or the config's store")
        .WithDetail(kStoreUnreachable);
  }
  pq->set_notice_processor(raw, IgnoreNotice, nullptr);
  if (first == nullptr) {
    TRY(conn.SetUpSession());
    return conn;
  }
  // One simple-query message: the settings, then the first query; the last statement's result
  // comes back. The statements run as one implicit transaction, so an error (say, a table not
  // created yet) undoes the settings too, and they are made again alone below.
  const std::string script = conn.SessionScript() + "; " + first->sql;
  first->sent_ms = sys::WallMillis();
  ++conn.exchanges_;
  first->answer.emplace(conn.Check(pq->exec(raw, script.c_str()), first->sql));
  first->received_ms = sys::WallMillis();
  if (!first->answer->has_value()) TRY(conn.SetUpSession());
  return conn;
}

PgConn::PgConn(PgConn&& other) noexcept
    : pq_(other.pq_),
      conn_(std::exchange(other.conn_, nullptr)),
      location_(std::move(other.location_)),
      password_(std::move(other.password_)),
      options_(other.options_),
      in_transaction_(other.in_transaction_),
      exchanges_(other.exchanges_),
      session_settings_(std::move(other.session_settings_)) {}

PgConn::~PgConn() {
  if (conn_ != nullptr) pq_->finish(conn_);
}

std::string PgConn::SessionScript() const {
  // The values are integers of ours, not input: SET takes no parameters.
  return "SET lock_timeout = '" + std::to_string(options_.lock_timeout_ms) +
         "ms'; SET idle_in_transaction_session_timeout = '" +
         std::to_string(options_.idle_in_transaction_timeout_ms) +
         "ms'; SET client_min_messages = warning; SET bytea_output = hex";
}

Status PgConn::SetUpSession() {
  TRY(ExecScript(SessionScript().c_str()));
  for (const auto& [name, value] : session_settings_) {
    TRY(Exec("SELECT set_config($1, $2, false)", PgParams().Text(name).Text(value)));
  }
  return {};
}

int PgConn::Socket() const { return pq_->socket(conn_); }

Result<int> PgConn::TakeNotifications() {
  if (pq_->consume_input(conn_) == 0) {
    return Error(Cause::kUnavailable,
                 "job store " + location_ +
                     ": lost the connection: " + Scrub(MessageLine(pq_->error_message(conn_))),
                 0, "check that the server runs; berth reconnects on the next call")
        .WithDetail(kStoreUnreachable);
  }
  int count = 0;
  while (PGnotify* notify = pq_->notifies(conn_)) {
    pq_->freemem(notify);
    ++count;
  }
  return count;
}

Status PgConn::SetSessionSetting(const std::string& name, const std::string& value) {
  TRY(Exec("SELECT set_config($1, $2, false)", PgParams().Text(name).Text(value)));
  session_settings_.emplace_back(name, value);
  return {};
}

Status PgConn::ResetIfBroken() {
  if (pq_->status(conn_) == CONNECTION_OK || in_transaction_) return {};
  ++exchanges_;
  pq_->reset(conn_);
  if (pq_->status(conn_) != CONNECTION_OK) {
    return Error(Cause::kUnavailable,
                 "lost the connection to job store " + location_ + ": " +
                     Scrub(MessageLine(pq_->error_message(conn_))),
                 0, "check that the server runs; berth reconnects on the next call")
        .WithDetail(kStoreUnreachable);
  }
  return SetUpSession();
}

Result<PgResult> PgConn::Exec(std::string_view sql, const PgParams& params) {
  TRY(ResetIfBroken());
  std::vector<const char*> values;
  std::vector<int> lengths;
  values.reserve(params.values_.size());
  for (const std::optional<std::string>& value : params.values_) {
    values.push_back(value.has_value() ? value->data() : nullptr);
    lengths.push_back(value.has_value() ? static_cast<int>(value->size()) : 0);
  }
  const std::string text(sql);
  ++exchanges_;
  PGresult* result =
      pq_->exec_params(conn_, text.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                       lengths.data(), params.binary_.data(), /*resultFormat=*/0);
  return Check(result, sql);
}

Status PgConn::ExecScript(const char* sql) {
  TRY(ResetIfBroken());
  ++exchanges_;
  TRY(Check(pq_->exec(conn_, sql), sql));
  return {};
}

Result<PgResult> PgConn::Check(PGresult* raw, std::string_view sql) {
  PgResult result(pq_, raw);
  ExecStatusType status = raw != nullptr ? pq_->result_status(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  return ErrorFor(raw, OneLine(sql, kSqlShown));
}

Error PgConn::ErrorFor(PGresult* result, const std::string& what) const {
  if (result == nullptr || pq_->status(conn_) != CONNECTION_OK) {
    return Error(Cause::kUnavailable,
                 "job store " + location_ + ": " + what +
                     ": lost the connection: " + Scrub(MessageLine(pq_->error_message(conn_))),
                 0, "check that the server runs; berth reconnects on the next call")
        .WithDetail(kStoreUnreachable);
  }
  const char* state_field = pq_->result_error_field(result, PG_DIAG_SQLSTATE);
  const std::string sqlstate = state_field != nullptr ? state_field : "";
  const std::string message =
      "job store " + location_ + ": " + what + ": " +
      Scrub(MessageLine(pq_->result_error_field(result, PG_DIAG_MESSAGE_PRIMARY)));
  if (sqlstate == "55P03" || sqlstate == "40P01" || sqlstate == "40001") {
    return Error(Cause::kBusy,
                 "job store " + location_ +
                     " is busy: another berth process held a lock it "
                     "needs for more than " +
                     std::to_string(options_.lock_timeout_ms) + " ms",
                 0,
                 "try again; if it stays busy, look for a stuck berth process or a long "
                 "transaction on the server");
  }
  // Raised by the fencing triggers (postgres_schema.cc).
  if (sqlstate == kFencedSqlState) return Error(Cause::kFenced, message);
  const std::string sql_class = sqlstate.substr(0, 2);
  if (sql_class == "23" || sqlstate == "P0001") return Error(Cause::kInvalidArgument, message);
  if (sql_class == "28") {
    return Error(Cause::kUnauthenticated, message, 0, "check the user and password");
  }
  if (sqlstate == "42501") {
    return Error(Cause::kPermissionDenied, message, 0,
                 "grant berth's role the privileges docs/store.md lists");
  }
  // Connection exceptions, an operator's shutdown or restart (57P01..57P03: the server is
  // going away or not up yet), and a server out of resources: the store is away, not wrong.
  if (sql_class == "08" || sql_class == "57" || sql_class == "53") {
    return Error(Cause::kUnavailable, message, 0, "check the PostgreSQL server and try again")
        .WithDetail(kStoreUnreachable);
  }
  return Error(Cause::kInternal, message + " (SQLSTATE " + sqlstate + ")");
}

std::string PgConn::Scrub(std::string message) const {
  if (password_.empty()) return message;
  for (size_t pos = message.find(password_); pos != std::string::npos;
       pos = message.find(password_, pos + 3)) {
    message.replace(pos, password_.size(), "***");
  }
  return message;
}

Result<PgTransaction> PgTransaction::Begin(PgConn& conn) {
  CHECK(!conn.in_transaction_);  // nested transactions are a bug
  TRY(conn.ExecScript("BEGIN"));
  conn.in_transaction_ = true;
  return PgTransaction(&conn);
}

PgTransaction::PgTransaction(PgTransaction&& other) noexcept
    : conn_(std::exchange(other.conn_, nullptr)) {}

PgTransaction::~PgTransaction() {
  if (conn_ == nullptr) return;
  // After a failed statement the server has aborted the transaction; ROLLBACK ends it. A
  // broken connection has no transaction left to end.
  static_cast<void>(conn_->ExecScript("ROLLBACK"));
  conn_->in_transaction_ = false;
}

Status PgTransaction::Commit() {
  CHECK(conn_ != nullptr);
  PgConn* conn = std::exchange(conn_, nullptr);
  Status committed = conn->ExecScript("COMMIT");
  conn->in_transaction_ = false;
  return committed;
}

}  // namespace berth::store
