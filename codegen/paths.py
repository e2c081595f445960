"""Where the generator's own inputs live: torchlet's YAML (`yaml/`), the
templates (`templates/`) and the ufunc formula headers (`kernels/ufunc/`).
In the source tree they are the repository's folders; an installed wheel
carries copies under `codegen/data/` (setup.py's build_py puts them there),
so `torchlet-gen build` works for an operator author without the source."""
from __future__ import annotations

from pathlib import Path

CODEGEN_DIR = Path(__file__).resolve().parent
_REPO = CODEGEN_DIR.parent
SHIPPED = CODEGEN_DIR / "data"
DATA = _REPO if (_REPO / "yaml" / "native_functions.yaml").is_file() else SHIPPED
YAML_DIR = DATA / "yaml"
TEMPLATES_DIR = DATA / "templates"
FORMULA_DIR = DATA / "kernels" / "ufunc"
