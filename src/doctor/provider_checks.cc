#include "doctor/checks.h"
#include "net/host_pattern.h"
#include "provider/invocation.h"
#include "provider/preflight.h"
#include "sys/fs.h"
#include "sys/net.h"

namespace berth::doctor {

// Resolves and connects to one endpoint the way the proxy would (host map first, then DNS).
void CheckEndpoint(const Inputs& in, const std::string& section, const std::string& endpoint,
                   const std::string& parent_marker, std::vector<Item>* items) {
  const std::string name = "endpoint " + endpoint;
  Result<net::HostPattern> pattern = net::ParseHostPattern(endpoint);
  if (!pattern) {
    items->push_back(
        {section, name, ItemStatus::kBlocked, pattern.error().ToString(), "fix the endpoint"});
    return;
  }
  if (pattern->kind == net::HostPattern::Kind::kSubdomains) {
    items->push_back(
        {section, name, ItemStatus::kUnknown, "not probed: a wildcard names no single host", ""});
    return;
  }
  std::vector<sys::IpAddress> addresses;
  std::string how;
  if (pattern->address) {
    addresses.push_back(*pattern->address);
    how = "an address";
  } else {
    // The user's [net.hosts] first, as the job's proxy resolves (net/proxy.h): every doctor
    // report reads it from the same config, so none can disagree with the jobs.
    if (const sys::IpAddress* mapped = in.user.net_hosts.Find(pattern->host)) {
      addresses.push_back(*mapped);
      how = "mapped to " + mapped->ToString() + " by [net.hosts]";
    } else {
      Result<std::vector<sys::IpAddress>> resolved =
          sys::ResolveHost(pattern->host, in.network_timeout_ms);
      if (!resolved || resolved->empty()) {
        std::string why = resolved ? "no address" : resolved.error().ToString();
        items->push_back({section, name, ItemStatus::kBlocked, "does not resolve: " + why,
                          parent_marker.empty()
                              ? "check DNS and the network from this host"
                              : "berth runs in a sandbox with networking disabled (" +
                                    parent_marker + "); run it outside"});
        items->push_back({section, "connect " + endpoint, ItemStatus::kUnknown,
                          "not tried: the name did not resolve", ""});
        return;
      }
      addresses = *resolved;
      how = "resolves to " + addresses.front().ToString();
    }
  }
  items->push_back({section, name, ItemStatus::kOk, how, ""});
  const int64_t start = sys::MonotonicMillis();
  Result<sys::UniqueFd> connected =
      sys::ConnectTcp({addresses.front(), pattern->port}, in.network_timeout_ms);
  if (!connected) {
    items->push_back({section, "connect " + endpoint, ItemStatus::kBlocked,
                      "connecting to " +
                          sys::SocketAddress{addresses.front(), pattern->port}.ToString() +
                          " failed: " + connected.error().ToString(),
                      "check firewalls and proxies between this host and " + pattern->host});
    return;
  }
  items->push_back({section, "connect " + endpoint, ItemStatus::kOk,
                    "connected in " + std::to_string(sys::MonotonicMillis() - start) + " ms", ""});
}

ProviderVerdict CheckProvider(const Inputs& in, const provider::Provider& p,
                              std::vector<Item>* items) {
  const std::string section = "provider " + p.name;
  const size_t first = items->size();
  const std::string& home = in.identity.home;
  Result<std::string> cli = provider::FindCli(p, in.environ);
  if (!cli) {
    items->push_back(
        {section, "cli", ItemStatus::kMissing, cli.error().message(), cli.error().hint()});
    items->push_back(
        {section, "version", ItemStatus::kUnknown, "not asked: the CLI is missing", ""});
  } else {
    items->push_back({section, "cli", ItemStatus::kOk, *cli, ""});
    Result<std::string> version = provider::CliVersion(p, *cli, in.environ, home);
    if (!version)
      items->push_back({section, "version", ItemStatus::kBlocked, version.error().ToString(),
                        version.error().hint()});
    else
      items->push_back(
          {section, "version", version->empty() ? ItemStatus::kUnknown : ItemStatus::kOk,
           version->empty() ? "the provider defines no version command" : *version, ""});
  }

  provider::Credentials creds = provider::FindCredentials(p, in.environ, home);
  if (!creds.needed) {
    items->push_back({section, "credentials", ItemStatus::kOk, "none needed", ""});
  } else if (creds.present()) {
    std::string found;
    for (const std::string& v : creds.variables) found += (found.empty() ? "$" : ", $") + v;
    for (const std::string& f : creds.files) found += (found.empty() ? "" : ", ") + f;
    items->push_back({section, "credentials", ItemStatus::kOk,
                      "present: " + found + " (not checked with the provider)", ""});
  } else {
    berth::Status required = provider::RequireCredentials(p, creds, home);
    items->push_back({section, "credentials", ItemStatus::kMissing, required.error().message(),
                      required.error().hint()});
  }

  for (const std::string& dir_template : p.state_dirs) {
    std::string dir = provider::ExpandHome(dir_template, home);
    const std::string name = "state " + dir_template;
    if (sys::TypeOfFollowing(dir) == sys::FileType::kDirectory) {
      if (sys::WritableDir(dir))
        items->push_back({section, name, ItemStatus::kOk,
                          dir + " is writable (jobs write to their own copy)", ""});
      else
        items->push_back({section, name, ItemStatus::kBlocked,
                          dir + " is not writable by this user", "fix its owner or mode"});
    } else if (sys::TypeOf(dir) != sys::FileType::kMissing) {
      items->push_back({section, name, ItemStatus::kBlocked, dir + " exists and is not a directory",
                        "remove or rename it"});
    } else if (sys::WritableDir(sys::Dirname(dir))) {
      items->push_back({section, name, ItemStatus::kOk,
                        dir + " does not exist yet; berth creates it for the first job", ""});
    } else {
      items->push_back({section, name, ItemStatus::kBlocked,
                        dir + " is missing and its parent is not writable",
                        "create " + dir + " yourself"});
    }
  }

  const std::string marker = provider::ParentSandboxMarker(in.environ);
  Result<std::vector<std::string>> endpoints = provider::Endpoints(
      p, [&](const std::string& n) { return provider::EnvValue(in.environ, n); });
  if (!endpoints) {
    items->push_back({section, "endpoints", ItemStatus::kBlocked, endpoints.error().ToString(),
                      endpoints.error().hint()});
  } else if (endpoints->empty()) {
    items->push_back(
        {section, "endpoints", ItemStatus::kOk, "none: the provider needs no network", ""});
  } else {
    for (const std::string& e : *endpoints) CheckEndpoint(in, section, e, marker, items);
  }

  ProviderVerdict verdict;
  verdict.name = p.name;
  verdict.can_run = true;
  for (size_t i = first; i < items->size(); ++i) {
    const Item& item = (*items)[i];
    // The version and endpoints are informative only when the CLI runs at all; an
    // unreachable endpoint or a missing credential means jobs would fail.
    if (item.status == ItemStatus::kOk) continue;
    if (item.status == ItemStatus::kUnknown && item.name.rfind("endpoint", 0) == 0) continue;
    if (item.status == ItemStatus::kUnknown && item.name == "version" && cli) continue;
    if (verdict.can_run) verdict.why_not = item.name + ": " + item.detail;
    verdict.can_run = false;
  }
  return verdict;
}

}  // namespace berth::doctor
