#include "provider/registry.h"

#include <algorithm>
#include <set>

#include "policy/syntax.h"

namespace berth::provider {

namespace {

// What berth turns off in every Codex run, exec or app-server.
std::vector<std::string> CodexQuietArgs() {
  return {"-c",        "analytics.enabled=false",
          "-c",        "check_for_update_on_startup=false",
          "-c",        "web_search=\"disabled\"",
          "-c",        "history.persistence=\"none\"",
          "--disable", "plugins",
          "--disable", "apps",
          "--disable", "multi_agent",
          "--disable", "hooks",
          "--disable", "memories",
          "--disable", "shell_snapshot"};
}

Provider Codex() {
  Provider p;
  p.name = "codex";
  p.builtin = true;
  p.executable = "codex";
  p.version_args = {"--version"};
  // berth's sandbox is the boundary: Codex's own sandbox and approvals are off in both
  // capabilities (a read job's workspace is read-only in berth's sandbox). Its update check,
  // analytics, web search, plugins, apps, nested agents, hooks and memories are off.
  auto args = [](std::vector<std::string> sandbox) {
    std::vector<std::string> argv = {"exec",        "--json",  "--skip-git-repo-check",
                                     "--ephemeral", "--color", "never"};
    argv.insert(argv.end(), sandbox.begin(), sandbox.end());
    const std::vector<std::string> quiet = CodexQuietArgs();
    argv.insert(argv.end(), quiet.begin(), quiet.end());
    return argv;
  };
  p.read_args = args({"--dangerously-bypass-approvals-and-sandbox"});
  p.write_args = p.read_args;
  // A full-access job has no berth sandbox around it: Codex's own sandbox is put in its
  // full-access mode by name rather than bypassed, and approvals stay off (exec never asks).
  p.full_args = args({"--sandbox", "danger-full-access", "-c", "approval_policy=\"never\""});
  p.model_args = {"-m", "{model}"};
  p.effort_args = {"-c", "model_reasoning_effort=\"{effort}\""};
  // Codex's built-in provider reads CODEX_API_KEY or its stored login. With OPENAI_API_KEY,
  // berth declares a provider that uses it, at OPENAI_BASE_URL when that is set.
  p.args_when_set = {
      {"OPENAI_API_KEY",
       {"-c", "model_provider=\"berth\"", "-c",
        "model_providers.berth={name=\"berth\",base_url=\"{base_url}\",env_key=\"OPENAI_API_KEY\","
        "wire_api=\"responses\"}"}}};
  p.default_base_url = "https://api.openai.com/v1";
  p.prompt_args = {"-"};
  p.prompt = PromptChannel::kStdin;
  p.env = {"OPENAI_BASE_URL"};
  p.credentials = {"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"};
  p.base_url_env = {"OPENAI_BASE_URL"};
  p.endpoints = {"api.openai.com", "chatgpt.com", "auth.openai.com"};
  p.state_dirs = {"~/.codex"};
  p.auth_files = {"~/.codex/auth.json"};
  p.login_hint = "set OPENAI_API_KEY (or CODEX_API_KEY), or run `codex login` outside berth";
  p.output = OutputFormat::kCodex;
  p.reports_model = false;
  return p;
}

Provider Claude() {
  Provider p;
  p.name = "claude";
  p.builtin = true;
  p.executable = "claude";
  p.version_args = {"--version"};
  // --tools leaves out the nested-agent, scheduling and web tools; no MCP servers, no
  // session files. Read jobs get no editing tools and no permission prompts.
  p.write_args = {"-p",
                  "--output-format",
                  "stream-json",
                  "--verbose",
                  "--permission-mode",
                  "bypassPermissions",
                  "--tools",
                  "Bash,Edit,Read,Write,Glob,Grep",
                  "--strict-mcp-config",
                  "--no-session-persistence"};
  p.read_args = {"-p",
                 "--output-format",
                 "stream-json",
                 "--verbose",
                 "--permission-mode",
                 "dontAsk",
                 "--tools",
                 "Bash,Read,Glob,Grep",
                 "--allowedTools",
                 "Bash,Read,Glob,Grep",
                 "--strict-mcp-config",
                 "--no-session-persistence"};
  // Full access: no permission checks, and Claude Code's own Bash sandbox (sandbox.enabled in
  // its settings, which --settings overrides) off, so that commands reach the host as the user.
  p.full_args = p.write_args;
  p.full_args.insert(p.full_args.end(), {"--settings", R"({"sandbox":{"enabled":false}})"});
  p.model_args = {"--model", "{model}"};
  p.prompt = PromptChannel::kStdin;
  p.env = {"ANTHROPIC_BASE_URL"};
  p.credentials = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"};
  // IS_SANDBOX: Claude Code refuses to skip permissions as uid 0 unless it is told it runs
  // in a sandbox, which it does.
  p.set_env = {"IS_SANDBOX=1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
               "DISABLE_AUTOUPDATER=1",
               "DISABLE_TELEMETRY=1",
               "DISABLE_ERROR_REPORTING=1",
               "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1",
               "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1"};
  p.base_url_env = {"ANTHROPIC_BASE_URL"};
  p.endpoints = {"api.anthropic.com"};
  p.state_dirs = {"~/.claude"};
  p.state_files = {"~/.claude.json"};
  p.auth_files = {"~/.claude/.credentials.json"};
  p.login_hint = "set ANTHROPIC_API_KEY, or run `claude` once outside berth to log in";
  p.output = OutputFormat::kClaude;
  p.reports_model = true;
  return p;
}

Provider Gemini() {
  Provider p;
  p.name = "gemini";
  p.builtin = true;
  p.executable = "gemini";
  p.version_args = {"--version"};
  // Headless `default` approval offers no write or shell tool at all; `yolo` approves all.
  // --skip-trust: the workspace is berth's; -e none: no extensions.
  p.read_args = {"--skip-trust", "--approval-mode", "default", "-e", "none", "-o", "stream-json"};
  p.write_args = {"--skip-trust", "--approval-mode", "yolo", "-e", "none", "-o", "stream-json"};
  // Full access: its own sandbox (a container, or sandbox-exec) off even when the user's
  // settings turn it on; GEMINI_SANDBOX, which would win over the flag, is not passed.
  p.full_args = p.write_args;
  p.full_args.push_back("--sandbox=false");
  p.model_args = {"-m", "{model}"};
  p.prompt = PromptChannel::kStdin;
  p.env = {"GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
           "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"};
  p.credentials = {"GEMINI_API_KEY", "GOOGLE_API_KEY"};
  // Without the relaunch the CLI is one process that ends on SIGTERM.
  p.set_env = {"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_CLI_TRUST_WORKSPACE=true", "NO_COLOR=1"};
  p.base_url_env = {"GOOGLE_GEMINI_BASE_URL"};
  p.endpoints = {"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com",
                 "oauth2.googleapis.com"};
  p.state_dirs = {"~/.gemini"};
  p.auth_files = {"~/.gemini/oauth_creds.json"};
  p.login_hint = "set GEMINI_API_KEY, or run `gemini` once outside berth to log in";
  p.settings = {
      {"~/.gemini/settings.json",
       R"({"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},)"
       R"("general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},)"
       R"("experimental":{"enableAgents":false},"tools":{"exclude":["invoke_agent"]}})",
       ""},
      // With a base URL the CLI otherwise picks an auth type it then refuses.
      {"~/.gemini/settings.json", R"({"security":{"auth":{"selectedType":"gemini-api-key"}}})",
       "GEMINI_API_KEY"},
  };
  p.output = OutputFormat::kGemini;
  p.reports_model = true;
  return p;
}

Provider Grok() {
  Provider p;
  p.name = "grok";
  p.builtin = true;
  p.executable = "grok";
  p.version_args = {"--version"};
  // Headless Grok approves every tool and has no read mode: a read job's workspace is
  // read-only in berth's sandbox, which is what enforces it.
  p.read_args = {"--max-tool-rounds", "50"};
  p.write_args = {"--max-tool-rounds", "50"};
  p.model_args = {"-m", "{model}"};
  p.prompt_args = {"-p", "{prompt}"};
  p.prompt = PromptChannel::kArgument;
  p.env = {"GROK_BASE_URL"};
  p.credentials = {"GROK_API_KEY"};
  p.set_env = {"NO_COLOR=1"};
  p.base_url_env = {"GROK_BASE_URL"};
  p.endpoints = {"api.x.ai"};
  p.state_dirs = {"~/.grok"};
  p.auth_files = {"~/.grok/user-settings.json"};
  p.login_hint = "set GROK_API_KEY";
  // It rewrites ./.grok/settings.json on every run, and its fetch (Node 20) ignores proxies.
  p.workspace_artifacts = {".grok/settings.json"};
  p.node_proxy = true;
  p.output = OutputFormat::kGrok;
  p.reports_model = false;
  return p;
}

// `command`: the policy's argv, outcome by exit status. Its argv comes from the policy, so
// the templates are empty and the runner uses the agent's argv instead.
Provider Command() {
  Provider p;
  p.name = "command";
  p.builtin = true;
  p.prompt = PromptChannel::kFile;
  p.output = OutputFormat::kNone;
  return p;
}

Error Invalid(const config::ProviderEntry& e, const std::string& what) {
  return Error(Cause::kInvalidArgument, e.source + ": providers." + e.name + ": " + what, 0,
               "see docs/providers.md");
}

std::string Names(const std::vector<Provider>& all) {
  std::string out;
  for (const Provider& p : all) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace

Provider CodexAppServer(Provider p) {
  // Approvals are not bypassed here: the session asks for them on every turn (approvalPolicy
  // "untrusted") and the policy answers. The sandbox policy is set per turn (externalSandbox).
  std::vector<std::string> argv = {"app-server"};
  const std::vector<std::string> quiet = CodexQuietArgs();
  argv.insert(argv.end(), quiet.begin(), quiet.end());
  p.read_args = argv;
  p.write_args = argv;
  p.full_args = {};
  // Pinned on the command line, so that the model's evidence stays the argv.
  p.model_args = {"-c", "model=\"{model}\""};
  p.prompt_args = {};
  p.output = OutputFormat::kCodexAppServer;
  return p;
}

const std::vector<Provider>& Builtins() {
  static const std::vector<Provider> kBuiltins = {Codex(), Claude(), Gemini(), Grok(), Command()};
  return kBuiltins;
}

Result<Provider> FromConfig(const config::ProviderEntry& e) {
  if (!policy::IsProfileName(e.name))
    return Invalid(e, "the name must be lower-case letters, digits, '-' and '_'");
  Provider p;
  p.name = e.name;
  p.executable = e.executable;
  if (p.executable.empty() || p.executable.find('\0') != std::string::npos)
    return Invalid(e, "'executable' must name a program");
  p.version_args = e.version_args;
  p.read_args = e.read_args;
  p.write_args = e.write_args;
  if (p.write_args.empty()) p.write_args = p.read_args;
  p.full_args = e.full_args;
  p.model_args = e.model_args;
  p.effort_args = e.effort_args;
  p.prompt_args = e.prompt_args;
  if (e.prompt.empty() || e.prompt == "stdin")
    p.prompt = PromptChannel::kStdin;
  else if (e.prompt == "file")
    p.prompt = PromptChannel::kFile;
  else if (e.prompt == "argument")
    p.prompt = PromptChannel::kArgument;
  else
    return Invalid(
        e, "'prompt' must be \"stdin\", \"file\" or \"argument\", not \"" + e.prompt + "\"");
  for (const std::vector<std::string>* names : {&e.env, &e.credentials, &e.base_url_env})
    for (const std::string& name : *names)
      if (!policy::IsEnvName(name)) return Invalid(e, "'" + name + "' is not a variable name");
  for (const std::string& kv : e.set_env) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || !policy::IsEnvName(kv.substr(0, eq)))
      return Invalid(e, "'set_env' entries are NAME=VALUE, not '" + kv + "'");
  }
  for (const std::vector<std::string>* paths : {&e.state_dirs, &e.state_files, &e.auth_files})
    for (const std::string& path : *paths)
      if (path.rfind("~/", 0) != 0 && path.rfind('/', 0) != 0)
        return Invalid(e, "'" + path + "' must be absolute or start with ~/");
  for (const std::string& endpoint : e.endpoints)
    if (endpoint.empty() || endpoint.find_first_of(" /\t") != std::string::npos)
      return Invalid(e, "endpoint '" + endpoint + "' must be HOST[:PORT] or *.DOMAIN[:PORT]");
  p.env = e.env;
  p.credentials = e.credentials;
  p.set_env = e.set_env;
  p.base_url_env = e.base_url_env;
  p.endpoints = e.endpoints;
  p.state_dirs = e.state_dirs;
  p.state_files = e.state_files;
  p.auth_files = e.auth_files;
  p.login_hint = e.login_hint;
  if (e.output.empty() || e.output == "plain") {
    p.output = OutputFormat::kPlain;
    if (!e.fields.empty()) return Invalid(e, "'fields' needs output = \"json-lines\"");
  } else if (e.output == "json-lines") {
    p.output = OutputFormat::kJsonLines;
    const std::map<std::string, std::string*> known = {{"text", &p.fields.text},
                                                       {"model", &p.fields.model},
                                                       {"session", &p.fields.session},
                                                       {"input_tokens", &p.fields.input_tokens},
                                                       {"output_tokens", &p.fields.output_tokens},
                                                       {"cost", &p.fields.cost},
                                                       {"error", &p.fields.error}};
    for (const auto& [key, path] : e.fields) {
      auto it = known.find(key);
      if (it == known.end())
        return Invalid(e, "unknown field '" + key +
                              "' (known: text, model, session, input_tokens, output_tokens, "
                              "cost, error)");
      if (path.empty()) return Invalid(e, "field '" + key + "' needs a path");
      *it->second = path;
    }
    if (p.fields.text.empty()) return Invalid(e, "json-lines output needs fields.text");
    p.reports_model = !p.fields.model.empty();
  } else {
    return Invalid(e, "'output' must be \"plain\" or \"json-lines\", not \"" + e.output + "\"");
  }
  if (p.prompt != PromptChannel::kStdin) {
    const std::string needle = p.prompt == PromptChannel::kFile ? "{prompt_file}" : "{prompt}";
    auto has = [&](const std::vector<std::string>& args) {
      return std::any_of(args.begin(), args.end(),
                         [&](const std::string& a) { return a.find(needle) != std::string::npos; });
    };
    for (const std::vector<std::string>* args : {&p.read_args, &p.write_args, &p.full_args}) {
      if (args == &p.full_args && args->empty()) continue;
      if (!has(*args) && !has(p.prompt_args))
        return Invalid(e, "with prompt = \"" + std::string(PromptChannelName(p.prompt)) +
                              "\" the arguments must contain " + needle);
    }
  }
  return p;
}

Result<std::vector<Provider>> All(const config::UserConfig& user) {
  std::vector<Provider> all = Builtins();
  for (const config::ProviderEntry& entry : user.providers) {
    bool taken = std::any_of(all.begin(), all.end(),
                             [&](const Provider& p) { return p.name == entry.name; });
    if (taken)
      return Error(Cause::kInvalidArgument,
                   entry.source + ": providers." + entry.name + ": '" + entry.name +
                       "' is a built-in provider",
                   0, "give your provider another name");
    all.push_back(TRY(FromConfig(entry)));
  }
  return all;
}

Result<Provider> Find(const std::string& name, const config::UserConfig& user) {
  std::vector<Provider> all = TRY(All(user));
  for (Provider& p : all)
    if (p.name == name) return std::move(p);
  return Error(Cause::kNotFound, "no provider '" + name + "'", 0,
               "providers: " + Names(all) + "; define more under [providers." + name +
                   "] in ~/.config/berth/config.toml");
}

const char* PromptChannelName(PromptChannel channel) {
  switch (channel) {
    case PromptChannel::kStdin:
      return "stdin";
    case PromptChannel::kFile:
      return "file";
    case PromptChannel::kArgument:
      return "argument";
  }
  return "?";
}

const char* OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kCodex:
      return "codex";
    case OutputFormat::kCodexAppServer:
      return "codex-app-server";
    case OutputFormat::kClaude:
      return "claude";
    case OutputFormat::kGemini:
      return "gemini";
    case OutputFormat::kGrok:
      return "grok";
    case OutputFormat::kJsonLines:
      return "json-lines";
    case OutputFormat::kPlain:
      return "plain";
    case OutputFormat::kNone:
      return "none";
  }
  return "?";
}

}  // namespace berth::provider
