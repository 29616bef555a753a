#include "mcp/job_resources.h"

#include "job/job_json.h"
#include "mcp/tools.h"

namespace berth::mcp {

namespace {

constexpr char kPrefix[] = "berth://jobs";

// At most kMaxResourceBytes of `text`, saying so when it was cut.
std::string Bounded(std::string text) {
  if (text.size() <= kMaxResourceBytes) return text;
  text.resize(kMaxResourceBytes);
  return text + "\n[truncated at " + std::to_string(kMaxResourceBytes) +
         " bytes: page on with the logs or diff tool]";
}

const char* const kParts[] = {"receipt", "logs/stdout", "logs/stderr", "logs/events", "diff"};

}  // namespace

nlohmann::json JobResources::List() {
  nlohmann::json list = nlohmann::json::array();
  list.push_back({{"uri", kPrefix},
                  {"name", "jobs"},
                  {"description", "this repository's newest jobs"},
                  {"mimeType", "application/json"}});
  Result<CommandOutput> out = backend_.Berth({"ls", "--json"}, 30000);
  if (!out || !out->json.is_array()) return list;
  for (const nlohmann::json& j : out->json) {
    const std::string id = Str(j, "id");
    if (id.empty()) continue;
    const std::string base = std::string(kPrefix) + "/" + id;
    list.push_back(
        {{"uri", base},
         {"name", "job " + id},
         {"description", "job " + id + " (" + Str(j, "agent") + ", " + Str(j, "state") + ")"},
         {"mimeType", "application/json"}});
    for (const char* part : kParts) {
      const std::string p = part;
      list.push_back({{"uri", base + "/" + p},
                      {"name", "job " + id + " " + p},
                      {"mimeType", p == "receipt"       ? "application/json"
                                   : p == "diff"        ? "text/x-diff"
                                   : p == "logs/events" ? "application/x-ndjson"
                                                        : "text/plain"}});
    }
  }
  return list;
}

nlohmann::json JobResources::Templates() {
  nlohmann::json list = nlohmann::json::array();
  list.push_back({{"uriTemplate", std::string(kPrefix) + "/{job}"},
                  {"name", "job"},
                  {"mimeType", "application/json"}});
  for (const char* part : kParts)
    list.push_back({{"uriTemplate", std::string(kPrefix) + "/{job}/" + part},
                    {"name", std::string("job ") + part}});
  return list;
}

std::optional<ResourceContent> JobResources::Read(const std::string& uri, std::string* why) {
  const std::string prefix = kPrefix;
  if (uri == prefix) {
    Result<CommandOutput> out = backend_.Berth({"ls", "--json"}, 30000);
    if (!out || out->exit_code != 0) {
      *why = out ? FailureText(*out) : out.error().ToString();
      return std::nullopt;
    }
    return ResourceContent{uri, "application/json", Bounded(job::DumpJson(out->json, 2))};
  }
  if (uri.rfind(prefix + "/", 0) != 0) {
    *why = "berth's resources are " + prefix + " and " + prefix + "/ID[/PART]";
    return std::nullopt;
  }
  std::string rest = uri.substr(prefix.size() + 1);
  const size_t slash = rest.find('/');
  const std::string id = rest.substr(0, slash);
  const std::string part = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (id.empty() || id.size() > 200) {
    *why = "no job named in " + uri;
    return std::nullopt;
  }
  if (part.empty() || part == "receipt") {
    Result<CommandOutput> out = backend_.Berth({"show", "--json", id}, 30000);
    if (!out || out->exit_code != 0 || !out->json.is_object()) {
      *why = out ? FailureText(*out) : out.error().ToString();
      return std::nullopt;
    }
    const nlohmann::json doc = part.empty() ? out->json : Field(out->json, "receipt");
    return ResourceContent{uri, "application/json", Bounded(job::DumpJson(doc, 2))};
  }
  if (part == "logs/stdout" || part == "logs/stderr" || part == "logs/events") {
    std::string job_id;
    Result<std::string> text = JobStream(backend_, id, part.substr(5), &job_id);
    if (!text) {
      *why = text.error().ToString();
      return std::nullopt;
    }
    return ResourceContent{uri, part == "logs/events" ? "application/x-ndjson" : "text/plain",
                           Bounded(*text)};
  }
  if (part == "diff") {
    Result<nlohmann::json> d = JobDiff(backend_, id);
    if (!d) {
      *why = d.error().message();
      return std::nullopt;
    }
    return ResourceContent{uri, "text/x-diff", Bounded(Str(*d, "patch"))};
  }
  *why = "unknown part '" + part + "': one of receipt, logs/stdout, logs/stderr, logs/events, diff";
  return std::nullopt;
}

}  // namespace berth::mcp
