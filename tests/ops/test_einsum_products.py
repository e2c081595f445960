"""einsum, tensordot, inner, kron, linalg.vecdot / diagonal / multi_dot /
vander, diff, cov, corrcoef: against numpy always and PyTorch when installed;
odd shapes, 0-dim, empty, non-contiguous operands; PyTorch's error texts;
gradcheck through the composites."""
import numpy as np
import pytest

import torchlet as tl
from torchlet.autograd import gradcheck

torch = None
try:
    import torch  # noqa: F811
except ImportError:  # pragma: no cover
    pass

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")


def tn(x):
    return np.asarray(x.numpy())


def rnd(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)


def T(a):
    return tl.from_numpy(np.array(a, order="C"))


# ---------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->", [(3, 5)]),
    ("ij->ji", [(3, 5)]),
    ("i,i", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("ijk,ikj->i", [(2, 3, 3), (2, 3, 3)]),
    ("i,i,i->i", [(5,), (5,), (5,)]),
    ("ab,ab->", [(0, 3), (0, 3)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("a b , b c -> a c", [(2, 3), (3, 4)]),
    ("...,...->...", [(), (3,)]),
    ("ij,j->i", [(4, 1), (3,)]),  # a broadcast size-1 label
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_matches_numpy(eq, shapes):
    arrs = [rnd(*s, seed=i) for i, s in enumerate(shapes)]
    got = tl.einsum(eq, *[T(a) for a in arrs])
    if eq == "ij,j->i":
        want = np.einsum("ij,j->i", np.broadcast_to(arrs[0], (4, 3)), arrs[1])
    elif eq.startswith("...ij,...jk") and shapes[0] == (2, 1, 3, 4):
        want = np.einsum("...ij,...jk->...ik", *arrs)
    else:
        want = np.einsum(eq.replace(" ", ""), *arrs)
    np.testing.assert_allclose(tn(got), want, rtol=1e-12, atol=1e-12)


def test_einsum_noncontiguous_and_list_forms():
    a, b = rnd(5, 4), rnd(3, 5)
    ta, tb = T(a).t(), T(b).t()  # transposed views
    np.testing.assert_allclose(tn(tl.einsum("ij,jk->ik", ta, tb)), a.T @ b.T, rtol=1e-12)
    np.testing.assert_allclose(tn(tl.einsum("ij,jk->ik", [ta, tb])), a.T @ b.T, rtol=1e-12)
    # sublist format: subscripts as integers, Ellipsis for "..."
    np.testing.assert_allclose(tn(tl.einsum(ta, [0, 1], tb, [1, 2], [0, 2])), a.T @ b.T, rtol=1e-12)
    np.testing.assert_allclose(tn(tl.einsum(T(rnd(2, 4, 4)), [Ellipsis, 0, 0])),
                               np.einsum("...ii", rnd(2, 4, 4)), rtol=1e-12)  # implicit: a trace


def test_einsum_float32_and_int():
    a, b = rnd(3, 4, 5, dtype=np.float32), rnd(3, 5, 6, dtype=np.float32)
    r = tl.einsum("bij,bjk->bik", T(a), T(b))
    assert r.dtype == tl.float32
    np.testing.assert_allclose(tn(r), a @ b, rtol=1e-5, atol=1e-5)
    ai = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(tn(tl.einsum("ij,kj->ik", T(ai), T(ai))), ai @ ai.T)


@pytest.mark.parametrize("eq,shapes,msg", [
    ("ij,jk", [(2, 3)], "fewer operands were provided than specified in the equation"),
    ("ij", [(2, 3), (3, 2)], "more operands were provided than specified in the equation"),
    ("ijk", [(2, 3)], "the number of subscripts in the equation (3) does not match the number of dimensions (2) "
                      "for operand 0 and no ellipsis was given"),
    ("i1", [(2, 3)], "invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"),
    ("ij->k", [(2, 3)], "output subscript k does not appear in the equation for any input operand"),
    ("ij->ii", [(2, 3)], "output subscript i appears more than once in the output"),
    ("ii->i", [(2, 3)], "subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    ("ij,jk", [(2, 3), (4, 5)], "subscript j has size 4 for operand 1 which does not broadcast with previously seen "
                                "size 3"),
    ("i.j", [(2, 3)], "found '.' for operand 0 that is not part of any ellipsis"),
])
def test_einsum_errors(eq, shapes, msg):
    ops = [T(rnd(*s)) for s in shapes]
    with pytest.raises(RuntimeError) as e:
        tl.einsum(eq, *ops)
    assert str(e.value) == "einsum(): " + msg
    if torch is not None:
        with pytest.raises(RuntimeError) as et:
            torch.einsum(eq, *[torch.from_numpy(tn(o)) for o in ops])
        assert str(et.value) == str(e.value)


def test_einsum_no_operand():
    with pytest.raises(ValueError, match="must specify the equation string"):
        tl.einsum("ij")


def test_einsum_path():
    a, b, c = rnd(2, 3), rnd(3, 4), rnd(4, 5)
    r = tl._C._VF_einsum if hasattr(tl._C, "_VF_einsum") else None
    assert r is None
    got = tl.ops.aten.einsum.default("ij,jk,kl->il", [T(a), T(b), T(c)], path=[1, 2, 0, 1])
    np.testing.assert_allclose(tn(got), a @ b @ c, rtol=1e-12)


def test_einsum_grad():
    a = T(rnd(2, 3, 3)).requires_grad_()
    b = T(rnd(3, 4)).requires_grad_()
    assert gradcheck(lambda x, y: tl.einsum("bii,ij->bj", x, y), (a, b))
    assert gradcheck(lambda x, y: tl.einsum("bij,jk->bik", x, y), (a, b))


# ---------------------------------------------------------------- tensordot / inner / kron


@pytest.mark.parametrize("sa,sb,dims", [((3, 4, 5), (4, 5, 6), 2), ((3, 4, 5), (5, 4, 2), ([1, 2], [1, 0])),
                                        ((3, 4), (4, 3), 0), ((2, 3), (3, 2), ([-1], [0])),
                                        ((3, 1, 5), (4, 5), ([1, 2], [0, 1]))])
def test_tensordot(sa, sb, dims):
    a, b = rnd(*sa), rnd(*sb, seed=1)
    got = tl.tensordot(T(a), T(b), dims=dims)
    if sa == (3, 1, 5):
        want = np.tensordot(np.broadcast_to(a, (3, 4, 5)), b, axes=([1, 2], [0, 1]))
    else:
        want = np.tensordot(a, b, axes=dims)
    np.testing.assert_allclose(tn(got), want, rtol=1e-12)


def test_tensordot_tensor_dims_out_and_errors():
    a, b = rnd(3, 4), rnd(4, 5)
    np.testing.assert_allclose(tn(tl.tensordot(T(a), T(b), dims=tl.tensor(1))), a @ b, rtol=1e-12)
    out = tl.empty(0, dtype=tl.float64)
    tl.tensordot(T(a), T(b), dims=1, out=out)
    np.testing.assert_allclose(tn(out), a @ b, rtol=1e-12)
    with pytest.raises(RuntimeError, match="Expected the output tensor to have dtype Double, but got an output "
                                           "tensor with dtype Float"):
        tl.tensordot(T(a), T(b), dims=1, out=tl.empty(0))
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has size 4 in dim 1 and "
                                           "second has size 5 in dim 1"):
        tl.tensordot(T(a), T(b), dims=([1], [1]))
    with pytest.raises(RuntimeError, match="tensordot expects dims >= 0"):
        tl.tensordot(T(a), T(b), dims=-1)
    with pytest.raises(RuntimeError, match="both inputs should have same dtype"):
        tl.tensordot(T(a), T(b.astype(np.float32)), dims=1)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (4, 3)), ((2, 3, 4), (4,)), ((), (3, 2)), ((2, 0), (3, 0))])
def test_inner(sa, sb):
    a, b = rnd(*sa), rnd(*sb, seed=1)
    np.testing.assert_allclose(tn(tl.inner(T(a), T(b))), np.inner(a, b), rtol=1e-12)
    np.testing.assert_allclose(tn(T(a).inner(T(b))), np.inner(a, b), rtol=1e-12)


def test_inner_errors_and_out():
    with pytest.raises(RuntimeError, match=r"inner\(\) the last dimension must match on both input tensors but got "
                                           r"shapes \[2, 3\] and \[4\]"):
        tl.inner(T(rnd(2, 3)), T(rnd(4)))
    out = tl.empty(5, dtype=tl.float64)
    a, b = rnd(2, 3), rnd(3)
    tl.inner(T(a), T(b), out=out)
    np.testing.assert_allclose(tn(out), np.inner(a, b), rtol=1e-12)


@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((3,), (2, 2)), ((2, 1, 3), (3, 2)), ((), (3,)), ((0, 2), (2, 2))])
def test_kron(sa, sb):
    a, b = rnd(*sa), rnd(*sb, seed=1)
    np.testing.assert_allclose(tn(tl.kron(T(a), T(b))), np.kron(a, b), rtol=1e-12)
    out = tl.empty(0, dtype=tl.float64)
    tl.kron(T(a), T(b), out=out)
    np.testing.assert_allclose(tn(out), np.kron(a, b), rtol=1e-12)


def test_products_grad():
    a = T(rnd(2, 3)).requires_grad_()
    b = T(rnd(3, 4)).requires_grad_()
    c = T(rnd(4, 3)).requires_grad_()
    assert gradcheck(lambda x, y: tl.tensordot(x, y, dims=1), (a, b))
    assert gradcheck(lambda x, y: tl.inner(x, y), (a, c))
    assert gradcheck(lambda x, y: tl.kron(x, y), (a, b))
    assert gradcheck(lambda x, y: tl.linalg.vecdot(x, y), (a, T(rnd(2, 3, seed=5)).requires_grad_()))


# ---------------------------------------------------------------- linalg


def test_vecdot_and_diagonal():
    a, b = rnd(4, 3), rnd(3)
    np.testing.assert_allclose(tn(tl.linalg.vecdot(T(a), T(b))), a @ b, rtol=1e-12)
    np.testing.assert_allclose(tn(tl.linalg.vecdot(T(a), T(a), dim=0)), (a * a).sum(0), rtol=1e-12)
    with pytest.raises(RuntimeError, match="linalg.vecdot: Expected a floating point or complex tensor as input. "
                                           "Got Long"):
        tl.linalg.vecdot(tl.ones(3, dtype=tl.int64), tl.ones(3, dtype=tl.int64))
    x = rnd(2, 4, 5)
    np.testing.assert_array_equal(tn(tl.linalg.diagonal(T(x))), np.diagonal(x, 0, -2, -1))
    np.testing.assert_array_equal(tn(tl.linalg.diagonal(T(x), offset=1, dim1=0, dim2=2)), np.diagonal(x, 1, 0, 2))


@pytest.mark.parametrize("shapes", [[(3,), (3, 4)], [(2, 3), (3, 4), (4,)], [(5, 2), (2, 30), (30, 3), (3, 7)],
                                    [(6,), (6, 2), (2, 9), (9, 4), (4, 3), (3,)]])
def test_multi_dot(shapes):
    arrs = [rnd(*s, seed=i) for i, s in enumerate(shapes)]
    got = tl.linalg.multi_dot([T(a) for a in arrs])
    np.testing.assert_allclose(tn(got), np.linalg.multi_dot(arrs), rtol=1e-10)


def test_multi_dot_errors():
    with pytest.raises(RuntimeError, match="multi_dot\\(\\): expected at least 2 tensors but got 1"):
        tl.linalg.multi_dot([T(rnd(2, 2))])
    with pytest.raises(RuntimeError, match=r"tensors 0 and 1 with shapes \[2, 3\] and \[4, 2\] cannot be multiplied"):
        tl.linalg.multi_dot([T(rnd(2, 3)), T(rnd(4, 2))])


def test_vander():
    x = rnd(5)
    np.testing.assert_allclose(tn(tl.linalg.vander(T(x))), np.vander(x, increasing=True), rtol=1e-12)
    np.testing.assert_allclose(tn(tl.linalg.vander(T(x), N=3)), np.vander(x, 3, increasing=True), rtol=1e-12)
    xi = np.arange(1, 4)
    np.testing.assert_array_equal(tn(tl.linalg.vander(T(xi))), np.vander(xi, increasing=True))
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        tl.linalg.vander(T(x), N=1)
    assert gradcheck(lambda t: tl.linalg.vander(t), (T(x).requires_grad_(),))


# ---------------------------------------------------------------- diff / cov / corrcoef


@pytest.mark.parametrize("shape,n,dim", [((7,), 1, -1), ((4, 6), 2, 1), ((4, 6), 3, 0), ((5,), 9, 0), ((3, 0), 1, 1)])
def test_diff(shape, n, dim):
    a = rnd(*shape)
    np.testing.assert_allclose(tn(tl.diff(T(a), n=n, dim=dim)), np.diff(a, n=n, axis=dim), rtol=1e-12)


def test_diff_prepend_append_bool_and_errors():
    a, p, q = rnd(3, 4), rnd(3, 1), rnd(3, 2)
    np.testing.assert_allclose(tn(tl.diff(T(a), prepend=T(p), append=T(q))),
                               np.diff(a, prepend=p, append=q), rtol=1e-12)
    b = np.array([True, False, False, True])
    np.testing.assert_array_equal(tn(tl.diff(T(b))), np.diff(b))
    np.testing.assert_array_equal(tn(tl.diff(T(a), n=0)), a)
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        tl.diff(tl.tensor(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        tl.diff(T(a), n=-1)
    with pytest.raises(RuntimeError, match=r"input.size\(0\) = 3, but got tensor.size\(0\) = 2"):
        tl.diff(T(a), prepend=T(rnd(2, 1)))
    assert gradcheck(lambda t, u: tl.diff(t, n=2, append=u), (T(a).requires_grad_(), T(q).requires_grad_()))


@pytest.mark.parametrize("shape", [(3, 7), (7,), (1, 5), (4, 2)])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_cov_corrcoef(shape, correction):
    a = rnd(*shape)
    np.testing.assert_allclose(tn(tl.cov(T(a), correction=correction)), np.cov(a, ddof=correction), rtol=1e-10)
    np.testing.assert_allclose(tn(tl.corrcoef(T(a))), np.corrcoef(a), rtol=1e-10)


def test_cov_weights():
    a = rnd(3, 6)
    fw = np.array([1, 2, 0, 3, 1, 1])
    aw = np.abs(rnd(6, seed=3))
    for c in (0, 1):
        np.testing.assert_allclose(tn(tl.cov(T(a), correction=c, fweights=T(fw), aweights=T(aw))),
                                   np.cov(a, ddof=c, fweights=fw, aweights=aw), rtol=1e-10)
        np.testing.assert_allclose(tn(tl.cov(T(a), correction=c, aweights=T(aw))),
                                   np.cov(a, ddof=c, aweights=aw), rtol=1e-10)
    with pytest.raises(RuntimeError, match="cov\\(\\): fweights cannot be negative"):
        tl.cov(T(a), fweights=T(-fw))
    with pytest.raises(RuntimeError, match="expected fweights to have integral dtype but got fweights with Double"):
        tl.cov(T(a), fweights=T(aw))
    with pytest.raises(RuntimeError, match="expected input to have two or fewer dimensions"):
        tl.cov(T(rnd(2, 2, 2)))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        tl.cov(T(rnd(2, 1)))
    assert gradcheck(lambda t, w: tl.cov(t, aweights=w), (T(a).requires_grad_(), T(aw).requires_grad_()))
    assert gradcheck(lambda t: tl.corrcoef(t), (T(a).requires_grad_(),))


# ---------------------------------------------------------------- torch


@needs_torch
def test_against_torch():
    a, b = rnd(3, 4, 5), rnd(3, 5, 2)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    np.testing.assert_allclose(tn(tl.einsum("bij,bjk->bik", T(a), T(b))),
                               torch.einsum("bij,bjk->bik", ta, tb).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tn(tl.einsum("bij->j", T(a))), torch.einsum("bij->j", ta).numpy(), rtol=1e-12)
    x = rnd(4, 9)
    tx = torch.from_numpy(x)
    np.testing.assert_allclose(tn(tl.cov(T(x))), torch.cov(tx).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tn(tl.corrcoef(T(x))), torch.corrcoef(tx).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tn(tl.diff(T(x), n=2, dim=0)), torch.diff(tx, n=2, dim=0).numpy(), rtol=1e-12)
    np.testing.assert_allclose(tn(tl.kron(T(x), T(a[0]))), torch.kron(tx, ta[0]).numpy(), rtol=1e-12)
    assert tl.cov(T(np.arange(6).reshape(2, 3))).dtype == tl.float32  # int input: true_divide
    assert torch.cov(torch.arange(6).reshape(2, 3)).dtype == torch.float32


# ---------------------------------------------------------------- addmv / addr / addbmm


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5)])
def test_addmv_addr_addbmm(beta, alpha):
    s, m, v = rnd(4), rnd(4, 3), rnd(3, seed=1)
    np.testing.assert_allclose(tn(tl.addmv(T(s), T(m), T(v), beta=beta, alpha=alpha)),
                               beta * s + alpha * (m @ v), rtol=1e-12)
    s2, v1, v2 = rnd(4, 5), rnd(4, seed=2), rnd(5, seed=3)
    np.testing.assert_allclose(tn(tl.addr(T(s2), T(v1), T(v2), beta=beta, alpha=alpha)),
                               beta * s2 + alpha * np.outer(v1, v2), rtol=1e-12)
    b1, b2 = rnd(3, 4, 2), rnd(3, 2, 5, seed=4)
    np.testing.assert_allclose(tn(tl.addbmm(T(s2), T(b1), T(b2), beta=beta, alpha=alpha)),
                               beta * s2 + alpha * np.einsum("bij,bjk->ik", b1, b2), rtol=1e-12)
    # broadcast self, method forms
    np.testing.assert_allclose(tn(T(rnd(1)).addmv(T(m), T(v))), rnd(1) + m @ v, rtol=1e-12)
    np.testing.assert_allclose(tn(T(rnd(5)).addbmm(T(b1), T(b2))), rnd(5) + np.einsum("bij,bjk->ik", b1, b2),
                               rtol=1e-12)


def test_beta_zero_ignores_nan():
    nan4 = np.full(4, np.nan)
    m, v = rnd(4, 3), rnd(3)
    np.testing.assert_allclose(tn(tl.addmv(T(nan4), T(m), T(v), beta=0)), m @ v, rtol=1e-12)
    np.testing.assert_allclose(tn(tl.addr(T(np.full((4, 3), np.nan)), T(rnd(4)), T(v), beta=0)),
                               np.outer(rnd(4), v), rtol=1e-12)
    b1, b2 = rnd(2, 4, 3), rnd(2, 3, 2)
    np.testing.assert_allclose(tn(tl.addbmm(T(np.full((4, 2), np.nan)), T(b1), T(b2), beta=0)),
                               np.einsum("bij,bjk->ik", b1, b2), rtol=1e-12)


def test_add_products_errors_and_grad():
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected, got 1, 1, 1"):
        tl.addmv(T(rnd(3)), T(rnd(3)), T(rnd(3)))
    with pytest.raises(RuntimeError, match="size mismatch, got input \\(3\\), mat \\(2x3\\), vec \\(3\\)"):
        tl.addmv(T(rnd(3)), T(rnd(2, 3)), T(rnd(3)))
    with pytest.raises(RuntimeError, match="addr: Expected 1-D argument vec1, but got 2-D"):
        tl.addr(T(rnd(2, 2)), T(rnd(2, 2)), T(rnd(2)))
    with pytest.raises(RuntimeError, match="batch1 and batch2 must have same number of batches, got 2 and 3"):
        tl.addbmm(T(rnd(4, 2)), T(rnd(2, 4, 3)), T(rnd(3, 3, 2)))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes for bmm \\(4x3 and 2x2\\)"):
        tl.addbmm(T(rnd(4, 2)), T(rnd(2, 4, 3)), T(rnd(2, 2, 2)))
    with pytest.raises(RuntimeError, match="For integral input tensors, argument beta must not be a floating point"):
        tl.addr(tl.ones(2, 2, dtype=tl.int64), tl.ones(2, dtype=tl.int64), tl.ones(2, dtype=tl.int64), beta=0.5)
    s, m, v = (T(x).requires_grad_() for x in (rnd(4), rnd(4, 3), rnd(3, seed=1)))
    assert gradcheck(lambda a, b, c: tl.addmv(a, b, c, beta=0.5, alpha=2.0), (s, m, v))
    s2, v1, v2 = (T(x).requires_grad_() for x in (rnd(4, 3), rnd(4, seed=2), rnd(3, seed=3)))
    assert gradcheck(lambda a, b, c: tl.addr(a, b, c, beta=0.5, alpha=2.0), (s2, v1, v2))
    b1, b2 = T(rnd(2, 4, 5)).requires_grad_(), T(rnd(2, 5, 3, seed=4)).requires_grad_()
    assert gradcheck(lambda a, b, c: tl.addbmm(a, b, c, beta=0.5, alpha=2.0), (s2, b1, b2))


# ---------------------------------------------------------------- cross / dist


def test_cross():
    a, b = rnd(4, 3), rnd(4, 3, seed=1)
    np.testing.assert_allclose(tn(tl.linalg.cross(T(a), T(b))), np.cross(a, b), rtol=1e-12)
    np.testing.assert_allclose(tn(tl.cross(T(a.T.copy()), T(b.T.copy()), dim=0)), np.cross(a, b).T, rtol=1e-12)
    np.testing.assert_allclose(tn(tl.linalg.cross(T(rnd(1, 3)), T(b))), np.cross(rnd(1, 3), b), rtol=1e-12)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        r = tl.cross(T(a), T(b))
    np.testing.assert_allclose(tn(r), np.cross(a, b), rtol=1e-12)
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"):
        tl.linalg.cross(T(rnd(3, 2)), T(rnd(3, 2)))
    with pytest.raises(RuntimeError, match="linalg.cross: inputs must have the same number of dimensions."):
        tl.linalg.cross(T(rnd(3)), T(rnd(2, 3)))
    assert gradcheck(lambda x, y: tl.linalg.cross(x, y), (T(a).requires_grad_(), T(b).requires_grad_()))


@pytest.mark.parametrize("p", [2, 1, 3.5, 0, float("inf")])
def test_dist(p):
    a, b = rnd(3, 4), rnd(4, seed=1)
    want = np.linalg.norm((a - b).ravel(), ord=p)
    np.testing.assert_allclose(float(tl.dist(T(a), T(b), p).item()), want, rtol=1e-12)
    np.testing.assert_allclose(float(T(a).dist(T(b), p=p).item()), want, rtol=1e-12)
    if p != 0:
        assert gradcheck(lambda x, y: tl.dist(x, y, p), (T(a).requires_grad_(), T(b).requires_grad_()))


# ---------------------------------------------------------------- cdist / pdist


def np_cdist(a, b, p):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (d != 0).sum(-1).astype(a.dtype)
    if np.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, 0.5, float("inf")])
@pytest.mark.parametrize("r1,r2", [(4, 5), (30, 7)])  # 30 rows: the mm-based path for p = 2
def test_cdist(p, r1, r2):
    a, b = rnd(2, r1, 6), rnd(r2, 6, seed=1)
    got = tl.cdist(T(a), T(b), p=p)
    np.testing.assert_allclose(tn(got), np_cdist(a, b, p), rtol=1e-9, atol=1e-9)
    if p not in (0.0,):
        assert gradcheck(lambda x, y: tl.cdist(x, y, p=p), (T(a[:, :3]).requires_grad_(), T(b[:4]).requires_grad_()))


def test_cdist_modes_float32_errors():
    a, b = rnd(40, 8, dtype=np.float32), rnd(30, 8, seed=1, dtype=np.float32)
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        r = tl.cdist(T(a), T(b), compute_mode=mode)
        assert r.dtype == tl.float32
        np.testing.assert_allclose(tn(r), np_cdist(a.astype(np.float64), b.astype(np.float64), 2.0), rtol=1e-4,
                                   atol=1e-4)
    assert tuple(tl.cdist(T(rnd(0, 3)), T(rnd(4, 3))).shape) == (0, 4)
    with pytest.raises(ValueError, match="bad is not a valid value for compute_mode"):
        tl.cdist(T(a), T(b), compute_mode="bad")
    with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: 1D"):
        tl.cdist(T(rnd(3)), T(rnd(2, 3)))
    with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns. X1: 3 X2: 4"):
        tl.cdist(T(rnd(2, 3)), T(rnd(2, 4)))
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        tl.cdist(T(rnd(2, 3)), T(rnd(2, 3)), p=-1.0)


def test_cdist_transposed_input():
    a = rnd(6, 5)
    ta = T(a).t()  # [5, 6], non-contiguous
    b = rnd(3, 6, seed=2)
    np.testing.assert_allclose(tn(tl.cdist(ta, T(b), p=1.0)), np_cdist(a.T, b, 1.0), rtol=1e-12)


@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, float("inf")])
def test_pdist(p):
    a = rnd(5, 4)
    iu = np.triu_indices(5, 1)
    want = np_cdist(a, a, p)[iu]
    np.testing.assert_allclose(tn(tl.nn.functional.pdist(T(a), p=p)), want, rtol=1e-10, atol=1e-12)
    if p != 0.0:
        assert gradcheck(lambda x: tl.nn.functional.pdist(x, p=p), (T(a).requires_grad_(),))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        tl.nn.functional.pdist(T(rnd(3)))


def test_add_products_inplace_and_out():
    s, m, v = rnd(4), rnd(4, 3), rnd(3, seed=1)
    t = T(s)
    r = t.addmv_(T(m), T(v), beta=0.5, alpha=2.0)
    assert r is t or r.data_ptr() == t.data_ptr()
    np.testing.assert_allclose(tn(t), 0.5 * s + 2.0 * (m @ v), rtol=1e-12)
    out = tl.empty(0, dtype=tl.float64)
    tl.addmv(T(s), T(m), T(v), out=out)
    np.testing.assert_allclose(tn(out), s + m @ v, rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"Bad in-place call: input tensor size \[1\] and output tensor size \[4\] "
                                           r"should match"):
        T(rnd(1)).addmv_(T(m), T(v))
    s2, v1, v2 = rnd(4, 3), rnd(4, seed=2), rnd(3, seed=3)
    t2 = T(s2)
    t2.addr_(T(v1), T(v2), alpha=-1)
    np.testing.assert_allclose(tn(t2), s2 - np.outer(v1, v2), rtol=1e-12)
    out = tl.empty(0, dtype=tl.float64)
    tl.addr(T(s2), T(v1), T(v2), beta=2, out=out)
    np.testing.assert_allclose(tn(out), 2 * s2 + np.outer(v1, v2), rtol=1e-12)
    b1, b2 = rnd(2, 4, 5), rnd(2, 5, 3, seed=4)
    t3 = T(s2)
    t3.addbmm_(T(b1), T(b2))
    np.testing.assert_allclose(tn(t3), s2 + np.einsum("bij,bjk->ik", b1, b2), rtol=1e-12)
    out = tl.empty(0, dtype=tl.float64)
    tl.addbmm(T(s2), T(b1), T(b2), out=out)
    np.testing.assert_allclose(tn(out), s2 + np.einsum("bij,bjk->ik", b1, b2), rtol=1e-12)
    a, b = rnd(4, 3), rnd(4, 3, seed=1)
    out = tl.empty(0, dtype=tl.float64)
    tl.linalg.cross(T(a), T(b), out=out)
    np.testing.assert_allclose(tn(out), np.cross(a, b), rtol=1e-12)
    out2 = tl.empty(0, dtype=tl.float64)
    tl.cross(T(a), T(b), dim=1, out=out2)
    np.testing.assert_allclose(tn(out2), np.cross(a, b), rtol=1e-12)


@needs_torch
def test_add_products_inplace_errors_like_torch():
    m, v = rnd(4, 3), rnd(3)
    with pytest.raises(RuntimeError) as e:
        T(rnd(1)).addmv_(T(m), T(v))
    with pytest.raises(RuntimeError) as et:
        torch.from_numpy(rnd(1)).addmv_(torch.from_numpy(m), torch.from_numpy(v))
    assert str(e.value) == str(et.value)


def test_diff_out():
    a = rnd(3, 5)
    out = tl.empty(0, dtype=tl.float64)
    tl.diff(T(a), n=2, dim=1, out=out)
    np.testing.assert_allclose(tn(out), np.diff(a, n=2, axis=1), rtol=1e-12)
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired output type Long"):
        tl.diff(T(a), out=tl.empty(0, dtype=tl.int64))
