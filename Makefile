# Two commands on a fresh machine: `make demo` (the app on its demo project) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TORCH_CPU := https://download.pytorch.org/whl/cpu

.PHONY: demo test test-slow test-all test-bundle install lint bench package wheel clean

# a line per step (the first install takes minutes: it says what it is doing, and pip's progress bars show)
$(STAMP): pyproject.toml constraints.txt
	@echo "[1/4] making the virtual environment $(VENV)"
	$(PYTHON) -m venv $(VENV)
	@echo "[2/4] upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "[3/4] installing torch 2.13.0, the CPU build, for the offline judges (the PyTorch CPU index, else the default)"
	@if $(BIN)/python -c "import urllib.request as u; u.urlopen('$(TORCH_CPU)/torch/', timeout=5)" 2>/dev/null; \
	then $(BIN)/python -m pip install --progress-bar on -c constraints.txt torch==2.13.0 --index-url $(TORCH_CPU); \
	else echo "      (the PyTorch CPU index is not reachable from here: torch from the default index)"; \
	     $(BIN)/python -m pip install --progress-bar on -c constraints.txt torch==2.13.0; fi
	@echo "[4/4] installing RAGEval Desktop, its offline judges and the developer tools"
	$(BIN)/python -m pip install --progress-bar on -c constraints.txt -e '.[dev,local]' --config-settings editable_mode=compat
	touch $(STAMP)
	@echo "installed"

install: $(STAMP)

# the checkout starts from compiled bytecode, as an installed app does (pip compiles at install), even where
# PYTHONDONTWRITEBYTECODE is set: compileall writes what is missing or stale (0.1 s when nothing is)
demo: $(STAMP)
	$(BIN)/python -m compileall -q rageval_desktop
	HF_HUB_OFFLINE=1 $(BIN)/rageval-desktop --demo

# the everyday loop: everything but the heavy cases, on three workers (tests that wait leave a core idle); CI also runs test-slow
test: $(STAMP)
	QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -n 3 -m "not slow"

test-slow: $(STAMP)
	QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m slow

test-all: test test-slow

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python bench/bench_import.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/bench_startup.py

# the sdist and the wheel (resources included) in dist/
wheel: $(STAMP)
	$(BIN)/python -m build --outdir dist .

# the desktop bundle: PyInstaller one-folder in dist/bundle/rageval-desktop (with `rageval`, the CLI twin, as a link),
# a .tar.gz with the launcher entry and icons, and an AppImage when appimagetool is on the PATH (packaging/README.md)
package: $(STAMP)
	$(BIN)/python -m pip install --quiet 'pyinstaller>=6'
	bash packaging/build.sh $(BIN)

# the frozen app's smoke test: it builds the bundle (as `make package` does) and runs it
test-bundle: $(STAMP)
	$(BIN)/python -m pip install --quiet 'pyinstaller>=6'
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q tests/test_bundle.py   # (the test builds the bundle, once)

clean:
	rm -rf $(VENV) build dist *.egg-info
