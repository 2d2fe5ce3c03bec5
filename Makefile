# Two commands matter: `make demo` and `make test`. Both set up what they need first.
SHELL := /bin/bash
VENV  := .venv
BIN   := $(VENV)/bin
STAMP := $(VENV)/.installed
# The newest Python 3.11+ on the machine.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
            command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
            && { echo $$p; break; }; done)

.PHONY: test demo lint bench clean venv install-check install-check-arm64 train-vision train-vision-real train-vision-glyphs train-cardnet train-index-net train-face-net

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: Python 3.11 or newer is required (python3 --version)"; exit 2; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
	  rm -rf $(VENV); \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    echo "installing python3-venv (Debian ships venv separately)"; \
	    apt-get install -y -q python3-venv >/dev/null && $(PYTHON) -m venv $(VENV); \
	  else echo "error: '$(PYTHON) -m venv' failed; on Debian/Raspberry Pi OS run: sudo apt install python3-venv"; exit 2; fi; }
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

test: $(STAMP)
	@test -x /usr/bin/chromium || ! command -v apt-get >/dev/null || [ "$$(id -u)" != 0 ] || { \
	  echo "installing chromium (the floor's page is tested in Debian's headless chromium)"; \
	  apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .

demo: $(STAMP)
	$(BIN)/smart-table demo

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[bench]'
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# docs/install.md performed on this Debian machine in a throwaway root (a clone of the committed tree);
# `systemd/install-check.sh --system` does it for real on a clean Debian container or VM.
install-check:
	nice -n 10 systemd/install-check.sh

# the same walk for real (--system) in a clean Debian Bookworm arm64 root under qemu-user-static, as root,
# with the network to Debian's archive and PyPI: slow (20-40 min), so neither `make test` nor CI runs it
install-check-arm64:
	nice -n 10 systemd/install-check-arm64.sh

# the card verifier (vision/quad_verifier.npz) from synthetic composites, on one core
train-vision: $(STAMP)
	OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python -m vision.train

# the same plus the real photos, leave-one-source-out (vision/loso/), and read_confidence.json
train-vision-real: $(STAMP)
	OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python -m vision.train --real

# the built-in reader's glyph classifiers (vision/read_glyphs.npz, vision/loso/read_glyphs_without_*)
# from synthetic cards written in outline fonts (the `train` extra), the GPL decks and the real photos,
# leave-one-source-out, then the confidence maps refitted; about 10 minutes
train-vision-glyphs: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[train]'
	OMP_NUM_THREADS=1 nice -n 10 $(BIN)/python -m vision.read_train --real

# the card detector network (vision/cardnet.onnx) from synthetic scenes over the CC0 textures, with the
# Aisleriot decks (Debian's gnome-cards-data, fetched with apt-get download when not installed); torch
# from the `train` extra, CPU only; about an hour on 2 cores (the scenes are cached in build/cardnet)
train-cardnet: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[train]'
	nice -n 10 $(BIN)/python -m vision.cardnet_train
	nice -n 10 $(BIN)/python -m vision.cardnet_train --real

# the built-in reader's index network (vision/index_net.onnx and loso/index_net_without_*.onnx) from
# synthetic cards, the Aisleriot decks and the real photos (leave one source out), then the confidence
# maps refitted; torch from the `train` extra, CPU only; about 45 minutes on 2 cores
train-index-net: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[train]'
	nice -n 10 $(BIN)/python -m vision.index_net_train

train-face-net: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[train]'
	nice -n 10 $(BIN)/python -m vision.face_net_train

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
