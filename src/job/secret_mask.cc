#include "job/secret_mask.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "provider/registry.h"

namespace berth::job {

namespace {

std::string Upper(std::string_view text) {
  std::string out;
  for (char c : text) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

// NAME_LIKE_THIS -> {"NAME", "LIKE", "THIS"}, upper-cased; any non-alphanumeric splits.
std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words(1);
  for (char c : Upper(name)) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      words.back().push_back(c);
    else if (!words.back().empty())
      words.emplace_back();
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

// Values that occur in ordinary text or configuration often enough that masking them would
// garble output; a credential variable that holds one of them protects nothing anyway.
bool IsCommonValue(std::string_view value) {
  static const char* const kCommon[] = {"password", "changeme",  "undefined", "disabled",
                                        "required", "optional",  "anonymous", "localhost",
                                        "readonly", "readwrite", "username",  "0.0.0.0"};
  const std::string lower = [&] {
    std::string out;
    for (char c : value)
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    return out;
  }();
  for (const char* common : kCommon)
    if (lower == common) return true;
  return std::all_of(value.begin(), value.end(), [&](char c) { return c == value.front(); });
}

// The password of scheme://user:password@host..., or "".
std::string UrlPassword(std::string_view value) {
  size_t scheme = value.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = value.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return {};
  std::string_view userinfo = rest.substr(0, at);
  size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) return {};
  return std::string(userinfo.substr(colon + 1));
}

}  // namespace

bool IsSecretName(std::string_view name) {
  std::vector<std::string> words = Words(name);
  if (words.empty()) return false;
  const std::string& last = words.back();
  if (last == "FILE" || last == "PATH" || last == "DIR") return false;
  static const char* const kAnywhere[] = {"TOKEN",      "SECRET",     "PASSWORD", "PASSWD",
                                          "PASSPHRASE", "CREDENTIAL", "COOKIE"};
  for (const std::string& word : words)
    for (const char* part : kAnywhere)
      if (word.find(part) != std::string::npos) return true;
  static const char* const kKeyWords[] = {"KEY",       "KEYS",      "APIKEY",
                                          "ACCESSKEY", "SECRETKEY", "PRIVATEKEY"};
  for (const std::string& word : words)
    for (const char* key : kKeyWords)
      if (word == key) return true;
  return last == "PAT" || last == "AUTH";
}

SecretMask SecretMask::FromEnvironment(
    const std::vector<std::pair<std::string, std::string>>& environ,
    const std::vector<std::string>& credential_names) {
  SecretMask mask;
  for (const auto& [name, value] : environ) {
    if (IsSecretName(name) ||
        std::find(credential_names.begin(), credential_names.end(), name) != credential_names.end())
      mask.Add(value);
    if (std::string password = UrlPassword(value); !password.empty()) mask.Add(password);
  }
  return mask;
}

SecretMask KnownSecrets(const JobContext& ctx, std::vector<std::string> credential_names) {
  for (const provider::Provider& p : provider::Builtins())
    credential_names.insert(credential_names.end(), p.credentials.begin(), p.credentials.end());
  for (const config::ProviderEntry& entry : ctx.user.providers)
    credential_names.insert(credential_names.end(), entry.credentials.begin(),
                            entry.credentials.end());
  return SecretMask::FromEnvironment(ctx.environ, credential_names);
}

void SecretMask::Add(std::string_view value) {
  if (value.find('\n') != std::string_view::npos) {
    size_t start = 0;
    while (start < value.size()) {
      size_t end = value.find('\n', start);
      if (end == std::string_view::npos) end = value.size();
      std::string_view line = value.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      // "-----BEGIN OPENSSH PRIVATE KEY-----" is the same in every key.
      if (line.rfind("-----", 0) != 0) AddOne(std::string(line));
      start = end + 1;
    }
  }
  AddOne(std::string(value));
  // An agent that prints the value inside a JSON string shows its escaped form.
  if (std::any_of(value.begin(), value.end(), [](char c) {
        return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
      })) {
    std::string escaped = JsonText(nlohmann::json(std::string(value)));
    AddOne(escaped.substr(1, escaped.size() - 2));
  }
}

void SecretMask::AddOne(std::string value) {
  if (value.size() < kMinSecretBytes || IsCommonValue(value)) return;
  if (std::find(values_.begin(), values_.end(), value) != values_.end()) return;
  first_bytes_.set(static_cast<unsigned char>(value.front()));
  auto at = std::find_if(values_.begin(), values_.end(),
                         [&](const std::string& v) { return v.size() < value.size(); });
  values_.insert(at, std::move(value));
}

size_t SecretMask::MaskInto(std::string_view text, bool final, std::string* out) const {
  size_t copied = 0;  // text[copied, i) is plain text not yet appended
  size_t i = 0;
  while (i < text.size()) {
    if (!first_bytes_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    const size_t rest = text.size() - i;
    // A longer value may still be completed by the next chunk: wait for it, even when a
    // shorter value matches here, so that no part of the longer one is emitted.
    if (!final && std::any_of(values_.begin(), values_.end(), [&](const std::string& v) {
          return v.size() > rest && text.compare(i, rest, v, 0, rest) == 0;
        }))
      break;
    auto hit = std::find_if(values_.begin(), values_.end(), [&](const std::string& v) {
      return v.size() <= rest && text.compare(i, v.size(), v) == 0;
    });
    if (hit == values_.end()) {
      ++i;
      continue;
    }
    out->append(text.substr(copied, i - copied));
    out->append(kMaskText);
    i += hit->size();
    copied = i;
  }
  out->append(text.substr(copied, i - copied));
  return i;
}

std::string SecretMask::Apply(std::string_view text) const {
  if (values_.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  (void)MaskInto(text, /*final=*/true, &out);
  return out;
}

void SecretMask::ApplyJson(nlohmann::json* json) const {
  if (values_.empty()) return;
  if (json->is_string()) {
    *json = Apply(json->get<std::string>());
  } else if (json->is_array()) {
    for (nlohmann::json& item : *json) ApplyJson(&item);
  } else if (json->is_object()) {
    nlohmann::json masked = nlohmann::json::object();
    for (auto it = json->begin(); it != json->end(); ++it) {
      nlohmann::json value = it.value();
      ApplyJson(&value);
      masked[Apply(it.key())] = std::move(value);
    }
    *json = std::move(masked);
  }
}

std::string StreamMasker::Feed(std::string_view chunk) {
  if (mask_.empty()) return std::string(chunk);
  pending_.append(chunk);
  std::string out;
  size_t consumed = mask_.MaskInto(pending_, /*final=*/false, &out);
  pending_.erase(0, consumed);
  return out;
}

std::string StreamMasker::Finish() {
  std::string out = mask_.Apply(pending_);
  pending_.clear();
  return out;
}

}  // namespace berth::job
