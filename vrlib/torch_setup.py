"""How PyTorch runs inside vrlib: which device, and how many CPU threads, decided in one place.

Every PyTorch model of the project (TVAE / CTGAN, the flow density, the LOGAN
baselines, the target attention attack) runs on the GPU when there is one and on the
CPU otherwise, and limits its CPU threads only for the duration of its own work.
"""

from __future__ import annotations

from contextlib import contextmanager

from vrlib.errors import VrlibError


def resolve_device(device="auto"):
    """The torch.device for ``device``: ``"auto"`` or ``None`` (the GPU when present), ``"cpu"``, ``"cuda"``, or a torch.device.

    Raises
    ------
    VrlibError
        For an unknown device, or ``"cuda"`` on a machine without a GPU.
    """
    import torch

    if isinstance(device, torch.device):
        return device
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise VrlibError(f"unknown device {device!r}; use 'auto', 'cpu' or 'cuda'") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise VrlibError("device='cuda' asked for but PyTorch sees no GPU; use device='auto' or 'cpu'")
    return resolved


@contextmanager
def torch_threads(n: int | None):
    """Let PyTorch use ``n`` CPU threads inside the block (``None``: unchanged), then restore.

    On 2 cores one thread per model is often fastest for the small networks here,
    and it leaves the other core to parallel generator fits.
    """
    if n is None:
        yield
        return
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(previous)
