// Masking of known secret values (PRODUCT.md invariant 3, docs/receipt.md "Masking").
//
// berth knows the values of the credential variables it could hand to a job: the provider's
// credential variables and every credential-shaped variable of the caller's environment. Each
// of those values is replaced by "***" before anything a job produced is written: events,
// state reasons, receipts, audit entries, stored stdout and stderr, check output, and what
// `berth logs` and `berth show` print.
//
// SecretMask is an immutable set of values, safe to share between threads once built.
// StreamMasker masks a stream that arrives in chunks (a secret split across two reads is
// still masked); one StreamMasker belongs to one stream and is not thread-safe.
#pragma once

#include <bitset>
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "job/context.h"

namespace berth::job {

inline constexpr const char* kMaskText = "***";

// Whether a variable's name says it holds a secret (docs/receipt.md): a name word (split at
// '_' and other punctuation) containing TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
// CREDENTIAL or COOKIE; a word KEY, KEYS, APIKEY, ACCESSKEY, SECRETKEY or PRIVATEKEY; a last
// word PAT or AUTH. Names whose last word is FILE, PATH or DIR hold a location, not the
// secret itself, and are not secret names.
bool IsSecretName(std::string_view name);

class SecretMask {
 public:
  // Values shorter than this are never masked: they occur in ordinary text too often, and
  // masking them would garble output without protecting much.
  static constexpr size_t kMinSecretBytes = 8;

  SecretMask() = default;

  // The values of `credential_names` and of every secret-shaped name (IsSecretName) in
  // `environ`, plus the password of any scheme://user:password@host value in `environ`.
  static SecretMask FromEnvironment(const std::vector<std::pair<std::string, std::string>>& environ,
                                    const std::vector<std::string>& credential_names);

  // Adds `value` unless it is too short or too common to mask safely (fewer than
  // kMinSecretBytes, one repeated character, or a common word such as "password"). A
  // multi-line value also adds each of its lines that qualifies on its own (PEM armour lines
  // excepted); a value with characters JSON escapes also adds its escaped form.
  void Add(std::string_view value);

  bool empty() const { return values_.empty(); }
  // The longest value: a stream must hold back fewer bytes than this at a chunk's end.
  size_t longest() const { return values_.empty() ? 0 : values_.front().size(); }

  // `text` with every occurrence of every value replaced by kMaskText (longest value first
  // where several match at one place).
  std::string Apply(std::string_view text) const;
  // Masks every string (and object key) in `json`, in place.
  void ApplyJson(nlohmann::json* json) const;

 private:
  friend class StreamMasker;
  // Masks text[0, n) into *out, consuming as much as is safe: with `final` false it stops
  // where a value could begin and continue past the end of `text`. Returns the bytes consumed.
  size_t MaskInto(std::string_view text, bool final, std::string* out) const;
  void AddOne(std::string value);

  std::vector<std::string> values_;  // longest first, no duplicates
  std::bitset<256> first_bytes_;     // the first byte of each value, to skip ahead quickly
};

// What berth masks for a job run or a command of `ctx`'s caller: the values in ctx.environ of
// `credential_names` (the job's provider's credential variables), of every provider's
// credential variables (built-in and from the user's config), and of every secret-shaped name.
SecretMask KnownSecrets(const JobContext& ctx, std::vector<std::string> credential_names);

class StreamMasker {
 public:
  // `mask` must outlive the StreamMasker.
  explicit StreamMasker(const SecretMask& mask) : mask_(mask) {}

  // The masked output that is safe to emit after `chunk`; up to longest()-1 bytes may be held
  // back until the next chunk shows whether they begin a secret.
  std::string Feed(std::string_view chunk);
  // Everything held back, masked: the stream has ended.
  std::string Finish();

 private:
  const SecretMask& mask_;
  std::string pending_;
};

}  // namespace berth::job
