// LibPq: the libpq functions the PostgreSQL store calls, loaded from libpq.so.5 on first use.
//
// berth links its libraries statically because every shared library costs each start its
// mapping and relocations (the top-level CMakeLists.txt). libpq cannot be: Debian ships no
// static libpgcommon, libpgport, GSSAPI or LDAP, and libpq.so.5 pulls in about twenty shared
// libraries (TLS, Kerberos, LDAP, SASL). Loading it only when a store location is a
// PostgreSQL URL keeps the cost to the commands that use one; the SQLite path never loads it.
// The headers give the types; the functions come through this table.
#pragma once

#include <libpq-fe.h>

#include "base/result.h"

namespace berth::store {

struct LibPq {
  decltype(&::PQconnectdbParams) connectdb_params;
  decltype(&::PQstatus) status;
  decltype(&::PQerrorMessage) error_message;
  decltype(&::PQfinish) finish;
  decltype(&::PQreset) reset;
  decltype(&::PQtransactionStatus) transaction_status;
  decltype(&::PQsetNoticeProcessor) set_notice_processor;
  decltype(&::PQexec) exec;
  decltype(&::PQexecParams) exec_params;
  decltype(&::PQresultStatus) result_status;
  decltype(&::PQresultErrorField) result_error_field;
  decltype(&::PQresultErrorMessage) result_error_message;
  decltype(&::PQclear) clear;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetisnull) getisnull;
  decltype(&::PQgetlength) getlength;
  decltype(&::PQcmdTuples) cmd_tuples;
  decltype(&::PQconninfoParse) conninfo_parse;
  decltype(&::PQconninfoFree) conninfo_free;
  decltype(&::PQfreemem) freemem;
  decltype(&::PQsocket) socket;
  decltype(&::PQconsumeInput) consume_input;
  decltype(&::PQnotifies) notifies;
};

// The table, loading libpq.so.5 the first time (thread-safe; the library stays loaded for the
// life of the process, as the dynamic linker's state is the process's anyway). kUnavailable,
// naming the package to install, when libpq is missing.
Result<const LibPq*> LoadLibPq();

}  // namespace berth::store
