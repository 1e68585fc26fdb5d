"""Shared pieces of the bundled workloads (not a workload itself: the leading _ hides it)."""


def training_step(model, loss_fn, optimizer, inputs, target):
    """Return a closure doing one full training step: zero_grad, forward, loss, backward, step."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(*inputs), target)
        loss.backward()
        optimizer.step()
        return loss

    return step
