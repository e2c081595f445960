"""The writer alone: write-if-changed, atomic replacement keeping the file's
mode, the threaded path for many files, orphans, and --check's diff."""

from __future__ import annotations

import os
import stat

import pytest

from codegen import writer

BANNER = f"// {writer.BANNER}\n"


def files_named(n: int, text: str = "x") -> dict[str, str]:
    return {f"sub{i % 3}/f{i}.c": f"{BANNER}{text} {i}\n" for i in range(n)}


@pytest.mark.parametrize("n", [3, 200])  # the serial and the thread-pool paths
def test_writes_new_files_then_only_changed_ones(tmp_path, n):
    files = files_named(n)
    r = writer.write(files, tmp_path, "out")
    assert sorted(r.changed) == sorted(files) and not r.unchanged and r.diff == ""
    for rel, text in files.items():
        assert (tmp_path / rel).read_text() == text
    assert not [p for p in tmp_path.rglob(".*.tmp")]  # no temporary file left behind
    files["sub1/f1.c"] = BANNER + "changed\n"
    r = writer.write(files, tmp_path, "out")
    assert r.changed == ["sub1/f1.c"] and len(r.unchanged) == n - 1
    assert (tmp_path / "sub1/f1.c").read_text() == BANNER + "changed\n"


def test_new_files_follow_the_umask_and_replaced_files_keep_their_mode(tmp_path):
    old = os.umask(0o027)
    try:
        writer.write({"a.c": BANNER}, tmp_path, "out")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.c").stat().st_mode) == 0o640
    os.chmod(tmp_path / "a.c", 0o755)
    writer.write({"a.c": BANNER + "new\n"}, tmp_path, "out")
    assert stat.S_IMODE((tmp_path / "a.c").stat().st_mode) == 0o755


@pytest.mark.parametrize("n", [3, 200])
def test_a_failed_write_raises_and_leaves_the_old_file(tmp_path, monkeypatch, n):
    files = files_named(n)
    writer.write(files, tmp_path, "out")
    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst).endswith("f1.c"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(writer.os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left"):
        writer.write({rel: text + "new\n" for rel, text in files.items()}, tmp_path, "out")
    assert (tmp_path / "sub1/f1.c").read_text() == files["sub1/f1.c"]
    assert not [p for p in tmp_path.rglob(".*.tmp")]


def test_orphans_are_removed_and_unbannered_files_kept(tmp_path):
    writer.write({"a.c": BANNER, "b.c": BANNER}, tmp_path, "out")
    (tmp_path / "mine.c").write_text("hand-written\n")
    r = writer.write({"a.c": BANNER}, tmp_path, "out")
    assert r.orphans == ["b.c"] and not (tmp_path / "b.c").exists()
    assert (tmp_path / "mine.c").exists()


def test_compare_shows_a_unified_diff_only_when_asked(tmp_path):
    writer.write({"a.c": BANNER + "one\n"}, tmp_path, "out")
    r = writer.compare({"a.c": BANNER + "two\n"}, tmp_path, "out")
    assert r.changed == ["a.c"] and "-one\n+two\n" in r.diff and "--- a/out/a.c" in r.diff
    quiet = writer.compare({"a.c": BANNER + "two\n"}, tmp_path, "out", with_diff=False)
    assert quiet.changed == ["a.c"] and quiet.diff == ""


def test_compiled_templates_are_cached_on_disk(tmp_path, monkeypatch):
    from codegen.templating import make_environment

    monkeypatch.setenv("TORCHLET_CODEGEN_CACHE", str(tmp_path / "cache"))
    first = make_environment().get_template("ops.md.j2")
    cached = list((tmp_path / "cache").rglob("__jinja2_*"))
    assert len(cached) == 1
    env = make_environment()  # a new environment (a new run): the code comes from the cache
    stored = []
    monkeypatch.setattr(env.bytecode_cache, "dump_bytecode", stored.append)
    again = env.get_template("ops.md.j2")
    assert stored == [] and list((tmp_path / "cache").rglob("__jinja2_*")) == cached
    assert again.render(header="h", **_ops_md_slots()) == first.render(header="h", **_ops_md_slots())
    monkeypatch.setenv("TORCHLET_CODEGEN_CACHE", "")
    assert make_environment().bytecode_cache is None


def _ops_md_slots() -> dict:
    return {"ops": [], "native_functions": "yaml/native_functions.yaml", "derivatives": None}
