import pytest


@pytest.fixture(autouse=True)
def compile_cache(tmp_path_factory, monkeypatch):
    """Every test compiles into one session-wide cache folder (not the user's),
    and a kernel that fails to build fails the test (users get a warning and
    eager execution, which would hide it)."""
    monkeypatch.setenv("TORCHLET_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "torchlet-compile-cache"))
    from torchlet._compile import api

    def fail(reason):
        raise AssertionError(f"a fused kernel failed to build: {reason}")
    monkeypatch.setattr(api, "_warn_once_build", fail)
    yield
    import torchlet
    torchlet.compiler.reset()
    torchlet.compiler.set_stance("default")
