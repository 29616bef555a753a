// libFuzzer entry point for the job request's codec (issue 27: one corrupt request aborted
// every berth process that read it): any text must yield a RunRequest or an Error naming the
// request, never a crash, and an accepted request must survive a round trip, unknown members
// included. The same bytes, parsed, are also read as a provider definition on its own.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/check.h"
#include "base/json_read.h"
#include "job/run_request.h"
#include "provider/provider_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  berth::Result<berth::job::RunRequest> request = berth::job::RunRequest::FromJson(text);
  if (request) {
    const nlohmann::json encoded = request->ToJson();
    berth::Result<berth::job::RunRequest> again = berth::job::RunRequest::FromJson(
        encoded.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    CHECK(again);
    CHECK(again->ToJson() == encoded);
  } else {
    CHECK(request.error().message().rfind("the job's stored request cannot be read: ", 0) == 0);
  }
  if (berth::Result<nlohmann::json> parsed = berth::ParseJson(text, "provider")) {
    berth::Result<berth::provider::Provider> def = berth::provider::FromJson(*parsed);
    if (def) {
      berth::Result<berth::provider::Provider> again =
          berth::provider::FromJson(berth::provider::ToJson(*def));
      CHECK(again);
      CHECK(berth::provider::ToJson(*again) == berth::provider::ToJson(*def));
    } else {
      CHECK(!def.error().message().empty());
    }
  }
  return 0;
}
