#include "replay/device/mark_clock.h"

#include <chrono>

namespace tracetwin::replay::device {
namespace {

class SteadyMarkClock : public MarkClock {
 public:
  void origin() override {
    origin_ = std::chrono::steady_clock::now();
    marks_.clear();
  }
  size_t mark() override {
    marks_.push_back(std::chrono::steady_clock::now());
    return marks_.size() - 1;
  }
  std::vector<double> resolveUs() override {
    std::vector<double> out;
    out.reserve(marks_.size());
    for (const auto& m : marks_) {
      out.push_back(std::chrono::duration<double, std::micro>(m - origin_).count());
    }
    return out;
  }

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace

std::unique_ptr<MarkClock> makeSteadyMarkClock() { return std::make_unique<SteadyMarkClock>(); }

}  // namespace tracetwin::replay::device
