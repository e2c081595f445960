"""`with torchlet.device(d):`, set_default_device / get_default_device, and
meta tensors' behaviour, each beside PyTorch where it is installed."""
import threading

import pytest

import torchlet
from torchlet.overrides import BaseTorchFunctionMode, _get_current_function_mode_stack
from torchlet.utils._device import DeviceContext, _device_constructors


def _libs():
    out = [torchlet]
    try:
        import torch
        out.append(torch)
    except ImportError:
        pass
    return out


LIBS = pytest.mark.parametrize("lib", _libs(), ids=lambda m: m.__name__)


@pytest.fixture(autouse=True)
def _clean_default():
    yield
    torchlet.set_default_device(None)
    assert _get_current_function_mode_stack() == []


@LIBS
def test_factories_land_on_the_context_device(lib):
    with lib.device("meta") as d:
        assert d == lib.device("meta")
        assert lib.get_default_device() == lib.device("meta")   # pytorch#131328: the context is read
        for t in (lib.empty(2, 3), lib.zeros(2), lib.ones(2), lib.full((2,), 1.0), lib.rand(2), lib.randn(2),
                  lib.arange(3), lib.tensor([1.0]), lib.as_tensor([1, 2]), lib.empty_strided((2,), (1,))):
            assert t.device.type == "meta", t
        assert lib.ones(2, device="cpu").device.type == "cpu"        # explicit device wins
        assert lib.ones(2, device=None).device.type == "meta"        # None counts as missing
    assert lib.get_default_device() == lib.device("cpu")
    assert lib.ones(2).device.type == "cpu"


@LIBS
def test_ops_on_existing_tensors_and_like_functions_unaffected(lib):
    x = lib.ones(2, 2)
    with lib.device("meta"):
        assert (x + 1).device.type == "cpu"
        assert x.sum().device.type == "cpu"
        assert lib.zeros_like(x).device.type == "cpu"      # *_like follow their input, as in PyTorch
        assert lib.zeros_like(lib.empty(2)).device.type == "meta"


@LIBS
def test_nested_innermost_wins(lib):
    with lib.device("meta"):
        with lib.device("cpu"):
            assert lib.get_default_device().type == "cpu"
            assert lib.ones(1).device.type == "cpu"
        assert lib.ones(1).device.type == "meta"
        assert lib.get_default_device().type == "meta"


def test_device_context_is_a_function_mode():
    with torchlet.device("meta"):
        (m,) = _get_current_function_mode_stack()
        assert isinstance(m, DeviceContext) and m.device == torchlet.device("meta")
    assert torchlet.ones in _device_constructors() and torchlet.tensor in _device_constructors()
    assert torchlet.zeros_like not in _device_constructors()
    # a DeviceContext used directly is an ordinary mode
    with DeviceContext("meta"):
        assert torchlet.zeros(3).is_meta


def test_device_context_under_a_user_mode():
    seen = []

    class Log(BaseTorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__, dict(kwargs or {})))
            return super().__torch_function__(func, types, args, kwargs)

    with torchlet.device("meta"), Log():
        t = torchlet.ones(2)
    assert t.is_meta
    assert seen == [("ones", {})]        # the user mode (inner) sees the call before the device is filled in


def test_set_default_device():
    assert torchlet.get_default_device() == torchlet.device("cpu")
    torchlet.set_default_device("meta")
    assert torchlet.get_default_device() == torchlet.device("meta")
    assert torchlet.ones(2).is_meta
    assert torchlet.ones(2, device="cpu").is_cpu
    torchlet.set_default_device("meta")          # replaced, not stacked
    assert len(_get_current_function_mode_stack()) == 1
    torchlet.set_default_device(None)
    assert torchlet.get_default_device() == torchlet.device("cpu")
    assert _get_current_function_mode_stack() == []
    assert torchlet.ones(2).is_cpu


def test_set_default_device_inside_a_with_keeps_the_stack():
    """pytorch#133666: PyTorch 2.13 still loses the `with` context here and
    brings it back after set_default_device(None).  torchlet keeps the default
    at the bottom: the open `with` block still wins, the stack above is intact."""
    user = BaseTorchFunctionMode()
    with user:
        with torchlet.device("meta"):
            torchlet.set_default_device("cpu")
            stack = _get_current_function_mode_stack()
            assert [type(m).__name__ for m in stack] == ["_DefaultDeviceContext", "BaseTorchFunctionMode",
                                                         "DeviceContext"]
            assert torchlet.get_default_device().type == "meta"
            assert torchlet.ones(1).is_meta
        assert _get_current_function_mode_stack()[1:] == [user]
        assert torchlet.get_default_device().type == "cpu"
        torchlet.set_default_device("meta")
        assert torchlet.ones(1).is_meta
    torchlet.set_default_device(None)
    assert _get_current_function_mode_stack() == []
    assert torchlet.get_default_device().type == "cpu"


def test_default_device_is_per_thread():
    torchlet.set_default_device("meta")
    out = {}

    def other():
        out["dev"] = torchlet.get_default_device()
        out["ones"] = torchlet.ones(1).device

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert out == {"dev": torchlet.device("cpu"), "ones": torchlet.device("cpu")}
    assert torchlet.ones(1).is_meta


def test_unbalanced_exit_is_an_error():
    with pytest.raises(RuntimeError, match="no device context of this device is active"):
        torchlet.device("meta").__exit__(None, None, None)


@pytest.mark.skipif(torchlet.cuda.is_available(), reason="a CUDA device is present")
def test_cuda_context_without_a_driver():
    with torchlet.device("cuda"):
        assert torchlet.get_default_device() == torchlet.device("cuda")
        with pytest.raises(RuntimeError, match="Found no NVIDIA driver|No CUDA GPUs are available"):
            torchlet.ones(2)
        with pytest.raises(RuntimeError, match="Found no NVIDIA driver|No CUDA GPUs are available"):
            torchlet.tensor([1.0])
        assert torchlet.ones(2, device="cpu").is_cpu


# ---------------------------------------------------------------- meta tensors


@LIBS
def test_meta_tensor_repr_and_errors(lib):
    t = lib.empty(2, 3, device="meta")
    assert repr(t) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(lib.empty(0, device="meta")) == "tensor(..., device='meta', size=(0,))"
    assert repr(lib.empty(2, dtype=lib.int64, device="meta")) == \
        f"tensor(..., device='meta', size=(2,), dtype={lib.__name__}.int64)"
    with pytest.raises(NotImplementedError, match="^Cannot copy out of meta tensor; no data!$"):
        t.tolist()
    with pytest.raises(NotImplementedError, match="^Cannot copy out of meta tensor; no data!$"):
        t.to("cpu")
    with pytest.raises(RuntimeError, match="^a Tensor with 6 elements cannot be converted to Scalar$"):
        t.item()
    with pytest.raises(ValueError, match="^only one element tensors can be converted to Python scalars$"):
        float(t)
    with pytest.raises(RuntimeError, match="^Tensor.item\\(\\) cannot be called on meta tensors$"):
        lib.empty(1, device="meta").item()
    with pytest.raises(TypeError, match="^can't convert meta device type tensor to numpy. Use Tensor.cpu"):
        t.numpy()


def test_meta_under_context_repr():
    with torchlet.device("meta"):
        t = torchlet.ones(2, 3)
        assert repr(t) == "tensor(..., device='meta', size=(2, 3))"
