#include "mcp/session.h"

#include <algorithm>

#include "sys/process.h"

namespace berth::mcp {

namespace {

constexpr const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr int kResourceNotFound = -32002;
// Lines that arrive while a tool runs and wait for it: beyond this many, requests are refused.
constexpr size_t kMaxPending = 256;

nlohmann::json ErrorObject(int code, const std::string& message,
                           const nlohmann::json& data = nullptr) {
  nlohmann::json e = {{"code", code}, {"message", message}};
  if (!data.is_null()) e["data"] = data;
  return e;
}

const nlohmann::json& MetaOf(const nlohmann::json& params) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto it = params.find("_meta");
  return it != params.end() && it->is_object() ? *it : kEmpty;
}

nlohmann::json SupportedVersions() {
  nlohmann::json v = nlohmann::json::array({kStatelessRevision});
  for (const char* r : kInitializeRevisions) v.push_back(r);
  return v;
}

}  // namespace

// One tools/call in progress, as the tool sees it.
class Session::Call : public CallContext {
 public:
  Call(Session& session, const nlohmann::json& meta, bool stateless)
      : session_(session), meta_(meta), stateless_(stateless) {
    auto token = meta_.find("progressToken");
    if (token != meta_.end() && (token->is_string() || token->is_number_integer())) token_ = *token;
  }

  void Progress(const std::string& message) override {
    if (token_.is_null()) return;
    ++progress_;
    session_.Send(rpc::MakeNotification(
        "notifications/progress",
        {{"progressToken", token_}, {"progress", progress_}, {"message", message}}));
  }

  bool Pump(int timeout_ms) override {
    const int64_t deadline = sys::MonotonicMillis() + timeout_ms;
    do {
      if (session_.current_cancelled_ || session_.ended_) return false;
      session_.PumpOnce(static_cast<int>(std::max<int64_t>(0, deadline - sys::MonotonicMillis())));
    } while (sys::MonotonicMillis() < deadline);
    return !session_.current_cancelled_ && !session_.ended_;
  }

  bool CanElicit() const override { return !stateless_ && session_.client_elicits_; }

  std::optional<nlohmann::json> Elicit(const std::string& message,
                                       const nlohmann::json& requested_schema,
                                       int timeout_ms) override {
    if (!CanElicit()) return std::nullopt;
    const nlohmann::json id = "berth-" + std::to_string(session_.next_request_id_++);
    const std::string key = id.dump();
    session_.responses_.erase(key);
    session_.Send(rpc::MakeRequest(
        id, "elicitation/create",
        {{"mode", "form"}, {"message", message}, {"requestedSchema", requested_schema}}));
    const int64_t deadline = sys::MonotonicMillis() + timeout_ms;
    while (sys::MonotonicMillis() < deadline) {
      if (auto it = session_.responses_.find(key); it != session_.responses_.end()) {
        nlohmann::json response = std::move(it->second);
        session_.responses_.erase(it);
        if (!response.contains("result") || !response["result"].is_object()) return std::nullopt;
        return response["result"];
      }
      if (session_.current_cancelled_ || session_.ended_) return std::nullopt;
      session_.PumpOnce(static_cast<int>(std::max<int64_t>(0, deadline - sys::MonotonicMillis())));
    }
    return std::nullopt;
  }

  const nlohmann::json& Meta() const override { return meta_; }

 private:
  Session& session_;
  nlohmann::json meta_;
  bool stateless_;
  nlohmann::json token_;
  int progress_ = 0;
};

Session::Session(Channel& channel, std::vector<Tool> tools, Resources* resources, ServerInfo info)
    : channel_(channel), tools_(std::move(tools)), resources_(resources), info_(std::move(info)) {}

void Session::Send(const nlohmann::json& message) { channel_.Send(rpc::Serialize(message)); }

void Session::Serve() {
  while (!ended_) {
    if (!pending_.empty()) {
      std::string line = std::move(pending_.front());
      pending_.pop_front();
      HandleLine(line);
      continue;
    }
    Result<sys::LineReader::Item> item = channel_.Next(-1);
    if (!item) return;  // stdin is unreadable: nothing more will arrive
    HandleItem(*item);
  }
  // Lines that came in with the last one still get their answers.
  while (!pending_.empty()) {
    std::string line = std::move(pending_.front());
    pending_.pop_front();
    HandleLine(line);
  }
}

void Session::HandleItem(const sys::LineReader::Item& item) {
  switch (item.kind) {
    case sys::LineReader::Kind::kLine:
      HandleLine(item.text);
      return;
    case sys::LineReader::Kind::kTooLong:
      Send(rpc::MakeError(
          nullptr, rpc::kInvalidRequest,
          "message larger than " + std::to_string(kMaxMessageBytes) + " bytes: refused unread"));
      return;
    case sys::LineReader::Kind::kEnd:
      ended_ = true;
      return;
    case sys::LineReader::Kind::kTimeout:
      return;
  }
}

void Session::HandleLine(const std::string& line) {
  // Blank lines between messages are tolerated.
  if (std::all_of(line.begin(), line.end(),
                  [](char c) { return c == ' ' || c == '\t' || c == '\r'; }))
    return;
  std::variant<rpc::Message, rpc::ParseFailure> parsed = rpc::ParseMessage(line);
  if (auto* failure = std::get_if<rpc::ParseFailure>(&parsed)) {
    Send(rpc::MakeError(failure->id, failure->code, failure->message));
    return;
  }
  const rpc::Message& m = std::get<rpc::Message>(parsed);
  switch (m.kind) {
    case rpc::Message::Kind::kRequest:
      HandleRequest(m);
      return;
    case rpc::Message::Kind::kNotification:
      HandleNotification(m);
      return;
    case rpc::Message::Kind::kResponse:
      responses_[m.id.dump()] = m.error.is_null() ? nlohmann::json{{"result", m.result}}
                                                  : nlohmann::json{{"error", m.error}};
      // Answers nobody waits for any more are not kept.
      if (responses_.size() > 16) responses_.erase(responses_.begin());
      return;
  }
}

void Session::HandleNotification(const rpc::Message& m) {
  if (m.method == "notifications/cancelled") {
    auto id = m.params.find("requestId");
    if (id != m.params.end() && current_call_ && *id == *current_call_) current_cancelled_ = true;
  }
  // notifications/initialized, roots changes and unknown notifications need no answer.
}

void Session::HandleRequest(const rpc::Message& m) {
  const nlohmann::json& meta = MetaOf(m.params);
  auto version = meta.find(kVersionKey);
  const bool stateless = version != meta.end();
  nlohmann::json error;
  nlohmann::json result;
  if (stateless && (!version->is_string() || *version != kStatelessRevision)) {
    error = ErrorObject(rpc::kInvalidParams, "unsupported protocol version",
                        {{"supported", SupportedVersions()}, {"requested", *version}});
  } else if (stateless && m.method == "initialize") {
    error = ErrorObject(rpc::kInvalidRequest, "the 2026-07-28 revision has no initialize");
  } else {
    result = Dispatch(m, stateless, &error);
  }
  if (!error.is_null()) {
    Send(rpc::MakeError(m.id, error["code"], error["message"],
                        error.contains("data") ? error["data"] : nlohmann::json(nullptr)));
    return;
  }
  if (stateless && result.is_object() && !result.contains("resultType"))
    result["resultType"] = "complete";
  Send(rpc::MakeResult(m.id, std::move(result)));
}

nlohmann::json Session::Capabilities() const {
  return {{"tools", {{"listChanged", false}}},
          {"resources", {{"listChanged", false}, {"subscribe", false}}}};
}

nlohmann::json Session::Dispatch(const rpc::Message& m, bool stateless, nlohmann::json* error) {
  if (m.method == "initialize") return Initialize(m, error);
  if (m.method == "ping") return nlohmann::json::object();
  if (m.method == "server/discover") {
    nlohmann::json r = {{"supportedVersions", SupportedVersions()},
                        {"capabilities", Capabilities()},
                        {"serverInfo", {{"name", info_.name}, {"version", info_.version}}}};
    if (!info_.instructions.empty()) r["instructions"] = info_.instructions;
    r["resultType"] = "complete";
    return r;
  }
  static const char* kKnown[] = {"tools/list", "tools/call", "resources/list", "resources/read",
                                 "resources/templates/list"};
  if (std::find_if(std::begin(kKnown), std::end(kKnown),
                   [&](const char* k) { return m.method == k; }) == std::end(kKnown)) {
    *error = ErrorObject(rpc::kMethodNotFound, "unknown method '" + m.method + "'");
    return nullptr;
  }
  if (!stateless && negotiated_.empty()) {
    *error =
        ErrorObject(rpc::kInvalidRequest, "the session is not initialized: send initialize first");
    return nullptr;
  }
  if (auto cursor = m.params.find("cursor"); cursor != m.params.end() && m.method != "tools/call") {
    // Every list fits in one page: no cursor was ever handed out.
    *error = ErrorObject(rpc::kInvalidParams, "unknown cursor");
    return nullptr;
  }
  if (m.method == "tools/list") return ListTools();
  if (m.method == "tools/call") {
    current_call_ = m.id;
    current_cancelled_ = false;
    nlohmann::json r = CallTool(m, stateless, error);
    current_call_.reset();
    return r;
  }
  if (m.method == "resources/list")
    return {{"resources", resources_ ? resources_->List() : nlohmann::json::array()}};
  if (m.method == "resources/templates/list")
    return {{"resourceTemplates", resources_ ? resources_->Templates() : nlohmann::json::array()}};
  return ReadResource(m, error);
}

nlohmann::json Session::Initialize(const rpc::Message& m, nlohmann::json* error) {
  if (!negotiated_.empty()) {
    *error = ErrorObject(rpc::kInvalidRequest, "the session is already initialized");
    return nullptr;
  }
  auto version = m.params.find("protocolVersion");
  auto capabilities = m.params.find("capabilities");
  auto client = m.params.find("clientInfo");
  if (version == m.params.end() || !version->is_string() || capabilities == m.params.end() ||
      !capabilities->is_object() || client == m.params.end() || !client->is_object()) {
    *error = ErrorObject(rpc::kInvalidParams,
                         "initialize needs protocolVersion (a string), capabilities and "
                         "clientInfo (objects)");
    return nullptr;
  }
  // The client's revision when berth speaks it, else berth's newest initialize-based one:
  // the client then decides whether it can speak that.
  negotiated_ = kInitializeRevisions[0];
  for (const char* r : kInitializeRevisions)
    if (*version == r) negotiated_ = r;
  auto elicitation = capabilities->find("elicitation");
  client_elicits_ = elicitation != capabilities->end() && elicitation->is_object() &&
                    (elicitation->empty() || elicitation->contains("form"));
  nlohmann::json r = {{"protocolVersion", negotiated_},
                      {"capabilities", Capabilities()},
                      {"serverInfo", {{"name", info_.name}, {"version", info_.version}}}};
  if (!info_.instructions.empty()) r["instructions"] = info_.instructions;
  return r;
}

nlohmann::json Session::ListTools() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Tool& t : tools_) {
    list.push_back({{"name", t.name},
                    {"title", t.title},
                    {"description", t.description},
                    {"inputSchema", SchemaOf(t.params)},
                    {"annotations",
                     {{"title", t.title},
                      {"readOnlyHint", t.read_only},
                      {"destructiveHint", t.destructive},
                      {"idempotentHint", t.idempotent},
                      {"openWorldHint", false}}}});
  }
  return {{"tools", std::move(list)}};
}

nlohmann::json Session::CallTool(const rpc::Message& m, bool stateless, nlohmann::json* error) {
  auto name = m.params.find("name");
  if (name == m.params.end() || !name->is_string()) {
    *error = ErrorObject(rpc::kInvalidParams, "tools/call needs the tool's name (a string)");
    return nullptr;
  }
  auto tool =
      std::find_if(tools_.begin(), tools_.end(), [&](const Tool& t) { return t.name == *name; });
  if (tool == tools_.end()) {
    *error = ErrorObject(rpc::kInvalidParams, "unknown tool '" + name->get<std::string>() + "'");
    return nullptr;
  }
  nlohmann::json arguments = nlohmann::json::object();
  if (auto a = m.params.find("arguments"); a != m.params.end() && !a->is_null()) arguments = *a;
  if (std::optional<std::string> why = CheckArguments(tool->params, arguments)) {
    *error = ErrorObject(rpc::kInvalidParams, tool->name + ": " + *why);
    return nullptr;
  }
  Call call(*this, MetaOf(m.params), stateless);
  ToolResult r = tool->run(arguments, call);
  nlohmann::json out = {{"content", {{{"type", "text"}, {"text", r.text}}}},
                        {"isError", r.is_error}};
  if (!r.structured.is_null()) out["structuredContent"] = r.structured;
  return out;
}

nlohmann::json Session::ReadResource(const rpc::Message& m, nlohmann::json* error) {
  auto uri = m.params.find("uri");
  if (uri == m.params.end() || !uri->is_string()) {
    *error = ErrorObject(rpc::kInvalidParams, "resources/read needs the uri (a string)");
    return nullptr;
  }
  std::string why = "no such resource";
  std::optional<ResourceContent> content = resources_ ? resources_->Read(*uri, &why) : std::nullopt;
  if (!content) {
    *error = ErrorObject(kResourceNotFound, why, {{"uri", *uri}});
    return nullptr;
  }
  return {{"contents",
           {{{"uri", content->uri}, {"mimeType", content->mime_type}, {"text", content->text}}}}};
}

void Session::PumpOnce(int timeout_ms) {
  Result<sys::LineReader::Item> item = channel_.Next(timeout_ms);
  if (!item) {
    ended_ = true;
    return;
  }
  if (item->kind != sys::LineReader::Kind::kLine) {
    HandleItem(*item);
    return;
  }
  std::variant<rpc::Message, rpc::ParseFailure> parsed = rpc::ParseMessage(item->text);
  if (std::holds_alternative<rpc::ParseFailure>(parsed)) {
    HandleLine(item->text);  // answers the error at once
    return;
  }
  const rpc::Message& m = std::get<rpc::Message>(parsed);
  const bool answer_now = m.kind == rpc::Message::Kind::kResponse ||
                          m.kind == rpc::Message::Kind::kNotification ||
                          (m.kind == rpc::Message::Kind::kRequest && m.method == "ping");
  if (answer_now) {
    HandleLine(item->text);
    return;
  }
  if (pending_.size() >= kMaxPending) {
    Send(rpc::MakeError(m.id, rpc::kInternalError,
                        "busy: too many requests while a tool call runs"));
    return;
  }
  pending_.push_back(std::move(item->text));
}

}  // namespace berth::mcp
