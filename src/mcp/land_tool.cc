// `land`: applies a completed, verified job's commit, as `berth land` — only when the host's
// permission mode authorises it or the user confirms it through the client (elicitation). A
// tool argument never confirms: the model could write one.
#include "mcp/tools.h"

namespace berth::mcp {

namespace {

constexpr int kConfirmMs = 120000;

std::string LandedText(const nlohmann::json& j) {
  std::string text = "job " + Str(j, "job") + " landed on " + Str(j, "target");
  if (j.contains("new") && j["new"].is_string()) text += " as " + j["new"].get<std::string>();
  return text;
}

}  // namespace

Tool LandTool(Backend& backend) {
  Tool t;
  t.name = "land";
  t.title = "Land a job";
  t.description =
      "Apply a completed job's commit to the target branch, as `berth land`. Refused unless "
      "the job completed and its required checks passed; and it needs the user: the host in "
      "an auto mode, or the user's confirmation when the client can ask for it.";
  t.params = {JobParam()};
  t.read_only = false;
  t.destructive = true;
  t.run = [&backend](const nlohmann::json& args, CallContext& call) -> ToolResult {
    const std::string job = args["job"];
    // The same rules and reasons as `berth land`, before anyone is asked.
    Result<CommandOutput> dry = backend.Berth({"land", "--dry-run", "--json", job}, 45000);
    if (!dry) return ToolError(dry.error().ToString());
    if (!dry->json.is_object() || dry->json.contains("error"))
      return ToolError("berth land refuses: " + FailureText(*dry));
    if (std::string refused = Str(dry->json, "refused_reason"); !refused.empty())
      return ToolError("berth land refuses job " + job + ": " + refused);
    const std::string target = Str(dry->json, "target");
    const host::HostMode mode = backend.ModeFor(call.Meta());
    std::string authorised;
    if (host::IsAutoMode(mode.mode)) {
      authorised = std::string("the host's ") + host::ModeName(mode.mode) + " mode";
    } else if (call.CanElicit()) {
      nlohmann::json schema = {
          {"type", "object"},
          {"properties",
           {{"confirm",
             {{"type", "boolean"},
              {"title", "Land it"},
              {"description", "apply job " + job + "'s commit to " + target}}}}},
          {"required", {"confirm"}}};
      std::optional<nlohmann::json> answer =
          call.Elicit("berth: land job " + job + " onto " + target + "?", schema, kConfirmMs);
      if (!answer)
        return ToolError("job " + job + " was not landed: no confirmation from the user");
      const bool accepted =
          Str(*answer, "action") == "accept" && Bool(Field(*answer, "content"), "confirm", false);
      if (!accepted) return ToolError("job " + job + " was not landed: the user declined");
      authorised = "the user's confirmation";
    } else {
      return ToolError("job " + job +
                       " was not landed: landing needs the user, and the host is "
                       "in " +
                       host::ModeName(mode.mode) + " mode (" + mode.source +
                       "). Land it yourself with `berth land " + job +
                       "`, or switch the host to an auto mode (acceptEdits, auto, dontAsk, "
                       "bypassPermissions).");
    }
    Result<CommandOutput> landed = backend.Berth({"land", "--json", job}, 45000);
    if (!landed) return ToolError(landed.error().ToString());
    if (!landed->json.is_object() || landed->json.contains("error"))
      return ToolError("berth land failed: " + FailureText(*landed));
    if (std::string refused = Str(landed->json, "refused_reason"); !refused.empty())
      return ToolError("berth land refuses job " + job + ": " + refused);
    nlohmann::json structured = landed->json;
    structured["authorised_by"] = authorised;
    return ToolResult{LandedText(landed->json) + " (authorised by " + authorised + ")", structured,
                      false};
  };
  return t;
}

}  // namespace berth::mcp
