# `make run` serves the scorepad (`make run LAN=1` to the phones on the Wi-Fi); `make test` runs every test;
# `make lint` runs ruff and mypy. All set up .venv/ first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench snapshot-check doubt-model data data-stress data-choosing data-table data-v1 data-blender data-blender-train train-env system-deps clean

# `make run LAN=1`: serve on the local network, for the phones at the table (join by QR code).
run: $(STAMP)
	$(BIN)/companion serve $(if $(LAN),--lan)

test: $(STAMP) system-deps
	$(BIN)/python -m pytest -q

# Settings in pyproject.toml: ruff over the repository, mypy over the package.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# constraints.txt pins every package at the versions the data, the models' figures and the tests
# were made with (a newer OpenCV or Pillow draws the synthetic photos otherwise).
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

# Browser tests drive Debian's Chromium (Playwright's own browser download cannot work offline).
# The synthetic data generator draws from every font installed, so the same seed makes the same
# photo only with the same fonts: these are the ones the shipped models' data was made with
# (docs/synthetic_data.md), and tests/test_synth_samples.py remakes a sample photo with them.
SYSTEM_PACKAGES := chromium chromium-driver fonts-dejavu-core fonts-dejavu-extra fonts-liberation \
	fonts-freefont-ttf fonts-noto-core fonts-comic-neue fonts-bebas-neue fonts-cantarell \
	fonts-crosextra-carlito fonts-crosextra-caladea fonts-go fonts-hack fonts-lato \
	fonts-league-spartan fonts-linuxlibertine fonts-open-sans fonts-roboto-unhinted \
	fonts-roboto-slab fonts-urw-base35 fonts-firacode fonts-inconsolata fonts-lobster

system-deps:
	@if ! dpkg-query -W $(SYSTEM_PACKAGES) >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(SYSTEM_PACKAGES); \
	  else echo "Tests need these Debian packages: sudo apt-get install $(SYSTEM_PACKAGES)"; fi; \
	fi

# Benchmarks print figures; they never pass or fail.
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_rules.py
	$(BIN)/python benchmarks/bench_advisor.py
	$(BIN)/python benchmarks/bench_read.py
	$(BIN)/python benchmarks/bench_scorepad.py
	$(BIN)/python benchmarks/bench_soak.py
	$(BIN)/python benchmarks/bench_turn.py
	$(BIN)/python benchmarks/bench_live.py

# The readings the vision code gives, against tests/snapshots/ (sample photos and a generated set
# of 320, made into data/snapshot first; training/readings_snapshot.py holds its seeds).
snapshot-check: $(STAMP) system-deps
	$(BIN)/python -m training.readings_snapshot check --samples
	$(BIN)/python -m training.readings_snapshot check

# The doubt model (models/doubt_model.json) and its operating point (models/tuning.json), fitted on
# the choosing sets (make data data-stress data-choosing data-v1 data-table); docs/doubt_model.md.
doubt-model: $(STAMP) system-deps
	$(BIN)/python -m training.doubt_model collect --fresh --data $$($(BIN)/python -c "from training.doubt_model import CHOOSING; print(*CHOOSING)")
	$(BIN)/python -m training.doubt_model fit --seed 52

# The synthetic datasets (git-ignored, resumable): train, a validation set never trained on,
# and a calibration set for the confidences.
data: $(STAMP) system-deps
	$(BIN)/python -m training.synth --out data/train --count 40000 --split train
	$(BIN)/python -m training.synth --out data/val --count 2000 --split val
	$(BIN)/python -m training.synth --out data/calib --count 1000 --split calib
	$(BIN)/python -m training.synth --out data/far --count 200 --split val --seed 3001 --phone-far

# The stress sets of the model card's per-set table: one condition each, calib split to choose on,
# val split to report (docs/synthetic_data.md).
STRESS := $(BIN)/python -m training.synth --workers 2
data-stress: $(STAMP) system-deps
	$(STRESS) --split calib --out data/stress_warm_calib --count 200 --seed 2301 --light warm
	$(STRESS) --split calib --out data/stress_cold_calib --count 120 --seed 2401 --light cold
	$(STRESS) --split calib --out data/stress_dark_calib --count 120 --seed 2501 --dark-bodies
	$(STRESS) --split calib --out data/stress_tilt_calib --count 150 --seed 2601 --tilt 27 40
	$(STRESS) --split val --out data/stress_warm_val --count 150 --seed 1301 --light warm
	$(STRESS) --split val --out data/stress_cold_val --count 100 --seed 1401 --light cold
	$(STRESS) --split val --out data/stress_dark_val --count 100 --seed 1501 --dark-bodies
	$(STRESS) --split val --out data/stress_tilt_val --count 150 --seed 1601 --tilt 27 40

# Larger choosing sets for the flags (docs/synthetic_data.md): calib split, seeds of their own.
CHOOSE := $(BIN)/python -m training.synth --split calib --workers 2
data-choosing: $(STAMP) system-deps
	$(CHOOSE) --out data/more/calib --count 1000 --seed 8001
	$(CHOOSE) --out data/more/stress_warm_calib --count 400 --seed 8301 --light warm
	$(CHOOSE) --out data/more/stress_tilt_calib --count 400 --seed 8401 --tilt 27 40
	$(CHOOSE) --out data/more/stress_tilt_calib2 --count 600 --seed 8451 --tilt 27 40
	$(CHOOSE) --out data/more/stress_dark_calib --count 300 --seed 8501 --dark-bodies
	$(CHOOSE) --out data/more/stress_dark_calib2 --count 600 --seed 8551 --dark-bodies
	$(CHOOSE) --out data/more/stress_cold_calib --count 300 --seed 8601 --light cold
	$(CHOOSE) --out data/page_calib --count 300 --seed 8701 --phone --long-side 1920 --jpeg-quality 90
	$(CHOOSE) --out data/page_far_calib --count 100 --seed 8702 --phone-far --long-side 1920 --jpeg-quality 90

# Table sequences: games of 8 photos, one set, table, light and phone each, where colour is
# weakest (docs/synthetic_data.md): choosing and reporting sets, seeds apart.
GAMES := $(BIN)/python -m training.synth.games --photos 8 --workers 2
data-table: $(STAMP) system-deps
	$(GAMES) --out data/table/choose --games 32 --look table --seed 5201
	$(GAMES) --out data/table/report --games 48 --look table --seed 5301
	$(GAMES) --out data/table/warm_choose --games 16 --look table-warm --seed 5401
	$(GAMES) --out data/table/warm_report --games 16 --look table-warm --seed 5501
	$(GAMES) --out data/table/far_choose --games 24 --look far --seed 7101
	$(GAMES) --out data/table/far_report --games 24 --look far --seed 7001

# Photos of a look the models never trained on, cheap to make: the generator as it first was
# (commit 73db4eb: its dice, shading, tables and camera drawn otherwise), run from its own tree in
# data/cache (docs/synthetic_data.md). Its calib split is for choosing, its val split for reporting.
V1_COMMIT := 73db4eb
V1_TREE := data/cache/synth_v1
data-v1: $(STAMP) system-deps
	git cat-file -e $(V1_COMMIT)^{commit} || { echo "data-v1 needs commit $(V1_COMMIT): git fetch --unshallow"; exit 1; }
	test -f $(V1_TREE)/training/synth/__main__.py || { rm -rf $(V1_TREE).part && mkdir -p $(V1_TREE).part && \
	  git archive $(V1_COMMIT) training companion | tar -x -C $(V1_TREE).part && rm -rf $(V1_TREE) && mv $(V1_TREE).part $(V1_TREE); }
	cd $(V1_TREE) && PYTHONPATH=. $(CURDIR)/$(BIN)/python -m training.synth --out $(CURDIR)/data/v1_calib --count 400 --split calib --seed 5001
	cd $(V1_TREE) && PYTHONPATH=. $(CURDIR)/$(BIN)/python -m training.synth --out $(CURDIR)/data/v1_val --count 400 --split val --seed 5101

# Validation photos from a second renderer, Blender's path tracer (training/blender). bpy is
# a 500 MB wheel for Python 3.11 only, so it gets its own environment, never the product's;
# numpy, Pillow and OpenCV there at constraints.txt's versions, as the generator's.
BLENDER_VENV := .venv-blender
BLENDER_PYTHON ?= python3.11

$(BLENDER_VENV)/.installed: pyproject.toml constraints.txt
	test -x $(BLENDER_VENV)/bin/python || $(BLENDER_PYTHON) -m venv $(BLENDER_VENV)
	$(BLENDER_VENV)/bin/pip install -q -c constraints.txt bpy==4.2.0 numpy pillow opencv-python-headless
	$(BLENDER_VENV)/bin/pip install -q --no-deps -e .
	touch $@

data-blender: $(BLENDER_VENV)/.installed
	$(BLENDER_VENV)/bin/python -m training.blender --out data/val_blender --count 120 --seed 4001 > /dev/null
	$(BLENDER_VENV)/bin/python -m training.blender --out data/calib_blender --count 80 --seed 4501 --split calib > /dev/null
	$(BLENDER_VENV)/bin/python -m training.blender --out data/calib_blender2 --count 60 --seed 4601 --split calib > /dev/null
	$(BLENDER_VENV)/bin/python -m training.blender --out data/calib_blender3 --count 120 --seed 4701 --split calib > /dev/null

# The Blender training split (training/blender/crops.py): a small frame around one die each, for
# the reader's second source (training.reader --second-data). Days of rendering at the lowest
# priority, one thread; stopped, `make data-blender-train` again goes on where it stopped.
# In the background: mkdir -p data/blender_train && nohup make data-blender-train >> data/blender_train/render.log 2>&1 &
BLENDER_TRAIN_COUNT ?= 40000
data-blender-train: $(BLENDER_VENV)/.installed
	nice -n 19 $(BLENDER_VENV)/bin/python -m training.blender --split train --out data/blender_train \
	  --count $(BLENDER_TRAIN_COUNT) --seed 6001 --log-every 50 > /dev/null

# Training is an optional extra: the CPU wheel of PyTorch on disk.
$(VENV)/.train: $(STAMP)
	$(BIN)/pip install -q -c constraints.txt -e '.[test,train]'
	touch $@

train-env: $(VENV)/.train

clean:
	rm -rf $(VENV) $(BLENDER_VENV) *.egg-info .pytest_cache
