"""The error check the NN test files share: fn(module, x) raises the same
exception type and first message line in torch and torchlet."""
import pytest


def assert_same_error(fn, shape):
    torch = pytest.importorskip("torch")
    import torchlet
    with pytest.raises(Exception) as te:
        fn(torch, torch.ones(*shape))
    with pytest.raises(Exception) as le:
        fn(torchlet, torchlet.ones(*shape))
    assert type(le.value) is type(te.value)
    assert str(le.value).split("\n")[0] == str(te.value).split("\n")[0]
