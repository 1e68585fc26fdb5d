"""Mixed precision for the bundled workloads' training steps (capture.py --amp bf16|fp16).

Not a workload itself (the leading _ hides it). capture.py and fidelity.py call `configure(mode,
device)` before a workload's build(); `_common.training_step` then builds an autocast step:

- bf16: the forward and the loss under `torch.autocast(device_type, dtype=torch.bfloat16)`, the
  backward and the optimizer step outside it (what the PyTorch AMP recipe does);
- fp16: the same under float16, with a `GradScaler`: the loss scaled before the backward,
  `scaler.step(optimizer)` (unscales the gradients, skips the step on inf/nan) and
  `scaler.update()`.

PyTorch 1.13's CPU autocast knows bfloat16 only (asked for float16 it warns and runs in float32),
and its GradScaler is CUDA-only, so fp16 needs a GPU; asking for it on a CPU is an error here
rather than an fp32 capture labelled fp16.
"""
import torch

# mode name -> torch dtype attribute
MODES = {"bf16": "bfloat16", "fp16": "float16"}

_state = {"mode": None, "device_type": "cpu", "used": False}


class AmpError(Exception):
    """A mode this PyTorch or device cannot run."""


def _device_type(device):
    return "cuda" if device.startswith("cuda") else "cpu"


def check(mode, device):
    """Raise AmpError unless `mode` can run on `device` with this PyTorch."""
    if mode not in MODES:
        raise AmpError("--amp expects one of %s, got %r" % (", ".join(sorted(MODES)), mode))
    if not hasattr(torch, "autocast"):
        raise AmpError("--amp needs torch.autocast (PyTorch >= 1.10); this is torch %s"
                       % torch.__version__)
    if mode == "fp16" and _device_type(device) == "cpu":
        raise AmpError(
            "--amp fp16 needs a CUDA device: CPU autocast in torch %s supports bfloat16 only "
            "(it would silently run float32) and its GradScaler is CUDA-only; use --amp bf16 "
            "on the CPU, or --device cuda" % torch.__version__)


def configure(mode, device="cpu"):
    """Make `_common.training_step` build `mode` steps (None: plain fp32 steps)."""
    if mode is not None:
        check(mode, device)
    _state.update(mode=mode, device_type=_device_type(device), used=False)


def mode():
    return _state["mode"]


def used():
    """Whether a step was built under the configured mode (a workload that does not build its
    step with _common.training_step ignores --amp, which capture.py reports as an error)."""
    return _state["used"]


def _grad_scaler():
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):  # PyTorch >= 2.3: device-generic
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def training_step(model, loss_fn, optimizer, inputs, target):
    """A closure doing one training step under the configured mode (inputs: a tuple)."""
    dtype = getattr(torch, MODES[_state["mode"]])
    device_type = _state["device_type"]
    scaler = _grad_scaler() if _state["mode"] == "fp16" else None
    _state["used"] = True

    def step():
        optimizer.zero_grad()
        with torch.autocast(device_type, dtype=dtype):
            loss = loss_fn(model(*inputs), target)
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        return loss

    return step
