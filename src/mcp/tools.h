// berth's tools, one function per tool (each in its own file), and the table of them all.
#pragma once

#include <vector>

#include "mcp/backend.h"
#include "mcp/tool.h"

namespace berth::mcp {

// Pages of logs and diffs are at most this many bytes.
inline constexpr int64_t kMaxPage = 65536;

Tool RunTool(Backend& backend);
Tool WaitTool(Backend& backend);
// `show` and `status`: the same tool under two names.
Tool ShowTool(Backend& backend, const char* name);
Tool LsTool(Backend& backend);
Tool LogsTool(Backend& backend);
Tool DiffTool(Backend& backend);
Tool VerifyTool(Backend& backend);
Tool CancelTool(Backend& backend);
Tool LandTool(Backend& backend);

std::vector<Tool> BerthTools(Backend& backend);

// Shared by the tools and the resources.
struct Page {
  std::string data;
  int64_t offset = 0;
  int64_t next_offset = 0;
  int64_t size = 0;
  bool eof = true;
};
Page PageOf(const std::string& all, int64_t offset, int64_t limit);
// A stream of a job ("stdout", "stderr" or "events") as `berth logs` would print it, masked:
// the output bytes, or one JSON object per line for events.
Result<std::string> JobStream(Backend& backend, const std::string& job, const std::string& stream,
                              std::string* job_id);
// `berth diff --json JOB`: the document, or why there is none.
Result<nlohmann::json> JobDiff(Backend& backend, const std::string& job);
// Reading command output without ever aborting (nlohmann::json aborts on a wrong type here):
// the member when it has the type, else the fallback.
std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback = "");
bool Bool(const nlohmann::json& j, const char* key, bool fallback = false);
nlohmann::json Field(const nlohmann::json& j, const char* key);
// The job argument of every tool.
Param JobParam();

}  // namespace berth::mcp
