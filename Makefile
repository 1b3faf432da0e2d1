# scorep: build, set-up, demo and tests.
#
#   make demo     set up everything on a fresh Debian 12 machine and measure examples/
#   make test     set up everything and run the whole test suite (what .ci/run calls)
#
# PYTHON is the interpreter scorep is built and installed for (Debian's, which has the
# python3-* packages the tests read traces with). TEST_PYTHONS are the further
# interpreters the core tests measure when they are present (pyenv's 3.9-3.13).

PYTHON ?= /usr/bin/python3
PYENV_ROOT ?= $(shell pyenv root 2>/dev/null || echo $$HOME/.pyenv)
TEST_PYTHONS ?= $(foreach v,3.9 3.10 3.12 3.13,$(lastword $(sort $(wildcard $(PYENV_ROOT)/versions/$(v).*/bin/python$(v)))))

NATIVE := src/scorep/_native
# Where the built files of the package go (shared libraries, extension modules) and where the
# object files go. `make build` builds into the checkout (src/scorep, build/), so PYTHONPATH=src
# works; pip's build step (setup.py) sets both to its own build tree.
PKG_DIR ?= src/scorep
OBJ_DIR ?= build
CORE_SRC := $(sort $(wildcard $(NATIVE)/core/*.c))
# Adapters with a binary of their own: the Python adapter goes into the extension module of
# each interpreter, the MPI adapter into a library built with the MPI compiler wrapper. Every
# other folder under adapters/ is compiled into the core library.
OWN_BINARY_ADAPTERS := python mpi
CORE_ADAPTER_SRC := $(sort $(filter-out $(foreach a,$(OWN_BINARY_ADAPTERS),$(NATIVE)/adapters/$(a)/%),\
  $(wildcard $(NATIVE)/adapters/*/*.c)))
# The measurement core, the substrates (one folder each) and the in-core adapters: one shared
# library for every interpreter and for the MPI wrappers, so that they all record into the
# same measurement.
CORE_LIB_SRC := $(CORE_SRC) $(sort $(wildcard $(NATIVE)/substrates/*/*.c)) $(CORE_ADAPTER_SRC)
CORE_LIB := $(PKG_DIR)/libscorep_core.so
CORE_OBJS := $(patsubst $(NATIVE)/%.c,$(OBJ_DIR)/core/%.o,$(CORE_LIB_SRC))
# The CPython module (per interpreter): the Python adapter and the glue.
EXT_SRC := $(sort $(wildcard $(NATIVE)/adapters/python/*.c $(NATIVE)/bindings/*.c))
# The MPI adapter: PMPI wrappers, built with the MPI compiler wrapper when MPI is there.
MPI_SRC := $(sort $(wildcard $(NATIVE)/adapters/mpi/*.c))
MPI_LIB := $(PKG_DIR)/libscorep_mpi.so
MPI_OBJS := $(patsubst $(NATIVE)/%.c,$(OBJ_DIR)/mpi/%.o,$(MPI_SRC))
MPICC ?= mpicc
# The reports' fast OTF2 reader: a module of its own (scorep._reader), built when present.
READER_SRC := $(sort $(wildcard $(NATIVE)/reader/*.c))
# The wait-state engine runs offline in the reader too (scorep-report --wait-states): the
# same code as at the end of a run, with the in-process group of threads as ranks, its
# operations built by the same builder (waitstates_build.c). These core files know neither
# the measurement's state nor OTF2.
READER_ENGINE_SRC := $(addprefix $(NATIVE)/core/,waitstates.c waitstates_build.c tables.c serial.c error.c ipc.c \
  ipc_threads.c)
# JavaScript of the HTML report: npm packages, installed (never committed) when listed.
JS_DIR := src/scorep/report/js
HEADERS := $(sort $(wildcard $(NATIVE)/*/*.h $(NATIVE)/*/*/*.h))

CC ?= gcc
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE $(WARN) -fPIC -g -I$(NATIVE)
CFLAGS_BASE := $(CFLAGS_COMMON) -fvisibility=hidden
OPT ?= -O2
# Expanded at first use, not when the Makefile is read: on a fresh machine otf2-config only
# exists once `deps` has installed it.
OTF2_CFLAGS = $(eval OTF2_CFLAGS := $(shell otf2-config --cflags 2>/dev/null))$(OTF2_CFLAGS)
OTF2_LIBS = $(eval OTF2_LIBS := $(shell otf2-config --ldflags 2>/dev/null) \
  $(shell otf2-config --libs 2>/dev/null))$(OTF2_LIBS)

# Debian packages everything needs: build, OTF2, MPI, Jupyter, tests, reports, packaging
# (pip's build backend is setuptools; the *-whl packages are setuptools and wheel for pip's
# isolated builds with interpreters that lack them, such as pyenv's).
# libpapi-dev: PAPI metrics (SCOREP_METRIC_PAPI) in the tests; scorep loads libpapi at run
# time only when asked and works without it.
DEB_PACKAGES := build-essential python3-dev libotf2-trace-dev otf2-tools python3-otf2 libpapi-dev \
  libopenmpi-dev openmpi-bin python3-mpi4py python3-numpy python3-pytest \
  python3-ipykernel python3-jupyter-client python3-nbclient python3-nbformat python3-pandas \
  python3-notebook python3-nbconvert \
  python3-jupyter-kernel-test python3-protobuf python3-line-profiler graphviz chromium nodejs npm \
  python3-pip python3-venv python3-setuptools python3-wheel python3-build \
  python3-setuptools-whl python3-wheel-whl libpython3.11-testsuite python3-networkx python3-joblib \
  python3-sympy python3-dask python3-sklearn python3-seccomp libunwind-dev
# python3-notebook, python3-nbconvert: the browser test of measured cells' results in a real
# Notebook 6 server and in nbconvert's HTML export (tests/test_jupyter_frontend.py).
# python3-seccomp: the sampling test that forbids process_vm_readv with a real seccomp filter.
# libunwind-dev: --native unwinds the C stacks of samples (libunwind's local-only unwinder).
# libpython3.11-testsuite: CPython's own regression tests for Debian's python3 (3.11.2, the
# interpreter scorep is installed for), run under measurement by the tests. python3-networkx,
# python3-joblib, python3-sympy, python3-dask, python3-sklearn: third-party programs the tests
# measure (tests/test_third_party.py, tests/test_children.py).
# Wheels of setuptools and wheel that pip may use for a build environment (never PyPI).
DEB_WHEELS := /usr/share/python-wheels

.PHONY: openblas-private all deps build native build-all install install-system demo test ctest ctest-sanitize pytest clean ext js \
  stress-asan stress-asan-native \
  check-layers

all: build

# Installs missing Debian packages; does nothing (and needs no network) when all are there.
# npm counts as there when the command is (NodeSource's nodejs package brings its own npm and
# conflicts with Debian's).
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    if [ $$p = npm ] && command -v npm >/dev/null 2>&1; then continue; fi; \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: deps
	@$(MAKE) --no-print-directory native

# The package's native parts for one interpreter (PYTHON), the report's npm packages, and
# the MPI wrappers where $(MPICC) is found: what pip's build step (setup.py) runs, with
# PKG_DIR and OBJ_DIR in its build tree. Installs no Debian packages.
native: js $(CORE_LIB)
	@if [ -n "$(MPI_SRC)" ]; then \
	  if command -v $(MPICC) >/dev/null 2>&1; then $(MAKE) --no-print-directory $(MPI_LIB); \
	  else echo "scorep: $(MPICC) not found: building without the MPI wrappers (libscorep_mpi.so); --mpp=mpi will say so"; fi; \
	fi
	@$(MAKE) --no-print-directory ext PYTHON=$(PYTHON)

# The core library's own references (sp_meas, one core function calling another) bind
# inside the library: no interposition, so no GOT or PLT indirection on the event path.
CORE_BIND := -fno-semantic-interposition

$(OBJ_DIR)/core/%.o: $(NATIVE)/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC  core $<"
	@$(CC) $(CFLAGS_COMMON) $(CORE_BIND) $(OPT) $(OTF2_CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	@echo "  LD  $@"
	@$(CC) -shared -Wl,-soname,libscorep_core.so -Wl,-Bsymbolic -Wl,--no-undefined -o $@ $^ \
	  $(OTF2_LIBS) -lpthread

$(OBJ_DIR)/mpi/%.o: $(NATIVE)/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC  mpi $<"
	@$(MPICC) $(CFLAGS_BASE) $(OPT) $(OTF2_CFLAGS) -c $< -o $@

$(MPI_LIB): $(MPI_OBJS) $(CORE_LIB)
	@echo "  LD  $@"
	@$(MPICC) -shared -o $@ $(MPI_OBJS) -L$(PKG_DIR) -lscorep_core -Wl,-rpath,'$$ORIGIN' \
	  $(OTF2_LIBS) -lpthread

js:
	@if [ -f $(JS_DIR)/package.json ] && [ ! -f $(JS_DIR)/node_modules/.package-lock.json -o $(JS_DIR)/package-lock.json -nt $(JS_DIR)/node_modules/.package-lock.json ]; then \
	  command -v npm >/dev/null 2>&1 || { echo "scorep: npm is needed once, to fetch the HTML report's JavaScript into $(JS_DIR)/node_modules (Debian: apt-get install npm)" >&2; exit 1; }; \
	  echo "installing the report's npm packages"; \
	  (cd $(JS_DIR) && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	fi

build-all: build
	@for py in $(TEST_PYTHONS); do $(MAKE) --no-print-directory ext PYTHON=$$py || exit 1; done

# One extension module per interpreter; EXT_SUFFIX keeps them apart in src/scorep/.
ifneq ($(filter ext,$(MAKECMDGOALS)),)
PY_TAG := $(shell $(PYTHON) -c "import sys;print('%s%d%d' % (sys.implementation.name, *sys.version_info[:2]))")
EXT_SUFFIX := $(shell $(PYTHON) -c "import sysconfig;print(sysconfig.get_config_var('EXT_SUFFIX'))")
PY_INCLUDE := $(shell $(PYTHON) -c "import sysconfig;print(sysconfig.get_paths()['include'])")
EXT_OBJDIR := $(OBJ_DIR)/$(PY_TAG)
EXT_OBJS := $(patsubst $(NATIVE)/%.c,$(EXT_OBJDIR)/%.o,$(EXT_SRC))
EXT_MODULE := $(PKG_DIR)/_bindings$(EXT_SUFFIX)

READER_OBJS := $(patsubst $(NATIVE)/%.c,$(EXT_OBJDIR)/%.o,$(READER_SRC) $(if $(READER_SRC),$(READER_ENGINE_SRC)))
READER_MODULE := $(if $(READER_SRC),$(PKG_DIR)/_reader$(EXT_SUFFIX))

ext: $(CORE_LIB) $(EXT_MODULE) $(READER_MODULE)

$(READER_MODULE): $(READER_OBJS)
	@echo "  LD  $@"
	@$(CC) -shared -o $@ $^ $(OTF2_LIBS) -lpthread

$(EXT_OBJDIR)/%.o: $(NATIVE)/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC  $(PY_TAG) $<"
	@$(CC) $(CFLAGS_BASE) $(OPT) -isystem $(PY_INCLUDE) $(OTF2_CFLAGS) -c $< -o $@

$(EXT_MODULE): $(EXT_OBJS) $(CORE_LIB)
	@echo "  LD  $@"
	@$(CC) -shared -o $@ $(EXT_OBJS) -L$(PKG_DIR) -lscorep_core -Wl,-rpath,'$$ORIGIN' \
	  $(OTF2_LIBS) -lunwind -lpthread
endif

# C unit tests of the core and substrates (no Python): once plain, once under ASan+UBSan.
CORE_TEST_SRC := $(CORE_LIB_SRC)
CTEST_SRC := $(sort $(wildcard tests/c/test_*.c))
CTEST_BIN := $(patsubst tests/c/%.c,build/ctest/%,$(CTEST_SRC))
CTEST_SAN_BIN := $(patsubst tests/c/%.c,build/ctest-san/%,$(CTEST_SRC))
# What the tests share (set-up, reading archives back): linked into every test binary.
CTEST_SUPPORT := tests/c/ctest_support.c
CTEST_HEADERS := tests/c/ctest.h tests/c/ctest_support.h tests/c/thread_ipc.h tests/c/clock_ranks.h
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# The core's sources compiled once per flavour and linked into every test binary (compiling
# them into each of the ~15 binaries was most of the suite's build time).
CTEST_OBJS := $(patsubst $(NATIVE)/%.c,build/ctest/obj/%.o,$(CORE_TEST_SRC))
CTEST_SAN_OBJS := $(patsubst $(NATIVE)/%.c,build/ctest-san/obj/%.o,$(CORE_TEST_SRC))
# Kept between runs: make would delete them as intermediate files of the pattern rules.
.SECONDARY: $(CTEST_OBJS) $(CTEST_SAN_OBJS)

build/ctest/obj/%.o: $(NATIVE)/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(CC) $(CFLAGS_BASE) -O1 $(OTF2_CFLAGS) -Itests/c -c -o $@ $<

build/ctest-san/obj/%.o: $(NATIVE)/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@$(CC) $(CFLAGS_BASE) -O1 $(SANITIZE) $(OTF2_CFLAGS) -Itests/c -c -o $@ $<

build/ctest/%: tests/c/%.c $(CTEST_SUPPORT) $(CTEST_OBJS) $(HEADERS) $(CTEST_HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC  $@"
	@$(CC) $(CFLAGS_BASE) -O1 $(OTF2_CFLAGS) -Itests/c -o $@ $< $(CTEST_SUPPORT) $(CTEST_OBJS) $(OTF2_LIBS) -lpthread -lm

build/ctest-san/%: tests/c/%.c $(CTEST_SUPPORT) $(CTEST_SAN_OBJS) $(HEADERS) $(CTEST_HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC  $@ (ASan+UBSan)"
	@$(CC) $(CFLAGS_BASE) -O1 $(SANITIZE) $(OTF2_CFLAGS) -Itests/c -o $@ $< $(CTEST_SUPPORT) $(CTEST_SAN_OBJS) $(OTF2_LIBS) -lpthread -lm

ctest: deps $(CTEST_BIN)
	@for t in $(CTEST_BIN); do $$t || exit 1; done

ctest-sanitize: deps $(CTEST_SAN_BIN)
	@for t in $(CTEST_SAN_BIN); do ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $$t || exit 1; done

# The sampler's stress program (tests/programs/sampling_stress.py: thread churn, fork, GC,
# generators) for STRESS_SECONDS at 10 kHz under AddressSanitizer: the core library and the
# extension module for PYTHON built with -fsanitize=address into build/asan (a copy of the
# package beside the checkout's), and the interpreter, which is not built with ASan, run with
# Debian's libasan preloaded. Leak checking is off: the interpreter frees little at exit.
STRESS_SECONDS ?= 60
ASAN_DIR := build/asan
stress-asan: deps
	@rm -rf $(ASAN_DIR)/pkg && mkdir -p $(ASAN_DIR)/pkg && cp -r src/scorep $(ASAN_DIR)/pkg/ && \
	  rm -f $(ASAN_DIR)/pkg/scorep/*.so
	@$(MAKE) --no-print-directory native PYTHON=$(PYTHON) PKG_DIR=$(ASAN_DIR)/pkg/scorep \
	  OBJ_DIR=$(ASAN_DIR)/obj MPICC=no-mpicc-for-asan OPT="-O1 -fno-omit-frame-pointer" \
	  CC="$(CC) -fsanitize=address" | grep -v "MPI wrappers"
	LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	  $(PYTHON) benchmarks/sampling_stress.py --python $(PYTHON) --seconds $(STRESS_SECONDS) \
	  --pythonpath $(ASAN_DIR)/pkg $(STRESS_ARGS)

# The same with --native: the signal handler's unwinding, the helper thread's /proc reads
# and the merge under AddressSanitizer.
stress-asan-native:
	@$(MAKE) --no-print-directory stress-asan STRESS_ARGS=--native

pytest: build-all
	SCOREP_TEST_PYTHONS="$(TEST_PYTHONS)" PYTHONPATH=$(CURDIR)/src $(PYTHON) -m pytest -q tests

# The dependency rules of ARCHITECTURE.md, checked on the #include lines.
check-layers:
	@$(PYTHON) tools/check_layers.py

test: check-layers build-all ctest ctest-sanitize pytest

# pip installs this checkout for $(PYTHON) into the project's own virtual environment VENV
# (.venv/ in the checkout, created with --system-site-packages for Debian's numpy, mpi4py, OTF2
# reader and Jupyter when missing), then the Jupyter kernelspec into that environment. Nothing
# is written into any interpreter's own site-packages. tools/install.py says which pip command
# it runs; `rm -rf .venv` (or `.venv/bin/pip uninstall scorep`) undoes it.
VENV ?= .venv
install: deps
	@$(PYTHON) tools/install.py --venv $(VENV) --wheels $(DEB_WHEELS)

# The explicit system-wide installation, never part of `demo` or `test`: as root into
# /usr/local (Debian: /usr/local/lib/python3*/dist-packages and /usr/local/bin), else for the
# user (~/.local), with the kernelspec for that interpreter. `pip uninstall scorep` undoes it.
install-system: deps
	@$(PYTHON) tools/install.py --wheels $(DEB_WHEELS)

demo: install
	@$(VENV)/bin/python tools/demo.py

clean:
	rm -rf build dist src/scorep.egg-info src/scorep/_bindings*.so src/scorep/_reader*.so src/scorep/libscorep_*.so

# A private OpenBLAS for the --native tests (tests/test_sampling_native.py): Debian's
# libopenblas0-pthread unpacked into build/openblas, never installed (installing it would
# switch every program's BLAS on this machine through the alternatives system).
openblas-private:
	@mkdir -p build/openblas && cd build/openblas && \
	  apt-get download libopenblas0-pthread >/dev/null 2>&1 && dpkg -x libopenblas0-pthread_*.deb . && \
	  echo "OpenBLAS in build/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread"
