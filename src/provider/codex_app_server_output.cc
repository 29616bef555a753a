// The transcript of a `codex app-server` session: every line the server wrote, as berth's
// session read it (docs/app-server.md). One JSON-RPC message per line, without "jsonrpc":
//   {"id":N,"result":{"thread":{"id":ID},"model":M,...}}               thread/start's answer
//   {"method":"item/completed","params":{"item":{"type":"agentMessage","text":TEXT}}}
//   {"method":"thread/tokenUsage/updated","params":{"tokenUsage":{"total":{"inputTokens":N,
//     "cachedInputTokens":N,"outputTokens":N}}}}                        running totals
//   {"method":"turn/completed","params":{"turn":{"status":S,"error":{"message":M}}}}
//   {"method":"error","params":{"error":{"message":M},"willRetry":B}}
//   {"id":N,"error":{"message":M}}                                     a request of berth's failed
// The model is pinned on the command line (-c model=...), so its evidence is the argv.
#include "provider/output.h"
#include "provider/output_json.h"

namespace berth::provider {

AgentOutput ParseCodexAppServer(std::string_view text) {
  AgentOutput out;
  bool completed = false;
  std::string turn_failure, last_error, request_failure;
  ForEachJsonLine(text, &out, [&](const nlohmann::json& line) {
    const std::string method = StringAt(line, "method");
    if (method.empty()) {
      // A response: the thread's id, or the failure of one of berth's requests.
      if (std::string thread = StringAt(line, "result.thread.id"); !thread.empty())
        out.session_id = thread;
      if (std::string failed = StringAt(line, "error.message");
          !failed.empty() && request_failure.empty())
        request_failure = failed;
    } else if (method == "item/completed") {
      if (StringAt(line, "params.item.type") == "agentMessage")
        out.final_text = StringAt(line, "params.item.text");
    } else if (method == "thread/tokenUsage/updated") {
      out.usage.input_tokens = IntAt(line, "params.tokenUsage.total.inputTokens");
      out.usage.cached_input_tokens = IntAt(line, "params.tokenUsage.total.cachedInputTokens");
      out.usage.output_tokens = IntAt(line, "params.tokenUsage.total.outputTokens");
    } else if (method == "turn/completed") {
      const std::string status = StringAt(line, "params.turn.status");
      const std::string error = StringAt(line, "params.turn.error.message");
      if (status == "completed") {
        completed = true;
      } else if (status == "interrupted") {
        out.cancelled = true;
        if (turn_failure.empty()) turn_failure = error.empty() ? "the turn was interrupted" : error;
      } else if (turn_failure.empty()) {
        turn_failure = error.empty() ? "the turn " + (status.empty() ? "failed" : status) : error;
      }
    } else if (method == "error") {
      const nlohmann::json* retry = AtPath(line, "params.willRetry");
      if (retry == nullptr || !retry->is_boolean() || !retry->get<bool>())
        last_error = StringAt(line, "params.error.message");
    }
  });
  if (!turn_failure.empty())
    out.failure = turn_failure;
  else if (!completed && !last_error.empty())
    out.failure = last_error;
  else if (!completed && !request_failure.empty())
    out.failure = request_failure;
  out.has_final = completed && turn_failure.empty();
  return out;
}

}  // namespace berth::provider
