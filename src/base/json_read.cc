#include "base/json_read.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace berth {

namespace {

const nlohmann::json& EmptyObject() {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return kEmpty;
}

const nlohmann::json& Null() {
  static const nlohmann::json kNull = nullptr;
  return kNull;
}

// Reads an integer member into the range of T: a float or an out-of-range number is an error,
// since every integer berth writes fits its field.
template <typename T>
Status ReadInteger(const JsonReader& reader, const char* key, T* out) {
  const nlohmann::json& v = reader.At(key);
  if (v.is_null() && !reader.Has(key)) return {};
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      return Error(Cause::kInvalidArgument, reader.Where(key) + " is out of range");
    *out = static_cast<T>(u);
    return {};
  }
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (i < 0) return Error(Cause::kInvalidArgument, reader.Where(key) + " must not be negative");
    } else {
      if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          i > static_cast<int64_t>(std::numeric_limits<T>::max()))
        return Error(Cause::kInvalidArgument, reader.Where(key) + " is out of range");
    }
    *out = static_cast<T>(i);
    return {};
  }
  return reader.WrongType(key, "an integer");
}

// The deepest nesting of arrays and objects in `text`, brackets inside strings aside; it
// stops counting past `limit`. Malformed text is left for the parser to refuse.
int NestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text, const std::string& what) {
  if (NestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return Error(Cause::kInvalidArgument,
                 what + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Error(Cause::kInvalidArgument, what + " is not JSON");
  return parsed;
}

Error JsonTypeError(const std::string& where, const char* expected, const nlohmann::json& value) {
  return Error(Cause::kInvalidArgument,
               where + " must be " + expected + ", not " + std::string(value.type_name()));
}

Result<JsonReader> JsonReader::Of(const nlohmann::json& value, std::string where) {
  if (!value.is_object()) return JsonTypeError(where, "an object", value);
  return JsonReader(&value, std::move(where));
}

bool JsonReader::Has(const char* key) const { return object_->contains(key); }

const nlohmann::json& JsonReader::At(const char* key) const {
  auto it = object_->find(key);
  return it == object_->end() ? Null() : *it;
}

Error JsonReader::WrongType(const char* key, const char* expected) const {
  return JsonTypeError(Where(key), expected, At(key));
}

Result<JsonReader> JsonReader::Object(const char* key) const {
  if (!Has(key)) return JsonReader(&EmptyObject(), Where(key));
  return Of(At(key), Where(key));
}

Status JsonReader::Require(const char* key) const {
  if (Has(key)) return {};
  return Error(Cause::kInvalidArgument, Where(key) + " is missing");
}

Status JsonReader::Read(const char* key, std::string* out) const {
  if (!Has(key)) return {};
  const nlohmann::json& v = At(key);
  if (!v.is_string()) return WrongType(key, "a string");
  *out = v.get<std::string>();
  return {};
}

Status JsonReader::Read(const char* key, bool* out) const {
  if (!Has(key)) return {};
  const nlohmann::json& v = At(key);
  if (!v.is_boolean()) return WrongType(key, "true or false");
  *out = v.get<bool>();
  return {};
}

Status JsonReader::Read(const char* key, int* out) const { return ReadInteger(*this, key, out); }
Status JsonReader::Read(const char* key, int64_t* out) const {
  return ReadInteger(*this, key, out);
}
Status JsonReader::Read(const char* key, uint64_t* out) const {
  return ReadInteger(*this, key, out);
}

Status JsonReader::Read(const char* key, double* out) const {
  if (!Has(key)) return {};
  const nlohmann::json& v = At(key);
  if (!v.is_number()) return WrongType(key, "a number");
  double d = v.get<double>();
  // An infinity would be written back as null: not a value berth writes.
  if (!std::isfinite(d)) return Error(Cause::kInvalidArgument, Where(key) + " is out of range");
  *out = d;
  return {};
}

Status JsonReader::Read(const char* key, std::vector<std::string>* out) const {
  return ReadList(key, out,
                  [](const nlohmann::json& v, const std::string& where) -> Result<std::string> {
                    if (!v.is_string()) return JsonTypeError(where, "a string", v);
                    return v.get<std::string>();
                  });
}

Status JsonReader::Read(const char* key, std::map<std::string, std::string>* out) const {
  if (!Has(key)) return {};
  const nlohmann::json& v = At(key);
  if (!v.is_object()) return WrongType(key, "an object");
  std::map<std::string, std::string> read;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string())
      return JsonTypeError(Where(key) + "." + it.key(), "a string", it.value());
    read[it.key()] = it.value().get<std::string>();
  }
  *out = std::move(read);
  return {};
}

nlohmann::json UnknownMembers(const nlohmann::json& object,
                              std::span<const std::string_view> known) {
  nlohmann::json extra;
  if (!object.is_object()) return extra;
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool is_known = false;
    for (std::string_view k : known) is_known = is_known || it.key() == k;
    if (!is_known) extra[it.key()] = it.value();
  }
  return extra;
}

void MergeUnknownMembers(const nlohmann::json& extra, nlohmann::json* object) {
  if (!extra.is_object() || !object->is_object()) return;
  for (auto it = extra.begin(); it != extra.end(); ++it)
    if (!object->contains(it.key())) (*object)[it.key()] = it.value();
}

}  // namespace berth
