"""Fixtures of the generator's tests."""

from __future__ import annotations

import pytest
from cgtest_util import CORPUS


@pytest.fixture(scope="session")
def corpus_model():
    if not (CORPUS / "native_functions.yaml").is_file():
        pytest.skip("PyTorch reference corpus not present")
    from codegen.model import Inputs, load_model

    return load_model(
        Inputs(str(CORPUS / "native_functions.yaml"), str(CORPUS / "derivatives.yaml"), str(CORPUS / "tags.yaml"))
    )
