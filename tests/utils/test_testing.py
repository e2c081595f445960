"""torchlet.testing beside torch.testing: assert_close's outcome, exception
type and message text on the same inputs (tolerances per dtype, equal_nan,
the attribute checks, nested sequences / mappings, msg=), make_tensor's
shapes, ranges, dtypes and errors, the deprecated assert_allclose."""
import collections
import math

import numpy as np
import pytest

import torchlet
from torchlet.testing import assert_close, make_tensor


def _torch():
    return pytest.importorskip("torch")


def _outcome(lib, case):
    try:
        case(lib)
    except Exception as e:  # noqa: BLE001  (type and text compared)
        return type(e).__name__, str(e).replace("torchlet", "torch").replace("torch._tensor.Tensor", "torch.Tensor")
    return "ok"


CASES = {
    "float32 close": lambda t: t.testing.assert_close(t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0 + 1e-6])),
    "float32 mismatch": lambda t: t.testing.assert_close(t.tensor([1.0, 2, 3, 4]), t.tensor([1.0, 2.5, 3.1, 5])),
    "2-d int": lambda t: t.testing.assert_close(t.tensor([[1, 2], [3, 4]]), t.tensor([[1, 2], [3, 5]])),
    "0-d": lambda t: t.testing.assert_close(t.tensor(1.0), t.tensor(1.5)),
    "float64 tolerance": lambda t: t.testing.assert_close(t.tensor([1.0], dtype=t.float64),
                                                          t.tensor([1.0 + 2e-7], dtype=t.float64)),
    "dtype": lambda t: t.testing.assert_close(t.tensor([1.0]), t.tensor([1.0], dtype=t.float64)),
    "dtype unchecked": lambda t: t.testing.assert_close(t.tensor([1.0]), t.tensor([1.0], dtype=t.float64),
                                                        check_dtype=False),
    "promoted values": lambda t: t.testing.assert_close(t.tensor([1, 2]), t.tensor([1.0, 2.5]), check_dtype=False),
    "shape": lambda t: t.testing.assert_close(t.tensor([1.0, 2]), t.tensor([1.0])),
    "stride": lambda t: t.testing.assert_close(t.arange(6.0).reshape(2, 3).t(),
                                               t.arange(6.0).reshape(2, 3).t().contiguous(), check_stride=True),
    "stride unchecked": lambda t: t.testing.assert_close(t.arange(6.0).reshape(2, 3).t(),
                                                         t.arange(6.0).reshape(2, 3).t().contiguous()),
    "nan": lambda t: t.testing.assert_close(t.tensor([float("nan")]), t.tensor([float("nan")])),
    "equal_nan": lambda t: t.testing.assert_close(t.tensor([float("nan"), 1.0]), t.tensor([float("nan"), 1.0]),
                                                  equal_nan=True),
    "inf": lambda t: t.testing.assert_close(t.tensor([float("inf"), 1.0]), t.tensor([float("inf"), 2.0])),
    "bool": lambda t: t.testing.assert_close(t.tensor([True, False]), t.tensor([True, True])),
    "uint8 no wrap": lambda t: t.testing.assert_close(t.tensor([1, 2], dtype=t.uint8), t.tensor([2, 1], dtype=t.uint8)),
    "zero expected": lambda t: t.testing.assert_close(t.tensor([0.0, 1.0]), t.tensor([1.0, 1.0])),
    "rtol alone": lambda t: t.testing.assert_close(t.tensor([1.0]), t.tensor([1.0]), rtol=1e-3),
    "atol alone": lambda t: t.testing.assert_close(t.tensor([1.0]), t.tensor([1.0]), atol=1e-3),
    "explicit tolerances": lambda t: t.testing.assert_close(t.tensor([1.0, 2.0]), t.tensor([1.05, 2.0]),
                                                            rtol=0.0, atol=0.01),
    "explicit pass": lambda t: t.testing.assert_close(t.tensor([1.0, 2.0]), t.tensor([1.05, 2.0]),
                                                      rtol=0.1, atol=0.0),
    "msg str": lambda t: t.testing.assert_close(t.tensor([1.0, 2]), t.tensor([1.0, 3]), msg="custom"),
    "msg callable": lambda t: t.testing.assert_close(t.tensor([1.0, 2]), t.tensor([1.0, 3]),
                                                     msg=lambda m: "prefix\n" + m),
    "sequence": lambda t: t.testing.assert_close([t.tensor([1.0]), t.tensor([2.0])],
                                                 [t.tensor([1.0]), t.tensor([3.0])]),
    "sequence length": lambda t: t.testing.assert_close([t.tensor([1.0])], [t.tensor([1.0]), t.tensor([2.0])]),
    "mapping": lambda t: t.testing.assert_close({"a": 1, "b": 2.0}, {"a": 1, "b": 2.5}),
    "mapping keys": lambda t: t.testing.assert_close({"a": 1, "b": 2}, {"a": 1, "c": 2}),
    "nested": lambda t: t.testing.assert_close({"x": [t.zeros(2), (1, t.ones(3))]},
                                               {"x": [t.zeros(2), (1, t.tensor([1.0, 1.0, 0.0]))]}),
    "int vs float": lambda t: t.testing.assert_close(1, 1.0),
    "int vs float unchecked": lambda t: t.testing.assert_close(1, 1.0, check_dtype=False),
    "floats": lambda t: t.testing.assert_close(0.1 + 0.2, 0.3),
    "floats far": lambda t: t.testing.assert_close(1.0, 1.1),
    "numpy scalar": lambda t: t.testing.assert_close(np.float64(1.0), 1.0 + 1e-12),
    "complex numbers": lambda t: t.testing.assert_close(1 + 1j, 1 + 2j),
    "none": lambda t: t.testing.assert_close(None, 1),
    "nones": lambda t: t.testing.assert_close(None, None),
    "booleans": lambda t: t.testing.assert_close(True, False),
    "numpy arrays": lambda t: t.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    "tensor vs number": lambda t: t.testing.assert_close(t.tensor([1.0, 2]), 2),
    "empty": lambda t: t.testing.assert_close(t.zeros(0, 3), t.zeros(0, 3)),
    "non-contiguous values": lambda t: t.testing.assert_close(t.arange(12.0).reshape(3, 4)[:, ::2],
                                                              t.tensor([[0.0, 2], [4, 6], [8, 11]])),
    "float16": lambda t: t.testing.assert_close(t.tensor([1.0], dtype=t.float16), t.tensor([1.002], dtype=t.float16)),
    "bfloat16": lambda t: t.testing.assert_close(t.tensor([1.0, 3.0], dtype=t.bfloat16),
                                                 t.tensor([1.0, 3.5], dtype=t.bfloat16)),
    "namedtuple": lambda t: t.testing.assert_close(collections.namedtuple("P", "a b")(1, t.ones(2)),
                                                   collections.namedtuple("P", "a b")(1, t.zeros(2))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_close_matches_torch(name):
    torch = _torch()
    case = CASES[name]
    assert _outcome(torchlet, case) == _outcome(torch, case)


def test_assert_close_complex_matches_torch():
    torch = _torch()
    close = lambda t: t.testing.assert_close(t.tensor([1 + 1j, 2]), t.tensor([1 + 1j, 2 + 1e-7j]))  # noqa: E731
    assert _outcome(torchlet, close) == _outcome(torch, close) == "ok"
    far = lambda t: t.testing.assert_close(t.tensor([1 + 1j, 2]), t.tensor([1 + 1j, 3]))  # noqa: E731
    assert _outcome(torchlet, far) == _outcome(torch, far)


def test_assert_close_random_float64_against_numpy_rule():
    rng = np.random.default_rng(0)
    for shape in [(7,), (3, 5), (2, 3, 4)]:
        a = rng.standard_normal(shape)
        b = a + rng.standard_normal(shape) * 1e-7 * (rng.random(shape) < 0.3)
        ok = np.all(np.abs(a - b) <= 1e-7 + 1e-7 * np.abs(b))
        try:
            assert_close(torchlet.from_numpy(a), torchlet.from_numpy(b))
            passed = True
        except AssertionError as e:
            passed = False
            bad = ~(np.abs(a - b) <= 1e-7 + 1e-7 * np.abs(b))
            assert f"Mismatched elements: {bad.sum()} / {a.size}" in str(e)
        assert passed == ok


def test_assert_allclose_is_deprecated_with_its_defaults():
    torch = _torch()
    for case in [lambda t: t.testing.assert_allclose(t.tensor([1.0, 2.0]), [1.0, 2.00005]),
                 lambda t: t.testing.assert_allclose(t.tensor([1.0, float("nan")]), [1.0, float("nan")]),
                 lambda t: t.testing.assert_allclose(t.tensor([1.0, 2.0]), [1.0, 2.1]),
                 lambda t: t.testing.assert_allclose([1, 2], [1, 3], msg="m")]:
        with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated"):
            ours = _outcome(torchlet, case)
        with pytest.warns(FutureWarning):
            theirs = _outcome(torch, case)
        assert ours == theirs


# ------------------------------------------------------------------ make_tensor

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


@pytest.mark.parametrize("name", DTYPES)
def test_make_tensor_dtypes_shapes_and_ranges(name):
    dtype = getattr(torchlet, name)
    for shape in [(), (0,), (3, 4), (2, 1, 5)]:
        t = make_tensor(shape, dtype=dtype, device="cpu")
        assert t.dtype == dtype and tuple(t.shape) == shape and t.device.type == "cpu"
        assert make_tensor(*shape, dtype=dtype, device="cpu").shape == t.shape
    t = make_tensor(200, dtype=dtype, device="cpu")
    a = t.to(torchlet.complex128 if t.is_complex() else torchlet.float64).numpy()
    if name == "bool":
        assert set(a.tolist()) <= {0.0, 1.0}
    elif name == "uint8":
        assert a.min() >= 0 and a.max() < 10
    elif dtype.is_floating_point:
        assert a.min() >= -9 and a.max() <= 9
    elif t.is_complex():
        assert np.abs(a.real).max() <= 9 and np.abs(a.imag).max() <= 9
    else:
        assert a.min() >= -9 and a.max() < 10
    t = make_tensor(4, 6, dtype=dtype, device="cpu", noncontiguous=True)
    assert tuple(t.shape) == (4, 6) and not t.is_contiguous()
    z = make_tensor(300, dtype=dtype, device="cpu", low=0, high=2, exclude_zero=True)
    assert not bool((z == 0).any())


def test_make_tensor_bounds_and_grad():
    t = make_tensor((50,), dtype=torchlet.float32, device="cpu", low=2.5, high=3.0, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert float(t.min()) >= 2.5 and float(t.max()) <= 3.0
    t = make_tensor((100,), dtype=torchlet.int8, device="cpu", low=-200, high=1000)  # clamped to int8
    assert int(t.min()) >= -128 and int(t.max()) <= 127
    t = make_tensor((100,), dtype=torchlet.int64, device="cpu", low=1.2, high=3.5)   # ceil(low), ceil(high)
    assert set(t.tolist()) <= {2, 3}
    t = make_tensor((30,), dtype=torchlet.float64, device="cpu", low=-1e308, high=1e308)
    assert math.isfinite(float(t.abs().max()))
    t = make_tensor((3, 1), dtype=torchlet.float32, device="cpu", noncontiguous=True)
    assert t.shape == (3, 1)
    assert make_tensor((1,), dtype=torchlet.float32, device="cpu", noncontiguous=True).is_contiguous()


def test_make_tensor_errors_match_torch():
    torch = _torch()
    cases = [
        lambda t: t.testing.make_tensor(3, dtype=t.int64, device="cpu", requires_grad=True),
        lambda t: t.testing.make_tensor(3, dtype=t.bool, device="cpu", requires_grad=True),
        lambda t: t.testing.make_tensor(3, dtype=t.int8, device="cpu", low=200, high=300),
        lambda t: t.testing.make_tensor(3, dtype=t.float32, device="cpu", low=2, high=1),
        lambda t: t.testing.make_tensor(3, dtype=t.float32, device="cpu", low=float("nan")),
        lambda t: t.testing.make_tensor(3, dtype=t.uint8, device="cpu", low=-5, high=-1),
    ]
    for case in cases:
        ours, theirs = _outcome(torchlet, case), _outcome(torch, case)
        assert ours != "ok" and ours == theirs
    with pytest.warns(FutureWarning, match="Passing `low==high`"):
        t = make_tensor(3, dtype=torchlet.float32, device="cpu", low=1.0, high=1.0)
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_modules_are_package_attributes():
    import torchlet.utils.data as d
    assert torchlet.utils.data is d and torchlet.testing.assert_close is assert_close
