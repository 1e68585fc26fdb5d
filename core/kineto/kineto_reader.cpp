// Kineto trace reader. simdjson's DOM parser does the fast path (the bench
// measures it against a plain byte scan); only when simdjson rejects the text
// is it re-read with nlohmann's SAX parser, which reports the byte offset of
// the first error - so the error path is precise and the good path is fast.
#include "core/kineto/kineto_reader.h"

#include <fmt/core.h>
#include <simdjson.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "core/errors.h"
#include "core/trace_reader.h"

namespace tracetwin::core::kineto {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

const std::unordered_map<std::string_view, EventCategory>& categoryTable() {
  static const std::unordered_map<std::string_view, EventCategory> table = {
      {"cpu_op", EventCategory::kCpuOp},
      {"Operator", EventCategory::kCpuOp},  // Kineto < 1.10 spelling
      {"user_annotation", EventCategory::kUserAnnotation},
      {"cuda_runtime", EventCategory::kCudaRuntime},
      {"Runtime", EventCategory::kCudaRuntime},
      {"cuda_driver", EventCategory::kCudaDriver},
      {"kernel", EventCategory::kKernel},
      {"Kernel", EventCategory::kKernel},
      {"gpu_memcpy", EventCategory::kGpuMemcpy},
      {"Memcpy", EventCategory::kGpuMemcpy},
      {"gpu_memset", EventCategory::kGpuMemset},
      {"Memset", EventCategory::kGpuMemset},
      {"overhead", EventCategory::kProfilerOverhead},
  };
  return table;
}

// Where a bad value sits, for messages: "file: traceEvents[12] key 'ts'".
struct Where {
  const std::string& source;
  int64_t index;
  [[noreturn]] void fail(std::string_view key, std::string_view expected) const {
    throw InputError(
        fmt::format("{}: traceEvents[{}] key '{}': expected {}", source, index, key, expected));
  }
};

double asNumber(element value, const Where& where, std::string_view key) {
  switch (value.type()) {
    case element_type::INT64:
      return static_cast<double>(int64_t(value));
    case element_type::UINT64:
      return static_cast<double>(uint64_t(value));
    case element_type::DOUBLE: {
      double d = double(value);
      if (!std::isfinite(d)) where.fail(key, "a finite number");
      return d;
    }
    default:
      where.fail(key, "a number");
  }
}

int64_t asInteger(element value, const Where& where, std::string_view key) {
  switch (value.type()) {
    case element_type::INT64:
      return int64_t(value);
    case element_type::UINT64:
      return static_cast<int64_t>(uint64_t(value));
    case element_type::DOUBLE: {
      double d = double(value);
      if (d != std::floor(d) || std::fabs(d) > 9.0e18) where.fail(key, "an integer");
      return static_cast<int64_t>(d);
    }
    default:
      where.fail(key, "an integer");
  }
}

// pid and tid are integers, except for Kineto's own "Spans"/"Traces" rows.
int64_t asIdOrName(element value, const Where& where, std::string_view key) {
  if (value.type() == element_type::STRING) return kAbsent;
  return asInteger(value, where, key);
}

using ArgSetter = void (*)(KinetoEvent&, int64_t);
const std::unordered_map<std::string_view, ArgSetter>& argTable() {
  static const std::unordered_map<std::string_view, ArgSetter> table = {
      {"External id", [](KinetoEvent& e, int64_t v) { e.external_id = v; }},
      {"Ev Idx", [](KinetoEvent& e, int64_t v) { e.ev_idx = v; }},
      {"Record function id", [](KinetoEvent& e, int64_t v) { e.record_function_id = v; }},
      {"Sequence number", [](KinetoEvent& e, int64_t v) { e.sequence_number = v; }},
      {"Fwd thread id", [](KinetoEvent& e, int64_t v) { e.fwd_thread_id = v; }},
      {"correlation", [](KinetoEvent& e, int64_t v) { e.correlation = v; }},
      {"stream", [](KinetoEvent& e, int64_t v) { e.stream = v; }},
      {"device", [](KinetoEvent& e, int64_t v) { e.device = v; }},
      {"bytes", [](KinetoEvent& e, int64_t v) { e.bytes = v; }},
  };
  return table;
}

void readArgs(element value, KinetoEvent& event, const Where& where) {
  object args;
  if (value.get(args) != simdjson::SUCCESS) where.fail("args", "an object");
  const auto& table = argTable();
  for (auto field : args) {
    auto it = table.find(field.key);
    if (it != table.end()) it->second(event, asInteger(field.value, where, field.key));
  }
}

// Fills `event` from one traceEvents entry; returns false for entries that
// tracetwin does not use (metadata, instants, unknown categories).
// Microseconds: since the epoch a timestamp is ~1.8e15, and 2^53 (285
// years) is where a double stops counting whole ones. A kernel at 1e300 us
// was read, and link printed a traced span of 1e300 ms.
constexpr double kMaxMicros = 9007199254740992.0;

bool readEvent(element entry, KinetoEvent& event, const Where& where) {
  object obj;
  if (entry.get(obj) != simdjson::SUCCESS) where.fail("(event)", "an object");
  std::string_view ph, cat;
  bool has_ts = false, has_dur = false;
  for (auto field : obj) {
    std::string_view key = field.key;
    element value = field.value;
    if (key == "ph") {
      if (value.get(ph) != simdjson::SUCCESS) where.fail(key, "a string");
    } else if (key == "cat") {
      if (value.get(cat) != simdjson::SUCCESS) where.fail(key, "a string");
    } else if (key == "name") {
      std::string_view name;
      if (value.get(name) != simdjson::SUCCESS) where.fail(key, "a string");
      event.name.assign(name);
    } else if (key == "ts") {
      event.ts = asNumber(value, where, key);
      if (!(std::abs(event.ts) <= kMaxMicros)) where.fail(key, "a timestamp within 2^53 us");
      has_ts = true;
    } else if (key == "dur") {
      event.dur = asNumber(value, where, key);
      if (!(event.dur <= kMaxMicros)) where.fail(key, "a duration within 2^53 us");
      has_dur = true;
    } else if (key == "pid") {
      event.pid = asIdOrName(value, where, key);
    } else if (key == "tid") {
      event.tid = asIdOrName(value, where, key);
    } else if (key == "id") {
      if (value.type() != element_type::STRING) event.flow_id = asInteger(value, where, key);
    } else if (key == "args") {
      readArgs(value, event, where);
    }
  }
  if (ph.empty()) where.fail("ph", "a phase string (\"X\", \"s\", \"f\", \"M\" ...)");
  if (ph == "M") {
    event.category = EventCategory::kMetadata;
    return false;
  }
  if (ph == "s" || ph == "f") {
    event.category = ph == "s" ? EventCategory::kFlowStart : EventCategory::kFlowEnd;
    if (!has_ts) where.fail("ts", "a timestamp on a flow event");
    return true;
  }
  auto it = categoryTable().find(cat);
  if (ph != "X" || it == categoryTable().end()) {
    event.category = EventCategory::kOther;
    return false;
  }
  event.category = it->second;
  if (!has_ts) where.fail("ts", "a timestamp on a complete (\"X\") event");
  if (!has_dur) where.fail("dur", "a duration on a complete (\"X\") event");
  if (event.dur < 0) where.fail("dur", "a duration >= 0");
  if (isGpuActivity(event.category) && event.stream == kAbsent) event.stream = event.tid;
  return true;
}

void readDevices(element value, KinetoTrace& trace) {
  simdjson::dom::array devices;
  if (value.get(devices) != simdjson::SUCCESS) {
    throw InputError(
        fmt::format("{}: key 'deviceProperties': expected an array", trace.source_path));
  }
  Where where{trace.source_path, -1};
  for (element d : devices) {
    object obj;
    if (d.get(obj) != simdjson::SUCCESS) {
      throw InputError(fmt::format("{}: deviceProperties: expected objects", trace.source_path));
    }
    DeviceProperties p;
    for (auto field : obj) {
      std::string_view key = field.key;
      if (key == "name") {
        std::string_view name;
        if (field.value.get(name) == simdjson::SUCCESS) p.name.assign(name);
      } else if (key == "id") {
        p.id = asInteger(field.value, where, key);
      } else if (key == "totalGlobalMem") {
        p.total_global_mem = asInteger(field.value, where, key);
      } else if (key == "computeMajor") {
        p.compute_major = asInteger(field.value, where, key);
      } else if (key == "computeMinor") {
        p.compute_minor = asInteger(field.value, where, key);
      } else if (key == "numSms") {
        p.num_sms = asInteger(field.value, where, key);
      }
    }
    trace.devices.push_back(std::move(p));
  }
}

void readDistributed(element value, KinetoTrace& trace) {
  object obj;
  if (value.get(obj) != simdjson::SUCCESS) {
    throw InputError(
        fmt::format("{}: key 'distributedInfo': expected an object", trace.source_path));
  }
  Where where{trace.source_path, -1};
  DistributedInfo info;
  for (auto field : obj) {
    std::string_view key = field.key;
    if (key == "backend") {
      std::string_view backend;
      if (field.value.get(backend) == simdjson::SUCCESS) info.backend.assign(backend);
    } else if (key == "rank") {
      info.rank = asInteger(field.value, where, key);
    } else if (key == "world_size") {
      info.world_size = asInteger(field.value, where, key);
    }
  }
  trace.distributed = info;
}

// nlohmann SAX handler that accepts everything and remembers the first error.
struct ErrorLocator : nlohmann::json_sax<nlohmann::json> {
  size_t byte = 0;
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    byte = position;
    message = ex.what();
    return false;
  }
};

// The byte offset of the first integer literal (outside strings) that no
// 64-bit integer holds, or npos. Such a number is valid JSON (nlohmann reads
// it as a float) that simdjson refuses, with no position ("Problem while
// parsing a number").
size_t firstIntegerPast64Bits(std::string_view json) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != '-' && !(c >= '0' && c <= '9')) continue;
    size_t end = i + (c == '-' ? 1 : 0);
    while (end < json.size() && json[end] >= '0' && json[end] <= '9') ++end;
    const bool fraction =
        end < json.size() && (json[end] == '.' || json[end] == 'e' || json[end] == 'E');
    const std::string_view digits =
        json.substr(i + (c == '-' ? 1 : 0), end - i - (c == '-' ? 1 : 0));
    // Past 2^64-1 (20 digits, 18446744073709551615) or below -2^63.
    const std::string_view limit = c == '-' ? "9223372036854775808" : "18446744073709551615";
    if (!fraction &&
        (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit))) {
      return i;
    }
    while (end < json.size() &&
           (json[end] == '.' || json[end] == 'e' || json[end] == 'E' || json[end] == '+' ||
            json[end] == '-' || (json[end] >= '0' && json[end] <= '9'))) {
      ++end;
    }
    i = end - 1;
  }
  return std::string_view::npos;
}

[[noreturn]] void failInvalidJson(std::string_view json, const std::string& source,
                                  simdjson::error_code code) {
  ErrorLocator locator;
  bool ok = nlohmann::json::sax_parse(json.begin(), json.end(), &locator);
  if (!ok && !locator.message.empty()) {
    throw InputError(fmt::format("{}: invalid JSON at byte offset {}: {}", source, locator.byte,
                                 locator.message));
  }
  if (const size_t at = firstIntegerPast64Bits(json); at != std::string_view::npos) {
    const size_t end = json.find_first_of(",}] \t\r\n", at);
    throw InputError(fmt::format(
        "{}: byte offset {}: the integer {} does not fit in 64 bits (no Kineto field holds one)",
        source, at, json.substr(at, std::min<size_t>(end - at, 40))));
  }
  throw InputError(fmt::format("{}: invalid JSON ({}); expected a Kineto trace object", source,
                               simdjson::error_message(code)));
}

}  // namespace

const char* eventCategoryName(EventCategory category) {
  static const char* const kNames[] = {"cpu_op",   "user_annotation", "cuda_runtime", "cuda_driver",
                                       "kernel",   "gpu_memcpy",      "gpu_memset",   "flow_start",
                                       "flow_end", "metadata",        "overhead",     "other"};
  return kNames[static_cast<size_t>(category)];
}

KinetoTrace parseKinetoTrace(std::string_view json, const std::string& source) {
  KinetoTrace trace;
  trace.source_path = source;
  trace.category_counts.assign(static_cast<size_t>(EventCategory::kOther) + 1, 0);
  simdjson::dom::parser parser;
  element root;
  auto code = parser.parse(json.data(), json.size(), true).get(root);
  if (code != simdjson::SUCCESS) failInvalidJson(json, source, code);
  object top;
  if (root.get(top) != simdjson::SUCCESS) {
    throw InputError(
        fmt::format("{}: byte offset 0: expected a JSON object with 'traceEvents'", source));
  }
  simdjson::dom::array events;
  bool have_events = false;
  for (auto field : top) {
    std::string_view key = field.key;
    if (key == "traceEvents") {
      if (field.value.get(events) != simdjson::SUCCESS) {
        throw InputError(fmt::format("{}: key 'traceEvents': expected an array", source));
      }
      have_events = true;
    } else if (key == "deviceProperties") {
      readDevices(field.value, trace);
    } else if (key == "distributedInfo") {
      readDistributed(field.value, trace);
    } else if (key == "schemaVersion") {
      trace.schema_version = asInteger(field.value, Where{source, -1}, key);
    }
  }
  if (!have_events) {
    throw InputError(fmt::format(
        "{}: missing key 'traceEvents' (expected a Kineto / Chrome trace object)", source));
  }
  trace.events.reserve(events.size());
  int64_t index = 0;
  for (element entry : events) {
    KinetoEvent event;
    event.index = index;
    Where where{source, index};
    bool keep = readEvent(entry, event, where);
    ++trace.category_counts[static_cast<size_t>(event.category)];
    if (keep) trace.events.push_back(std::move(event));
    ++index;
  }
  return trace;
}

KinetoTrace readKinetoTrace(const std::string& path) {
  std::string bytes = readMaybeGzipFile(path);
  return parseKinetoTrace(bytes, path);
}

}  // namespace tracetwin::core::kineto
