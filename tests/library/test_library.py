"""torchlet.library.Library and the module-level define / impl: kinds, keys,
errors (PyTorch's types and texts), lifetime, and threads."""
import gc
import threading

import numpy as np
import pytest

import torchlet as tl
from torchlet import library, ops
from torchlet.library import Library


def test_kinds_and_repr():
    with pytest.raises(ValueError, match="Unsupported kind: FOO"):
        Library("tlk", "FOO")
    with pytest.raises(ValueError, match="prim is a reserved namespace"):
        Library("prim", "DEF")
    Library("prim", "IMPL")._destroy()
    with Library("tlk", "DEF") as lib:
        assert repr(lib) == "Library(kind=DEF, ns=tlk, dispatch_key=)>"


def test_one_def_per_namespace():
    with Library("tldef", "DEF"):
        with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY can be used to register the namespace "
                                               "tldef"):
            Library("tldef", "DEF")
        Library("tldef", "FRAGMENT")._destroy()   # fragments are fine
    Library("tldef", "DEF")._destroy()            # free again once destroyed
    with pytest.raises(RuntimeError, match="namespace aten"):
        Library("aten", "DEF")


def test_impl_library_cannot_define():
    with Library("tlimpl", "IMPL") as lib:
        with pytest.raises(RuntimeError, match=r'def\("zzz"\): Cannot define an operator inside of a '
                                               r"TORCH_LIBRARY_IMPL block"):
            lib.define("zzz(Tensor x) -> Tensor")


def test_define_errors():
    with Library("tlerr", "DEF") as lib:
        with pytest.raises(RuntimeError, match=r"(?s)expected ',' or '\)'.*here:\nf\(Tensor x -> Tensor\n.*~ <--- HERE"):
            lib.define("f(Tensor x -> Tensor")
        with pytest.raises(RuntimeError, match="unknown type 'Tensr'"):
            lib.define("f(Tensr x) -> Tensor")
        assert lib.define("f(Tensor x) -> Tensor") == "f"
        assert lib.define("f.two(Tensor x, Tensor y) -> Tensor") == "f.two"
        with pytest.raises(RuntimeError, match=r"Tried to register an operator \(tlerr::f\(Tensor x\) -> Tensor\) "
                                               r"with the same name and overload name multiple times"):
            lib.define("f(Tensor x) -> Tensor")
        with pytest.raises(ValueError, match="names namespace 'other'"):
            lib.define("other::g(Tensor x) -> Tensor")


def test_module_level_define_and_impl():
    with pytest.raises(ValueError, match="expected schema to look like"):
        library.define("tlmod::f", "f(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="namespace::name"):
        library.define("f", "(Tensor x) -> Tensor")
    lib = Library("tlmod", "FRAGMENT")
    library.define("tlmod::f", "(Tensor x) -> Tensor", lib=lib)

    @library.impl("tlmod::f", "cpu", lib=lib)
    def f_cpu(x):
        return x * 3

    assert ops.tlmod.f(tl.ones(2)).tolist() == [3.0, 3.0]
    library.impl("tlmod::f", "default", lambda x: x * 5, lib=lib)    # CompositeExplicitAutograd
    assert ops.tlmod.f(tl.ones(1)).tolist() == [3.0]                 # CPU kernel still wins on CPU
    assert tl._C._dispatch_dump("tlmod::f").splitlines()[0] == "CompositeExplicitAutograd: <lambda> (Python kernel)"
    lib._destroy()
    assert not hasattr(ops.tlmod, "f")


def test_keys_default_and_alias():
    with Library("tlkeys", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x + 1)                       # no key: CompositeImplicitAutograd
        table = tl._C._dispatch_dump_table("tlkeys::f")
        assert "CPU: <lambda> (Python kernel) [math kernel]" in table
        assert "AutogradCPU: <lambda> (Python kernel) [math kernel]" in table
        # autograd flows through a CompositeImplicitAutograd kernel's operators
        x = tl.ones(2, requires_grad=True)
        ops.tlkeys.f(x).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError, match="We should not register a meta kernel directly to the operator 'f'"):
            lib.impl("f", lambda x: x, "Meta")
    with pytest.raises(RuntimeError, match="could not parse dispatch key: Nope"):
        Library("tlkeys2", "FRAGMENT", "Nope")


def test_allow_override_and_previous_kernel_returns():
    a = tl.tensor([1.0, 2.0])
    with Library("aten", "IMPL") as lib:
        lib.impl("neg", lambda x: x * 0 + 7, "CPU")
        assert tl.neg(a).tolist() == [7.0, 7.0]
        with pytest.raises(RuntimeError, match="already a kernel registered from python overriding neg's behavior "
                                               "for CPU dispatch key and aten namespace"):
            lib.impl("neg", lambda x: x, "CPU", allow_override=False)
    assert tl.neg(a).tolist() == [-1.0, -2.0]


def test_fallthrough_and_with_keyset():
    seen = []
    with Library("tlft", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x * 2, "CPU")

        def autograd_kernel(keyset, x):
            seen.append(keyset.has("AutogradCPU"))
            below = tl._dispatch.DispatchKeySet(tl._C.lib.tl_keyset_below(int(keyset), tl._dispatch._key("AutogradOther")))
            return ops.tlft.f.default.redispatch(below, x)

        lib.impl("f", autograd_kernel, "AutogradCPU", with_keyset=True)
        assert ops.tlft.f(tl.ones(1)).tolist() == [2.0] and seen == [True]
        lib.impl("f", library.fallthrough_kernel, "AutogradCPU")
        assert ops.tlft.f(tl.ones(1)).tolist() == [2.0] and seen == [True]


def test_impl_before_define():
    lib = Library("tlearly", "FRAGMENT")
    lib.impl("f", lambda x: x + 10, "CPU")       # accepted, as in PyTorch
    assert not hasattr(ops.tlearly, "f")
    lib.define("f(Tensor x) -> Tensor")
    assert ops.tlearly.f(tl.zeros(1)).tolist() == [10.0]
    lib._destroy()


def test_registrations_outlive_the_python_object():
    def make():
        lib = Library("tllife", "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x + 1, "CPU")
        return lib._defs[0]

    make()
    gc.collect()
    assert ops.tllife.f(tl.zeros(1)).tolist() == [1.0]   # PyTorch loses it here (its Library is collected)
    # the namespace's DEF is still taken: clean up through the operator's library record
    from torchlet.library import _live
    for rid, entry in list(_live.items()):
        if entry[2] == "tllife::f":
            entry[1]._destroy()
            break
    assert not hasattr(ops.tllife, "f")


def test_python_kernel_arguments_and_returns():
    got = {}
    with Library("tlargs", "DEF") as lib:
        lib.define("f(Tensor x, int[] dims, float s, bool b, str mode, ScalarType dt, Tensor? opt, *, "
                   "int k=3, Scalar alpha=1) -> (Tensor, Tensor[], int, float)")

        def f(x, dims, s, b, mode, dt, opt, *, k, alpha):
            got.update(dims=dims, s=s, b=b, mode=mode, dt=dt, opt=opt, k=k, alpha=alpha)
            return x * 2, [x, x + 1], k + 1, s * 2

        lib.impl("f", f, "CPU")
        r = ops.tlargs.f(tl.ones(2), [0, 1], 1.5, True, "sum", tl.float64, None, alpha=2.5)
        assert got == dict(dims=[0, 1], s=1.5, b=True, mode="sum", dt=tl.float64, opt=None, k=3, alpha=2.5)
        assert r[0].tolist() == [2.0, 2.0] and [t.tolist() for t in r[1]] == [[1.0, 1.0], [2.0, 2.0]]
        assert r[2:] == (4, 3.0)


def test_kernel_exceptions_keep_their_type():
    with Library("tlexc", "DEF") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: (_ for _ in ()).throw(IndexError("my index error")), "CPU")
        with pytest.raises(IndexError, match="my index error"):
            ops.tlexc.f(tl.ones(1))
        lib.define("g(Tensor x) -> (Tensor, Tensor)")
        lib.impl("g", lambda x: x, "CPU")
        with pytest.raises(RuntimeError):
            ops.tlexc.g(tl.ones(2, 3))


def test_backend_fallback():
    """A Python fallback at PrivateUse1 serves every operator once that key is
    in the thread's included set (it outranks CPU)."""
    seen = []

    def fb(op_name, *args):
        seen.append((op_name, len(args)))
        return args[0].clone()

    with pytest.raises(ValueError, match="global namespace"):
        Library("tlfb", "FRAGMENT").fallback(fb, "PrivateUse1")
    x = tl.tensor([1.0, -2.0])
    with Library("_", "IMPL") as lib:
        lib.fallback(fb, "PrivateUse1")
        tl._C._dispatch_tls_set_dispatch_key_included("PrivateUse1", True)
        try:
            r = ops.aten.neg.default(x)
        finally:
            tl._C._dispatch_tls_set_dispatch_key_included("PrivateUse1", False)
    assert seen == [("aten::neg", 1)] and r.tolist() == [1.0, -2.0]
    assert ops.aten.neg.default(x).tolist() == [-1.0, 2.0]      # the fallback is gone


def test_concurrent_registration_and_calls():
    """One thread registers and removes kernels while others call the operator:
    every call sees one of the kernels, and nothing crashes."""
    lib = Library("tlthreads", "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x + 1, "CPU")
    stop = threading.Event()
    errors = []
    results = set()

    def caller():
        x = tl.zeros(1)
        while not stop.is_set():
            try:
                results.add(ops.tlthreads.f.default(x).item())
            except Exception as e:  # noqa: BLE001
                errors.append(e)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(200):
            extra = Library("tlthreads", "FRAGMENT")
            extra.impl("f", lambda x, i=i: x + 100, "CPU")
            extra._destroy()
    finally:
        stop.set()
        for t in threads:
            t.join()
        lib._destroy()
    assert not errors
    assert results <= {1.0, 100.0} and 1.0 in results
    assert tl._C.lib.tl_dispatch_check_invariants() == 0


def test_boxed_call_helper():
    a, b = tl.tensor([1.0, 2.0]), tl.tensor([[3.0], [4.0]])
    np.testing.assert_array_equal(library.call("aten::add.Tensor", a, b, 2).numpy(), tl.add(a, b, alpha=2).numpy())
    with pytest.raises(TypeError, match="takes 3 arguments"):
        library.call("aten::add.Tensor", a, b)


def test_a_kernel_outliving_a_redefinition_sees_the_new_schema():
    seen = []
    frag = Library("tlredef", "FRAGMENT")
    frag.impl("f", lambda *args, **kwargs: (seen.append((len(args), sorted(kwargs))), args[0].clone())[1], "CPU")
    try:
        with Library("tlredef", "DEF") as d:
            d.define("f(Tensor x) -> Tensor")
            ops.tlredef.f(tl.ones(1))
        with Library("tlredef", "DEF") as d:
            d.define("f(Tensor x, Tensor y, *, int k=2) -> Tensor")
            ops.tlredef.f(tl.ones(1), tl.ones(1))
    finally:
        frag._destroy()
    assert seen == [(1, []), (2, ["k"])]
