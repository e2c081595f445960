"""torchlet.utils.data beside torch.utils.data: datasets, samplers, collation
(values, dtypes, container types), DataLoader batches and PyTorch's error
messages; the random paths as permutations drawn from the generator in
PyTorch's order; worker processes (order, worker_info, seeding, errors,
shutdown); a small training loop over a DataLoader."""
import collections
import math
import pickle
import warnings

import numpy as np
import pytest

import torchlet
from torchlet.utils import data as tdata


def _torch():
    return pytest.importorskip("torch")


def _np(x):
    """Nested structure of tensors -> same structure of numpy arrays (both libraries)."""
    if hasattr(x, "numpy") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ("tensor", str(x.dtype).split(".")[-1], x.numpy().tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.tolist())
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *[_np(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_np(v) for v in x])
    return x


def _both(build):
    """build(lib, data_module) run on torchlet and torch; their outputs as comparable structures."""
    torch = _torch()
    import torch.utils.data as torch_data
    return _np(build(torchlet, tdata)), _np(build(torch, torch_data))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type and text are what is compared)
        return type(e).__name__, str(e).replace("torchlet", "torch")
    return None


def _same_error(build):
    torch = _torch()
    import torch.utils.data as torch_data
    ours, theirs = _error(lambda: build(torchlet, tdata)), _error(lambda: build(torch, torch_data))
    assert ours is not None and ours == theirs


# ------------------------------------------------------------------ datasets

def test_tensor_dataset_and_errors():
    x = torchlet.arange(12.0).reshape(4, 3)
    y = torchlet.arange(4)
    ds = tdata.TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    np.testing.assert_array_equal(a.numpy(), [6.0, 7.0, 8.0])
    assert int(b) == 2
    _same_error(lambda lib, d: d.TensorDataset(lib.zeros(3), lib.zeros(4)))


def test_stack_concat_subset():
    out = _both(lambda lib, d: (
        d.StackDataset(lib.arange(3), [10, 11, 12])[1],
        d.StackDataset(a=lib.arange(3), b=[10, 11, 12]).__getitems__([0, 2]),
        d.StackDataset(lib.arange(3), [10, 11, 12]).__getitems__([2, 0]),
        [d.ConcatDataset([[1, 2], [3], [4, 5, 6]])[i] for i in (0, 2, 3, 5, -1, -6)],
        d.ConcatDataset([[1, 2], [3]]).cumulative_sizes,
        [d.Subset([5, 6, 7, 8], [3, 1])[i] for i in range(2)],
        d.Subset(d.TensorDataset(lib.arange(5)), [4, 0]).__getitems__([1, 0]),
        list((d.Subset([0, 1, 2], [2]) + d.Subset([3, 4], [0, 1]))[i] for i in range(3)),
    ))
    assert out[0] == out[1]
    for build in [
        lambda lib, d: d.StackDataset([1], b=[2]),
        lambda lib, d: d.StackDataset(),
        lambda lib, d: d.StackDataset([1, 2], [3]),
        lambda lib, d: d.ConcatDataset([]),
        lambda lib, d: d.ConcatDataset([[1, 2]])[-3],
    ]:
        _same_error(build)


def _make_stream(d):
    """An iterable dataset of range(start, end) for library module d, split
    between workers through d.get_worker_info() (PyTorch's documented example)."""

    class Stream(d.IterableDataset):
        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            info = d.get_worker_info()
            if info is None:
                return iter(range(self.start, self.end))
            per = int(math.ceil((self.end - self.start) / info.num_workers))
            lo = self.start + info.id * per
            return iter(range(lo, min(lo + per, self.end)))

        def __len__(self):
            return self.end - self.start

    return Stream


_Stream = _make_stream(tdata)
_STREAMS = {}


def _stream(d, start, end):
    if d not in _STREAMS:
        _STREAMS[d] = _make_stream(d)
    return _STREAMS[d](start, end)


def test_chain_and_iterable_checks():
    chained = _Stream(0, 3) + _Stream(5, 7)
    assert isinstance(chained, tdata.ChainDataset)
    assert list(chained) == [0, 1, 2, 5, 6] and len(chained) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(tdata.ChainDataset([[1, 2]]))
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        tdata.ConcatDataset([_Stream(0, 2)])
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__."):
        tdata.Dataset()[0]


def test_subset_override_check():
    class Bad(tdata.Subset):
        def __getitem__(self, idx):
            return 0

    _torch()
    import torch.utils.data as torch_data

    class TorchBad(torch_data.Subset):
        def __getitem__(self, idx):
            return 0

    with pytest.raises(NotImplementedError) as ours:
        Bad([1], [0])
    with pytest.raises(NotImplementedError) as theirs:
        TorchBad([1], [0])
    assert str(ours.value).replace("Bad", "X") == str(theirs.value).replace("TorchBad", "X")


def test_random_split_lengths_and_permutation():
    for lengths in ([3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1.0]):
        g = torchlet.Generator().manual_seed(42)
        parts = tdata.random_split(range(10), lengths, generator=g)
        torch = _torch()
        t_parts = torch.utils.data.random_split(range(10), lengths, generator=torch.Generator().manual_seed(42))
        assert [len(p) for p in parts] == [len(p) for p in t_parts]
        assert sorted(i for p in parts for i in p) == list(range(10))
        # the indices are randperm(10) of the same generator, in order
        perm = torchlet.randperm(10, generator=torchlet.Generator().manual_seed(42)).tolist()
        assert [i for p in parts for i in p.indices] == perm
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        tdata.random_split(range(3), [1.0, 0.0])
    _same_error(lambda lib, d: d.random_split(range(5), [2, 2]))
    _same_error(lambda lib, d: d.random_split(range(5), [1.5, -0.5]))


# ------------------------------------------------------------------ samplers

def test_sequential_and_batch_sampler():
    out = _both(lambda lib, d: (
        list(d.SequentialSampler(range(5))),
        list(d.BatchSampler(d.SequentialSampler(range(7)), 3, False)),
        list(d.BatchSampler(range(7), 3, True)),
        len(d.BatchSampler(range(7), 3, False)), len(d.BatchSampler(range(7), 3, True)),
        list(d.BatchSampler(range(6), 3, True)),
    ))
    assert out[0] == out[1]
    for build in [
        lambda lib, d: d.BatchSampler(range(3), 0, False),
        lambda lib, d: d.BatchSampler(range(3), True, False),
        lambda lib, d: d.BatchSampler(range(3), 2, 1),
        lambda lib, d: d.RandomSampler(range(3), replacement=1),
        lambda lib, d: d.RandomSampler(range(3), num_samples=0),
        lambda lib, d: d.RandomSampler([], num_samples=None),
        lambda lib, d: d.WeightedRandomSampler([1.0, 2.0], 0),
        lambda lib, d: d.WeightedRandomSampler([1.0, 2.0], 2, replacement=0),
        lambda lib, d: d.WeightedRandomSampler([[1.0, 2.0]], 2),
        lambda lib, d: len(d.Sampler()),
    ]:
        _same_error(build)


def _draw_seed(g):
    """What empty((), int64).random_(generator=g).item() draws (see sampler._random_seed)."""
    return g._random64() % (1 << 63)


def test_random_sampler_draw_order():
    n = 11
    # with a generator: randperm straight from it, one per pass
    g = torchlet.Generator().manual_seed(3)
    got = list(tdata.RandomSampler(range(n), generator=g))
    ref = torchlet.Generator().manual_seed(3)
    assert got == torchlet.randperm(n, generator=ref).tolist()
    assert sorted(got) == list(range(n))
    # without one: a seed from the default generator, then a fresh generator's randperm
    torchlet.manual_seed(7)
    got = list(tdata.RandomSampler(range(n)))
    torchlet.manual_seed(7)
    fresh = torchlet.Generator().manual_seed(_draw_seed(torchlet.default_generator))
    assert got == torchlet.randperm(n, generator=fresh).tolist()
    # num_samples beyond n: whole permutations then a prefix of one
    got = list(tdata.RandomSampler(range(4), num_samples=10, generator=torchlet.Generator().manual_seed(1)))
    ref = torchlet.Generator().manual_seed(1)
    want = sum((torchlet.randperm(4, generator=ref).tolist() for _ in range(2)), [])
    assert got == want + torchlet.randperm(4, generator=ref).tolist()[:2]
    # with replacement: randint in chunks of 32
    got = list(tdata.RandomSampler(range(5), replacement=True, num_samples=40,
                                   generator=torchlet.Generator().manual_seed(2)))
    ref = torchlet.Generator().manual_seed(2)
    want = (torchlet.randint(high=5, size=(32,), generator=ref).tolist()
            + torchlet.randint(high=5, size=(8,), generator=ref).tolist())
    assert got == want and len(got) == 40


def test_torch_draw_order_matches_this_model():
    """The model above is PyTorch's: checked on torch itself (its random_ draw, then randperm)."""
    torch = _torch()
    g = torch.Generator().manual_seed(5)
    got = [int(b) for b in torch.utils.data.DataLoader(range(9), batch_size=None, shuffle=True, generator=g)]
    ref = torch.Generator().manual_seed(5)
    torch.empty((), dtype=torch.int64).random_(generator=ref)  # the iterator's base seed
    assert got == torch.randperm(9, generator=ref).tolist()


def test_subset_and_weighted_samplers():
    idx = [10, 20, 30, 40]
    got = list(tdata.SubsetRandomSampler(idx, generator=torchlet.Generator().manual_seed(0)))
    assert sorted(got) == idx
    ref = torchlet.randperm(4, generator=torchlet.Generator().manual_seed(0)).tolist()
    assert got == [idx[i] for i in ref]
    w = [0.0, 1.0, 0.0, 3.0]
    s = tdata.WeightedRandomSampler(w, 50, generator=torchlet.Generator().manual_seed(0))
    got = list(s)
    assert len(s) == 50 and set(got) <= {1, 3}
    assert s.weights.dtype == torchlet.float64
    s = tdata.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)
    assert sorted(s) == [0, 1, 2]


# ------------------------------------------------------------------ collation

Point = collections.namedtuple("Point", "x y")


def test_default_collate_matches_torch():
    def build(lib, d):
        return [
            d.default_collate([lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])]),
            d.default_collate([1, 2, 3]),
            d.default_collate([1.5, 2.0]),
            d.default_collate([True, False]),
            d.default_collate(["a", "b"]),
            d.default_collate([b"a", b"b"]),
            d.default_collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)]),
            d.default_collate([np.float32(1.5), np.float32(2.5)]),
            d.default_collate([np.int16(1), np.int16(2)]),
            d.default_collate([np.bool_(True), np.bool_(False)]),
            d.default_collate([{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}]),
            d.default_collate([Point(1, 2.0), Point(3, 4.0)]),
            d.default_collate([(1, "x"), (2, "y")]),
            d.default_collate([[lib.tensor(1), lib.tensor(2)], [lib.tensor(3), lib.tensor(4)]]),
            d.default_collate([collections.OrderedDict(k=lib.zeros(2, dtype=lib.int8))] * 3),
            d.default_collate([lib.arange(6.0).reshape(2, 3).t(), lib.ones(3, 2)]),
            d.default_collate([lib.tensor(1.0, dtype=lib.float64), lib.tensor(2.0, dtype=lib.float64)]),
        ]
    ours, theirs = _both(build)
    assert ours == theirs


def test_default_convert_matches_torch():
    def build(lib, d):
        return [
            d.default_convert(np.array([1.0, 2.0])),
            d.default_convert(np.float64(2.0)),
            d.default_convert((np.array([1]), "s", 3)),
            d.default_convert({"a": np.int64(3), "b": [np.array([1, 2], dtype=np.uint8)]}),
            d.default_convert(Point(np.array([1.0]), 2)),
            d.default_convert(np.array(["a", "b"])),
            d.default_convert("text"),
            d.default_convert(lib.tensor([1, 2])),
        ]
    ours, theirs = _both(build)
    assert ours == theirs


def test_tensor_inference_keeps_numpy_scalar_dtypes():
    torch = _torch()
    for data in [np.float64(2.0), np.int16(3), [np.int16(1), np.int16(2)], [np.float16(1.0)], [np.uint8(7)],
                 [[np.float64(1.0)], [np.float64(2.0)]], [np.int8(1), 2], [1.0, np.float32(2.0)], [np.bool_(True)],
                 [np.complex64(1j)], 2.0, [1, 2]]:
        for fn in ("tensor", "as_tensor"):
            ours, theirs = getattr(torchlet, fn)(data), getattr(torch, fn)(data)
            assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (fn, data)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_collate_extended_through_the_fn_map():
    """PyTorch's documented extension point: collate() with a map holding a custom type."""
    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return [b.v * 10 for b in batch]

    def build(lib, d):
        from importlib import import_module
        c = import_module(d.__name__ + "._utils.collate")
        fn_map = {**c.default_collate_fn_map, Box: collate_box}
        return c.collate([{"b": Box(1), "x": 1.0}, {"b": Box(2), "x": 2.0}], collate_fn_map=fn_map)
    ours, theirs = _both(build)
    assert ours == theirs == {"b": ("list", [10, 20]), "x": ("tensor", "float64", [1.0, 2.0])}


def test_collate_errors_match_torch():
    for build in [
        lambda lib, d: d.default_collate([[1, 2], [3]]),
        lambda lib, d: d.default_collate([object(), object()]),
        lambda lib, d: d.default_collate([np.array(["a"]), np.array(["b"])]),
        lambda lib, d: d.default_collate([lib.zeros(2), lib.zeros(3)]),
    ]:
        ours = _error(lambda: build(torchlet, tdata))
        torch = _torch()
        import torch.utils.data as torch_data
        theirs = _error(lambda: build(torch, torch_data))
        assert ours[0] == theirs[0]
        if "default_collate" in theirs[1] or "equal size" in theirs[1]:
            assert ours[1].split(" at 0x")[0] == theirs[1].split(" at 0x")[0]


# ------------------------------------------------------------------ DataLoader

class _Squares(tdata.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return {"x": float(i), "y": i * i, "v": np.full(2, i, dtype=np.float32)}

    def __len__(self):
        return self.n


def test_dataloader_sequential_batches_match_torch():
    def build(lib, d):
        out = []
        for kw in (dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
                   dict(batch_size=4, collate_fn=lambda b: [s["y"] for s in b])):
            loader = d.DataLoader(_Squares(7), **kw)
            out.append((len(loader), list(loader)))
        loader = d.DataLoader(_Squares(5), batch_sampler=[[4, 0], [2], [1, 3]])
        out.append((len(loader), list(loader)))
        loader = d.DataLoader(_Squares(5), sampler=[4, 3, 2], batch_size=2)
        out.append((len(loader), list(loader)))
        x = lib.arange(10.0).reshape(5, 2)
        out.append(list(d.DataLoader(d.TensorDataset(x, lib.arange(5)), batch_size=2)))
        out.append(list(d.DataLoader(_stream(d, 3, 8), batch_size=2)))
        out.append(list(d.DataLoader(_stream(d, 3, 8), batch_size=2, drop_last=True)))
        out.append(list(d.DataLoader(_stream(d, 3, 6), batch_size=None)))
        out.append((len(d.DataLoader(_stream(d, 0, 7), batch_size=3)),
                    len(d.DataLoader(_stream(d, 0, 7), batch_size=3, drop_last=True))))
        return out
    ours, theirs = _both(build)
    assert ours == theirs


def test_dataloader_argument_errors_match_torch():
    ds = list(range(6))
    for kw in [
        dict(num_workers=-1),
        dict(timeout=-1),
        dict(prefetch_factor=2),
        dict(num_workers=1, prefetch_factor=-1),
        dict(persistent_workers=True),
        dict(sampler=[0, 1], shuffle=True),
        dict(batch_sampler=[[0]], batch_size=2),
        dict(batch_sampler=[[0]], shuffle=True),
        dict(batch_sampler=[[0]], drop_last=True),
        dict(batch_sampler=[[0]], sampler=[0]),
        dict(batch_size=None, drop_last=True),
        dict(multiprocessing_context="fork"),
        dict(num_workers=1, multiprocessing_context="nope"),
        dict(num_workers=1, multiprocessing_context=3),
        dict(batch_size=0),
    ]:
        _same_error(lambda lib, d: d.DataLoader(ds, **kw))
    for kw in [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])]:
        _same_error(lambda lib, d: d.DataLoader(_stream(d, 0, 3), **kw))
    _same_error(lambda lib, d: setattr(d.DataLoader(ds), "batch_size", 4))
    _same_error(lambda lib, d: iter(d.DataLoader(ds, timeout=1.0)))
    _same_error(lambda lib, d: pickle.dumps(iter(d.DataLoader(ds))))

    def no_len(lib, d):
        class NoLen(d.IterableDataset):
            def __iter__(self):
                return iter([1])
        return len(d.DataLoader(NoLen()))
    _same_error(no_len)


def test_dataloader_shuffle_is_a_reproducible_permutation():
    def run(seed):
        g = torchlet.Generator().manual_seed(seed)
        return [b.tolist() for b in tdata.DataLoader(range(10), batch_size=4, shuffle=True, generator=g)]
    a, b = run(0), run(0)
    assert a == b
    flat = sum(a, [])
    assert sorted(flat) == list(range(10)) and [len(x) for x in a] == [4, 4, 2]
    # the iterator's base seed is drawn first, then randperm, from the same generator
    ref = torchlet.Generator().manual_seed(0)
    _draw_seed(ref)
    assert flat == torchlet.randperm(10, generator=ref).tolist()
    # epochs differ; the default generator path is reproducible under manual_seed
    loader = tdata.DataLoader(range(10), batch_size=None, shuffle=True)
    torchlet.manual_seed(1)
    e1, e2 = [int(x) for x in loader], [int(x) for x in loader]
    torchlet.manual_seed(1)
    assert [int(x) for x in loader] == e1 and sorted(e2) == list(range(10))


def test_pin_memory_is_a_noop_with_the_warning():
    loader = tdata.DataLoader(list(range(4)), batch_size=2, pin_memory=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = [b.tolist() for b in loader]
    assert got == [[0, 1], [2, 3]]
    if not torchlet.cuda.is_available():
        assert any("'pin_memory' argument is set as true but no accelerator is found" in str(x.message) for x in w)


def test_iterable_length_overrun_warns():
    class Liar(_Stream):
        def __len__(self):
            return 2

    loader = tdata.DataLoader(Liar(0, 4), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        assert [int(x) for x in loader] == [0, 1, 2, 3]


# ------------------------------------------------------------------ workers

class _WorkerEcho(tdata.Dataset):
    """Each sample names the worker that fetched it and a draw from its seeded generator."""

    def __getitem__(self, i):
        info = tdata.get_worker_info()
        return {"i": i, "worker": -1 if info is None else info.id,
                "n": 0 if info is None else info.num_workers,
                "seed": -1 if info is None else info.seed % 1000003,
                "draw": torchlet.rand(1).item(), "np": float(np.random.rand())}

    def __len__(self):
        return 10


def test_workers_deliver_in_order_with_worker_info():
    g = torchlet.Generator().manual_seed(11)
    loader = tdata.DataLoader(_WorkerEcho(), batch_size=2, num_workers=2, generator=g)
    batches = list(loader)
    assert [b["i"].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    # batches go round robin to the workers
    assert [b["worker"].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1], [0, 0]]
    assert all(b["n"].tolist() == [2, 2] for b in batches)
    # each worker seeded base_seed + worker_id, base_seed the iterator's draw from the generator
    base = _draw_seed(torchlet.Generator().manual_seed(11))
    assert batches[0]["seed"].tolist() == [base % 1000003] * 2
    assert batches[1]["seed"].tolist() == [(base + 1) % 1000003] * 2
    torchlet.manual_seed(base)
    assert batches[0]["draw"][0].item() == pytest.approx(torchlet.rand(1).item())
    again = list(tdata.DataLoader(_WorkerEcho(), batch_size=2, num_workers=2,
                                  generator=torchlet.Generator().manual_seed(11)))
    assert [b["draw"].tolist() for b in again] == [b["draw"].tolist() for b in batches]
    assert [b["np"].tolist() for b in again] == [b["np"].tolist() for b in batches]
    assert tdata.get_worker_info() is None


def test_numpy_worker_seed_matches_torch():
    torch = _torch()
    from torch.utils.data._utils.worker import _generate_state as theirs

    from torchlet.utils.data._utils.worker import _generate_state as ours
    for base, wid in [(0, 0), (123456789012345, 3), ((1 << 63) - 1, 7)]:
        assert ours(base, wid) == theirs(base, wid)
    del torch


def test_workers_iterable_dataset_and_init_fn():
    seen = []

    def init(worker_id):
        seen.append(worker_id)  # runs in the worker: the parent's list is untouched
        info = tdata.get_worker_info()
        assert info.id == worker_id and info.num_workers == 2

    loader = tdata.DataLoader(_Stream(3, 11), batch_size=2, num_workers=2, worker_init_fn=init)
    got = [b.tolist() for b in loader]
    # worker 0 has 3..6, worker 1 has 7..10; batches alternate between them
    assert got == [[3, 4], [7, 8], [5, 6], [9, 10]]
    assert seen == []


def test_worker_map_style_results_match_single_process():
    x = torchlet.arange(30.0).reshape(10, 3)
    ds = tdata.TensorDataset(x, torchlet.arange(10))
    single = list(tdata.DataLoader(ds, batch_size=3))
    multi = list(tdata.DataLoader(ds, batch_size=3, num_workers=2, prefetch_factor=1, timeout=30))
    assert len(single) == len(multi) == 4
    for (a, b), (c, d) in zip(single, multi):
        np.testing.assert_array_equal(a.numpy(), c.numpy())
        np.testing.assert_array_equal(b.numpy(), d.numpy())


class _Faulty(tdata.Dataset):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        if i == 7:
            raise KeyError("missing")
        return i

    def __len__(self):
        return 10


def test_worker_error_is_reraised_naming_the_worker():
    loader = tdata.DataLoader(_Faulty(), batch_size=None, num_workers=2)
    it = iter(loader)
    assert [int(next(it)) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError) as e:
        next(it)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call last):")
    assert msg.rstrip().endswith("ValueError: bad sample 5")
    assert int(next(it)) == 6  # the loader goes on after an error, as PyTorch's
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        next(it)
    del it


def test_worker_error_text_matches_torch():
    torch = _torch()

    class TorchFaulty(torch.utils.data.Dataset):
        __getitem__ = _Faulty.__getitem__
        __len__ = _Faulty.__len__

    def first_line(lib, ds):
        with pytest.raises(ValueError) as e:
            list(lib.utils.data.DataLoader(ds, batch_size=None, num_workers=2))
        return str(e.value).splitlines()[:2]

    assert first_line(torchlet, _Faulty()) == first_line(torch, TorchFaulty())


def test_workers_shut_down_on_break_and_collection():
    loader = tdata.DataLoader(range(100), batch_size=1, num_workers=2)
    it = iter(loader)
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it  # garbage collection shuts the workers down
    for w in workers:
        w.join(timeout=10)
    assert not any(w.is_alive() for w in workers)
    it = iter(loader)
    for i, _ in enumerate(it):
        if i == 3:
            break
    workers = list(it._workers)
    it._shutdown_workers()
    assert not any(w.is_alive() for w in workers)


def test_persistent_workers_reuse_processes():
    loader = tdata.DataLoader(_Stream(0, 6), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    pids = [w.pid for w in loader._iterator._workers]
    second = [b.tolist() for b in loader]
    assert first == second == [[0, 1], [3, 4], [2], [5]]
    assert [w.pid for w in loader._iterator._workers] == pids
    loader._iterator._shutdown_workers()


# ------------------------------------------------------------------ training

def test_small_training_loop_over_a_dataloader():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    w_true = np.array([[1.5], [-2.0], [0.5]], dtype=np.float32)
    y = x @ w_true + 0.1
    ds = tdata.TensorDataset(torchlet.from_numpy(x), torchlet.from_numpy(y))
    torchlet.manual_seed(0)
    model = torchlet.nn.Linear(3, 1)
    opt = torchlet.optim.SGD(model.parameters(), lr=0.1)
    loader = tdata.DataLoader(ds, batch_size=16, shuffle=True, generator=torchlet.Generator().manual_seed(0))
    losses = []
    for _ in range(30):
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = torchlet.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        losses.append(total / len(ds))
    assert losses[-1] < 1e-3 < losses[0]
    np.testing.assert_allclose(model.weight.detach().numpy(), w_true.T, atol=0.02)


class _Slow(tdata.Dataset):
    def __getitem__(self, i):
        import time
        time.sleep(3.0)
        return i

    def __len__(self):
        return 4


class _Dies(tdata.Dataset):
    def __getitem__(self, i):
        import os
        os._exit(3)

    def __len__(self):
        return 4


def test_worker_timeout_and_death_are_reported():
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.5 seconds$"):
        list(tdata.DataLoader(_Slow(), batch_size=None, num_workers=1, timeout=0.5))
    with pytest.raises(RuntimeError, match=r"^DataLoader worker \(pid\(s\) \d+(, \d+)?\) exited unexpectedly$"):
        list(tdata.DataLoader(_Dies(), batch_size=None, num_workers=2, timeout=20))


def test_out_of_order_delivery_when_asked():
    got = [int(b) for b in tdata.DataLoader(range(12), batch_size=None, num_workers=2, in_order=False)]
    assert sorted(got) == list(range(12))


def test_too_many_workers_warns_as_torch():
    import os
    n = len(os.sched_getaffinity(0)) + 1
    loader_args = dict(batch_size=2, num_workers=n)
    with pytest.warns(UserWarning) as ours:
        tdata.DataLoader(range(4), **loader_args)
    torch = _torch()
    with pytest.warns(UserWarning) as theirs:
        torch.utils.data.DataLoader(range(4), **loader_args)
    assert str(ours[0].message) == str(theirs[0].message)
    assert f"This DataLoader will create {n} worker processes in total." in str(ours[0].message)


def test_spawn_context_pickles_the_dataset():
    ds = tdata.TensorDataset(torchlet.arange(10.0).reshape(5, 2), torchlet.arange(5))
    loader = tdata.DataLoader(ds, batch_size=2, num_workers=1, multiprocessing_context="spawn", timeout=120)
    got = [(x.tolist(), y.tolist()) for x, y in loader]
    assert got == [([[0.0, 1.0], [2.0, 3.0]], [0, 1]), ([[4.0, 5.0], [6.0, 7.0]], [2, 3]), ([[8.0, 9.0]], [4])]


def test_distributed_sampler_shares_match_torch():
    def build(lib, d):
        out = []
        for n, replicas, drop_last, shuffle in [(10, 3, False, False), (10, 3, True, False), (9, 3, False, False),
                                                (2, 5, False, False), (10, 4, False, True)]:
            shares = []
            for rank in range(replicas):
                s = d.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=shuffle,
                                         drop_last=drop_last)
                shares.append((len(s), list(s) if not shuffle else len(list(s))))
            out.append(shares)
        return out
    ours, theirs = _both(build)
    assert ours == theirs
    _same_error(lambda lib, d: d.DistributedSampler(range(4), num_replicas=2, rank=2))
    _same_error(lambda lib, d: d.DistributedSampler(range(4), num_replicas=2, rank=-1))
    # shuffled: one permutation from seed + epoch shared out between the replicas
    shares = []
    for rank in range(4):
        s = tdata.DistributedSampler(range(10), num_replicas=4, rank=rank, seed=3)
        s.set_epoch(2)
        shares.append(list(s))
    perm = torchlet.randperm(10, generator=torchlet.Generator().manual_seed(5)).tolist()
    perm += perm[:2]
    assert shares == [perm[r::4] for r in range(4)]
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        tdata.DistributedSampler(range(4))


def test_shuffled_order_and_random_split_equal_torch_after_the_same_seed():
    """the generator reproduces PyTorch's stream: the same seed, the same epoch order"""
    torch = _torch()
    from torch.utils import data as td
    for seed in (0, 5, 123):
        torch.manual_seed(seed)
        want = [b[0].tolist() for b in td.DataLoader(td.TensorDataset(torch.arange(23)), batch_size=4, shuffle=True)]
        want_split = [list(s) for s in td.random_split(range(17), [0.3, 0.7])]
        torchlet.manual_seed(seed)
        got = [b[0].tolist() for b in tdata.DataLoader(tdata.TensorDataset(torchlet.arange(23)), batch_size=4,
                                                      shuffle=True)]
        got_split = [list(s) for s in tdata.random_split(range(17), [0.3, 0.7])]
        assert got == want and got_split == want_split
