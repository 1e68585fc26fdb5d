// json_walk_floor: the least a reader built on simdjson On-Demand can spend on
// a trace. It visits every key and value of FILE and keeps nothing (numbers
// parsed, strings' raw text consumed, as the trace reader does without
// escapes). Counted against `tracetwin inspect FILE` under callgrind (one
// reader thread: TRACETWIN_READER_THREADS=1), the difference is what building
// the Graph costs (docs/trace-format.md, "Performance", session 46).
//
//   valgrind --tool=callgrind build/bench/json_walk_floor BIG.json
#include <fmt/core.h>
#include <simdjson.h>

#include <cstdint>

namespace {

namespace od = simdjson::ondemand;

struct Counts {
  int64_t numbers = 0, strings = 0, others = 0;
};

void walk(od::value v, Counts& c) {
  switch (v.type().value()) {
    case od::json_type::array:
      for (auto element : v.get_array()) walk(element.value(), c);
      break;
    case od::json_type::object:
      for (auto field : v.get_object()) walk(field.value(), c);
      break;
    case od::json_type::number: {
      int64_t i = 0;
      if (v.get_int64().get(i) != simdjson::SUCCESS) (void)v.get_double().value();
      ++c.numbers;
      break;
    }
    case od::json_type::string:
      (void)v.get_raw_json_string().value();
      ++c.strings;
      break;
    default:
      (void)v.raw_json_token();
      ++c.others;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: json_walk_floor FILE.json\n");
    return 2;
  }
  try {
    const simdjson::padded_string json = simdjson::padded_string::load(argv[1]).value();
    od::parser parser;
    od::document doc = parser.iterate(json).value();
    Counts c;
    for (auto field : doc.get_object()) walk(field.value(), c);
    fmt::print("{}: {} numbers, {} strings, {} other values\n", argv[1], c.numbers, c.strings,
               c.others);
  } catch (const simdjson::simdjson_error& e) {
    fmt::print(stderr, "json_walk_floor: {}: {}\n", argv[1], e.what());
    return 2;
  }
  return 0;
}
