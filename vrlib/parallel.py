"""The one place that decides how independent tasks are spread over cores or a cluster.

:func:`run` maps a function over a list of tasks and returns the results in task
order.  Locally it uses joblib (``n_jobs`` processes, default all cores); when a Dask
scheduler address is given (argument ``scheduler`` or ``$VRLIB_DASK_SCHEDULER``) the
same tasks go to that cluster through joblib's ``dask`` backend.  Results never depend
on how the work was spread: every task carries its own seed, derived from the task's
identity with :func:`derive_seed`, never from worker state or from the task's position
in a batch.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack

import numpy as np
from tqdm.auto import tqdm

from vrlib.errors import VrlibError
from vrlib.params import check_integer

__all__ = ["run", "derive_seed", "default_n_jobs", "dask_scheduler", "width"]


def default_n_jobs() -> int:
    """Number of local worker processes: ``$VRLIB_N_JOBS`` if set, else -1 (all cores)."""
    env = os.environ.get("VRLIB_N_JOBS")
    if env is None or env == "":
        return -1
    try:
        return int(env)
    except ValueError:
        raise VrlibError(f"VRLIB_N_JOBS must be an integer (got {env!r}); unset it to use all cores") from None


def dask_scheduler(scheduler=None):
    """The Dask scheduler to use: ``scheduler`` if given, else ``$VRLIB_DASK_SCHEDULER``, else None."""
    if scheduler is not None:
        return scheduler
    return os.environ.get("VRLIB_DASK_SCHEDULER") or None


def width(n_jobs: int | None = None, scheduler=None) -> int:
    """How many tasks :func:`run` would run at once with these arguments (threads of a Dask cluster)."""
    scheduler = dask_scheduler(scheduler)
    if scheduler is not None:
        client, owned = _connect(scheduler)
        try:
            return max(1, sum(client.nthreads().values()))
        finally:
            if owned:
                client.close()
    if n_jobs is None:
        n_jobs = default_n_jobs()
    if n_jobs == 1:
        return 1
    import joblib

    return max(1, joblib.effective_n_jobs(n_jobs))


def derive_seed(seed: int, *keys) -> int:
    """A 32-bit seed determined by ``seed`` and the task's identity ``keys`` only.

    Keys may be integers or strings (strings are hashed), so the seed of, say,
    synthetic dataset 17 of the ``"out"`` stream is the same whether 20 or 4,000
    datasets are drawn and whichever worker draws it.

    Parameters
    ----------
    seed : int
        The root seed (non-negative).
    *keys : int or str
        What identifies the task.
    """
    check_integer("seed", seed, minimum=0)
    words = [int(seed)]
    for k in keys:
        if isinstance(k, (int, np.integer)):
            if k < 0:
                raise VrlibError(f"integer seed keys must be non-negative (got {k})")
            words.append(int(k))
        else:
            # Strings become a 64-bit word so that "in" and "out" streams never collide.
            words.append(int.from_bytes(hashlib.sha256(str(k).encode()).digest()[:8], "little"))
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def run(
    func: Callable,
    tasks: Sequence,
    *,
    n_jobs: int | None = None,
    scheduler=None,
    desc: str | None = None,
    progress: bool = True,
    on_result: Callable | None = None,
) -> list:
    """``[func(t) for t in tasks]``, spread over processes or a Dask cluster.

    Parameters
    ----------
    func : callable
        Called as ``func(task)``; must be picklable (a module-level function) unless
        ``n_jobs=1``.
    tasks : sequence
        One argument per call.
    n_jobs : int, optional
        Local processes; ``None`` means :func:`default_n_jobs` (all cores unless
        ``$VRLIB_N_JOBS`` says otherwise); ``1`` runs in this process, without
        pickling.  Ignored when a Dask scheduler is used.
    scheduler : str or distributed.Client, optional
        Address of a Dask scheduler (``tcp://host:8786``) or a connected client;
        default ``$VRLIB_DASK_SCHEDULER``.  When set, the tasks run on that cluster.
    desc : str, optional
        Label of the progress bar.
    progress : bool
        Show a tqdm progress bar.
    on_result : callable, optional
        Called in this process as ``on_result(index, result)`` as soon as each task
        finishes (in completion order), e.g. to write a checkpoint, so that an
        interrupted run keeps every finished task.

    Returns
    -------
    list
        The results in the order of ``tasks``, whatever order they finished in.
    """
    tasks = list(tasks)
    if not tasks:
        return []
    scheduler = dask_scheduler(scheduler)
    if n_jobs is None:
        n_jobs = default_n_jobs()
    if n_jobs == 0:
        raise VrlibError("n_jobs=0 runs nothing; use 1 for one process, -1 for all cores")
    results: list = [None] * len(tasks)
    bar = tqdm(total=len(tasks), desc=desc, disable=not progress, leave=False)
    with bar:
        if scheduler is None and n_jobs == 1:
            for i, task in enumerate(tasks):
                results[i] = func(task)
                if on_result is not None:
                    on_result(i, results[i])
                bar.update(1)
            return results
        import joblib

        with ExitStack() as stack:
            if scheduler is not None:
                client, owned = _connect(scheduler)
                if owned:
                    stack.enter_context(client)
                stack.enter_context(joblib.parallel_config(backend="dask", client=client))
                parallel = joblib.Parallel(return_as="generator_unordered")
            else:
                parallel = joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
            # Each call returns its index so results can be put back in task order.
            for i, result in parallel(joblib.delayed(_indexed)(func, i, t) for i, t in enumerate(tasks)):
                results[i] = result
                if on_result is not None:
                    on_result(i, result)
                bar.update(1)
    return results


def _indexed(func, i, task):
    import joblib

    # Parallel calls inside a task (a forest's trees) stay on the worker that runs it, on
    # threads, as joblib does for its own process workers.  Under the dask backend they would
    # otherwise go back to the cluster as new tasks, running beside their parent in the same
    # worker process, and two threads importing one package in different orders deadlock.
    with joblib.parallel_config(backend="threading"):
        return i, func(task)


def _connect(scheduler):
    """``(client, owned)``: a new Client for an address (owned: the caller closes it) or the given one."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise VrlibError(
            "a Dask scheduler was given but dask.distributed is not installed; "
            "pip install 'dask[distributed]' or unset VRLIB_DASK_SCHEDULER"
        ) from None
    if isinstance(scheduler, Client):
        return scheduler, False
    if not isinstance(scheduler, str):
        raise VrlibError(f"scheduler must be an address string or a dask Client (got {type(scheduler).__name__})")
    try:
        return Client(scheduler, timeout="10s"), True
    except OSError as exc:
        raise VrlibError(
            f"cannot reach the Dask scheduler at {scheduler!r} ({exc}); start it, fix the address, "
            "or unset VRLIB_DASK_SCHEDULER to run locally"
        ) from None
