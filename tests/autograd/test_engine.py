"""The autograd engine and tensor metadata (runtime/src/autograd*.c, torchlet.autograd).

Two levels: hand-built graphs through the C API (test nodes from
`tl_autograd_test_node_new`, whose apply sends scale[j] * sum(grads) to edge
j), and graphs recorded by the generated autograd kernels through the Python
API. Values are checked against numpy, messages against PyTorch's wording
(and against torch itself when it is installed).
"""
from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest

import torchlet as T
from torchlet._C import ffi, lib

ASAN = os.environ.get("TORCHLET_ASAN_RUN") == "1"
try:
    if ASAN:  # torch is not instrumented: keep it out of the ASan run
        raise ImportError
    import torch
except ImportError:  # reference checks skip without torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")

BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
HINT = (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")

rng = np.random.default_rng(1234)


def leaf(*shape, dtype=np.float64):
    return T.from_numpy(rng.standard_normal(shape).astype(dtype)).requires_grad_()


def npy(t):
    return np.array(t.detach().numpy())


def live_nodes():
    gc.collect()
    return lib.tl_autograd_live_nodes()


# ====================================================== hand-built graphs (C API)
def make_node(name, num_inputs, scales):
    n = lib.tl_autograd_test_node_new(name.encode(), num_inputs, len(scales),
                                      ffi.new("double[]", list(scales)) if scales else ffi.NULL)
    assert n != ffi.NULL
    return ffi.gc(n, lib.tl_node_release)


def set_edges(node, tensors):
    arr = ffi.new("tl_tensor *[]", [t._p if t is not None else ffi.NULL for t in tensors])
    assert lib.tl_node_set_next_edges(node, arr, len(tensors)) == 0


def attach(out, node, nr=0):
    assert lib.tl_autograd_set_history(out._p, node, nr) == 0
    return out


def edge(node, nr=0):
    e = ffi.new("tl_edge *")
    e.node = node
    e.input_nr = nr
    return e[0]


def run_backward(roots, grads=None, retain=False, create=False, inputs=()):
    arr = ffi.new("tl_tensor *[]", [r._p for r in roots])
    g = ffi.NULL if grads is None else ffi.new("tl_tensor *[]", [x._p if x is not None else ffi.NULL for x in grads])
    inp = ffi.new("tl_tensor *[]", [t._p for t in inputs]) if inputs else ffi.NULL
    return lib.tl_autograd_backward(arr, len(roots), g, retain, create, inp, len(inputs))


def test_diamond_dependencies_and_accumulation():
    # R -> {B (x3), C (x5)} -> AccumulateGrad(x): x.grad = 3 + 5
    x = T.ones(4, dtype=T.float64).requires_grad_()
    b = make_node("BBackward", 1, [3.0])
    c = make_node("CBackward", 1, [5.0])
    set_edges(b, [x])
    set_edges(c, [x])
    r = make_node("RBackward", 1, [1.0, 1.0])
    assert lib.tl_node_set_next_edge(r, 0, edge(b)) == 0
    assert lib.tl_node_set_next_edge(r, 1, edge(c)) == 0
    y = attach(T.zeros(4, dtype=T.float64), r)
    assert y.grad_fn.name() == "RBackward"
    assert [f.name() for f, _ in y.grad_fn.next_functions] == ["BBackward", "CBackward"]
    assert y.grad_fn.next_functions[0][0].next_functions[0][0] is y.grad_fn.next_functions[1][0].next_functions[0][0]
    assert run_backward([y], [T.ones(4, dtype=T.float64)], retain=True) == 0
    np.testing.assert_allclose(npy(x.grad), [8.0] * 4)
    # a second run accumulates
    assert run_backward([y], [T.full((4,), 2.0, dtype=T.float64)]) == 0
    np.testing.assert_allclose(npy(x.grad), [24.0] * 4)


def test_multiple_roots_one_reachable_from_the_other():
    # y2 = f(y1): backward([y1, y2]) waits for y2's contribution before running y1's node
    x = T.ones(2, dtype=T.float64).requires_grad_()
    n1 = make_node("N1Backward", 1, [2.0])
    set_edges(n1, [x])
    y1 = attach(T.zeros(2, dtype=T.float64), n1)
    n2 = make_node("N2Backward", 1, [10.0])
    set_edges(n2, [y1])
    y2 = attach(T.zeros(2, dtype=T.float64), n2)
    assert run_backward([y1, y2], [T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64)]) == 0
    # d/dx: y1 -> 2, y2 -> 10 * 2
    np.testing.assert_allclose(npy(x.grad), [22.0, 22.0])


def test_sequence_numbers_and_accumulate_grad_priority():
    a = make_node("A", 1, [])
    b = make_node("B", 1, [])
    assert lib.tl_node_sequence_nr(b) > lib.tl_node_sequence_nr(a)
    x = T.ones(1).requires_grad_()
    e = lib.tl_autograd_gradient_edge(x._p)
    assert ffi.string(lib.tl_node_name(e.node)) == b"torch::autograd::AccumulateGrad"
    assert lib.tl_node_sequence_nr(e.node) == 2**64 - 1
    # the leaf keeps its AccumulateGrad weakly: the same node while someone holds it
    e2 = lib.tl_autograd_gradient_edge(x._p)
    assert e2.node == e.node
    lib.tl_node_release(e.node)
    lib.tl_node_release(e2.node)


def test_invalid_gradient_shape_and_broadcast_sum_to():
    x = T.ones(3, dtype=T.float64).requires_grad_()
    n = make_node("BroadcastBackward", 1, [1.0])
    set_edges(n, [x])
    y = attach(T.zeros(2, 3, dtype=T.float64), n)
    # a [2, 3] gradient for a [3] input: summed back over the broadcast dimension
    assert run_backward([y], [T.ones(2, 3, dtype=T.float64)]) == 0
    np.testing.assert_allclose(npy(x.grad), [2.0, 2.0, 2.0])
    z = T.ones(4, dtype=T.float64).requires_grad_()
    m = make_node("BadBackward", 1, [1.0])
    set_edges(m, [z])
    w = attach(T.zeros(2, 3, dtype=T.float64), m)
    with pytest.raises(RuntimeError) as ei:
        w.backward(T.ones(2, 3, dtype=T.float64))
    assert str(ei.value) == ("Function BadBackward returned an invalid gradient at index 0 - got [2, 3] but "
                             "expected shape compatible with [4]")


def test_dtype_of_gradient_cast_to_input_dtype():
    x = T.ones(3, dtype=T.float32).requires_grad_()
    n = make_node("CastBackward", 1, [1.0])
    set_edges(n, [x])
    y = attach(T.zeros(3, dtype=T.float64), n)
    y.backward(T.ones(3, dtype=T.float64))
    assert x.grad.dtype == T.float32


def test_nodes_freed_when_last_reference_dies():
    base = live_nodes()
    x = T.ones(2).requires_grad_()
    y = x
    for _ in range(50):
        y = y + 1
    assert live_nodes() == base + 51  # 50 AddBackward0 + the leaf's AccumulateGrad
    del y
    assert live_nodes() == base


def test_deep_chain_freed_without_recursion():
    # 200k hand-built nodes in a chain: freeing must not recurse per node
    base = live_nodes()
    x = T.ones(1).requires_grad_()
    prev = lib.tl_autograd_gradient_edge(x._p)
    one = ffi.new("double[]", [1.0])
    for _ in range(200_000):
        n = lib.tl_autograd_test_node_new(b"ChainBackward", 1, 1, one)
        lib.tl_node_set_next_edge(n, 0, prev)
        lib.tl_node_release(prev.node)
        prev = edge(n)
    y = attach(T.zeros(1), prev.node)
    lib.tl_node_release(prev.node)
    assert live_nodes() == base + 200_001
    del y
    assert live_nodes() == base


def test_deep_chain_backward():
    x = T.ones(1, dtype=T.float64).requires_grad_()
    y = x
    for _ in range(5000):
        y = y + 1
    y.backward()
    assert x.grad.item() == 1.0


# ======================================================== recorded graphs (Python)
@pytest.mark.parametrize("shapes", [((2, 3), (3,), (2, 1)), ((4,), (4,), ()), ((1, 3), (2, 1), (1,)),
                                    ((), (), ()), ((0, 3), (3,), (1,))])
def test_a_mul_b_plus_c_sum(shapes):
    a, b, c = (leaf(*s) for s in shapes)
    y = (a * b + c).sum()
    assert y.grad_fn.name() == "SumBackward0"
    y.backward()
    A, B, C = npy(a), npy(b), npy(c)
    out_shape = np.broadcast_shapes(A.shape, B.shape, C.shape)

    def sum_to(g, shape):
        while g.ndim > len(shape):
            g = g.sum(0)
        for i, s in enumerate(shape):
            if s == 1 and g.shape[i] != 1:
                g = g.sum(i, keepdims=True)
        return g

    ones = np.ones(out_shape)
    np.testing.assert_allclose(npy(a.grad), sum_to(ones * B, A.shape))
    np.testing.assert_allclose(npy(b.grad), sum_to(ones * A, B.shape))
    np.testing.assert_allclose(npy(c.grad), sum_to(ones, C.shape))
    if torch is not None:
        ta, tb, tc = (torch.tensor(npy(t), requires_grad=True) for t in (a, b, c))
        (ta * tb + tc).sum().backward()
        for mine, ref in ((a, ta), (b, tb), (c, tc)):
            np.testing.assert_allclose(npy(mine.grad), ref.grad.numpy())


def test_non_contiguous_inputs():
    base = leaf(4, 3)
    a = base.t()  # [3, 4] transposed view of a leaf
    b = leaf(4)
    (a * b).sum().backward()
    np.testing.assert_allclose(npy(base.grad), np.broadcast_to(npy(b)[:, None], (4, 3)))
    np.testing.assert_allclose(npy(b.grad), npy(a).sum(0))


def test_grad_fn_names_and_next_functions():
    a = leaf(2, 3)
    b = T.ones(2, 3, dtype=T.float64)
    y = a * b
    fn = y.grad_fn
    assert fn.name() == "MulBackward0" and type(fn).__name__ == "MulBackward0"
    assert repr(fn).startswith("<MulBackward0 object at 0x")
    nf = fn.next_functions
    assert len(nf) == 2 and nf[1] == (None, 0)
    acc, nr = nf[0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and nr == 0
    assert type(acc).__name__ == "AccumulateGrad" and repr(acc).startswith("<AccumulateGrad object at 0x")
    assert acc.variable._p == a._p
    assert y.grad_fn is fn  # the same C node -> the same Python object
    assert (a + b).grad_fn.name() == "AddBackward0"
    assert a.relu().grad_fn.name() == "ReluBackward0"
    assert a.sum().grad_fn.name() == "SumBackward0"
    assert a.sum(1).grad_fn.name() == "SumBackward1"
    assert a.mm(b.t()).grad_fn.name() == "MmBackward0"
    assert a.grad_fn is None and a.is_leaf and not y.is_leaf
    assert y.requires_grad and not b.requires_grad
    if torch is not None:
        ta = torch.ones(2, 3, requires_grad=True)
        for f in (lambda t: t * 2, lambda t: t + t, lambda t: t.relu(), lambda t: t.sum(), lambda t: t.sum(1)):
            assert f(ta).grad_fn.name() == f(a).grad_fn.name()


def test_accumulation_across_backward_calls_and_retain_graph():
    a, b = leaf(3), leaf(3)
    y = (a * b).sum()
    y.backward(retain_graph=True)
    g1 = npy(a.grad)
    y.backward()
    np.testing.assert_allclose(npy(a.grad), 2 * g1)
    with pytest.raises(RuntimeError) as ei:
        y.backward()
    assert str(ei.value) == BACKWARD_TWICE


def test_backward_twice_without_saved_tensors_is_fine():
    a = leaf(3)
    y = (a + a).sum()  # AddBackward0 and SumBackward0 save no tensors
    y.backward()
    y.backward()
    np.testing.assert_allclose(npy(a.grad), [4.0] * 3)


def test_first_grad_does_not_alias_user_gradient():
    a = leaf(3)
    y = a + 1
    g = T.ones(3, dtype=T.float64)
    y.backward(g)
    g.mul_(5)  # the gradient the user passed in stays theirs
    np.testing.assert_allclose(npy(a.grad), [1.0] * 3)
    # later gradients accumulate in place, like PyTorch (grad mode off)
    held = a.grad
    (a * 1).sum().backward()
    np.testing.assert_allclose(npy(held), [2.0] * 3)


def test_in_place_version_check_wording():
    b = T.ones(2, 3).requires_grad_()
    c = b * 2
    d = c * c
    c.mul_(2)
    with pytest.raises(RuntimeError) as ei:
        d.sum().backward()
    assert str(ei.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [2, 3]], which is output 0 of Mul, is at version 1; expected version 0 instead."
        + HINT)


def test_in_place_version_check_on_leaf_and_view_sharing_the_counter():
    b = T.from_numpy(np.ones((2, 3), dtype=np.float32)).requires_grad_()
    v = b._version
    d = b * b
    with T.no_grad():
        b.t().mul_(2)  # a view shares the version counter
    assert b._version == v + 1
    with pytest.raises(RuntimeError) as ei:
        d.sum().backward()
    assert str(ei.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.FloatTensor [2, 3]] is at version {v + 1}; expected version {v} instead." + HINT)


def test_saved_output_version_check():
    b = T.ones(3, dtype=T.float64).requires_grad_()
    r = (b + 0).relu()  # ReluBackward0 saves its result (an output: named after the saving node)
    r.add_(1)
    with pytest.raises(RuntimeError, match=r"\[torch.DoubleTensor \[3\]\], which is output 0 of Relu, "
                                           r"is at version 1; expected version 0"):
        r.sum().backward()


@needs_torch
def test_version_messages_match_torch():
    def run(lib_):
        b = lib_.ones(2, 3).requires_grad_()
        c = b * 2
        d = c * c
        c.mul_(2)
        try:
            d.sum().backward()
        except RuntimeError as e:
            return str(e)

    assert run(T) == run(torch)


def test_in_place_on_leaf_requiring_grad():
    a = leaf(3)
    with pytest.raises(RuntimeError) as ei:
        a.add_(1)
    assert str(ei.value) == "a leaf Variable that requires grad is being used in an in-place operation."
    with T.no_grad():
        a.add_(1)  # fine without grad mode (optimizer steps)
    assert a.is_leaf and a.requires_grad and a._version == 1


def test_in_place_rebases_history():
    a = leaf(3)
    x = T.zeros(3, dtype=T.float64)
    x.add_(a)  # x did not require grad; now it is a non-leaf with AddBackward0
    assert not x.is_leaf and x.grad_fn.name() == "AddBackward0"
    x.mul_(3)
    x.sum().backward()
    np.testing.assert_allclose(npy(a.grad), [3.0] * 3)


def test_out_variants_are_not_differentiable():
    a = leaf(3)
    out = T.empty(3, dtype=T.float64)
    with pytest.raises(RuntimeError) as ei:
        T.add(a, a, out=out)
    assert str(ei.value) == ("add(): functions with out=... arguments don't support automatic differentiation, "
                             "but one of the arguments requires grad.")
    with T.no_grad():
        T.add(a, a, out=out)
    assert out.grad_fn is None


def test_no_grad_records_nothing():
    a, b = leaf(3), leaf(3)
    with T.no_grad():
        y = a * b + a
        assert not T.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    assert T.is_grad_enabled()


def test_inference_mode_records_nothing():
    a = leaf(3)
    with T.inference_mode():
        y = a * 2
        assert T.is_inference_mode_enabled() and not T.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert not T.is_inference_mode_enabled()


def test_root_errors():
    x = T.ones(3)
    with pytest.raises(RuntimeError) as ei:
        x.sum().backward()
    assert str(ei.value) == "element 0 of tensors does not require grad and does not have a grad_fn"
    a = leaf(3)
    with pytest.raises(RuntimeError) as ei:
        (a * 2).backward()
    assert str(ei.value) == "grad can be implicitly created only for scalar outputs"
    with pytest.raises(RuntimeError) as ei:
        (a * 2).backward(T.ones(2, dtype=T.float64))
    assert str(ei.value) == ("Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] "
                             "has a shape of torch.Size([3]).")
    with pytest.raises(RuntimeError) as ei:
        T.autograd.backward([(a * 2).sum(), x.sum()])
    assert str(ei.value) == "element 1 of tensors does not require grad and does not have a grad_fn"
    with pytest.raises(RuntimeError, match="cannot be empty"):
        T.autograd.backward([(a * 2).sum()], inputs=[])


def test_backward_with_gradient_argument_and_multiple_roots():
    a = leaf(2, 2)
    y = a * 3
    g = T.from_numpy(np.array([[1.0, 2.0], [3.0, 4.0]]))
    y.backward(g)
    np.testing.assert_allclose(npy(a.grad), 3 * npy(g))
    b = leaf(2)
    T.autograd.backward([(b * 2).sum(), (b * b).sum()])
    np.testing.assert_allclose(npy(b.grad), 2 + 2 * npy(b))


def test_backward_inputs_only_accumulates_there():
    a, b = leaf(3), leaf(3)
    y = (a * b).sum()
    y.backward(inputs=[a])
    assert b.grad is None
    np.testing.assert_allclose(npy(a.grad), npy(b))
    # a non-leaf input gets its .grad too
    c = a * 2
    z = (c * b).sum()
    z.backward(inputs=[c])
    np.testing.assert_allclose(npy(c.grad), npy(b))
    np.testing.assert_allclose(npy(a.grad), npy(b))  # unchanged


def test_autograd_grad_allow_unused_and_materialize():
    a, b, unused = leaf(3), leaf(3), leaf(2)
    y = (a * b).sum()
    ga, gb = T.autograd.grad(y, [a, b], retain_graph=True)
    np.testing.assert_allclose(npy(ga), npy(b))
    np.testing.assert_allclose(npy(gb), npy(a))
    assert a.grad is None and b.grad is None  # grad() does not accumulate
    with pytest.raises(RuntimeError) as ei:
        T.autograd.grad(y, [a, unused], retain_graph=True)
    assert str(ei.value) == ("The differentiated Tensor at index 1 appears to not have been used in the graph. "
                             "Set allow_unused=True if this is the desired behavior.")
    r = T.autograd.grad(y, [a, unused], allow_unused=True, retain_graph=True)
    assert r[1] is None
    r = T.autograd.grad(y, [a, unused], materialize_grads=True, retain_graph=True)
    np.testing.assert_allclose(npy(r[1]), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        T.autograd.grad(y, [T.ones(3)], retain_graph=True)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        T.autograd.grad(y, [])


def test_autograd_grad_of_intermediate_and_of_output_itself():
    a = leaf(3)
    c = a * 2
    y = (c * c).sum()
    (gc_,) = T.autograd.grad(y, c, retain_graph=True)
    np.testing.assert_allclose(npy(gc_), 2 * npy(c))
    (gy,) = T.autograd.grad(y, y)
    assert gy.item() == 1.0


def test_create_graph_second_derivatives():
    x = T.from_numpy(np.array([1.0, -2.0, 3.0])).requires_grad_()
    y = (x * x * x).sum()
    (g,) = T.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(npy(g), 3 * npy(x) ** 2)
    (g2,) = T.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(npy(g2), 6 * npy(x))
    # backward(create_graph=True) leaves a differentiable .grad
    x2 = T.from_numpy(np.array([0.5, 2.0])).requires_grad_()
    (x2 * x2).sum().backward(create_graph=True)
    assert x2.grad.requires_grad
    (gg,) = T.autograd.grad(x2.grad.sum(), x2)
    np.testing.assert_allclose(npy(gg), [2.0, 2.0])


@pytest.mark.parametrize("name", ["add", "mul", "relu", "sum", "sum_dim", "mm"])
def test_gradgradcheck_basic_ops(name):
    fns = {
        "add": (lambda a, b: a + b, [(3, 4), (4,)]),
        "mul": (lambda a, b: a * b, [(3, 4), (3, 1)]),
        "relu": (lambda a: (a * a).relu() * a, [(3, 4)]),
        "sum": (lambda a: (a * a).sum(), [(3, 4)]),
        "sum_dim": (lambda a: (a * a).sum(1), [(3, 4)]),
        "mm": (lambda a, b: a.mm(b), [(3, 4), (4, 2)]),
    }
    fn, shapes = fns[name]
    inputs = [leaf(*s) for s in shapes]
    assert T.autograd.gradcheck(fn, inputs)
    assert T.autograd.gradgradcheck(fn, inputs)


def test_gradcheck_catches_a_wrong_backward():
    def wrong_double(x):
        # forward: 2 * x; recorded backward: 3 * grad (a hand-built node)
        y = x.detach() * 2
        n = make_node("WrongBackward", 1, [3.0])
        set_edges(n, [x])
        return attach(y, n)

    x = leaf(3)
    assert T.autograd.gradcheck(lambda t: t * 2, (x,))
    with pytest.raises(T.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        T.autograd.gradcheck(wrong_double, (x,))
    assert T.autograd.gradcheck(wrong_double, (x,), raise_exception=False) is False


def test_detach_and_detach_():
    a = leaf(3)
    y = a * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d.add_(1)  # shares storage and version counter
    assert y._version == 1
    np.testing.assert_allclose(npy(y), 2 * npy(a) + 1)
    y.detach_()
    assert y.is_leaf and not y.requires_grad
    assert a.data.requires_grad is False


def test_requires_grad_flags_and_errors():
    a = T.ones(3)
    assert not a.requires_grad
    a.requires_grad = True
    assert a.requires_grad and a.is_leaf
    a.requires_grad_(False)
    assert not a.requires_grad
    with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
        a.requires_grad = 1
    i = T.ones(3, dtype=T.int64)
    with pytest.raises(RuntimeError) as ei:
        i.requires_grad = True
    assert str(ei.value) == "only Tensors of floating point and complex dtype can require gradients"
    y = T.ones(3).requires_grad_() * 2
    with pytest.raises(RuntimeError) as ei:
        y.requires_grad = False
    assert str(ei.value) == ("you can only change requires_grad flags of leaf variables. If you want to use a "
                             "computed variable in a subgraph that doesn't require differentiation use "
                             "var_no_grad = var.detach().")
    with pytest.raises(RuntimeError) as ei:
        y.requires_grad = True
    assert str(ei.value) == "you can only change requires_grad flags of leaf variables."
    assert y.requires_grad_() is y  # True on a non-leaf: no-op
    with pytest.raises(RuntimeError) as ei:
        i.requires_grad_()
    assert str(ei.value) == "only Tensors of floating point dtype can require gradients"


def test_factory_requires_grad_and_repr():
    a = T.tensor([1.0, 2.0], requires_grad=True)
    assert a.requires_grad and a.is_leaf
    with pytest.raises(RuntimeError) as ei:
        T.tensor([1, 2], requires_grad=True)
    assert str(ei.value) == "Only Tensors of floating point and complex dtype can require gradients"
    assert repr(a) == "tensor([1., 2.], requires_grad=True)"
    assert repr(a * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr((a * 2).sum()) == "tensor(6., grad_fn=<SumBackward0>)"
    d = T.tensor([1.0], dtype=T.float64, requires_grad=True) + 1
    assert repr(d) == "tensor([2.], dtype=torchlet.float64, grad_fn=<AddBackward0>)"
    assert repr(a.detach()) == "tensor([1., 2.])"


def test_grad_setter_checks():
    a = leaf(2, 3)
    a.grad = T.ones(2, 3, dtype=T.float64)
    np.testing.assert_allclose(npy(a.grad), np.ones((2, 3)))
    a.grad = None
    assert a.grad is None
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type int"):
        a.grad = 3
    with pytest.raises(RuntimeError) as ei:
        a.grad = T.ones(3, dtype=T.float64)
    assert str(ei.value) == ("attempting to assign a gradient of size '[3]' to a tensor of size '[2, 3]'. "
                             "Please ensure that the gradient and the tensor are the same size")
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'float' to a tensor "
                                           "with grad_dtype 'Double'"):
        a.grad = T.ones(2, 3)
    del a.grad
    assert a.grad is None
    (a * 2).sum().backward()
    assert a.grad is a.grad  # one Python object per C gradient tensor


def test_retain_grad_and_non_leaf_grad_warning():
    a = leaf(3)
    y = a * 2
    z = a * 3
    y.retain_grad()
    assert y.retains_grad and not z.retains_grad
    (y * z).sum().backward()
    np.testing.assert_allclose(npy(y.grad), npy(z))
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert z.grad is None
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        T.ones(2).retain_grad()


def test_errors_inside_backward_leave_no_leak():
    base = live_nodes()
    for _ in range(20):
        b = T.ones(2, 3).requires_grad_()
        c = b * 2
        d = c * c
        c.mul_(2)
        with pytest.raises(RuntimeError):
            d.sum().backward()
    del b, c, d
    assert live_nodes() == base


def _rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
@pytest.mark.skipif(ASAN, reason="ASan quarantines freed memory")
def test_memory_flat_over_many_steps():
    a, b, c = T.ones(3).requires_grad_(), T.ones(3).requires_grad_(), T.ones(1).requires_grad_()
    base = live_nodes()
    for _ in range(2000):
        (a * b + c).sum().backward()
    r0 = _rss_mib()
    for _ in range(100_000):
        (a * b + c).sum().backward()
    grown = _rss_mib() - r0
    assert live_nodes() == base
    assert grown < 4.0, f"RSS grew by {grown:.1f} MiB over 1e5 steps"
    np.testing.assert_allclose(npy(a.grad), [102_000.0] * 3)


# ================================================================ views
def test_in_place_on_view_of_leaf_is_an_error():
    a = leaf(2, 3)
    with pytest.raises(RuntimeError) as ei:
        a[0].mul_(2)
    assert str(ei.value) == "a view of a leaf Variable that requires grad is being used in an in-place operation."
    with T.no_grad():
        a[0].mul_(2)  # fine without grad mode


def _views_case(lib_, a0, x0):
    """in-place ops on views of a non-leaf: base history goes through CopySlices"""
    a = lib_.from_numpy(a0.copy()).requires_grad_()
    x = lib_.from_numpy(x0.copy()).requires_grad_()
    b = a * 1
    b[0].mul_(3)                 # select view
    b.t()[1].mul_(x[:2] * 2)     # transposed view, in-place with a grad-requiring operand
    v2 = b[1]                    # a view taken after the in-place ops
    y = (b * b).sum() + (v2 * 5).sum()
    y.backward()
    return npy(a.grad) if lib_ is T else a.grad.numpy(), npy(x.grad) if lib_ is T else x.grad.numpy(), \
        b.grad_fn.name()


def test_in_place_on_views_matches_reference():
    a0 = rng.standard_normal((2, 3))
    x0 = rng.standard_normal(3)
    ga, gx, name = _views_case(T, a0, x0)
    assert name == "torch::autograd::CopySlices"
    # reference by hand: b = a with row 0 * 3 and column 1 * (2 x[:2]) elementwise over rows
    s = np.ones((2, 3))
    s[0] *= 3
    s[:, 1] *= 2 * x0[:2]
    b = a0 * s
    gb = 2 * b
    gb[1] += 5
    np.testing.assert_allclose(ga, gb * s)
    gx_ref = np.zeros(3)
    gx_ref[:2] = (gb[:, 1] * (b[:, 1] / (2 * x0[:2]))) * 2
    np.testing.assert_allclose(gx, gx_ref)
    if torch is not None:
        tga, tgx, tname = _views_case(torch, a0, x0)
        np.testing.assert_allclose(ga, tga)
        np.testing.assert_allclose(gx, tgx)
        assert tname == name


def test_view_grad_fn_regenerated_after_in_place():
    a = leaf(2, 3)
    b = a * 1
    v1, v2 = b[0], b[1]
    assert v2.grad_fn.name() == "SelectBackward0"
    v1.mul_(2)
    assert v1.grad_fn.name() == "AsStridedBackward0"
    assert v2.grad_fn.name() == "AsStridedBackward0"  # the shared version counter moved
    assert b.grad_fn.name() == "torch::autograd::CopySlices" and type(b.grad_fn).__name__ == "CopySlices"
    (v2 * 5).sum().backward()
    np.testing.assert_allclose(npy(a.grad), [[0.0] * 3, [5.0] * 3])


def test_view_graphs_leave_no_nodes_behind():
    base = live_nodes()
    for _ in range(50):
        a = leaf(2, 3)
        b = a * 1
        b[0].mul_(2)
        b.t()[1].add_(b[1][:2].detach())
        (b * b).sum().backward()
    del a, b
    assert live_nodes() == base


def test_concurrent_backward_into_a_shared_leaf():
    import threading

    a = T.ones(3, dtype=T.float64).requires_grad_()

    def work():
        for _ in range(300):
            (a * 2).sum().backward()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_allclose(npy(a.grad), [4 * 300 * 2.0] * 3)


def test_gradcheck_edge_cases():
    scalar = T.from_numpy(np.array(1.5)).requires_grad_()
    empty = T.from_numpy(np.zeros((0, 3))).requires_grad_()
    assert T.autograd.gradcheck(lambda a: a * a, (scalar,))
    assert T.autograd.gradgradcheck(lambda a: a * a, (scalar,))
    assert T.autograd.gradcheck(lambda a: a * 2, (empty,))
    x = leaf(3)
    assert T.autograd.gradcheck(lambda a: (a * 2, (a * a).sum()), (x,))  # several outputs
    assert T.autograd.gradcheck(lambda a, b: a * b, (x, T.ones(3, dtype=T.float64)))  # b: no grad
    with pytest.raises(T.autograd.GradcheckError, match="has a dimension with stride 0"):
        T.autograd.gradcheck(lambda a: a * 1, (x.detach().expand(2, 3).requires_grad_(),))
    with pytest.warns(UserWarning, match="is not a double precision floating point"):
        T.autograd.gradcheck(lambda a: a * 2, (T.ones(2).requires_grad_(),), eps=1e-2, atol=1e-2, rtol=1e-2)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        T.autograd.gradcheck(lambda a: a * 2, (T.ones(2, dtype=T.float64),))


def test_tracked_view_of_a_tensor_without_grad():
    # views taken while nothing required grad (tl_autograd_track_view, for view kernels that record no node)
    plain = T.zeros(2, 3, dtype=T.float64)
    w = leaf(3)
    v = plain[1]
    assert v.grad_fn is None
    assert lib.tl_autograd_track_view(v._p, plain._p) == 0
    v.add_(w * 2)
    assert plain.grad_fn.name() == "torch::autograd::CopySlices" and plain.requires_grad
    (plain * plain).sum().backward()
    np.testing.assert_allclose(npy(w.grad), 2 * 2 * npy(plain)[1])


def test_two_threads_backward_through_one_graph():
    import threading

    a, b = leaf(3), leaf(3)
    errors = []

    def run(y, retain):
        try:
            y.backward(retain_graph=retain)
        except RuntimeError as e:
            errors.append(str(e))

    y = (a * b).sum()
    ts = [threading.Thread(target=run, args=(y, True)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    np.testing.assert_allclose(npy(a.grad), 2 * npy(b))
    # without retain_graph one of the two finds the saved tensors released (never freed memory)
    a.grad = None
    y = (a * b).sum()
    ts = [threading.Thread(target=run, args=(y, False)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == [BACKWARD_TWICE]
    np.testing.assert_allclose(npy(a.grad), npy(b))


def test_right_deep_graph_grows_the_discovery_stack():
    # x0*2 + (x1*2 + (... + x299)): depth-first discovery keeps one pending
    # AccumulateGrad per level, past the engine's 64-entry inline stack
    xs = [T.tensor([float(i)], requires_grad=True) for i in range(300)]
    y = xs[-1]
    for x in reversed(xs[:-1]):
        y = x * 2.0 + y
    y.sum().backward()
    assert [x.grad.item() for x in xs] == [2.0] * 299 + [1.0]
