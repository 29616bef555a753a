// The homes other than the caller's (PRODUCT.md invariant 3): a sandbox hides every home
// directory of the password database, /root and /home/*, not only the one in $HOME, and from
// a root caller the host's secret files. docs/sandbox.md lists them and the rule.
#pragma once

#include <string>
#include <vector>

#include "confine/host_context.h"
#include "sandbox/spec.h"

namespace berth::confine {

// Whether `dir` (canonical) belongs to the system rather than to an account, so that no
// account's home there is hidden: "/", a top-level directory other than /root (/home, /var,
// /srv), the shared directories of /var (/var/lib, /var/spool, ...), and anything in the
// host's software, configuration, devices and runtime state (/usr, /bin, /etc, /dev, /run, ...).
bool IsSystemDirectory(const std::string& dir);

// Every home worth hiding: the canonical, existing directories among `account_homes` (the
// password database's), /root and the directories in /home, less the system directories;
// in that order, each once.
std::vector<std::string> HideableHomes(const std::vector<std::string>& account_homes);

// The homes `spec` hides: HideableHomes of the host's accounts, less the caller's own (its
// private home shows it) and those the caller's view shows on purpose: one that is or lies
// inside the workspace or a grant, or inside a read: path of `unhide`. Needs spec->workspace
// and paths set.
std::vector<std::string> HiddenHomes(const HostContext& host, const sandbox::SandboxSpec& spec,
                                     const std::vector<std::string>& unhide);

// Adds the hidden homes to `spec` and what must still show inside them, read-only: the
// read: paths of `unhide` that lie in one (a read: grant un-hides by name), and the top
// directory of the berth installation that lies in one (a development build and the tools
// beside it).
void HideOtherHomes(const HostContext& host, const std::vector<std::string>& unhide,
                    sandbox::SandboxSpec* spec);

// The home that hides the host's `path` (canonical) from every sandbox whatever its grants
// but read: (another home, outside what berth shows of it), or "" when none does.
std::string HidingHome(const std::string& path, const HostContext& host);

// The host's secret files hidden from a root caller, whose uid owns them (/etc/shadow,
// /etc/gshadow, the SSH host keys, ...); the globs expanded on this host.
std::vector<std::string> HostSecretPaths();

}  // namespace berth::confine
