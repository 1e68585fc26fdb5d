#include "replay/comm/comm_replayer.h"

#include <map>

#include "core/errors.h"
#include "replay/comm/c10d_backend.h"
#include "replay/comm/collective_runners.h"
#include "replay/comm/collective_spec.h"

namespace tracetwin::replay::comm {
namespace {

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string nodeLabel(const core::Node& node) {
  return "node " + std::to_string(node.id) + " (" + node.name + ")";
}

}  // namespace

struct CommReplayer::Impl {
  BackendHandle backend;
  OutputCache outputs;
  // The way each collective is issued on this backend, chosen by probe().
  std::map<Collective, CollectiveRunner> runners;
  // Collectives this LibTorch's backend refused in the probe, with its words
  // (e.g. Gloo in LibTorch 1.13 implements no reduce_scatter).
  std::map<Collective, std::string> unsupported;
  std::vector<std::string> notes;

  std::vector<at::Tensor> run(CollectiveRunner runner, const CollectiveSpec& spec,
                              const std::vector<at::Tensor>& inputs, int64_t node) {
    RunContext ctx{*backend.group, spec, inputs, outputs, node};
    return runner(ctx);
  }

  // Empty when `runner` works on a 2-element tensor, else the error's first line.
  std::string tryRunner(CollectiveRunner runner, Collective kind) {
    CollectiveSpec spec;
    spec.kind = kind;
    spec.group_size = 1;
    spec.input_tensors = 1;
    const at::Tensor sample =
        at::ones({2}, at::TensorOptions().dtype(at::kFloat).device(backend.device));
    const int64_t probe_node = -2 - static_cast<int64_t>(kind);  // never a trace id
    try {
      run(runner, spec, {sample}, probe_node);
      return "";
    } catch (const c10::Error& e) {
      return firstLine(e.what_without_backtrace());
    } catch (const std::exception& e) {
      return firstLine(e.what());
    }
  }

  // Issues every collective once: what fails here would fail on every node of
  // that kind, so canReplay() can say so up front.
  void probe() {
    for (const CollectiveInfo& info : collectives()) {
      CollectiveRunner runner = findRunner(info.kind);
      if (runner == nullptr) continue;
      std::string error = tryRunner(runner, info.kind);
      CollectiveRunner fallback = findFallbackRunner(info.kind);
      if (!error.empty() && fallback != nullptr && tryRunner(fallback, info.kind).empty()) {
        notes.push_back(std::string(info.name) + " issued through the list API on views (" +
                        backend.name + ": " + error + ")");
        runner = fallback;
        error.clear();
      }
      if (error.empty()) {
        runners[info.kind] = runner;
      } else {
        unsupported[info.kind] = error;
      }
    }
  }
};

CommReplayer::CommReplayer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CommReplayer::~CommReplayer() = default;

std::unique_ptr<CommReplayer> CommReplayer::create(const std::string& device) {
  auto impl = std::make_unique<Impl>();
  try {
    impl->backend = makeOneRankBackend(device);
  } catch (const c10::Error& e) {
    throw UnavailableError("cannot create a one-rank c10d group on " + device + ": " +
                           firstLine(e.what_without_backtrace()));
  }
  impl->probe();
  return std::unique_ptr<CommReplayer>(new CommReplayer(std::move(impl)));
}

const std::string& CommReplayer::backendName() const { return impl_->backend.name; }

std::vector<std::string> CommReplayer::backendNotes() const {
  std::vector<std::string> out = impl_->notes;
  for (const auto& [kind, error] : impl_->unsupported) {
    out.push_back(std::string(collectiveInfo(kind).name) + " unsupported by " +
                  impl_->backend.name + ": " + error);
  }
  return out;
}

bool CommReplayer::canReplay(const core::Node& node, std::string* reason) const {
  auto refuse = [&](const std::string& why) {
    if (reason) *reason = why;
    return false;
  };
  CollectiveSpec spec;
  try {
    spec = readCollective(node);
  } catch (const InputError& e) {
    return refuse(e.what());
  }
  if (std::string why = whyNotOneRank(spec); !why.empty()) return refuse(why);
  if (auto it = impl_->unsupported.find(spec.kind); it != impl_->unsupported.end()) {
    return refuse("backend " + impl_->backend.name + " of this LibTorch cannot run " +
                  collectiveInfo(spec.kind).name + ": " + it->second);
  }
  if (impl_->runners.count(spec.kind) == 0) {
    return refuse(std::string("no way to issue ") + collectiveInfo(spec.kind).name +
                  " on one rank");
  }
  return true;
}

std::vector<at::Tensor> CommReplayer::replay(const core::Node& node,
                                             const std::vector<at::Tensor>& tensors) {
  std::string why;
  if (!canReplay(node, &why)) {
    throw RuntimeFailure(nodeLabel(node) + ": cannot replay: " + why);
  }
  const CollectiveSpec spec = readCollective(node);
  for (const at::Tensor& t : tensors) {
    if (t.defined() && t.device() != impl_->backend.device) {
      throw RuntimeFailure(nodeLabel(node) + ": tensor on " + t.device().str() + " but the " +
                           impl_->backend.name + " group runs on " + impl_->backend.device.str());
    }
  }
  try {
    return impl_->run(impl_->runners.at(spec.kind), spec, tensors, node.id);
  } catch (const c10::Error& e) {
    throw RuntimeFailure(nodeLabel(node) + ": c10d " + impl_->backend.name + " " +
                         collectiveInfo(spec.kind).name +
                         " failed: " + firstLine(e.what_without_backtrace()));
  }
}

}  // namespace tracetwin::replay::comm
