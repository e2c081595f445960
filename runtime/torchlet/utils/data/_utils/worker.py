"""The DataLoader's worker processes: get_worker_info, the worker loop (fetch
by index, send (task index, batch) back), per-worker seeding as PyTorch's and
the exception wrapper that carries a worker's error to the main process."""
from __future__ import annotations

import atexit
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import torchlet

# how often a blocked worker / main process rechecks that its peer is alive (s)
MP_STATUS_CHECK_INTERVAL = 5.0

# set at interpreter exit: iterators collected then must not wait on workers
python_exit_status = False


def _set_python_exit_flag() -> None:
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)


class KeyErrorMessage(str):
    """A str whose repr is itself: KeyError shows repr(arg), which would
    print the worker's traceback as one escaped line."""

    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception's type and formatted traceback, picklable across processes."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # the type takes other arguments: the text still reaches the user
            raise RuntimeError(msg) from None
        raise exception


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """This worker's WorkerInfo in a DataLoader worker process, None elsewhere."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Persistent workers: start a new epoch (rebuild the fetcher)."""
    seed: int | None = None


def _generate_state(base_seed, worker_id):
    """numpy's seed for a worker: PyTorch's SeedSequence-style hash of
    (worker_id, base_seed), four 32-bit words."""
    mask = 0xFFFFFFFF
    shift = 16
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    mix_l, mix_r = 0xCA01F9DD, 0x4973F715
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    const_a = 0x43B0D7E5

    def hash_a(value):
        nonlocal const_a
        value = (value ^ const_a) & mask
        const_a = (const_a * mult_a) & mask
        value = (value * const_a) & mask
        return (value ^ (value >> shift)) & mask

    def mix(x, y):
        r = (((mix_l * x) & mask) - ((mix_r * y) & mask)) & mask
        return (r ^ (r >> shift)) & mask

    pool = [hash_a(e) for e in entropy]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hash_a(pool[src]))
    const_b = 0x8B51F9DD
    state = []
    for value in pool:
        value = (value ^ const_b) & mask
        const_b = (const_b * mult_b) & mask
        value = (value * const_b) & mask
        state.append((value ^ (value >> shift)) & mask)
    return state


class _ParentWatchdog:
    """Whether the process that started this worker is still there."""

    def __init__(self) -> None:
        self.parent_pid = os.getppid()
        self.parent_dead = False

    def is_alive(self) -> bool:
        if not self.parent_dead:
            self.parent_dead = os.getppid() != self.parent_pid
        return not self.parent_dead


def _seed_worker(base_seed, worker_id):
    """Python's, torchlet's and numpy's generators seeded per worker, as PyTorch's."""
    seed = base_seed + worker_id
    random.seed(seed)
    torchlet.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return seed
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers, persistent_workers, shared_seed):
    """Runs in a worker: fetch each (task index, sampler index) from index_queue,
    put (task index, batch or ExceptionWrapper) on data_queue; None ends it."""
    from ..dataloader import _DatasetKind

    global _worker_info
    try:
        torchlet.set_num_threads(1)
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        watchdog = _ParentWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:  # the main process is done with this worker
                break
            if done_event.is_set() or iteration_end:
                continue  # drain what was sent before the end
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # the main process reports the interrupt
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
