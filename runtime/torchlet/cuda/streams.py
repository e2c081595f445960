"""CUDA streams and events (PyTorch's torch.cuda.Stream / Event / stream()).

A Stream wraps a driver stream handle; 0 is the device's default (legacy)
stream. Streams come from a per-device pool of 32 created on first use and
reused round-robin, as in PyTorch, so creating Stream objects never leaks
driver streams. An Event is created on its first record, on the device of the
stream it is recorded on."""
from __future__ import annotations

from .._C import ffi, lib
from .._errors import check

_POOL_SIZE = 32
_pools: dict = {}     # (device, priority) -> [handles]
_next: dict = {}


def _pooled_stream(device: int, priority: int) -> int:
    key = (device, priority)
    pool = _pools.setdefault(key, [])
    i = _next.get(key, 0)
    _next[key] = (i + 1) % _POOL_SIZE
    if i == len(pool):
        out = ffi.new("tl_cuda_stream *")
        check(lib.tl_cuda_stream_create(device, priority, out))
        pool.append(int(ffi.cast("uintptr_t", out[0])))
    return pool[i]


def _handle(s) -> object:
    return ffi.cast("tl_cuda_stream", s.cuda_stream)


class Stream:
    """A CUDA stream: work queued on it runs in order; different streams may overlap."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        from . import _device_index
        self = super().__new__(cls)
        self.device_index = _device_index(device, optional=True)
        if "stream_ptr" in kwargs:            # wrap an existing handle (current_stream, default_stream)
            self.cuda_stream = int(kwargs["stream_ptr"])
        else:
            self.cuda_stream = _pooled_stream(self.device_index, -1 if priority < 0 else 0)
        self.priority = priority
        return self

    @property
    def device(self):
        from .. import _device as _dev
        return _dev.device("cuda", self.device_index)

    def query(self) -> bool:
        """True when all work queued on the stream has finished."""
        return bool(check(lib.tl_cuda_stream_query(_handle(self))))

    def synchronize(self) -> None:
        check(lib.tl_cuda_stream_synchronize(_handle(self)))

    def wait_event(self, event) -> None:
        """Work queued on this stream from now on waits for `event`."""
        if event._handle is not None:
            check(lib.tl_cuda_stream_wait_event(_handle(self), event._handle))

    def wait_stream(self, stream) -> None:
        """Work queued on this stream from now on waits for what `stream` has queued so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device_index == other.device_index

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self):
        return f"<torchlet.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a marker in a stream's work (timing needs enable_timing=True)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        if interprocess:
            raise NotImplementedError("torchlet.cuda.Event: interprocess events are not supported")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._handle = None
        self._device = -1

    def record(self, stream=None) -> None:
        if stream is None:
            stream = current_stream()
        if self._handle is None:
            out = ffi.new("tl_cuda_event *")
            check(lib.tl_cuda_event_create(stream.device_index, 1 if self.enable_timing else 0, out))
            self._handle, self._device = out[0], stream.device_index
        elif stream.device_index != self._device:
            raise RuntimeError(f"Event device {self._device} does not match recording stream's device "
                               f"{stream.device_index}.")
        check(lib.tl_cuda_event_record(self._handle, _handle(stream)))

    def wait(self, stream=None) -> None:
        if stream is None:
            stream = current_stream()
        stream.wait_event(self)

    def query(self) -> bool:
        """True when the work before the recorded point has finished (or never recorded)."""
        if self._handle is None:
            return True
        return bool(check(lib.tl_cuda_event_query(self._handle)))

    def synchronize(self) -> None:
        if self._handle is not None:
            check(lib.tl_cuda_event_synchronize(self._handle))

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event and end_event (both recorded and completed)."""
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        ms = ffi.new("float *")
        check(lib.tl_cuda_event_elapsed_ms(self._handle, end_event._handle, ms))
        return float(ms[0])

    @property
    def device(self):
        from .. import _device as _dev
        return None if self._device < 0 else _dev.device("cuda", self._device)

    def __del__(self):
        h = getattr(self, "_handle", None)
        if h is not None:
            lib.tl_cuda_event_destroy(h)
            self._handle = None

    def __repr__(self):
        if self._handle is None:
            return "<torchlet.cuda.Event uninitialized>"
        return f"<torchlet.cuda.Event {int(ffi.cast('uintptr_t', self._handle)):#x}>"


def current_stream(device=None) -> Stream:
    """This thread's current stream of the device (the default stream unless set)."""
    from . import _device_index
    idx = _device_index(device, optional=True)
    h = lib.tl_cuda_current_stream(idx)
    return Stream(idx, stream_ptr=int(ffi.cast("uintptr_t", h)))


def default_stream(device=None) -> Stream:
    from . import _device_index
    return Stream(_device_index(device, optional=True), stream_ptr=0)


def set_stream(stream: Stream) -> None:
    """Makes `stream` the current stream of its device (and that device current)."""
    if stream is None:
        return
    check(lib.tl_cuda_set_device(stream.device_index))
    check(lib.tl_cuda_set_current_stream(stream.device_index, _handle(stream)))


class StreamContext:
    """`with torchlet.cuda.stream(s):` work goes to s (on s's device), then
    the previous device and its stream are restored."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        s = self.stream
        if s is None:
            return None
        self.prev_device = lib.tl_cuda_current_device()
        self.prev_streams = (current_stream(self.prev_device), current_stream(s.device_index))
        set_stream(s)
        return s

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        prev_dev_stream, prev_src_stream = self.prev_streams
        check(lib.tl_cuda_set_current_stream(self.stream.device_index, _handle(prev_src_stream)))
        check(lib.tl_cuda_set_current_stream(self.prev_device, _handle(prev_dev_stream)))
        check(lib.tl_cuda_set_device(self.prev_device))
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)
