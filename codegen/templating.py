"""The Jinja2 environment shared by all emitters.

Templates live in ``templates/`` (one per kind of generated file); each opens
with a ``{# ... #}`` comment that documents its slots.  The environment is
strict (an undefined slot is an error), does no escaping, and keeps trailing
newlines so that output is byte-for-byte what the template says.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from .paths import TEMPLATES_DIR


def make_environment(templates_dir: str | Path = TEMPLATES_DIR) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env
