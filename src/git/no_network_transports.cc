// libgit2 without its SSH transport and without Kerberos (Negotiate) authentication.
//
// Debian's libgit2.a is built with libssh2 (which needs OpenSSL's libcrypto) and with GSSAPI
// (which needs the Kerberos libraries). berth's libgit2 never talks to a git remote: it reads
// and writes local repositories only (a worker's mirrors use the git command, src/gitcli/). Linking
// those libraries anyway made every berth start map nine more shared libraries, about a millisecond
// of each `berth sandbox` start (bench/HISTORY.md). So libgit2's references to them are resolved
// here instead: libssh2_init and libssh2_exit, which git_libgit2_init and its shutdown call,
// succeed and do nothing; every other entry point ends the process with a message, because reaching
// one means berth started a network git operation, which it never does.
//
// libgit2's TLS stream is left out the same way. Its global init, which git_libgit2_init
// runs, parsed the system's whole CA bundle (about 6 ms of every berth command, and of every
// job, measured with perf); here it succeeds and loads nothing.
#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void NoNetworkTransport(const char* function) {
  std::fprintf(stderr,
               "berth: internal error: libgit2 called %s; berth links libgit2 without network "
               "transports and never fetches or pushes\n",
               function);
  std::abort();
}

}  // namespace

extern "C" {

int libssh2_init(int) { return 0; }
int git_mbedtls_stream_global_init() { return 0; }
void libssh2_exit() {}

// GSSAPI's object identifier of host-based service names: a gss_OID, only ever passed to
// gss_import_name below.
void* GSS_C_NT_HOSTBASED_SERVICE = nullptr;

#define BERTH_UNREACHABLE(name) \
  [[noreturn]] void name() { NoNetworkTransport(#name); }

BERTH_UNREACHABLE(git_mbedtls__set_cert_location)
BERTH_UNREACHABLE(git_mbedtls_stream_new)
BERTH_UNREACHABLE(git_mbedtls_stream_wrap)
BERTH_UNREACHABLE(gss_delete_sec_context)
BERTH_UNREACHABLE(gss_display_status)
BERTH_UNREACHABLE(gss_import_name)
BERTH_UNREACHABLE(gss_indicate_mechs)
BERTH_UNREACHABLE(gss_init_sec_context)
BERTH_UNREACHABLE(gss_release_buffer)
BERTH_UNREACHABLE(gss_release_name)
BERTH_UNREACHABLE(gss_release_oid_set)
BERTH_UNREACHABLE(libssh2_agent_connect)
BERTH_UNREACHABLE(libssh2_agent_disconnect)
BERTH_UNREACHABLE(libssh2_agent_free)
BERTH_UNREACHABLE(libssh2_agent_get_identity)
BERTH_UNREACHABLE(libssh2_agent_init)
BERTH_UNREACHABLE(libssh2_agent_list_identities)
BERTH_UNREACHABLE(libssh2_agent_userauth)
BERTH_UNREACHABLE(libssh2_channel_close)
BERTH_UNREACHABLE(libssh2_channel_free)
BERTH_UNREACHABLE(libssh2_channel_open_ex)
BERTH_UNREACHABLE(libssh2_channel_process_startup)
BERTH_UNREACHABLE(libssh2_channel_read_ex)
BERTH_UNREACHABLE(libssh2_channel_set_blocking)
BERTH_UNREACHABLE(libssh2_channel_write_ex)
BERTH_UNREACHABLE(libssh2_hostkey_hash)
BERTH_UNREACHABLE(libssh2_knownhost_checkp)
BERTH_UNREACHABLE(libssh2_knownhost_free)
BERTH_UNREACHABLE(libssh2_knownhost_init)
BERTH_UNREACHABLE(libssh2_knownhost_readfile)
BERTH_UNREACHABLE(libssh2_session_abstract)
BERTH_UNREACHABLE(libssh2_session_disconnect_ex)
BERTH_UNREACHABLE(libssh2_session_free)
BERTH_UNREACHABLE(libssh2_session_handshake)
BERTH_UNREACHABLE(libssh2_session_hostkey)
BERTH_UNREACHABLE(libssh2_session_init_ex)
BERTH_UNREACHABLE(libssh2_session_last_error)
BERTH_UNREACHABLE(libssh2_session_method_pref)
BERTH_UNREACHABLE(libssh2_session_set_blocking)
BERTH_UNREACHABLE(libssh2_userauth_authenticated)
BERTH_UNREACHABLE(libssh2_userauth_keyboard_interactive_ex)
BERTH_UNREACHABLE(libssh2_userauth_list)
BERTH_UNREACHABLE(libssh2_userauth_password_ex)
BERTH_UNREACHABLE(libssh2_userauth_publickey)
BERTH_UNREACHABLE(libssh2_userauth_publickey_fromfile_ex)
BERTH_UNREACHABLE(libssh2_userauth_publickey_frommemory)

#undef BERTH_UNREACHABLE

}  // extern "C"
