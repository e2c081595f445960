# torchlet workflows. Every target installs what it needs into .venv first.
PY      ?= python3
VENV    ?= .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.deps-stamp
# check-generated must work before the venv exists (the generator needs only pyyaml + jinja2)
GEN_PY  := $(if $(wildcard $(VPY)),$(VPY),$(PY))
PYTEST_ENV := OMP_NUM_THREADS=1

.PHONY: all deps generate check-generated build test asan-test bench demo clean torch

all: build

$(VPY):
	$(PY) -m venv $(VENV)

$(STAMP): pyproject.toml | $(VPY)
	$(VPY) -m pip install -q --upgrade "pip>=24" "setuptools>=74" wheel
	$(VPY) -m pip install -q "cffi>=1.17" numpy pyyaml jinja2 pytest hypothesis ml_dtypes
	touch $@

deps: $(STAMP)

# optional reference oracle (PyTorch 2.13 CPU, from a local wheel where one exists)
torch: $(STAMP)
	$(VPY) -m pip install -q torch==2.13.0 || echo "torch not installed: reference tests will skip"

generate: $(STAMP)
	$(VPY) -m codegen generate

check-generated:
	$(GEN_PY) -m codegen generate --check

build: generate
	$(VPY) -m pip install -q --no-build-isolation --no-deps -e .

test: build
	$(PYTEST_ENV) $(VPY) -m pytest -q tests

asan-test: build
	$(PYTEST_ENV) $(VPY) tests/asan_run.py

bench: build
	$(VPY) -m pip install -q torch==2.13.0 || true
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(VPY) $$b || exit 1; done

demo: build
	$(VPY) examples/demo.py

clean:
	rm -rf build $(VENV) *.egg-info runtime/torchlet/_C*.so
