#include "store/libpq.h"

#include <optional>
#include <utility>

#include "sys/shared_library.h"

namespace berth::store {

namespace {

constexpr char kSoname[] = "libpq.so.5";

struct Loaded {
  sys::SharedLibrary library;
  LibPq api;
};

// Fills `slot` with the address of `symbol`; false (and `error` set) when it is missing.
template <typename Fn>
bool Bind(const sys::SharedLibrary& library, const char* symbol, Fn* slot,
          std::optional<Error>* error) {
  if (error->has_value()) return false;
  Result<void*> address = library.Symbol(symbol);
  if (!address) {
    *error = address.error();
    return false;
  }
  *slot = reinterpret_cast<Fn>(*address);
  return true;
}

Result<Loaded> Load() {
  Result<sys::SharedLibrary> library = sys::SharedLibrary::Open(kSoname);
  if (!library) {
    return Error(Cause::kUnavailable,
                 "the PostgreSQL job store needs libpq: " + library.error().message(), 0,
                 "install libpq (apt-get install libpq5), or use a SQLite store path");
  }
  Loaded loaded{std::move(*library), {}};
  LibPq& api = loaded.api;
  const sys::SharedLibrary& lib = loaded.library;
  std::optional<Error> error;
  Bind(lib, "PQconnectdbParams", &api.connectdb_params, &error);
  Bind(lib, "PQstatus", &api.status, &error);
  Bind(lib, "PQerrorMessage", &api.error_message, &error);
  Bind(lib, "PQfinish", &api.finish, &error);
  Bind(lib, "PQreset", &api.reset, &error);
  Bind(lib, "PQtransactionStatus", &api.transaction_status, &error);
  Bind(lib, "PQsetNoticeProcessor", &api.set_notice_processor, &error);
  Bind(lib, "PQexec", &api.exec, &error);
  Bind(lib, "PQexecParams", &api.exec_params, &error);
  Bind(lib, "PQresultStatus", &api.result_status, &error);
  Bind(lib, "PQresultErrorField", &api.result_error_field, &error);
  Bind(lib, "PQresultErrorMessage", &api.result_error_message, &error);
  Bind(lib, "PQclear", &api.clear, &error);
  Bind(lib, "PQntuples", &api.ntuples, &error);
  Bind(lib, "PQgetvalue", &api.getvalue, &error);
  Bind(lib, "PQgetisnull", &api.getisnull, &error);
  Bind(lib, "PQgetlength", &api.getlength, &error);
  Bind(lib, "PQcmdTuples", &api.cmd_tuples, &error);
  Bind(lib, "PQconninfoParse", &api.conninfo_parse, &error);
  Bind(lib, "PQconninfoFree", &api.conninfo_free, &error);
  Bind(lib, "PQfreemem", &api.freemem, &error);
  Bind(lib, "PQsocket", &api.socket, &error);
  Bind(lib, "PQconsumeInput", &api.consume_input, &error);
  Bind(lib, "PQnotifies", &api.notifies, &error);
  if (error.has_value()) {
    return Error(Cause::kUnavailable, "the PostgreSQL job store: " + error->message(), 0,
                 "install a newer libpq (apt-get install libpq5)");
  }
  return loaded;
}

}  // namespace

Result<const LibPq*> LoadLibPq() {
  static const Result<Loaded> loaded = Load();
  if (!loaded.has_value()) return loaded.error();
  return &loaded->api;
}

}  // namespace berth::store
