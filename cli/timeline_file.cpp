#include "cli/timeline_file.h"

#include <fmt/core.h>

#include <chrono>

#include "timeline/trace_events.h"

namespace tracetwin::cli {

void writeTimelineFile(const std::string& path, const timeline::Timeline& t) {
  const auto t0 = std::chrono::steady_clock::now();
  const timeline::WriteInfo info = timeline::writeTimeline(path, t);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::string views;
  for (const auto& v : t.views)
    views += fmt::format("{}{}{}", views.empty() ? "" : ", ",
                         v.rank >= 0 ? fmt::format("rank {} ", v.rank) : "", v.source);
  fmt::print("timeline: {} ({}; {} slices, {} flows{}; {} bytes in {:.1f} ms)\n", path, views,
             info.slices, info.flows,
             info.clipped > 0 ? fmt::format(", {} clipped to nest", info.clipped) : "", info.bytes,
             ms);
}

}  // namespace tracetwin::cli
