"""The CUDA runtime end to end on the fake driver (tests/cuda/fake_driver):
devices, tensors on cuda, copies, fills, the caching allocator seen from
Python, streams and events, launches, and the errors PyTorch gives. Every test
runs its snippet in a fresh process (run_cuda) because the runtime loads the
driver once per process."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore")


def test_devices(run_cuda):
    out = run_cuda("""
        c = torchlet.cuda
        assert c.is_available() and c.device_count() == 2
        assert c.get_device_capability() == (9, 0) and c.get_device_capability("cuda:1") == (9, 0)
        assert c.get_device_name(1) == "Fake CUDA Device 1 (torchlet test driver)", c.get_device_name(1)
        assert c.driver_version() == 13000
        assert counter("proc_version") == 12000      # entry points resolved at the pinned API version
        assert c.current_device() == 0
        c.set_device(1)
        assert c.current_device() == 1
        with c.device(0):
            assert c.current_device() == 0
        assert c.current_device() == 1
        c.set_device("cuda:0")
        try:
            c.set_device(7)
        except RuntimeError as e:
            assert "CUDA error: invalid device ordinal" in str(e), e
        else:
            raise AssertionError("set_device(7) did not raise")
        try:
            torchlet.zeros(2, device="cuda:5")
        except RuntimeError as e:
            assert "invalid device ordinal" in str(e), e
        else:
            raise AssertionError
        c.synchronize(); c.synchronize(1)
        print("ok")
    """)
    assert out.strip() == "ok"
    out = run_cuda("""
        print(torchlet.cuda.device_count(), torchlet.cuda.get_device_capability())
    """, FAKE_CUDA_DEVICES=3, FAKE_CUDA_CC="8.6")
    assert out.split() == ["3", "(8,", "6)"]


def test_tensors_on_cuda(run_cuda):
    run_cuda("""
        fake.fake_is_device_ptr.argtypes = [ctypes.c_ulonglong, ctypes.c_ulonglong]
        x = torchlet.zeros(3, 4, device="cuda")
        assert x.device == torchlet.device("cuda:0") and str(x.device) == "cuda:0" and x.is_cuda and not x.is_cpu
        assert x.get_device() == 0 and torchlet.zeros(2).get_device() == -1
        assert fake.fake_is_device_ptr(x.data_ptr(), 48) == 0       # the bytes live in fake device memory
        y = torchlet.ones(2, 3, dtype=torchlet.int32, device="cuda:1")
        assert y.device.index == 1 and fake.fake_is_device_ptr(y.data_ptr(), 24) == 1
        assert y.cpu().tolist() == [[1, 1, 1], [1, 1, 1]] and y.tolist() == [[1, 1, 1], [1, 1, 1]]
        assert torchlet.zeros_like(y).device.index == 1 and torchlet.empty_like(y).device.index == 1
        with torchlet.cuda.device(1):
            assert torchlet.empty(2, device="cuda").get_device() == 1     # "cuda": the current device
        assert torchlet.empty(2, device="cuda").get_device() == 0
        assert torchlet.empty(2, device=1).get_device() == 1               # an int is a cuda ordinal
        assert torchlet.device("cuda", 1) == torchlet.device("cuda:1")
        # factories computed on the host are copied over
        assert torchlet.arange(5, device="cuda").tolist() == [0, 1, 2, 3, 4]
        assert torchlet.full((2,), 2**40 + 3, device="cuda").tolist() == [2**40 + 3] * 2   # 8-byte, no memset pattern
        assert torchlet.linspace(0, 1, 3, device="cuda:1").tolist() == [0.0, 0.5, 1.0]
        torchlet.manual_seed(3); a = torchlet.rand(4, device="cuda")
        torchlet.manual_seed(3); b = torchlet.rand(4)
        assert a.is_cuda and a.cpu().tolist() == b.tolist()
        assert torchlet.eye(3, device="cuda").cpu().tolist() == torchlet.eye(3).tolist()
        t = torchlet.tensor([[1.5, -2.0], [3.0, 4.25]], device="cuda")
        assert t.is_cuda and t.item if False else True
        assert t[1, 1].item() == 4.25 and float(t[0, 0]) == 1.5
        r = repr(t)
        assert r == "tensor([[ 1.5000, -2.0000],\\n        [ 3.0000,  4.2500]], device='cuda:0')", r
        assert repr(torchlet.tensor([1, 2], dtype=torchlet.int16, device="cuda:1")) == \\
            "tensor([1, 2], device='cuda:1', dtype=torchlet.int16)"
        assert repr(torchlet.empty(0, device="cuda")) == "tensor([], device='cuda:0')"
        try:
            t.numpy()
        except TypeError as e:
            assert str(e) == "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.", e
        else:
            raise AssertionError
        z = x.to("cuda")
        assert z is x or z.data_ptr() == x.data_ptr()
        assert x.to("cuda:1").get_device() == 1 and x.cuda(1).get_device() == 1 and x.cpu().is_cpu
        c = torchlet.ones(2)
        assert c.cuda().is_cuda and c.to("cuda", torchlet.float64).dtype is torchlet.float64
        assert c.to(device="cuda:1").get_device() == 1
        print("ok")
    """)


def test_round_trips(run_cuda):
    run_cuda("""
        import ml_dtypes
        rng = np.random.default_rng(0)
        shapes = [(), (0,), (1,), (5,), (3, 4), (2, 3, 5), (1, 1, 7), (129, 3)]
        dtypes = [torchlet.bool, torchlet.uint8, torchlet.int8, torchlet.int16, torchlet.int32, torchlet.int64,
                  torchlet.float16, torchlet.bfloat16, torchlet.float32, torchlet.float64]
        n = 0
        for dt in dtypes:
            for sh in shapes:
                base = torchlet.tensor(rng.standard_normal(sh) * 50)
                x = base.to(dt)
                for dev in ("cuda", "cuda:1"):
                    g = x.to(dev)
                    assert g.dtype is dt and tuple(g.shape) == sh and g.is_cuda
                    back = g.cpu()
                    assert back.dtype is dt and torchlet.equal(back, x), (dt, sh, dev)
                    n += 1
                # device to device: same device (cuMemcpyDtoD) and across devices (peer)
                g0 = x.cuda()
                assert torchlet.equal(g0.clone().cpu(), x)
                assert torchlet.equal(g0.to("cuda:1").cpu(), x)
        assert counter("peer") > 0 and counter("d2d") > 0
        print(n)
    """)


def test_non_contiguous_and_casting_copies(run_cuda):
    run_cuda("""
        a = torchlet.arange(24, dtype=torchlet.float32).reshape(4, 6)
        # non-contiguous host source
        g = a.t().cuda()
        assert g.is_cuda and g.cpu().tolist() == a.t().tolist()
        # non-contiguous device source
        ga = a.cuda()
        v = ga[:, ::2]
        assert not v.is_contiguous() and v.cpu().tolist() == a[:, ::2].tolist()
        assert ga.t().cpu().tolist() == a.t().tolist()
        assert ga[1:3, 2:5].cpu().tolist() == a[1:3, 2:5].tolist()
        # write through a strided device view: only the viewed elements change
        ga[:, 1::2].copy_(torchlet.full((4, 3), -1.0))
        exp = a.clone(); exp[:, 1::2] = -1.0
        assert ga.cpu().tolist() == exp.tolist()
        # broadcasting copy_ into cuda
        dst = torchlet.zeros(3, 4, device="cuda")
        dst.copy_(torchlet.tensor([1.0, 2.0, 3.0, 4.0]))
        assert dst.cpu().tolist() == [[1.0, 2.0, 3.0, 4.0]] * 3
        # casts: host int64 -> cuda float32, cuda float -> cuda int (the host path), cuda -> host float16
        dst.copy_(torchlet.tensor([[7], [8], [9]]))
        assert dst.cpu().tolist() == [[7.0] * 4, [8.0] * 4, [9.0] * 4]
        gi = torchlet.empty(3, 4, dtype=torchlet.int32, device="cuda:1")
        gi.copy_(dst + 0.5 if False else dst)
        assert gi.cpu().tolist() == [[7] * 4, [8] * 4, [9] * 4]
        h = torchlet.empty(3, 4, dtype=torchlet.float16)
        h.copy_(gi)
        assert h.tolist() == [[7.0] * 4, [8.0] * 4, [9.0] * 4]
        # overlapping copy inside one device tensor
        s = torchlet.arange(10, dtype=torchlet.int64).cuda()
        s[1:].copy_(s[:-1])
        assert s.tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        # shape mismatch is PyTorch's broadcast error, not a crash
        try:
            dst.copy_(torchlet.zeros(5))
        except RuntimeError as e:
            assert "expanded size" in str(e) or "must match" in str(e), e
        else:
            raise AssertionError
        # non_blocking host -> device copies arrive too
        nb = torchlet.ones(5).to("cuda", non_blocking=True)
        torchlet.cuda.synchronize()
        assert nb.tolist() == [1.0] * 5
        print("ok")
    """)


def test_fill_and_zero(run_cuda):
    run_cuda("""
        dtypes = [torchlet.bool, torchlet.uint8, torchlet.int8, torchlet.int16, torchlet.int32, torchlet.int64,
                  torchlet.float16, torchlet.bfloat16, torchlet.float32, torchlet.float64]
        values = {torchlet.bool: True}
        for dt in dtypes:
            for v in (values.get(dt, 3), 0, values.get(dt, -1) if dt not in (torchlet.uint8,) else 200):
                before = counter("memset")
                x = torchlet.empty(5, 3, dtype=dt, device="cuda")
                x.fill_(v)
                ref = torchlet.full((5, 3), v, dtype=dt)
                assert torchlet.equal(x.cpu(), ref), (dt, v, x.cpu())
                x.zero_()
                assert torchlet.equal(x.cpu(), torchlet.zeros(5, 3, dtype=dt))
        # 8-byte values whose halves differ go through the staging path, the rest are memsets
        m = counter("memset")
        torchlet.full((4,), 1.5, dtype=torchlet.float64, device="cuda")
        assert counter("memset") == m
        torchlet.full((4,), 7, dtype=torchlet.int32, device="cuda")
        assert counter("memset") == m + 1
        # a strided view: only its elements
        g = torchlet.zeros(4, 4, device="cuda")
        g[:, 1].fill_(5.0)
        g.t()[0].fill_(2.0)
        exp = torchlet.zeros(4, 4); exp[:, 1] = 5.0; exp.t()[0] = 2.0
        assert g.cpu().tolist() == exp.tolist()
        # fill_ with a tensor value, from the host or the device
        g.fill_(torchlet.tensor(3.0)); assert g.cpu().tolist() == [[3.0] * 4] * 4
        g.fill_(torchlet.tensor(4.0, device="cuda")); assert g.cpu().tolist() == [[4.0] * 4] * 4
        # broadcast views refuse writes, as in PyTorch
        try:
            torchlet.zeros(1, device="cuda").expand(3).fill_(1.0)
        except RuntimeError as e:
            assert "more than one element of the written-to tensor" in str(e)
        else:
            raise AssertionError
        print("ok")
    """)


def test_allocator_from_python(run_cuda):
    run_cuda("""
        c = torchlet.cuda
        MiB = 1 << 20
        assert c.memory_allocated() == 0 and c.memory_reserved() == 0
        a = torchlet.empty(100, device="cuda")            # 400 B -> 512 B block of a 2 MiB segment
        assert c.memory_allocated() == 512 and c.memory_reserved() == 2 * MiB
        b = torchlet.empty(1000, device="cuda")           # 4000 B -> 4096 B, same segment
        assert c.memory_allocated() == 512 + 4096 and counter("mem_alloc") == 1
        assert b.data_ptr() == a.data_ptr() + 512          # split, best fit
        del a
        assert c.memory_allocated() == 4096 and c.max_memory_allocated() == 4608
        a2 = torchlet.empty(128, device="cuda")            # reuses the freed block: no driver call
        assert counter("mem_alloc") == 1
        big = torchlet.empty(5 * MiB // 4, device="cuda") # 5 MiB -> a 20 MiB segment
        assert c.memory_reserved() == 22 * MiB and counter("mem_alloc") == 2
        assert c.memory_allocated(1) == 0 and c.memory_reserved("cuda:1") == 0
        del big, a2, b
        assert c.memory_allocated() == 0 and c.memory_reserved() == 22 * MiB   # cached
        c.reset_peak_memory_stats()
        assert c.max_memory_allocated() == 0 and c.max_memory_reserved() == 22 * MiB
        c.empty_cache()
        assert c.memory_reserved() == 0 and counter("mem_free") == 2 and counter("in_use") == 0
        d1 = torchlet.ones(10, device="cuda:1")
        assert c.memory_allocated(1) == 512 and c.memory_allocated(0) == 0
        print("ok")
    """)


def test_out_of_memory(run_cuda):
    out = run_cuda("""
        c = torchlet.cuda
        MiB = 1 << 20
        fake.fake_set_memory_limit(ctypes.c_longlong(32 * MiB))
        a = torchlet.empty(9 * MiB // 4, device="cuda")    # a 20 MiB segment, 11 MiB of it free
        small = [torchlet.empty(MiB // 4, device="cuda") for _ in range(3)]   # two 2 MiB small segments
        assert c.memory_reserved() == 24 * MiB
        try:
            torchlet.empty(12 * MiB // 4, device="cuda")   # a 12 MiB segment: over the limit, nothing cached
        except c.OutOfMemoryError as e:
            assert isinstance(e, RuntimeError) and type(e).__module__ == "torchlet.cuda"
            msg = str(e)
            assert msg.startswith("CUDA out of memory. Tried to allocate 12.00 MiB. GPU 0 has a total capacity "
                                  "of 32.00 MiB of which 8.00 MiB is free. Of the allocated memory 12.00 MiB is "
                                  "allocated by torchlet, and 12.00 MiB is reserved by torchlet but unallocated."), msg
        else:
            raise AssertionError("no OutOfMemoryError")
        del small                                           # the small segments are cached, not given back
        assert c.memory_reserved() == 24 * MiB
        frees = counter("mem_free")
        x = torchlet.empty(12 * MiB // 4, device="cuda")   # free-and-retry: the cache goes, then it fits
        assert counter("mem_free") == frees + 2 and c.memory_reserved() == 32 * MiB
        x.fill_(1.0)
        assert x[-1].item() == 1.0
        print("ok")
    """)
    assert out.strip() == "ok"


def test_record_stream_defers_reuse(run_cuda):
    run_cuda("""
        fake.fake_set_manual_events(1)
        s = torchlet.cuda.Stream()
        x = torchlet.empty(1000, device="cuda")
        p = x.data_ptr()
        x.record_stream(s)
        del x                                    # an event on s guards the block
        assert fake.fake_pending_events() == 1
        y = torchlet.empty(1000, device="cuda")
        assert y.data_ptr() != p                 # not reused while s may still use it
        assert fake.fake_complete_events() == 1  # s's work is done
        z = torchlet.empty(1000, device="cuda")
        assert z.data_ptr() == p
        try:
            torchlet.ones(2).record_stream(s)
        except RuntimeError as e:
            assert "expected a cuda tensor" in str(e)
        else:
            raise AssertionError
        print("ok")
    """)


def test_streams_and_events(run_cuda):
    run_cuda("""
        c = torchlet.cuda
        assert c.current_stream() == c.default_stream() and c.current_stream().cuda_stream == 0
        s = c.Stream()
        assert s.cuda_stream != 0 and s.device == torchlet.device("cuda:0") and "cuda_stream=0x" in repr(s)
        with c.stream(s):
            assert c.current_stream() == s
            t = torchlet.ones(4, device="cuda")    # the allocation and the memset go to s
        assert c.current_stream() == c.default_stream()
        assert s.query() and c.default_stream().query()
        s.synchronize()
        # the stream pool: 32 per device, round-robin
        pool = [c.Stream() for _ in range(32)]
        assert pool[-1] == s and len({p.cuda_stream for p in pool}) == 32
        # a stream of device 1 switches the device inside its context
        s1 = c.Stream(device=1)
        with c.stream(s1):
            assert c.current_device() == 1 and c.current_stream() == s1
        assert c.current_device() == 0 and c.current_stream(1) == c.default_stream(1)
        # events
        e0, e1 = c.Event(enable_timing=True), c.Event(enable_timing=True)
        assert e0.query() and "uninitialized" in repr(e0)
        e0.record(); e1.record()
        assert e0.query() and e1.query() and e0.elapsed_time(e1) >= 0.0
        fake.fake_set_manual_events(1)
        e2 = s.record_event()
        assert not e2.query() and not s.query()
        s.wait_event(e2); s.wait_stream(c.default_stream()); e2.wait()
        e2.synchronize()
        assert e2.query() and s.query()
        e3 = c.Event()
        e3.record(s)
        try:
            e3.elapsed_time(e2)
        except RuntimeError as e:
            assert "enable_timing=True" in str(e)
        else:
            raise AssertionError
        try:
            e3.record(s1)
        except RuntimeError as e:
            assert "does not match recording stream's device" in str(e)
        else:
            raise AssertionError
        fake.fake_complete_events()
        c.synchronize()
        print("ok")
    """)


LAUNCH = """
from torchlet._C import ffi, lib
hk = ctypes.CDLL(os.environ["HOST_KERNELS"])
for name in (b"tl_test_axpy_f32", b"tl_test_iota_i64"):
    fake.fake_register_kernel(name, ctypes.cast(getattr(hk, name.decode()), ctypes.c_void_p))
calls = []
def hook(name, source, major, minor):
    calls.append((name, source, major, minor))
    return b"\\x7fELF fake cubin"
orig_hook = torchlet.cuda._compile_hook
torchlet.cuda._compile_hook = hook
keep = []
def program(name, source):
    # source: the text, or its parts (the runtime joins them)
    p = ffi.new("tl_cuda_program *")
    nm = ffi.new("char[]", name.encode())
    texts = [ffi.new("char[]", t.encode()) for t in ([source] if isinstance(source, str) else source)]
    parts = ffi.new("char *[]", texts + [ffi.NULL])
    keep.extend([nm, parts] + texts); p.name, p.parts = nm, parts
    return p
def function(prog, name):
    f = ffi.new("tl_cuda_function *")
    nm = ffi.new("char[]", name.encode()); keep.append(nm)
    f.program, f.name = prog, nm
    return f
def launch(f, grid, block, args, shared=0):
    rc = lib.tl_cuda_launch(f, grid, block, shared, args)
    if rc != 0:
        from torchlet._errors import raise_pending_error
        raise_pending_error()
"""


def test_launch_packs_arguments(run_cuda, host_kernels):
    run_cuda(LAUNCH + """
        # in three parts, as a generated program with the shared prelude: the compiler gets them joined
        prog = program("test_axpy", ['extern "C" ', "__global__ void tl_test_axpy_f32", "(P p) {}"])
        f = function(prog, "tl_test_axpy_f32")
        n = 1000
        x = torchlet.arange(n, dtype=torchlet.float32).cuda()
        y = torchlet.ones(n, device="cuda")
        # the parameter struct {float *y; const float *x; float alpha; int64_t n}, passed as one kernel parameter
        params = np.zeros(4, dtype=np.uint64)
        params[0], params[1], params[3] = y.data_ptr(), x.data_ptr(), n
        params[2:3].view(np.float32)[0] = 2.5
        args = ffi.new("void *[1]", [ffi.cast("void *", params.ctypes.data)])
        grid = ((n + 127) // 128, 1, 1)
        launch(f, grid, (128, 1, 1), args)
        assert y.cpu().tolist() == [2.5 * i + 1.0 for i in range(n)]
        assert calls == [("test_axpy", 'extern "C" __global__ void tl_test_axpy_f32(P p) {}', 9, 0)]
        assert counter("module_load") == 1 and counter("launch") == 1
        g, b, st = (ctypes.c_uint * 3)(), (ctypes.c_uint * 3)(), ctypes.c_void_p()
        fake.fake_last_launch(g, b, ctypes.byref(st))
        assert list(g) == [8, 1, 1] and list(b) == [128, 1, 1] and not st.value   # default stream
        # cached: no second compile or module load
        launch(f, grid, (128, 1, 1), args)
        assert len(calls) == 1 and counter("module_load") == 1
        assert y.cpu().tolist()[:3] == [1.0, 3.5, 6.0]
        # on a stream: the launch goes there
        s = torchlet.cuda.Stream()
        with torchlet.cuda.stream(s):
            launch(f, grid, (128, 1, 1), args)
        fake.fake_last_launch(g, b, ctypes.byref(st))
        assert st.value == s.cuda_stream
        # three separate parameters: int32, double, pointer
        f2 = function(prog, "tl_test_iota_i64")
        out = torchlet.empty(300, dtype=torchlet.int64, device="cuda")
        nn, v, ptr = ffi.new("int32_t *", 300), ffi.new("double *", 3.0), ffi.new("void **", ffi.cast("void *", out.data_ptr()))
        launch(f2, (3, 1, 1), (100, 1, 1), ffi.new("void *[3]", [nn, v, ptr]))
        assert out.tolist() == [3 * i for i in range(300)]
        assert len(calls) == 1   # same program: its module is loaded already
        # another device: compiled (looked up) and loaded again there
        torchlet.cuda.set_device(1)
        x1, y1 = x.to("cuda:1"), torchlet.zeros(n, device="cuda:1")
        params[0], params[1] = y1.data_ptr(), x1.data_ptr()
        launch(f, grid, (128, 1, 1), args)
        assert len(calls) == 2 and counter("module_load") == 2
        assert y1.cpu().tolist()[:3] == [0.0, 2.5, 5.0]
        # an empty grid launches nothing
        before = counter("launch")
        launch(f, (0, 1, 1), (128, 1, 1), args)
        assert counter("launch") == before
        print("ok")
    """, HOST_KERNELS=str(host_kernels))


def test_launch_errors(run_cuda, host_kernels):
    run_cuda(LAUNCH + """
        prog = program("p", "src")
        missing = function(prog, "no_such_kernel")
        try:
            launch(missing, (1, 1, 1), (1, 1, 1), ffi.NULL)
        except RuntimeError as e:
            assert "named symbol not found" in str(e) and "no_such_kernel" in str(e), e
        else:
            raise AssertionError
        def bad(name, source, major, minor):
            raise ValueError("boom")
        torchlet.cuda._compile_hook = bad
        prog2 = program("q", "src")
        try:
            launch(function(prog2, "tl_test_axpy_f32"), (1, 1, 1), (1, 1, 1), ffi.NULL)
        except RuntimeError as e:
            assert str(e) == "CUDA kernel 'q' failed to compile for sm_90: ValueError: boom", e
        else:
            raise AssertionError
        # the default hook: torchlet.cuda.nvrtc.compile_program(name, source, cc, driver_version=)
        import types
        torchlet.cuda._compile_hook = orig_hook
        seen = []
        def compile_program(name, source, cc, *, driver_version=None):
            seen.append((name, source, cc, driver_version))
            return b"image"
        sys.modules["torchlet.cuda.nvrtc"] = types.SimpleNamespace(compile_program=compile_program)
        launch(function(program("r", "the source"), "tl_test_axpy_f32"), (0, 1, 1), (1, 1, 1), ffi.NULL)
        assert seen == [("r", "the source", 90, 13000)], seen
        # without the NVRTC module the default hook explains itself
        sys.modules["torchlet.cuda.nvrtc"] = None
        try:
            launch(function(program("s", "src"), "tl_test_axpy_f32"), (1, 1, 1), (1, 1, 1), ffi.NULL)
        except RuntimeError as e:
            assert "no kernel compiler" in str(e) and "torchlet.cuda.nvrtc is not installed" in str(e), e
        else:
            raise AssertionError
        print("ok")
    """, HOST_KERNELS=str(host_kernels))


def test_missing_kernel_and_mixed_devices(run_cuda):
    run_cuda("""
        from torchlet._C import ffi, lib
        x = torchlet.ones(3, device="cuda")
        y = torchlet.ones(2, 2, device="cuda")
        try:
            torchlet.median(y)   # no CUDA kernel for median
        except NotImplementedError as e:
            m = str(e)
            assert m.startswith("Could not run 'aten::median' with arguments from the 'CUDA' backend."), m
            assert "'aten::median' is only available for these backends: [" in m and "CPU" in m, m
        else:
            raise AssertionError("no NotImplementedError")
        # TensorIterator's device check (what CUDA kernels get): PyTorch's message with the indices
        def build(*tensors):
            it = lib.tl_iter_new(0)
            try:
                assert lib.tl_iter_add_output(it, ffi.NULL) == 0
                for t in tensors:
                    assert lib.tl_iter_add_input(it, t._p) == 0
                if lib.tl_iter_build(it) != 0:
                    from torchlet._errors import raise_pending_error
                    raise_pending_error()
                o = lib.tl_iter_output(it, 0)
                idx = lib.tl_tensor_device_index(o)
                lib.tl_tensor_release(o)
                return idx
            finally:
                lib.tl_iter_free(it)
        for a, b, names in ((x, torchlet.ones(3), "cuda:0 and cpu"), (torchlet.ones(3), x, "cpu and cuda:0"),
                            (x, torchlet.ones(3, device="cuda:1"), "cuda:0 and cuda:1")):
            try:
                build(a, b)
            except RuntimeError as e:
                assert str(e) == f"Expected all tensors to be on the same device, but found at least two devices, {names}!", e
            else:
                raise AssertionError
        assert build(x, torchlet.tensor(2.0)) == 0          # a CPU 0-dim tensor may sit beside cuda ones
        assert build(torchlet.ones(3, device="cuda:1"), torchlet.tensor(2.0)) == 1   # outputs on the inputs' device
        print("ok")
    """)


def test_no_driver(run_cuda):
    code = """
        import torchlet.cuda as c
        assert not c.is_available() and c.device_count() == 0
        assert c.memory_allocated() == 0 and c.memory_reserved() == 0
        c.empty_cache()
        assert torchlet.ones(3).add(1).tolist() == [2.0, 2.0, 2.0]      # the CPU is untouched
        for f in (lambda: torchlet.zeros(2, device="cuda"), lambda: torchlet.ones(2).cuda(), c.current_device,
                  lambda: torchlet.ones(2).to("cuda:0"), c.synchronize, lambda: c.Stream()):
            try:
                f()
            except RuntimeError as e:
                print(str(e))
            else:
                raise AssertionError("no error")
    """
    out = run_cuda(code, libcuda="/nonexistent/libcuda.so.1")
    lines = out.strip().splitlines()
    assert len(lines) == 6
    assert all(line == "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
                       "a driver from http://www.nvidia.com/Download/index.aspx" for line in lines), lines


def test_driver_without_devices(run_cuda, fake_driver):
    out = run_cuda("""
        assert not torchlet.cuda.is_available()
        try:
            torchlet.empty(1, device="cuda")
        except RuntimeError as e:
            print(e)
    """, libcuda=str(fake_driver), FAKE_CUDA_DEVICES=0)
    assert out.strip() == "No CUDA GPUs are available"
