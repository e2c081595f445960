"""The CPU store policy (runtime/src/cpu_topology.c, docs/UFUNC.md "Stores"):
what the machine reports, the rule, the overrides, and that streamed loops
compute the same values as plain ones at every alignment and length."""
import os
import subprocess
import sys

import numpy as np
import pytest

import torchlet as tl

cpu = tl.backends.cpu


@pytest.fixture
def policy():
    """restores the policy in effect after a test that changes it"""
    saved = cpu.info()["policy"]
    yield
    cpu.set_store_policy(**saved)


def test_info_reports_the_machine():
    i = cpu.info()
    assert i["vendor"] and i["model"]
    assert i["capability"] in ("DEFAULT", "AVX2", "AVX512")
    assert i["capability"] == cpu.get_cpu_capability()
    assert i["cache_source"] in ("sysfs", "cpuid", "default")
    assert i["huge_pages"] in ("always", "madvise", "never", "unknown")
    if i["cache_source"] != "default":
        assert i["l2_bytes"] > 0
    d = i["derived"]
    assert d["stream_min_bytes"] > 0 and d["copy_stream_min_bytes"] > 0
    assert "store policy" in cpu.describe()


@pytest.mark.skipif(not os.path.exists("/proc/cpuinfo"), reason="no /proc/cpuinfo")
def test_hypervisor_bit_matches_the_kernel():
    flags = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")), None)
    if flags is None:
        pytest.skip("no x86 flags line")
    i = cpu.info()
    assert i["hypervisor"] == ("hypervisor" in flags)
    assert ("under a hypervisor" in cpu.describe()) == i["hypervisor"]


def test_rule_follows_the_caches():
    """Intel: from L2; otherwise from a share of L3 (never below the L2 rule)"""
    i = cpu.info()
    if i["l2_bytes"] <= 0 or sys.platform != "linux":
        pytest.skip("no cache sizes")
    d = i["derived"]
    l2, l3 = i["l2_bytes"], i["l3_bytes"]
    if i["vendor"] == "GenuineIntel" or l3 <= l2:
        assert d["stream_min_bytes"] == l2 + l2 // 2
        assert d["copy_stream_min_bytes"] == 2 * l2
    else:
        assert d["stream_min_bytes"] >= l2 + l2 // 2
        assert d["stream_min_bytes"] <= l3


def test_threads_rederive_the_share(policy):
    i = cpu.info()
    if i["vendor"] == "GenuineIntel" or i["l3_bytes"] <= i["l2_bytes"] or i["l3_shared_cpus"] < 2:
        pytest.skip("the per-thread share applies to a shared L3")
    old = tl.get_num_threads()
    try:
        tl.set_num_threads(1)
        one = cpu.info()["derived"]["stream_min_bytes"]
        tl.set_num_threads(2)
        two = cpu.info()["derived"]["stream_min_bytes"]
        floor = i["l2_bytes"] + i["l2_bytes"] // 2
        if i["hypervisor"]:
            assert two == one                    # a VM's vCPUs may each have an L3 of their own
        else:
            assert two == max(one // 2, floor)   # two threads each move half of the working set
    finally:
        tl.set_num_threads(old)


def test_set_store_policy_validates(policy):
    with pytest.raises(ValueError):
        cpu.set_store_policy(stream_min_bytes=-1)
    cpu.set_store_policy(stream_min_bytes=123456, prefetch=False)
    p = cpu.info()["policy"]
    assert p["stream_min_bytes"] == 123456 and p["prefetch"] is False


def test_environment_overrides():
    code = ("import torchlet as tl; p = tl.backends.cpu.info()['policy']; "
            "print(p['stream_min_bytes'], p['copy_stream_min_bytes'], int(p['prefetch']))")
    env = dict(os.environ, TORCHLET_STREAM_MIN_BYTES="4096", TORCHLET_COPY_STREAM_MIN_BYTES="8192",
               TORCHLET_CPU_PREFETCH="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["4096", "8192", "0"]


DTYPES = [np.float32, np.float64, np.float16, np.int32, np.uint8, np.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [0, 1, 15, 17, 255, 256, 257, 1000, 4099])
def test_streamed_loops_match_plain(policy, dtype, n):
    """every store forced through the streamed path (threshold 0): the head
    before the first 64-byte boundary, whole chunks, the tail; outputs at
    every offset within a line"""
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n + 16) * 8).astype(dtype)
    b = (rng.standard_normal(n + 16) * 8).astype(dtype)
    ta, tb = tl.from_numpy(a), tl.from_numpy(b)
    for off in (0, 1, 3, 8):
        cpu.set_store_policy(stream_min_bytes=1 << 62)
        plain = tl.add(ta[off:off + n], tb[:n])
        out_plain = tl.zeros(n + 16, dtype=plain.dtype)
        tl.add(ta[off:off + n], tb[:n], out=out_plain[off:off + n])
        cpu.set_store_policy(stream_min_bytes=0)
        streamed = tl.add(ta[off:off + n], tb[:n])
        out = tl.zeros(n + 16, dtype=plain.dtype)
        tl.add(ta[off:off + n], tb[:n], out=out[off:off + n])
        np.testing.assert_array_equal(streamed.numpy(), plain.numpy())
        np.testing.assert_array_equal(out.numpy(), out_plain.numpy())
        if dtype in (np.float32, np.float64):
            np.testing.assert_allclose(streamed.numpy(), a[off:off + n] + b[:n], rtol=1e-6)


@pytest.mark.parametrize("n", [0, 5, 100, 4097])
def test_streamed_copy_and_transposed_walk(policy, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    cpu.set_store_policy(stream_min_bytes=0, copy_stream_min_bytes=0)
    tx = tl.from_numpy(x)
    np.testing.assert_array_equal(tx.clone().numpy(), x)
    np.testing.assert_array_equal(tx.t().contiguous().numpy(), x.T)
    sq = rng.standard_normal((67, 67)).astype(np.float32)
    tsq = tl.from_numpy(sq)
    np.testing.assert_allclose((tsq + tsq.t()).numpy(), sq + sq.T, rtol=1e-6)
