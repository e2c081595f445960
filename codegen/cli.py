"""Command line: ``python -m codegen`` / ``torchlet-gen``.

    torchlet-gen generate [--check | --dry-run] [--native-functions F] [--derivatives D]
                          [--tags T] [--templates DIR] [--out DIR]
    torchlet-gen inspect --native-functions F [--derivatives D] [--tags T] [--indent N]

Author errors print as ``path:line:col: error: message`` (all of them) and
exit with status 1; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

from .diagnostics import CodegenError
from .model import Inputs, default_tags_path, load_model

ROOT = Path(__file__).resolve().parent.parent  # the repository root
CODEGEN_DIR = Path(__file__).resolve().parent


def shown(path: str | Path) -> str:
    """A path as shown to users: relative to the current folder when inside it."""
    p = Path(path)
    try:
        rel = os.path.relpath(p.resolve(), Path.cwd())
    except ValueError:
        return str(p)
    return str(p) if rel.startswith("..") else rel.replace(os.sep, "/")


def fingerprint(paths: list[Path]) -> str:
    """A hash of the generator's sources, its templates and the input files.

    Any edit to one of them changes every generated header, so a stale
    generated/ is always caught by ``--check``.
    """
    h = hashlib.sha256()
    files: list[tuple[str, Path]] = []
    for base in (CODEGEN_DIR, ROOT / "templates"):
        if base.is_dir():
            for p in sorted(base.rglob("*")):
                if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".j2"):
                    files.append((p.relative_to(ROOT).as_posix(), p))
    files.extend((f"input:{i}", p) for i, p in enumerate(paths))
    for name, p in files:
        h.update(name.encode() + b"\0")
        h.update(p.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return h.hexdigest()[:16]


def _inputs(args: argparse.Namespace) -> Inputs:
    tags = args.tags
    if tags is None:
        tags = default_tags_path(args.native_functions)
    return Inputs(args.native_functions, args.derivatives, tags)


def _display_inputs(inputs: Inputs) -> Inputs:
    return Inputs(
        shown(inputs.native_functions),
        shown(inputs.derivatives) if inputs.derivatives else None,
        shown(inputs.tags) if inputs.tags else None,
    )


def cmd_generate(args: argparse.Namespace) -> int:
    from .emit import EmitContext, emit_all
    from .templating import make_environment
    from .writer import compare, write

    start = time.perf_counter()
    inputs = _inputs(args)
    model = load_model(_display_inputs(inputs))
    ctx = EmitContext(
        model=model,
        env=make_environment(args.templates),
        inputs=tuple(p for p in (shown(inputs.native_functions), shown(inputs.derivatives) if inputs.derivatives else None) if p),
        fingerprint=fingerprint([Path(p) for p in inputs.paths()]),
    )
    files = emit_all(ctx)
    out_dir = Path(args.out)
    out_shown = shown(out_dir)
    n_ops = len(model.functions)
    if args.check:
        r = compare(files, out_dir, out_shown)
        if r.stale:
            sys.stdout.write(r.diff)
            what = f"{len(r.changed)} of {len(files)} files differ"
            if r.orphans:
                what += f", {len(r.orphans)} no longer generated"
            print(
                f"torchlet-gen: {out_shown}/ is stale: {what} ({', '.join(r.changed + r.orphans)}); "
                "run `make generate` and commit the result",
                file=sys.stderr,
            )
            return 1
        print(f"torchlet-gen: {out_shown}/ is up to date ({n_ops} operators, {len(files)} files, {time.perf_counter() - start:.2f} s)")
        return 0
    if args.dry_run:
        r = compare(files, out_dir, out_shown)
        for rel in r.changed:
            print(f"would write {out_shown}/{rel}")
        for rel in r.orphans:
            print(f"would remove {out_shown}/{rel}")
        removed = f", {len(r.orphans)} removed" if r.orphans else ""
        print(f"torchlet-gen: {n_ops} operators, {len(r.changed)} of {len(files)} files would be written{removed}, {time.perf_counter() - start:.2f} s")
        return 0
    r = write(files, out_dir, out_shown)
    removed = f", {len(r.orphans)} removed ({', '.join(r.orphans)})" if r.orphans else ""
    print(f"torchlet-gen: {n_ops} operators, {len(r.changed)} of {len(files)} files written{removed}, {time.perf_counter() - start:.2f} s")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from .model_json import dumps

    inputs = _inputs(args)
    model = load_model(_display_inputs(inputs))
    sys.stdout.write(dumps(model, indent=args.indent))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="torchlet-gen", description="torchlet's operator code generator")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="YAML + templates -> generated/")
    g.add_argument("--native-functions", default=str(ROOT / "yaml/native_functions.yaml"))
    g.add_argument("--derivatives", default=str(ROOT / "yaml/derivatives.yaml"))
    g.add_argument("--tags", default=None, help="tags.yaml (default: beside native_functions.yaml)")
    g.add_argument("--templates", default=str(ROOT / "templates"))
    g.add_argument("--out", default=str(ROOT / "generated"))
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 with a diff when the output is stale")
    mode.add_argument("--dry-run", action="store_true", help="list what would change, write nothing")
    g.set_defaults(func=cmd_generate)

    i = sub.add_parser("inspect", help="print the model as JSON")
    i.add_argument("--native-functions", required=True)
    i.add_argument("--derivatives", default=None)
    i.add_argument("--tags", default=None, help="tags.yaml (default: beside native_functions.yaml)")
    i.add_argument("--indent", type=int, default=None)
    i.set_defaults(func=cmd_inspect)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CodegenError as e:
        print(e.render(), file=sys.stderr)
        return 1
    except BrokenPipeError:  # `torchlet-gen inspect ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
