#include <algorithm>

#include "mcp/tools.h"

namespace berth::mcp {

Param JobParam() {
  Param job{"job", Param::Type::kString, true,         "the job id (or a unique prefix of it)",
            {},    std::nullopt,         std::nullopt, 200};
  job.positional = true;
  return job;
}

std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool Bool(const nlohmann::json& j, const char* key, bool fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

nlohmann::json Field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it != j.end() ? *it : nlohmann::json(nullptr);
}

Page PageOf(const std::string& all, int64_t offset, int64_t limit) {
  Page p;
  p.size = static_cast<int64_t>(all.size());
  p.offset = std::min(offset, p.size);
  const int64_t n = std::min(limit, p.size - p.offset);
  p.data = all.substr(static_cast<size_t>(p.offset), static_cast<size_t>(n));
  p.next_offset = p.offset + n;
  p.eof = p.next_offset >= p.size;
  return p;
}

std::vector<Tool> BerthTools(Backend& backend) {
  return {RunTool(backend),          WaitTool(backend),
          ShowTool(backend, "show"), ShowTool(backend, "status"),
          LsTool(backend),           LogsTool(backend),
          DiffTool(backend),         VerifyTool(backend),
          CancelTool(backend),       LandTool(backend)};
}

}  // namespace berth::mcp
