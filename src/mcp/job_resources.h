// Jobs as MCP resources: berth://jobs (the list), berth://jobs/ID (the job),
// berth://jobs/ID/receipt, berth://jobs/ID/logs/{stdout,stderr,events} and berth://jobs/ID/diff.
// A read returns at most kMaxResourceBytes; the logs and diff tools page through the rest.
#pragma once

#include "mcp/backend.h"
#include "mcp/tool.h"

namespace berth::mcp {

inline constexpr size_t kMaxResourceBytes = 1024 * 1024;

class JobResources : public Resources {
 public:
  explicit JobResources(Backend& backend) : backend_(backend) {}
  nlohmann::json List() override;
  nlohmann::json Templates() override;
  std::optional<ResourceContent> Read(const std::string& uri, std::string* why) override;

 private:
  Backend& backend_;
};

}  // namespace berth::mcp
