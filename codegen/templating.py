"""The Jinja2 environment shared by all emitters.

Templates live in ``templates/`` (one per kind of generated file); each opens
with a ``{# ... #}`` comment that documents its slots.  The environment is
strict (an undefined slot is an error), does no escaping, and keeps trailing
newlines so that output is byte-for-byte what the template says.

Compiled templates are cached on disk (Jinja's bytecode cache, keyed by the
template's path and source checksum and by the Python version), like .pyc
files: compiling the 25 templates is otherwise about a tenth of a full-corpus
generation. ``TORCHLET_CODEGEN_CACHE`` moves the cache; set it empty to disable.
"""

from __future__ import annotations

import os
from pathlib import Path

import jinja2

from .paths import TEMPLATES_DIR


# bump when the environment's options below change: they shape the compiled code
# but are not part of Jinja's cache key
_OPTIONS_TAG = "trim-lstrip-v1"


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    where = os.environ.get("TORCHLET_CODEGEN_CACHE")
    if where is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        where = os.path.join(base, "torchlet", "templates")
    if not where:
        return None
    d = os.path.join(where, _OPTIONS_TAG)
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:  # read-only home, no permission: compile every time
        return None
    return jinja2.FileSystemBytecodeCache(d)


def make_environment(templates_dir: str | Path = TEMPLATES_DIR) -> jinja2.Environment:
    env = jinja2.Environment(
        bytecode_cache=_bytecode_cache(),
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env
