"""torchlet.optim.lr_scheduler: every scheduler's lr sequence over 50 steps
equals torch's for the same settings (two param groups), get_last_lr,
last_epoch, state_dict / load_state_dict resuming, and the error texts."""
import math
import warnings

import pytest

import torchlet
import torchlet.nn as nn

N = 50


def _torch():
    return pytest.importorskip("torch")


def _opts(lib, name="SGD", **kw):
    mk = (lambda: lib.nn.Parameter(lib.ones(2)))
    groups = [{"params": [mk()]}, {"params": [mk()], "lr": 0.5}]
    if name == "SGD":
        kw.setdefault("momentum", 0.9)
        return lib.optim.SGD(groups, lr=0.1, **kw)
    return getattr(lib.optim, name)(groups, lr=0.1, **kw)


def _lambda(epoch):
    return 0.95 ** epoch


SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=13, eta_min=0.001),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lr_lambda=[_lambda, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lr_lambda=lambda e: 0.97),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=17),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.4, total_iters=9),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=30, power=2.0),
    "SequentialLR": lambda m, o: m.SequentialLR(o, schedulers=[m.LinearLR(o, start_factor=0.1, total_iters=10),
                                                               m.CosineAnnealingLR(o, T_max=30)], milestones=[10]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.5, total_iters=4),
                                                         m.ExponentialLR(o, gamma=0.9)]),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=N + 1),
    "OneCycleLR-3phase-linear": lambda m, o: m.OneCycleLR(o, max_lr=0.3, epochs=3, steps_per_epoch=17,
                                                          three_phase=True, anneal_strategy="linear"),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.2, step_size_up=6, mode="triangular2"),
}


def _run(lib, make, opt_name="SGD"):
    opt = _opts(lib, opt_name)
    sched = make(lib.optim.lr_scheduler, opt)
    seq = [list(sched.get_last_lr())]
    moms = [[g.get("momentum", g.get("betas")) for g in opt.param_groups]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(N):
            opt.step()
            sched.step()
            seq.append(list(sched.get_last_lr()))
            moms.append([g.get("momentum", g.get("betas")) for g in opt.param_groups])
    return seq, moms, [g["lr"] for g in opt.param_groups], getattr(sched, "last_epoch", None)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_lr_sequence_equals_torch(name):
    torch = _torch()
    t = _run(torch, SCHEDULERS[name])
    l_ = _run(torchlet, SCHEDULERS[name])
    assert l_ == t


def test_one_cycle_with_adam_cycles_beta1():
    torch = _torch()
    make = SCHEDULERS["OneCycleLR"]
    assert _run(torchlet, make, "Adam") == _run(torch, make, "Adam")


def test_reduce_lr_on_plateau_equals_torch():
    torch = _torch()
    metrics = [1.0 - 0.01 * i if i < 10 else 0.9 + 0.001 * (i % 3) for i in range(N)]
    out = []
    for lib, kw in [(torch, {}), (torchlet, {})]:
        runs = []
        for cfg in [dict(), dict(mode="max", factor=0.5, patience=2, cooldown=3, threshold_mode="abs"),
                    dict(patience=0, min_lr=[0.05, 0.2], eps=1e-3)]:
            opt = _opts(lib)
            s = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **cfg)
            seq = []
            for m in metrics:
                opt.step()
                s.step(m)
                seq.append(s.get_last_lr())
            runs.append((seq, s.last_epoch, s.best, s.num_bad_epochs))
        out.append(runs)
    assert out[0] == out[1]


def test_state_dict_resume_and_last_epoch():
    o1 = _opts(torchlet)
    s1 = torchlet.optim.lr_scheduler.CosineAnnealingLR(o1, T_max=10)
    for _ in range(4):
        o1.step()
        s1.step()
    sd = s1.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4 and sd["base_lrs"] == [0.1, 0.5]
    o2 = _opts(torchlet)
    s2 = torchlet.optim.lr_scheduler.CosineAnnealingLR(o2, T_max=10)
    s2.load_state_dict(sd)
    o2.load_state_dict(o1.state_dict())
    for _ in range(5):
        for o, s in ((o1, s1), (o2, s2)):
            o.step()
            s.step()
        assert s1.get_last_lr() == s2.get_last_lr()
    assert s2.last_epoch == 9


def test_sequential_state_dict_holds_children():
    o = _opts(torchlet)
    m = torchlet.optim.lr_scheduler
    s = m.SequentialLR(o, [m.ConstantLR(o, factor=0.5, total_iters=2), m.ExponentialLR(o, gamma=0.9)], milestones=[2])
    sd = s.state_dict()
    assert len(sd["_schedulers"]) == 2 and sd["_schedulers"][1]["gamma"] == 0.9


def test_errors_and_warnings_match_torch():
    torch = _torch()
    cases = [
        lambda m, o: m.ConstantLR(o, factor=1.5),
        lambda m, o: m.LinearLR(o, start_factor=0),
        lambda m, o: m.LinearLR(o, end_factor=2),
        lambda m, o: m.LambdaLR(o, lr_lambda=[_lambda]),
        lambda m, o: m.ReduceLROnPlateau(o, factor=1.0),
        lambda m, o: m.ReduceLROnPlateau(o, mode="avg"),
        lambda m, o: m.OneCycleLR(o, max_lr=1.0),
        lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="exp"),
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
        lambda m, o: m.SequentialLR(o, [m.ExponentialLR(o, 0.9)], milestones=[3]),
        lambda m, o: m.SequentialLR(o, [object()], milestones=[]),
        lambda m, o: m.SequentialLR(o, [m.ReduceLROnPlateau(o)], milestones=[]),
        lambda m, o: m.ChainedScheduler([]),
        lambda m, o: m.ChainedScheduler([m.ExponentialLR(o, 0.9), object()], optimizer=o),
        lambda m, o: m.ChainedScheduler([m.ReduceLROnPlateau(o)], optimizer=o),
    ]
    for make in cases:
        with pytest.raises((ValueError, TypeError)) as te:
            make(torch.optim.lr_scheduler, _opts(torch))
        with pytest.raises(type(te.value)) as le:
            make(torchlet.optim.lr_scheduler, _opts(torchlet))
        assert str(le.value) == str(te.value)
    with pytest.raises(TypeError, match="^int is not an Optimizer$"):
        torchlet.optim.lr_scheduler.StepLR(1, step_size=2)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        torchlet.optim.lr_scheduler.StepLR(_opts(torchlet), step_size=2, last_epoch=3)
    o = _opts(torchlet)
    s = torchlet.optim.lr_scheduler.StepLR(o, step_size=2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()
    o = _opts(torchlet)
    s = torchlet.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o.step()
        s.step()
        s.step()
        with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
            s.step()


def test_closed_form_with_epoch_argument():
    torch = _torch()
    out = []
    for lib in (torch, torchlet):
        o = _opts(lib)
        s = lib.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            o.step()
            s.step(7)
        out.append((s.get_last_lr(), s.last_epoch))
    assert out[0] == out[1]
    assert math.isclose(out[1][0][0], 0.1 * 0.25)


def test_scheduler_drives_training():
    torchlet.manual_seed(1)
    model = nn.Linear(3, 1)
    opt = torchlet.optim.AdamW(model.parameters(), lr=0.05)
    sched = torchlet.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=40)
    x = torchlet.randn(16, 3)
    y = x @ torchlet.tensor([[1.0], [-2.0], [0.5]])
    losses = []
    for _ in range(40):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.2
    assert opt.param_groups[0]["lr"] == sched.get_last_lr()[0]
