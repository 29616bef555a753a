#include "provider/invocation.h"

#include <cctype>

namespace berth::provider {

namespace {

// Replaces every {name} in `text`; unknown or empty placeholders are errors.
Result<std::string> Expand(const std::string& text, const InvocationRequest& r,
                           const std::string& base_url) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('{', i);
    if (open == std::string::npos) {
      out += text.substr(i);
      break;
    }
    size_t close = text.find('}', open);
    if (close == std::string::npos) {
      out += text.substr(i);
      break;
    }
    out += text.substr(i, open - i);
    const std::string name = text.substr(open + 1, close - open - 1);
    const std::string* value = name == "model"         ? &r.model
                               : name == "effort"      ? &r.effort
                               : name == "prompt"      ? &r.prompt_text
                               : name == "prompt_file" ? &r.prompt_path
                               : name == "base_url"    ? &base_url
                                                       : nullptr;
    if (value == nullptr) {
      // Not a placeholder (a JSON or TOML argument): keep the brace, look on after it.
      out += '{';
      i = open + 1;
      continue;
    } else if (value->empty()) {
      return Error(Cause::kInvalidArgument,
                   "the argument '" + text + "' needs {" + name + "}, which this job does not have",
                   0, name == "model" ? "set the agent's model in the policy" : "");
    } else {
      out += *value;
    }
    i = close + 1;
  }
  return out;
}

Status Append(const std::vector<std::string>& templates, const InvocationRequest& r,
              const std::string& base_url, std::vector<std::string>* argv) {
  for (const std::string& t : templates) argv->push_back(TRY(Expand(t, r, base_url)));
  return {};
}

}  // namespace

Result<Invocation> BuildInvocation(const Provider& provider, const InvocationRequest& request) {
  if (provider.executable.empty())
    return Error(Cause::kInvalidArgument, "provider '" + provider.name + "' has no executable");
  auto lookup = [&](const std::string& name) -> std::string {
    if (!request.getenv) return {};
    return request.getenv(name).value_or("");
  };
  std::string base_url = provider.default_base_url;
  for (const std::string& name : provider.base_url_env) {
    if (std::string value = lookup(name); !value.empty()) {
      base_url = value;
      break;
    }
  }
  Invocation inv;
  inv.argv.push_back(provider.executable);
  const std::vector<std::string>& capability = !request.write ? provider.read_args
                                               : request.full_access && !provider.full_args.empty()
                                                   ? provider.full_args
                                                   : provider.write_args;
  TRY(Append(capability, request, base_url, &inv.argv));
  if (!request.model.empty()) TRY(Append(provider.model_args, request, base_url, &inv.argv));
  if (!request.effort.empty()) TRY(Append(provider.effort_args, request, base_url, &inv.argv));
  for (const ArgsWhenSet& extra : provider.args_when_set)
    if (!lookup(extra.variable).empty()) TRY(Append(extra.args, request, base_url, &inv.argv));
  TRY(Append(provider.prompt_args, request, base_url, &inv.argv));
  inv.prompt_on_stdin = provider.prompt == PromptChannel::kStdin;
  return inv;
}

Result<std::string> EndpointOfUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Error(Cause::kInvalidArgument, "base URL '" + url + "' " + why, 0,
                 "use http://HOST[:PORT]/... or https://HOST[:PORT]/...");
  };
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return bad("has no scheme");
  std::string scheme = url.substr(0, scheme_end);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int port = 0;
  if (scheme == "https")
    port = 443;
  else if (scheme == "http")
    port = 80;
  else
    return bad("is neither http nor https");
  std::string rest = url.substr(scheme_end + 3);
  std::string authority = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = authority.rfind('@'); at != std::string::npos)
    authority = authority.substr(at + 1);
  std::string host = authority;
  std::string port_text;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return bad("has an unterminated IPv6 address");
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("has text after its IPv6 address");
      port_text = authority.substr(close + 2);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port_text = authority.substr(colon + 1);
  }
  if (host.empty()) return bad("has no host");
  for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!port_text.empty()) {
    if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos)
      return bad("has a bad port");
    port = std::stoi(port_text);
    if (port < 1 || port > 65535) return bad("has a bad port");
  }
  return host + ":" + std::to_string(port);
}

Result<std::vector<std::string>> Endpoints(const Provider& provider, const EnvLookup& getenv) {
  std::vector<std::string> out;
  for (const std::string& name : provider.base_url_env) {
    std::optional<std::string> value = getenv(name);
    if (!value || value->empty()) continue;
    Result<std::string> endpoint = EndpointOfUrl(*value);
    if (!endpoint) {
      Error error = std::move(endpoint).error();
      return std::move(error.AddContext(name));
    }
    out.push_back(*endpoint);
  }
  if (!out.empty()) return out;
  for (const std::string& e : provider.endpoints)
    out.push_back(e.find(':') == std::string::npos ? e + ":443" : e);
  return out;
}

}  // namespace berth::provider
