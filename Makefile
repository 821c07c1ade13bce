# jacbench: two commands do all the set-up on a fresh machine.
#   make test   create .venv, install the pinned dependencies and the package, run the tests
#   make book   the main job: set up, then build the report (see README)
#   make pdf    print the built book to _build/pdf/jacbench.pdf (after make book)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= standard
# The CPU build of torch 2.13.0 lies on this machine's disk; PyPI's would be a multi-GB CUDA build.
WHEELS ?= /opt/wheels
PIP_LINKS := $(if $(wildcard $(WHEELS)),--find-links $(WHEELS),)

# The install is redone only when the dependency pins in pyproject.toml change.
PINS_HASH := $(shell $(PYTHON) -c "import tomllib,hashlib; d=tomllib.load(open('pyproject.toml','rb'))['project']['dependencies']; print(hashlib.sha256('\n'.join(d).encode()).hexdigest()[:16])")
STAMP := $(VENV)/.installed-$(PINS_HASH)

.PHONY: env test lint format book check-html pdf linkcheck clean

env: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(PIP_LINKS) -e .
	@rm -f $(VENV)/.installed-*
	@touch $@
	@echo "environment ready: $(VENV) (pins $(PINS_HASH))"

# ALLOW_NO_TESTS=1 (set by .ci/run) turns pytest's "no tests collected" (exit 5) into success;
# make itself would report any failing recipe as status 2 and hide the difference.
test: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	@$(BIN)/python -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ] && [ -n "$(ALLOW_NO_TESTS)" ]; then echo "pytest collected no tests"; rc=0; fi; \
	exit $$rc

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

format: $(STAMP)
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

# Sweep the profile (reusing results already measured), execute the notebooks with papermill,
# build _build/html with jupyter-book -W.
book: $(STAMP)
	$(BIN)/jacbench book --profile $(PROFILE)

# Open every page of the built book in headless Chromium (Debian's chromium) and list problems;
# screenshots for review go to _build/screenshots.
check-html: $(STAMP)
	$(BIN)/jacbench check-html _build/html

# The single-page HTML of the built book, printed by headless Chromium.
pdf: $(STAMP)
	$(BIN)/jacbench pdf --build _build

# External links, where there is a network (after make book); the report is
# _build/linkcheck/_build/html/output.txt.
linkcheck: $(STAMP)
	$(BIN)/jupyter-book build _build/src --builder linkcheck --path-output _build/linkcheck

clean:
	rm -rf _build results .pytest_cache
