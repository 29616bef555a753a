// libFuzzer entry point for the records a command meets besides the request and the receipt
// (issue 27): the land journal, and a job row whose request and receipt are these bytes, as
// `berth ls`, `show` and `land` read it (CheckStoredRecords, JobToJson). None may abort; an
// undecodable row is an error that names the record.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "job/job_json.h"
#include "job/stored_records.h"
#include "land/land.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  berth::Result<berth::land::LandJournal> journal = berth::land::LandJournal::FromJson(text);
  if (journal) {
    berth::Result<berth::land::LandJournal> again = berth::land::LandJournal::FromJson(
        journal->ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    CHECK(again);
    CHECK(again->ToJson() == journal->ToJson());
  } else {
    CHECK(journal.error().message().rfind("malformed land journal", 0) == 0);
  }

  berth::store::JobRecord row;
  row.id = "0fuzz";
  row.request_json = text;
  row.receipt_json = text;
  berth::Status decoded = berth::job::CheckStoredRecords(row);
  if (!decoded) CHECK(decoded.error().message().rfind("the job's stored ", 0) == 0);
  const nlohmann::json shown = berth::job::JobToJson(row, std::nullopt);
  CHECK(shown["record_error"].is_null() == decoded.has_value());
  return 0;
}
