"""torchlet.save / torchlet.load: PyTorch's zip format both ways (a file
torchlet saves loads in torch, a state_dict torch saves loads here), views
sharing one storage, paths and file objects, map_location, and the
weights-only unpickler refusing a malicious pickle without running it."""
import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import torchlet
import torchlet.nn as nn


def _torch():
    return pytest.importorskip("torch")


def _sample():
    a = torchlet.arange(12.0).reshape(3, 4)
    return OrderedDict(w=a, row=a[1], col=a[:, 2], p=nn.Parameter(torchlet.ones(2)),
                       frozen=nn.Parameter(torchlet.zeros(3), requires_grad=False), scalar=torchlet.tensor(3),
                       bf=torchlet.ones(2, dtype=torchlet.bfloat16), f64=torchlet.tensor([1.5], dtype=torchlet.float64),
                       empty=torchlet.zeros((0, 3)), flags=torchlet.tensor([True, False]),
                       i8=torchlet.tensor([-3, 4], dtype=torchlet.int8), dtype=torchlet.float16,
                       size=torchlet.Size((2, 3)), misc=[1, 2.5, "x", None, (1, 2), {"k": b"bytes"}])


def _np(t):
    return t.to(torchlet.float32).numpy() if t.dtype == torchlet.bfloat16 else t.detach().numpy()


def test_round_trip_in_torchlet(tmp_path):
    sd = _sample()
    torchlet.save(sd, tmp_path / "x.pt")
    back = torchlet.load(tmp_path / "x.pt")
    assert type(back) is OrderedDict and list(back) == list(sd)
    for k, v in sd.items():
        if isinstance(v, torchlet.Tensor):
            b = back[k]
            assert b.dtype == v.dtype and tuple(b.shape) == tuple(v.shape) and type(b) is type(v)
            assert b.requires_grad == v.requires_grad
            np.testing.assert_array_equal(_np(b), _np(v))
        else:
            assert back[k] == v
    # views keep sharing one storage, at their offsets and strides
    assert back["row"].storage_offset() == 4 and back["col"].stride() == (4,)
    with torchlet.no_grad():
        back["w"][1, 2] = 100.0
    assert back["row"][2].item() == 100.0 and back["col"][1].item() == 100.0


def test_archive_layout(tmp_path):
    torchlet.save({"a": torchlet.ones(3)}, tmp_path / "model.pt")
    z = zipfile.ZipFile(tmp_path / "model.pt")
    names = z.namelist()
    assert set(names) == {"model/data.pkl", "model/.format_version", "model/.storage_alignment", "model/byteorder",
                          "model/data/0", "model/version"}
    assert z.read("model/version") == b"3\n" and z.read("model/byteorder") in (b"little", b"big")
    info = z.getinfo("model/data/0")
    assert info.compress_type == zipfile.ZIP_STORED
    z.fp.seek(info.header_offset + 26)   # the local header's name and extra-field lengths
    n, m = np.frombuffer(z.fp.read(4), dtype="<u2")
    assert (info.header_offset + 30 + int(n) + int(m)) % 64 == 0
    assert z.read("model/data/0") == np.ones(3, np.float32).tobytes()


def test_file_objects():
    buf = io.BytesIO()
    torchlet.save([torchlet.ones(2), torchlet.zeros(1)], buf)
    buf.seek(0)
    a, b = torchlet.load(buf)
    assert a.tolist() == [1.0, 1.0] and b.tolist() == [0.0]
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()[0] == "archive/data.pkl"


def test_torchlet_file_loads_in_torch(tmp_path):
    torch = _torch()
    sd = _sample()
    torchlet.save(sd, tmp_path / "tl.pt")
    r = torch.load(tmp_path / "tl.pt")  # weights_only=True: only allowlisted globals are in the file
    for k, v in sd.items():
        if isinstance(v, torchlet.Tensor):
            t = r[k]
            assert str(t.dtype).split(".")[1] == str(v.dtype).split(".")[1]
            assert isinstance(t, torch.nn.Parameter) == isinstance(v, nn.Parameter)
            assert t.requires_grad == v.requires_grad and t.stride() == v.stride()
            assert t.storage_offset() == v.storage_offset()
            np.testing.assert_array_equal(t.float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy(),
                                          _np(v))
    assert r["row"].untyped_storage().data_ptr() == r["w"].untyped_storage().data_ptr()
    assert r["dtype"] is torch.float16 and r["size"] == torch.Size([2, 3]) and r["misc"] == sd["misc"]


def test_torch_state_dicts_load_in_torchlet(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))
    opt = torch.optim.AdamW(tm.parameters(), lr=0.01)
    tm(torch.randn(5, 3)).sum().backward()
    opt.step()
    torch.save({"model": tm.state_dict(), "optim": opt.state_dict(), "epoch": 3}, tmp_path / "ckpt.pt")
    ck = torchlet.load(tmp_path / "ckpt.pt")
    lm = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    assert lm.load_state_dict(ck["model"]) == ([], [])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(lm(torchlet.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    lopt = torchlet.optim.AdamW(lm.parameters(), lr=0.01)
    lopt.load_state_dict(ck["optim"])
    assert float(lopt.state[lm[0].weight]["step"]) == 1.0 and ck["epoch"] == 3
    # and a tensor torch saved with non-contiguous strides and a shared storage
    base = torch.arange(24.0).reshape(4, 6)
    torch.save({"t": base.t(), "s": base[1:3, ::2]}, tmp_path / "views.pt")
    v = torchlet.load(tmp_path / "views.pt")
    np.testing.assert_array_equal(v["t"].numpy(), base.t().numpy())
    np.testing.assert_array_equal(v["s"].numpy(), base[1:3, ::2].numpy())


def test_malicious_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    # a checkpoint written by hand, so this test needs no torch
    raw = pickle.dumps({"weights": Evil()}, protocol=2)
    with zipfile.ZipFile(tmp_path / "evil.pt", "w") as z:
        z.writestr("evil/data.pkl", raw)
        z.writestr("evil/version", "3\n")
    with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed") as e:
        torchlet.load(tmp_path / "evil.pt")
    assert "whose module posix is blocked" in str(e.value) or "whose module nt is blocked" in str(e.value)
    assert not marker.exists()
    # a global outside the allowlist (not a blocked module) names add_safe_globals
    with zipfile.ZipFile(tmp_path / "eval.pt", "w") as z:
        z.writestr("eval/data.pkl", b"\x80\x02cbuiltins\neval\nX\x03\x00\x00\x001+1\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL builtins.eval was not an allowed global by default"):
        torchlet.load(tmp_path / "eval.pt")
    # weights_only=False is the user's explicit choice to trust the file
    assert torchlet.load(tmp_path / "eval.pt", weights_only=False) == 2


def test_safe_globals_allowlist(tmp_path):
    import collections
    torchlet.save({"d": collections.deque([1, 2])}, tmp_path / "dq.pt")
    with pytest.raises(pickle.UnpicklingError, match="collections.deque"):
        torchlet.load(tmp_path / "dq.pt")
    with torchlet.serialization.safe_globals([collections.deque]):
        assert torchlet.load(tmp_path / "dq.pt")["d"] == collections.deque([1, 2])
    assert torchlet.serialization.get_safe_globals() == []


def test_rebuild_arguments_are_validated(tmp_path):
    # a view reaching past its storage is refused, not read out of bounds
    torchlet.save({"a": torchlet.ones(4)}, tmp_path / "ok.pt")
    z = zipfile.ZipFile(tmp_path / "ok.pt")
    pkl = z.read("ok/data.pkl").replace(b"K\x04\x85", b"K\x40\x85")   # size (4,) -> (64,)
    with zipfile.ZipFile(tmp_path / "bad.pt", "w") as out:
        for n in z.namelist():
            out.writestr(n, pkl if n.endswith("data.pkl") else z.read(n))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torchlet.load(tmp_path / "bad.pt")


def test_map_location_and_errors(tmp_path):
    torchlet.save({"a": torchlet.ones(2)}, tmp_path / "m.pt")
    assert torchlet.load(tmp_path / "m.pt", map_location="meta")["a"].is_meta
    assert torchlet.load(tmp_path / "m.pt", map_location=torchlet.device("cpu"))["a"].tolist() == [1.0, 1.0]
    assert torchlet.load(tmp_path / "m.pt", map_location={"cpu": "cpu"})["a"].tolist() == [1.0, 1.0]
    assert torchlet.load(tmp_path / "m.pt", map_location=lambda s, loc: s)["a"].tolist() == [1.0, 1.0]
    (tmp_path / "legacy.pt").write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(RuntimeError, match="not a zip checkpoint"):
        torchlet.load(tmp_path / "legacy.pt")
    with pytest.raises(RuntimeError, match="Cannot save a meta tensor"):
        torchlet.save(torchlet.empty(2, device="meta"), io.BytesIO())
    with pytest.raises(AttributeError, match="file-like object with a 'write' attribute"):
        torchlet.save(torchlet.ones(1), 3)


def test_module_state_dict_round_trip(tmp_path):
    torchlet.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    torchlet.save(m.state_dict(), tmp_path / "m.pt")
    m2 = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    m2.load_state_dict(torchlet.load(tmp_path / "m.pt"))
    x = torchlet.randn(3, 4)
    assert m(x).tolist() == m2(x).tolist()
