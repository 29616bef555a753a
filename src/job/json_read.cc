#include "job/json_read.h"

#include <cmath>
#include <limits>

namespace berth::job {

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

}  // namespace

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

}  // namespace berth::job
