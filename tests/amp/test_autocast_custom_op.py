"""register_autocast for a custom operator: its inputs cast under autocast only."""
import torchlet


def test_register_autocast_casts_under_autocast_only():
    @torchlet.library.custom_op("tcamp::mysin", mutates_args=())
    def mysin(x: torchlet.Tensor) -> torchlet.Tensor:
        return torchlet.sin(x)

    try:
        torchlet.library.register_autocast("tcamp::mysin", "cpu", torchlet.bfloat16)
        x = torchlet.randn(3)
        assert mysin(x).dtype == torchlet.float32                     # autocast off: untouched
        with torchlet.autocast("cpu"):
            assert mysin(x).dtype == torchlet.bfloat16
            assert mysin(x.to(torchlet.float64)).dtype == torchlet.float64        # doubles are never cast
            assert mysin(torchlet.ones(2)).dtype == torchlet.bfloat16
        assert mysin(x).dtype == torchlet.float32
    finally:
        mysin._destroy()


def test_register_autocast_rejects_unknown_device():
    import pytest
    with pytest.raises(ValueError, match="Device type 'xpu' does not support autocast."):
        torchlet.library.register_autocast("aten::sin", "xpu", torchlet.bfloat16)
