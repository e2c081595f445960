import pytest


@pytest.fixture(autouse=True)
def compile_cache(tmp_path_factory, monkeypatch):
    """Every test compiles into one session-wide cache folder (not the user's)."""
    monkeypatch.setenv("TORCHLET_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "torchlet-compile-cache"))
    yield
    import torchlet
    torchlet.compiler.reset()
    torchlet.compiler.set_stance("default")
