// Provider: what berth knows about one agent CLI (PRODUCT.md §7, docs/providers.md).
//
// A provider is plain data: the executable, the argv per capability (never a shell string),
// how the prompt reaches the CLI, which variables and state directories it needs, which hosts
// it talks to, and how its output is read. Built-ins (builtin.cc) and the ones users define in
// ~/.config/berth/config.toml are the same struct, so both go through the same code.
#pragma once

#include <string>
#include <vector>

namespace berth::provider {

enum class PromptChannel { kStdin, kFile, kArgument };
// How stdout is read: a built-in parser for one CLI's structured stream, generic JSON lines
// with field paths, or plain text (the whole stdout is the final text).
enum class OutputFormat {
  kCodex,
  kClaude,
  kGemini,
  kGrok,
  kJsonLines,
  kPlain,
  kNone,
  kCodexAppServer,  // the transcript of a `codex app-server` session (appserver/session.h)
};

const char* PromptChannelName(PromptChannel channel);
const char* OutputFormatName(OutputFormat format);

// For OutputFormat::kJsonLines: dotted paths into each JSON line ("usage.input_tokens").
// The last line that has a field wins.
struct FieldPaths {
  std::string text;
  std::string model;
  std::string session;
  std::string input_tokens;
  std::string output_tokens;
  std::string cost;
  std::string error;
};

// Settings berth merges into the job's copy of a CLI's JSON settings file (never the user's):
// the CLI's telemetry, update checks and nested agents off, and what a base URL needs.
struct SettingsPatch {
  std::string file;      // "~/.gemini/settings.json"; must lie in one of the state_dirs
  std::string json;      // an object, merged key by key over the user's settings
  std::string when_set;  // applied only when this credential variable is passed; "" always
};

// Arguments added when a variable is set in the job's environment, e.g. Codex's custom model
// provider when OPENAI_API_KEY is set. {base_url} in them is the value of the first
// base_url_env variable that is set, else the provider's default_base_url.
struct ArgsWhenSet {
  std::string variable;
  std::vector<std::string> args;
};

struct Provider {
  std::string name;
  bool builtin = false;
  std::string executable;                 // looked up in the job's PATH
  std::vector<std::string> version_args;  // e.g. {"--version"}; empty: not asked
  // Argument templates after the executable, in the order capability, model, effort,
  // prompt. Placeholders, each a whole argument or part of one: {model}, {effort}, {prompt} (the
  // text, for PromptChannel::kArgument) and {prompt_file} (the prompt's path inside the sandbox).
  std::vector<std::string> read_args;
  std::vector<std::string> write_args;
  // For a full-access job (docs/policy.md "Full access"): the write args with the CLI's own
  // sandbox in its full-access mode (Codex: --sandbox danger-full-access). Empty: write_args.
  std::vector<std::string> full_args;
  std::vector<std::string> model_args;     // appended when a model is requested
  std::vector<std::string> effort_args;    // appended when an effort is requested
  std::vector<std::string> prompt_args;    // appended last: "-" or {"-p", "{prompt}"}
  std::vector<ArgsWhenSet> args_when_set;  // built-ins only; before the prompt args
  std::string default_base_url;            // for {base_url}
  PromptChannel prompt = PromptChannel::kStdin;
  std::vector<std::string> env;          // variable names passed when set (not secrets)
  std::vector<std::string> credentials;  // credential variable names (values never recorded)
  std::vector<std::string> set_env;      // NAME=VALUE always set inside the job
  // Variables whose value is a base URL (OPENAI_BASE_URL, ...): when set, its host and port
  // become one of the provider's endpoints.
  std::vector<std::string> base_url_env;
  std::vector<std::string> endpoints;    // HOST[:PORT] (443 by default) or *.DOMAIN
  std::vector<std::string> state_dirs;   // "~/.codex": copy-on-write inside the job
  std::vector<std::string> state_files;  // "~/.claude.json": a job-private copy
  std::vector<SettingsPatch> settings;   // built-ins only
  // Files the CLI writes into the workspace for itself on every run (Grok's
  // .grok/settings.json), as globs: never committed, never a refusal (built-ins only).
  std::vector<std::string> workspace_artifacts;
  // The CLI's fetch ignores proxy variables: berth preloads node_proxy.h's module.
  bool node_proxy = false;
  // Authentication preflight: credentials look present when one of `credentials` is set or
  // one of these files exists. Both empty: the provider needs no credentials.
  std::vector<std::string> auth_files;
  std::string login_hint;  // what to do when none is present
  OutputFormat output = OutputFormat::kPlain;
  FieldPaths fields;  // OutputFormat::kJsonLines only
  // How the reported model is checked: the CLI reports it in its output, or it does not and
  // the evidence is the argv berth pinned it with.
  bool reports_model = false;
};

}  // namespace berth::provider
