"""torchlet.nn beyond the core Module: containers, forward hooks,
load_state_dict's result and errors, nn.utils (gradient clipping, parameter
vectors) and the parameter-free layers and losses, beside PyTorch."""
import warnings

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn


def _torch():
    return pytest.importorskip("torch")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------- containers


def test_module_list():
    ml = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()])
    ml.append(nn.Linear(2, 3))
    ml += [nn.Tanh()]
    assert len(ml) == 4 and isinstance(ml[-1], nn.Tanh) and isinstance(ml[1:3], nn.ModuleList)
    assert [k for k, _ in ml.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    del ml[1]
    assert list(ml._modules) == ["0", "1", "2"] and isinstance(ml[1], nn.Linear)
    ml.insert(0, nn.Identity())
    assert isinstance(ml[0], nn.Identity) and len(ml) == 4
    assert isinstance(ml.pop(0), nn.Identity) and len(ml) == 3
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ml[5]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ml.extend(3)
    assert repr(nn.ModuleList([nn.ReLU()])) == "ModuleList(\n  (0): ReLU()\n)"


def test_module_dict():
    md = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.ReLU()})
    md["c"] = nn.Tanh()
    assert list(md) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert list(md.state_dict()) == ["a.weight", "a.bias"]
    assert isinstance(md.pop("b"), nn.ReLU) and list(md.keys()) == ["a", "c"]
    md.update([("d", nn.Sigmoid())])
    assert list(md) == ["a", "c", "d"]
    with pytest.raises(ValueError, match="element #0 has length 1; 2 is required"):
        md.update([("x",)])
    md.clear()
    assert len(md) == 0


def test_parameter_list_and_dict():
    torch = _torch()
    pl = nn.ParameterList([torchlet.ones(2, 3), nn.Parameter(torchlet.zeros(1))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(torchlet.ones(4))
    assert [k for k, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert repr(pl).splitlines()[1].strip() == "(0): Parameter containing: [torchlet.float32 of size 2x3]"
    assert "(0): Parameter containing: [torch.float32 of size 2x3]" in str(torch.nn.ParameterList([torch.ones(2, 3)]))
    pd = nn.ParameterDict({"w": torchlet.ones(2)})
    pd["b"] = nn.Parameter(torchlet.zeros(2))
    assert list(pd) == ["w", "b"] and isinstance(pd["w"], nn.Parameter)
    assert list(pd.state_dict()) == ["w", "b"]
    opt = torchlet.optim.SGD(pd.parameters(), lr=0.1)
    assert len(opt.param_groups[0]["params"]) == 2
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)


# ---------------------------------------------------------------- hooks


def test_forward_hooks_order_replacement_and_removal():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre") or (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    h3 = m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    out = m(torchlet.ones(3, 2))
    assert calls == ["pre", "first", "post"]
    np.testing.assert_allclose(out.detach().numpy(), (m.bias + 1).detach().numpy()[None].repeat(3, 0))
    for h in (h1, h2, h3):
        h.remove()
    assert not m._forward_hooks and not m._forward_pre_hooks
    calls.clear()
    m(torchlet.ones(1, 2))
    assert calls == []


def test_forward_hooks_with_kwargs_and_always_call():
    class M(nn.Module):
        def forward(self, x, *, scale=1.0):
            if scale < 0:
                raise ValueError("negative")
            return x * scale

    m = M()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": kwargs.get("scale", 1.0) * 2}),
                                with_kwargs=True)
    seen = []
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs["scale"]), with_kwargs=True,
                            always_call=True)
    assert m(torchlet.ones(1), scale=3.0).item() == 6.0 and seen == [6.0]
    with pytest.raises(ValueError, match="negative"):
        m(torchlet.ones(1), scale=-1.0)
    assert seen == [6.0, -2.0]
    with m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True):
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple of"):
            m(torchlet.ones(1))


def test_hooks_capture_activations_like_torch():
    torch = _torch()
    outs = {}
    for lib in (torch, torchlet):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 1))
        net[0].load_state_dict({"weight": lib.tensor(_x(4, 3)), "bias": lib.tensor(_x(4, seed=1))})
        acts = []
        net[1].register_forward_hook(lambda m, a, o: acts.append(o.detach().numpy().copy()))
        net(lib.tensor(_x(2, 3, seed=2)))
        outs[lib.__name__] = acts[0]
    np.testing.assert_allclose(outs["torchlet"], outs["torch"], rtol=1e-6)


# ---------------------------------------------------------- load_state_dict


def test_load_state_dict_result_and_errors_match_torch():
    torch = _torch()
    tm, lm = torch.nn.Linear(2, 2), nn.Linear(2, 2)
    tr = tm.load_state_dict(tm.state_dict())
    lr = lm.load_state_dict(lm.state_dict())
    assert repr(lr) == repr(tr) == "<All keys matched successfully>"
    tr = tm.load_state_dict({"weight": torch.ones(2, 2), "x": torch.ones(1)}, strict=False)
    lr = lm.load_state_dict({"weight": torchlet.ones(2, 2), "x": torchlet.ones(1)}, strict=False)
    assert repr(lr) == repr(tr) and lr.missing_keys == ["bias"] and lr.unexpected_keys == ["x"]
    assert lm.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(RuntimeError) as te:
        tm.load_state_dict({"weight": torch.ones(3, 2), "x": torch.ones(1)})
    with pytest.raises(RuntimeError) as le:
        lm.load_state_dict({"weight": torchlet.ones(3, 2), "x": torchlet.ones(1)})
    assert str(le.value) == str(te.value).replace("torch.Size", "torchlet.Size")
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        lm.load_state_dict({"weight": torchlet.ones(3, 2), "bias": torchlet.ones(2)}, strict=False)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>."):
        lm.load_state_dict([1])


def test_load_state_dict_assign():
    m = nn.Linear(2, 2)
    w = torchlet.ones(2, 2)
    m.load_state_dict({"weight": w, "bias": torchlet.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    assert m.weight.data_ptr() == w.data_ptr() and m.state_dict()["weight"].data_ptr() == w.data_ptr()


# ------------------------------------------------------------- nn.utils


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
def test_clip_grad_norm_matches_torch(norm_type):
    torch = _torch()
    grads = [_x(3, 4, seed=1) * 5, _x(7, seed=2), _x(2, 2, 2, seed=3)]
    tp = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    lp = [nn.Parameter(torchlet.zeros(g.shape)) for g in grads]
    for p, g in zip(tp, grads):
        p.grad = torch.tensor(g)
    for p, g in zip(lp, grads):
        p.grad = torchlet.tensor(g)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm=1.5, norm_type=norm_type)
    ln = torchlet.nn.utils.clip_grad_norm_(lp, max_norm=1.5, norm_type=norm_type)
    np.testing.assert_allclose(ln.item(), tn.item(), rtol=1e-6)
    for a, b in zip(lp, tp):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_edge_cases():
    p = nn.Parameter(torchlet.zeros(3))
    assert torchlet.nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0       # no grads
    p.grad = torchlet.tensor([float("inf"), 1.0, 0.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                           "non-finite"):
        torchlet.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    p.grad = torchlet.tensor([0.3, -4.0, 2.0])
    torchlet.nn.utils.clip_grad_value_(p, 1.0)
    assert p.grad.tolist() == pytest.approx([0.3, -1.0, 1.0])
    with pytest.warns(UserWarning, match="empty generator"):
        torchlet.nn.utils.clip_grad_norm_((q for q in []), 1.0)


def test_parameters_vector_round_trip():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    v = torchlet.nn.utils.parameters_to_vector(m.parameters())
    assert tuple(v.shape) == (3 * 2 + 2 + 2 + 1,)
    new = torchlet.arange(float(v.numel()))
    torchlet.nn.utils.vector_to_parameters(new, m.parameters())
    assert m[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and m[1].bias.tolist() == [10.0]
    assert m[0].weight.requires_grad and isinstance(m[0].weight, nn.Parameter)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        torchlet.nn.utils.vector_to_parameters([1.0], m.parameters())


# --------------------------------------------------------------- layers


LAYERS = [
    ("ReLU", (), (4, 5)), ("GELU", (), (4, 5)), ("GELU", ("tanh",), (4, 5)), ("Tanh", (), (3,)),
    ("Sigmoid", (), (2, 3)), ("Softmax", (1,), (3, 4)), ("LogSoftmax", (-1,), (2, 3, 4)), ("Identity", (3,), (2,)),
    ("Flatten", (), (2, 3, 4)), ("Flatten", (0, 1), (2, 3, 4)), ("Unflatten", (1, (2, 2)), (3, 4)),
    ("Softmax", (0,), ()), ("ReLU", (), (0, 3)),
]


@pytest.mark.parametrize("name,args,shape", LAYERS, ids=[f"{n}{i}" for i, (n, _, _) in enumerate(LAYERS)])
def test_layers_match_torch(name, args, shape):
    torch = _torch()
    x = _x(*shape) if shape else np.float32(0.7)
    tmod, lmod = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    tx, lx = torch.tensor(x, requires_grad=True), torchlet.tensor(x, requires_grad=True)
    ty, ly = tmod(tx), lmod(lx)
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    if ty.numel():
        ty.sum().backward() if name not in ("Softmax",) else (ty * torch.tensor(x)).sum().backward()
        ly.sum().backward() if name not in ("Softmax",) else (ly * torchlet.tensor(x)).sum().backward()
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(lmod) == repr(tmod)


def test_dropout_train_eval():
    torch = _torch()
    d = nn.Dropout(0.25)
    assert repr(d) == repr(torch.nn.Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"
    x = torchlet.ones(10000)
    y = d(x)
    kept = y.numpy() != 0
    assert 0.7 < kept.mean() < 0.8 and np.allclose(y.numpy()[kept], 1 / 0.75)
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_loss_modules_match_torch():
    torch = _torch()
    logits, target = _x(6, 5), np.array([0, 4, 2, -100, 1, 3])
    w = np.abs(_x(5, seed=4)) + 0.1
    for kw in [{}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.1}, {"ignore_index": 3}]:
        # (torchlet's cross_entropy does not combine label_smoothing with weight yet)
        tgt = np.where(target == -100, 3, target) if "ignore_index" in kw else target
        for use_w in ((False,) if "label_smoothing" in kw else (False, True)):
            tkw = dict(kw, weight=torch.tensor(w)) if use_w else kw
            lkw = dict(kw, weight=torchlet.tensor(w)) if use_w else kw
            t = torch.nn.CrossEntropyLoss(**tkw)(torch.tensor(logits), torch.tensor(tgt))
            l_ = nn.CrossEntropyLoss(**lkw)(torchlet.tensor(logits), torchlet.tensor(tgt))
            np.testing.assert_allclose(l_.numpy(), t.numpy(), rtol=1e-5)
            if "label_smoothing" not in kw:
                lp = np.log(np.exp(logits) / np.exp(logits).sum(1, keepdims=True)).astype(np.float32)
                t = torch.nn.NLLLoss(**tkw)(torch.tensor(lp), torch.tensor(tgt))
                l_ = nn.NLLLoss(**lkw)(torchlet.tensor(lp), torchlet.tensor(tgt))
                np.testing.assert_allclose(l_.numpy(), t.numpy(), rtol=1e-5)
    a, b = _x(3, 4), _x(3, 4, seed=9)
    for red in ("mean", "sum", "none"):
        np.testing.assert_allclose(nn.MSELoss(reduction=red)(torchlet.tensor(a), torchlet.tensor(b)).numpy(),
                                   torch.nn.MSELoss(reduction=red)(torch.tensor(a), torch.tensor(b)).numpy(),
                                   rtol=1e-6)
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert "weight" in dict(nn.NLLLoss(weight=torchlet.ones(3)).named_buffers())
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert nn.MSELoss(size_average=False).reduction == "sum"
    assert any("size_average and reduce args will be deprecated" in str(r.message) for r in rec)


def test_small_classifier_trains():
    torchlet.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 3))
    x = torchlet.randn(64, 2, 4)
    y = (x.flatten(1).sum(1) > 0).to(torchlet.int64) + (x[:, 0, 0] > 1).to(torchlet.int64)
    opt = torchlet.optim.Adam(model.parameters(), lr=0.02)
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for _ in range(60):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        torchlet.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        first = loss.item() if first is None else first
    model.eval()
    assert loss_fn(model(x), y).item() < first * 0.5
