#include "replay/comm/comm_replayer.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "core/errors.h"
#include "replay/comm/c10d_backend.h"
#include "replay/comm/collective_runners.h"
#include "replay/comm/collective_names.h"
#include "core/comm/group_plan.h"

namespace tracetwin::replay::comm {
namespace {

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string nodeLabel(const core::Node& node) {
  return "node " + std::to_string(node.id) + " (" + node.name + ")";
}

}  // namespace

struct CommReplayer::Impl {
  std::shared_ptr<CommGroups> groups;
  bool distributed = false;
  OutputCache outputs;
  // The way each collective is issued on this backend, chosen by probe().
  std::map<Collective, CollectiveRunner> runners;
  // Collectives this LibTorch's backend refused in the probe, with its words
  // (e.g. Gloo in LibTorch 1.13 implements no reduce_scatter).
  std::map<Collective, std::string> unsupported;
  std::vector<std::string> notes;
  CollectiveObserver* observer = nullptr;

  // Issued, not yet waited for: its works and the storages it reads and
  // writes (data pointers of the payload and of the results).
  struct Pending {
    std::vector<WorkHandle> works;
    std::vector<const void*> storages;
    std::string what;  // "node 12 (c10d::allreduce_) all_reduce", for errors
  };
  std::vector<Pending> pending;
  bool async = false;  // distributed Gloo

  static void addStorages(const std::vector<at::Tensor>& tensors, std::vector<const void*>& out) {
    for (const at::Tensor& t : tensors) {
      if (t.defined() && t.has_storage()) out.push_back(t.storage().data());
    }
  }

  void finish(Pending& p) {
    try {
      for (WorkHandle& w : p.works) w->wait();
    } catch (const c10::Error& e) {
      throw RuntimeFailure(p.what + " failed: " + firstLine(e.what_without_backtrace()));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw RuntimeFailure(p.what + " failed: " + firstLine(e.what()));
    }
  }

  // What replay() needs per node, worked out once.
  struct Resolved {
    CollectiveSpec spec;
    BackendHandle* group = nullptr;
    CollectiveRunner runner = nullptr;
    // The payload among the node's flattened tensor inputs.
    size_t payload_begin = 0;
    size_t payload_end = SIZE_MAX;
  };
  std::unordered_map<core::NodeId, Resolved> resolved;
  // all_to_all_single split sizes derived across ranks (setSplitSizes).
  std::unordered_map<core::NodeId, std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      derived_splits;

  const BackendHandle& world() const { return groups->world; }

  std::vector<at::Tensor> run(CollectiveRunner runner, BackendHandle& group,
                              const CollectiveSpec& spec, const std::vector<at::Tensor>& inputs,
                              int64_t node) {
    RunContext ctx{*group.group, spec, inputs, outputs, node};
    return runner(ctx);
  }

  // Empty when `runner` works on a small tensor (two elements per rank),
  // else the error's first line.
  std::string tryRunner(CollectiveRunner runner, Collective kind) {
    CollectiveSpec spec;
    spec.kind = kind;
    spec.group_size = groups->layout.world_size;
    spec.input_tensors = 1;
    const at::Tensor sample = at::ones({2 * int64_t(groups->layout.world_size)},
                                       at::TensorOptions().dtype(at::kFloat).device(world().device));
    const int64_t probe_node = -2 - static_cast<int64_t>(kind);  // never a trace id
    try {
      run(runner, groups->world, spec, {sample}, probe_node);
      return "";
    } catch (const c10::Error& e) {
      return firstLine(e.what_without_backtrace());
    } catch (const std::exception& e) {
      return firstLine(e.what());
    }
  }

  // Issues each collective once: what fails here would fail on every node of
  // that kind, so canReplay() can say so up front. On a distributed group
  // every rank probes the same kinds in the same order.
  void probe(const std::set<Collective>& kinds) {
    for (Collective kind : kinds) {
      const CollectiveInfo& info = collectiveInfo(kind);
      CollectiveRunner runner = findRunner(kind);
      if (runner == nullptr) continue;
      std::string error = tryRunner(runner, kind);
      if (!error.empty()) {
        for (const FallbackRunner& fallback : findFallbackRunners(kind)) {
          if (!tryRunner(fallback.runner, kind).empty()) continue;
          notes.push_back(std::string(info.name) + " issued through " + fallback.how + " (" +
                          world().name + ": " + error + ")");
          runner = fallback.runner;
          error.clear();
          break;
        }
      }
      if (error.empty()) {
        runners[kind] = runner;
      } else {
        unsupported[kind] = error;
      }
    }
  }

  // Why `node` cannot be replayed here, or "" with `out` filled in.
  std::string resolve(const core::Node& node, Resolved& out) {
    CollectiveSpec spec;
    try {
      spec = readCollective(node);
    } catch (const InputError& e) {
      return e.what();
    }
    if (auto d = derived_splits.find(node.id); d != derived_splits.end()) {
      spec.in_split = d->second.first;
      spec.out_split = d->second.second;
    }
    BackendHandle* group = &groups->world;
    if (distributed) {
      const CollectiveInfo& info = collectiveInfo(spec.kind);
      if (info.needs_peer) {
        return std::string(info.name) +
               ": the trace does not record the peer rank of point-to-point operations";
      }
      const GroupChoice choice = chooseGroup(node, spec, groups->layout);
      if (!choice.refusal.empty()) return choice.refusal;
      if (!choice.group.empty()) {
        auto it = groups->named.find(choice.group);
        if (it == groups->named.end()) {
          return "process group '" + choice.group + "' was not created on this rank";
        }
        group = &it->second;
      }
      if (info.needs_tensor && spec.input_tensors == 0) {
        return std::string(info.name) + " records no input tensor to communicate";
      }
    } else if (std::string why = whyNotOneRank(spec); !why.empty()) {
      return why;
    }
    if (auto it = unsupported.find(spec.kind); it != unsupported.end()) {
      return "backend " + world().name + " of this LibTorch cannot run " +
             collectiveInfo(spec.kind).name + ": " + it->second;
    }
    auto runner = runners.find(spec.kind);
    if (runner == runners.end()) {
      return std::string("no way to issue ") + collectiveInfo(spec.kind).name +
             (distributed ? "" : " on one rank");
    }
    if (spec.payload_arg >= 0) {
      size_t flat = 0;
      for (size_t a = 0; a < node.inputs.size(); ++a) {
        if (a == size_t(spec.payload_arg)) out.payload_begin = flat;
        core::forEachTensor(node.inputs[a], [&](const core::TensorValue&) { ++flat; });
        if (a == size_t(spec.payload_arg)) out.payload_end = flat;
      }
    }
    out.spec = std::move(spec);
    out.group = group;
    out.runner = runner->second;
    return "";
  }
};

CommReplayer::CommReplayer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

void CommReplayer::setSplitSizes(core::NodeId node, std::vector<int64_t> in_split,
                                 std::vector<int64_t> out_split) {
  impl_->derived_splits[node] = {std::move(in_split), std::move(out_split)};
  impl_->resolved.erase(node);
}
CommReplayer::~CommReplayer() = default;

std::unique_ptr<CommReplayer> CommReplayer::create(const std::string& device) {
  auto impl = std::make_unique<Impl>();
  impl->groups = std::make_shared<CommGroups>();
  try {
    impl->groups->world = makeOneRankBackend(device);
  } catch (const c10::Error& e) {
    throw UnavailableError("cannot create a one-rank c10d group on " + device + ": " +
                           firstLine(e.what_without_backtrace()));
  }
  std::set<Collective> every;
  for (const CollectiveInfo& info : collectives()) every.insert(info.kind);
  impl->probe(every);
  return std::unique_ptr<CommReplayer>(new CommReplayer(std::move(impl)));
}

std::unique_ptr<CommReplayer> CommReplayer::createDistributed(std::shared_ptr<CommGroups> groups,
                                                              const std::set<Collective>& kinds) {
  auto impl = std::make_unique<Impl>();
  impl->groups = std::move(groups);
  impl->distributed = true;
  impl->async = impl->groups->world.name == "gloo";
  impl->probe(kinds);
  return std::unique_ptr<CommReplayer>(new CommReplayer(std::move(impl)));
}

const std::string& CommReplayer::backendName() const { return impl_->world().name; }

std::vector<std::string> CommReplayer::backendNotes() const {
  std::vector<std::string> out = impl_->notes;
  for (const auto& [kind, error] : impl_->unsupported) {
    out.push_back(std::string(collectiveInfo(kind).name) + " unsupported by " +
                  impl_->world().name + ": " + error);
  }
  return out;
}

void CommReplayer::setObserver(CollectiveObserver* observer) { impl_->observer = observer; }

bool CommReplayer::hasPending() const { return !impl_->pending.empty(); }

size_t CommReplayer::waitForTensors(const std::vector<at::Tensor>& tensors) {
  auto& pending = impl_->pending;
  if (pending.empty()) return 0;
  size_t waited = 0;
  std::vector<const void*> wanted;
  Impl::addStorages(tensors, wanted);
  // In issue order: a later collective can depend on an earlier one.
  for (size_t i = 0; i < pending.size();) {
    const auto& st = pending[i].storages;
    const bool touches = std::any_of(st.begin(), st.end(), [&](const void* p) {
      return std::find(wanted.begin(), wanted.end(), p) != wanted.end();
    });
    if (!touches) {
      ++i;
      continue;
    }
    Impl::Pending done = std::move(pending[i]);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    impl_->finish(done);
    ++waited;
  }
  return waited;
}

void CommReplayer::waitAll() {
  auto pending = std::move(impl_->pending);
  impl_->pending.clear();
  for (Impl::Pending& p : pending) impl_->finish(p);
}

bool CommReplayer::canReplay(const core::Node& node, std::string* reason) const {
  Impl::Resolved unused;
  const std::string why = impl_->resolve(node, unused);
  if (!why.empty() && reason) *reason = why;
  return why.empty();
}

// The last of `works` to complete marks the call's completion, timed on the
// backend's thread by the futures' callbacks (waiting later would time the
// wait, not the collective).
static void watchCompletion(std::vector<WorkHandle>& works, CollectiveObserver* observer,
                            size_t call) {
  auto remaining = std::make_shared<std::atomic<size_t>>(works.size());
  for (WorkHandle& w : works) {
    w->getFuture()->addCallback([remaining, observer, call](c10::ivalue::Future&) {
      if (remaining->fetch_sub(1) == 1) {
        observer->completedAt(call, std::chrono::steady_clock::now());
      }
    });
  }
}

std::vector<at::Tensor> CommReplayer::replay(const core::Node& node,
                                             const std::vector<at::Tensor>& tensors) {
  auto it = impl_->resolved.find(node.id);
  if (it == impl_->resolved.end()) {
    Impl::Resolved r;
    if (std::string why = impl_->resolve(node, r); !why.empty()) {
      throw RuntimeFailure(nodeLabel(node) + ": cannot replay: " + why);
    }
    it = impl_->resolved.emplace(node.id, std::move(r)).first;
  }
  Impl::Resolved& r = it->second;
  CollectiveSpec spec = r.spec;
  std::vector<at::Tensor> payload;
  for (size_t i = r.payload_begin; i < std::min(r.payload_end, tensors.size()); ++i) {
    const at::Tensor& t = tensors[i];
    if (!t.defined()) continue;
    if (t.device() != r.group->device) {
      throw RuntimeFailure(nodeLabel(node) + ": tensor on " + t.device().str() + " but the " +
                           r.group->name + " group runs on " + r.group->device.str());
    }
    payload.push_back(t);
  }
  if (spec.kind == Collective::kAllToAllSingle && !payload.empty() && payload[0].dim() > 0) {
    const Splits s = resplitAllToAll(spec, payload[0].size(0), int(r.group->group->getRank()),
                                     int(r.group->group->getSize()));
    if (!s.in.empty()) {
      spec.in_split = s.in;
      spec.out_split = s.out;
    }
  }
  // A collective that reads or writes what an earlier one still works on
  // waits for it first.
  waitForTensors(payload);
  const bool observed = impl_->observer && spec.kind != Collective::kWait;
  const size_t call = observed ? impl_->observer->arrive(node, spec.kind) : 0;
  const bool async = impl_->async && spec.kind != Collective::kWait;
  std::vector<WorkHandle> works;
  std::vector<at::Tensor> out;
  try {
    RunContext ctx{*r.group->group, spec, payload, impl_->outputs, node.id,
                   async ? &works : nullptr};
    out = r.runner(ctx);
  } catch (const c10::Error& e) {
    throw RuntimeFailure(nodeLabel(node) + ": c10d " + r.group->name + " " +
                         collectiveInfo(spec.kind).name +
                         " failed: " + firstLine(e.what_without_backtrace()));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // Gloo's transport errors (a peer gone: "Connection reset by peer") come
    // as gloo::IoException, not c10::Error.
    throw RuntimeFailure(nodeLabel(node) + ": c10d " + r.group->name + " " +
                         collectiveInfo(spec.kind).name + " failed: " + firstLine(e.what()));
  }
  if (async && !works.empty()) {
    Impl::Pending p;
    p.what = nodeLabel(node) + ": c10d " + r.group->name + " " + collectiveInfo(spec.kind).name;
    Impl::addStorages(payload, p.storages);
    Impl::addStorages(out, p.storages);
    if (observed) watchCompletion(works, impl_->observer, call);
    p.works = std::move(works);
    impl_->pending.push_back(std::move(p));
  } else if (observed) {
    impl_->observer->complete(call);
  }
  return out;
}

}  // namespace tracetwin::replay::comm
