# torchlet workflows. Every target installs what it needs into .venv first,
# so `make demo` and `make test` work on a fresh machine.
PY      ?= python3
VENV    ?= .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.deps-stamp
# check-generated must work before the venv exists (the generator needs only pyyaml + jinja2)
GEN_PY  := $(if $(wildcard $(VPY)),$(VPY),$(PY))
# kernels run single-threaded under tests (a dedicated test covers threads)
PYTEST_ENV := OMP_NUM_THREADS=1
PIP     := $(VPY) -m pip install -q --disable-pip-version-check

.PHONY: all deps generate check-generated includes build test opinfo asan-test bench demo clean torch cuda-deps gpu-check

all: build

$(VPY):
	$(PY) -m venv $(VENV)

$(STAMP): pyproject.toml | $(VPY)
	$(PIP) --upgrade "pip>=24" "setuptools>=74" wheel
	$(PIP) "cffi>=1.17" numpy pyyaml jinja2 pytest hypothesis ml_dtypes scipy-openblas32
	# optional: oneDNN (OpenMP build), loaded at the first float32 convolution (docs/NN.md)
	$(PIP) "onednn-cpu-gomp>=2023.2" || echo "oneDNN not installed: convolutions use the im2col path"
	touch $@

deps: $(STAMP)

# optional reference oracle (PyTorch 2.13 CPU, from a local wheel where one exists)
torch: $(STAMP)
	$(PIP) torch==2.13.0 expecttest || echo "torch not installed: reference tests will skip"

# the worked operator library (examples/extension): its generated/ is committed and checked too
EXT_GEN := --namespace myops --native-functions examples/extension/native_functions.yaml \
	--derivatives examples/extension/derivatives.yaml --ufunc-dir examples/extension/ufunc \
	--out examples/extension/generated

generate: $(STAMP)
	$(VPY) -m codegen generate
	$(VPY) -m codegen generate $(EXT_GEN)

check-generated:
	$(GEN_PY) -m codegen together "generate --check" "generate --check $(EXT_GEN)" "includes --check"

# hand-written C includes the operator headers it uses (not the umbrella
# tl_ops.h), so a new operator recompiles only its callers; run after
# calling an operator a file did not call before
includes:
	$(GEN_PY) -m codegen includes

# compiles runtime/, generated/ and kernels/ (x3 ISA variants) in parallel into
# the object cache build/obj, showing progress and the compiler's messages (pip
# would hide both); an edit recompiles only what changed. The editable install
# (pip) runs once, and again only when the packaging files change or the venv
# points at another checkout (a copied venv): it finds the extension up to
# date. flock: one build at a time (concurrent builds in one tree would write
# the same objects)
EDITABLE := $(VENV)/.editable-stamp
build: generate
	@mkdir -p build
	flock build/.build-lock $(VPY) setup.py -q build_ext --inplace
	@$(VPY) -c "import importlib.util as u, sys; s = u.find_spec('torchlet'); \
		sys.exit(not (s and s.origin.startswith('$(CURDIR)/')))" || rm -f $(EDITABLE)
	@$(MAKE) --no-print-directory $(EDITABLE)

$(EDITABLE): pyproject.toml setup.py build_ffi.py | $(STAMP)
	PYTHONWARNINGS="ignore:Editable installation" \
		flock build/.build-lock $(PIP) --no-build-isolation --no-deps -e .
	@touch $@

# NVRTC from PyPI (~70 MB): the CUDA kernels are compiled and checked without a GPU
CUDA_STAMP := $(VENV)/.cuda-deps-stamp
$(CUDA_STAMP): pyproject.toml | $(STAMP)
	$(PIP) "cuda-bindings>=13" cuda-pathfinder "nvidia-cuda-nvrtc>=13" || echo "NVRTC not installed: CUDA compile tests will skip"
	touch $@

cuda-deps: $(CUDA_STAMP)

test: build cuda-deps
	$(PYTEST_ENV) $(VPY) -m pytest -q tests

# on a machine with an NVIDIA GPU: versions, prebuilt cache, tests/cuda, timings (JSON + table to $$OUT)
gpu-check: build cuda-deps
	$(VPY) scripts/gpu_check.py

# torchlet against PyTorch's OpInfo samples (needs torch + expecttest); the
# coverage report: $(VPY) tests/opinfo/test_opinfo_samples.py --report --grad
opinfo: build
	$(PYTEST_ENV) $(VPY) -m pytest -q -m opinfo tests/opinfo

# C-facing tests against an AddressSanitizer build of the extension (build/asan)
asan-test: build
	$(PYTEST_ENV) $(VPY) tests/asan_run.py

bench: build
	$(PIP) torch==2.13.0 || true
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(VPY) $$b || exit 1; done

demo: build
	$(VPY) examples/demo.py

clean:
	rm -rf build $(VENV) *.egg-info runtime/torchlet/_C*.so
