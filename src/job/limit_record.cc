#include "job/limit_record.h"

#include "job/json_read.h"

namespace berth::job {

nlohmann::json LimitsToJson(const std::vector<LimitRecord>& limits, bool with_source) {
  nlohmann::json out = nlohmann::json::array();
  for (const LimitRecord& l : limits) {
    nlohmann::json j = {{"name", l.name}, {"value", l.value}, {"mechanism", l.mechanism}};
    if (with_source) j["source"] = l.source ? nlohmann::json(*l.source) : nlohmann::json(nullptr);
    out.push_back(std::move(j));
  }
  return out;
}

Result<std::vector<LimitRecord>> LimitsFromJson(const nlohmann::json& list,
                                                const std::string& where, bool with_source) {
  if (!list.is_array()) return JsonTypeError(where, "an array", list);
  std::vector<LimitRecord> out;
  for (size_t i = 0; i < list.size(); ++i) {
    JsonReader r = TRY(JsonReader::Of(list[i], where + "[" + std::to_string(i) + "]"));
    LimitRecord l;
    TRY(r.Read("name", &l.name));
    TRY(r.Read("value", &l.value));
    TRY(r.Read("mechanism", &l.mechanism));
    if (with_source) TRY(r.Read("source", &l.source));
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace berth::job
