// A build without LibTorch has no c10d: a distributed replay says so.
#include "replay/dist/rank_session.h"

namespace tracetwin::replay::dist {

struct RankSession::Impl {};

RankSession::RankSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RankSession::~RankSession() = default;

std::shared_ptr<RankSession> RankSession::connect(const RankSessionOptions&) {
  throw UnavailableError(
      "distributed replay needs LibTorch's c10d: this tracetwin was built without LibTorch");
}

int RankSession::rank() const { return 0; }
int RankSession::worldSize() const { return 1; }
void RankSession::prepare(const core::Graph&, const std::vector<core::NodeId>&) {}
comm::CommReplayer& RankSession::commReplayer() {
  throw UnavailableError("distributed replay: built without LibTorch");
}
bool RankSession::beginIteration(bool) { return false; }
void RankSession::endIteration(bool, double) {}
DistributedSummary RankSession::finish() { return {}; }
std::vector<std::string> RankSession::gatherReports(const std::string&) { return {}; }
void RankSession::reportFailure(const std::string&) noexcept {}
std::string RankSession::explainFailure(const std::string& error) noexcept { return error; }

}  // namespace tracetwin::replay::dist
