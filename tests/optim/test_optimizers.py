"""torchlet.optim: SGD, Adam, AdamW, RMSprop, Adagrad against torch's
single-tensor algorithm (foreach=False) over N steps from the same parameters
and gradients; the Optimizer base (param groups, state_dict layout, zero_grad,
closures, hooks) and PyTorch's error texts."""
import math

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn

SHAPES = [(5, 7), (3,), (), (0, 4), (2, 3, 4), (33,)]
STEPS = 25

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.95), eps=1e-6)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, betas=(0.8, 0.99), weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, alpha=0.9)),
    ("RMSprop", dict(lr=0.01, maximize=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.1, maximize=True)),
]


def _torch():
    return pytest.importorskip("torch")


def _data(seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]
    return init, grads


def _tl_param(a):
    return nn.Parameter(torchlet.tensor(a) if a.size else torchlet.zeros(a.shape))


def _assert_close(tl_tensors, torch_tensors):
    # torch's vectorised sqrt (Sleef, 0.5 ulp) may round differently from the
    # correctly rounded one: results agree to float32 rounding, not always bitwise
    for a, b in zip(tl_tensors, torch_tensors):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_torch_for_loop(name, kw):
    torch = _torch()
    init, grads = _data()
    tp = [torch.tensor(a, requires_grad=True) for a in init]
    lp = [_tl_param(a) for a in init]
    to = getattr(torch.optim, name)(tp, foreach=False, **kw)
    lo = getattr(torchlet.optim, name)(lp, **kw)
    for g in grads:
        for p, x in zip(tp, g):
            p.grad = torch.tensor(x)
        for p, x in zip(lp, g):
            p.grad = torchlet.tensor(x) if x.size else torchlet.zeros(x.shape)
        to.step()
        lo.step()
    _assert_close(lp, tp)
    # the state agrees too, in PyTorch's layout
    ts, ls = to.state_dict(), lo.state_dict()
    assert sorted(ts["state"]) == sorted(ls["state"])
    for k in ts["state"]:
        assert sorted(ts["state"][k]) == sorted(ls["state"][k])
        for key, v in ts["state"][k].items():
            if key == "step":
                assert float(ls["state"][k][key]) == float(v)
                assert ls["state"][k][key].dtype == torchlet.float32
            else:
                _assert_close([ls["state"][k][key]], [v])
    tg, lg = ts["param_groups"][0], ls["param_groups"][0]
    assert sorted(tg) == sorted(lg)
    for key in tg:
        if key not in ("foreach",):
            assert lg[key] == tg[key], key


def test_adam_float64_bitwise_and_updates_in_place():
    torch = _torch()
    init, grads = _data(3)
    tp = [torch.tensor(a.astype(np.float64), requires_grad=True) for a in init if a.size]
    lp = [nn.Parameter(torchlet.tensor(a.astype(np.float64))) for a in init if a.size]
    ptrs = [p.data_ptr() for p in lp]
    to, lo = torch.optim.Adam(tp, lr=0.1, foreach=False), torchlet.optim.Adam(lp, lr=0.1)
    for g in grads[:5]:
        g = [x for x in g if x.size]
        for p, x in zip(tp, g):
            p.grad = torch.tensor(x.astype(np.float64))
        for p, x in zip(lp, g):
            p.grad = torchlet.tensor(x.astype(np.float64))
        to.step()
        lo.step()
    for a, b in zip(lp, tp):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13)
    assert [p.data_ptr() for p in lp] == ptrs
    assert all(p.grad_fn is None and p.requires_grad for p in lp)


def test_param_without_grad_is_skipped_and_state_is_lazy():
    a, b = nn.Parameter(torchlet.ones(2)), nn.Parameter(torchlet.ones(2))
    opt = torchlet.optim.Adam([a, b], lr=0.5)
    a.grad = torchlet.ones(2)
    opt.step()
    assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0
    assert a.tolist()[0] < 1.0 and float(opt.state[a]["step"]) == 1.0


def test_training_loop_with_closure_reduces_loss():
    torchlet.manual_seed(0)
    model = nn.Linear(4, 1)
    x = torchlet.randn(32, 4)
    y = x.sum(1, keepdim=True)
    opt = torchlet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    first = opt.step(closure).item()
    for _ in range(50):
        last = opt.step(closure).item()
    assert last < first * 0.05


def test_param_groups_and_per_group_options():
    torch = _torch()
    init, grads = _data(5)
    tp = [torch.tensor(a, requires_grad=True) for a in init if a.size]
    lp = [nn.Parameter(torchlet.tensor(a)) for a in init if a.size]
    to = torch.optim.SGD([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.5, "momentum": 0.5}], lr=0.1,
                         foreach=False)
    lo = torchlet.optim.SGD([{"params": lp[:2]}, {"params": lp[2:], "lr": 0.5, "momentum": 0.5}], lr=0.1)
    assert [g["lr"] for g in lo.param_groups] == [0.1, 0.5]
    assert [g["momentum"] for g in lo.param_groups] == [0, 0.5]
    for g in grads[:4]:
        g = [x for x in g if x.size]
        for p, x in zip(tp, g):
            p.grad = torch.tensor(x)
        for p, x in zip(lp, g):
            p.grad = torchlet.tensor(x)
        to.step()
        lo.step()
    _assert_close(lp, tp)
    assert lo.state_dict()["param_groups"][1]["params"] == to.state_dict()["param_groups"][1]["params"] == [2, 3, 4]
    assert repr(lo).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


def test_add_param_group_and_named_params():
    p, q = nn.Parameter(torchlet.ones(1)), nn.Parameter(torchlet.ones(1))
    opt = torchlet.optim.SGD([p], lr=0.1)
    opt.add_param_group({"params": q, "lr": 0.2})
    assert opt.param_groups[1]["params"] == [q] and opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [p]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([p])
    m = nn.Linear(2, 2)
    named = torchlet.optim.Adam(m.named_parameters())
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]


def test_constructor_errors_match_torch():
    torch = _torch()
    for name, kw in [("SGD", dict(lr=-1)), ("SGD", dict(momentum=-1)), ("SGD", dict(weight_decay=-1)),
                     ("SGD", dict(nesterov=True)), ("Adam", dict(lr=-0.1)), ("Adam", dict(eps=-1)),
                     ("Adam", dict(betas=(1.0, 0.9))), ("Adam", dict(betas=(0.9, -0.1))),
                     ("AdamW", dict(weight_decay=-1)), ("RMSprop", dict(alpha=-1)), ("RMSprop", dict(momentum=-1)),
                     ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(initial_accumulator_value=-1))]:
        with pytest.raises(ValueError) as te:
            getattr(torch.optim, name)([torch.ones(1, requires_grad=True)], **kw)
        with pytest.raises(ValueError) as le:
            getattr(torchlet.optim, name)([nn.Parameter(torchlet.ones(1))], **kw)
        assert str(le.value) == str(te.value)
    with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
        torchlet.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts, but got torchlet.FloatTensor"):
        torchlet.optim.SGD(torchlet.ones(2), lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        torchlet.optim.SGD([1], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        torchlet.optim.SGD([nn.Parameter(torchlet.ones(1)) * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordering of tensors in sets"):
        torchlet.optim.SGD([{"params": {nn.Parameter(torchlet.ones(1))}}], lr=0.1)


def test_zero_grad():
    p = nn.Parameter(torchlet.ones(3))
    opt = torchlet.optim.SGD([p], lr=0.1)
    p.grad = torchlet.ones(3)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0, 0.0] and g.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_state_dict_round_trip_with_torch_layout():
    torch = _torch()
    init, grads = _data(7)
    init = [a for a in init if a.size]
    tp = [torch.tensor(a, requires_grad=True) for a in init]
    lp = [nn.Parameter(torchlet.tensor(a)) for a in init]
    to = torch.optim.AdamW(tp, lr=0.01, foreach=False)
    lo = torchlet.optim.AdamW(lp, lr=0.01)
    for g in grads[:3]:
        g = [x for x in g if x.size]
        for p, x in zip(tp, g):
            p.grad = torch.tensor(x)
        to.step()
    # torch's state_dict (tensors converted) loads into torchlet and continues identically
    sd = to.state_dict()
    conv = {"state": {k: {n: torchlet.tensor(v.numpy()) for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}
    with torchlet.no_grad():
        for p, t in zip(lp, tp):
            p.copy_(torchlet.tensor(t.detach().numpy()))
    lo.load_state_dict(conv)
    assert lo.param_groups[0]["params"] == lp
    assert float(lo.state[lp[0]]["step"]) == 3.0
    for g in grads[3:6]:
        g = [x for x in g if x.size]
        for p, x in zip(tp, g):
            p.grad = torch.tensor(x)
        for p, x in zip(lp, g):
            p.grad = torchlet.tensor(x)
        to.step()
        lo.step()
    _assert_close(lp, tp)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        lo.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        lo.load_state_dict({"state": {}, "param_groups": [dict(lo.state_dict()["param_groups"][0], params=[0])]})


def test_load_state_dict_casts_state_to_param_dtype():
    p = nn.Parameter(torchlet.ones(2, dtype=torchlet.float64))
    opt = torchlet.optim.SGD([p], lr=0.1, momentum=0.9)
    opt.load_state_dict({"state": {0: {"momentum_buffer": torchlet.ones(2)}},
                         "param_groups": [dict(opt.state_dict()["param_groups"][0])]})
    assert opt.state[p]["momentum_buffer"].dtype == torchlet.float64


def test_step_hooks():
    p = nn.Parameter(torchlet.ones(1))
    p.grad = torchlet.ones(1)
    opt = torchlet.optim.SGD([p], lr=0.1)
    seen = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", float(p))))
    h2 = opt.register_step_post_hook(lambda o, a, k: seen.append(("post", float(p))))
    opt.step()
    assert seen == [("pre", 1.0), ("post", pytest.approx(0.9))]
    h1.remove()
    h2.remove()
    opt.step()
    assert len(seen) == 2


def test_step_runs_without_recording_history():
    p = nn.Parameter(torchlet.ones(2))
    p.grad = torchlet.ones(2)
    opt = torchlet.optim.Adam([p])
    assert torchlet.is_grad_enabled()
    opt.step()
    assert p.grad_fn is None and p.is_leaf and torchlet.is_grad_enabled()
    assert not math.isnan(float(p.sum()))
