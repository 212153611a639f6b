#!/usr/bin/env bash
# Extraction quality on the hand-written gold set: papersift and the two reference
# baselines on the same local model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M), same papers,
# same machine, then one `papersift eval` table per system.
#
#   bench/quality.sh [GOLD] [DB]      (needs `make install-local` and `pip install -e '.[baselines]'`)
#
# Papersift's answers come from the cache when this warehouse already has them.
set -euo pipefail
cd "$(dirname "$0")/.."
GOLD=${1:-bench/gold/neurips-2026.gold.json}
DB=${2:-bench-quality.duckdb}
BIN=${BIN:-.venv/bin}
PORT=${PORT:-8765}
THREADS=${THREADS:-1}
MODEL_FILE=$($BIN/python -c "from papersift.extract.access.models import ensure_model; print(ensure_model('qwen2.5-coder-1.5b'))")

$BIN/papersift ingest examples/neurips-2026/ --db "$DB"
$BIN/papersift extract --all --ids "$GOLD" --db "$DB" --threads "$THREADS"
PAPERSIFT_RUN=$($BIN/papersift sql "SELECT run_id FROM runs ORDER BY started DESC LIMIT 1" \
    --db "$DB" --format csv | tail -1)

# the baselines talk to a plain llama.cpp server with the same model and threads
$BIN/python -m llama_cpp.server --model "$MODEL_FILE" --model_alias qwen2.5-coder-1.5b \
    --host 127.0.0.1 --port "$PORT" --n_ctx 8192 --n_threads "$THREADS" \
    --n_threads_batch "$THREADS" --logits_all false > "$DB.server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null && break
    sleep 1
done
for baseline in naive langextract; do
    $BIN/python -m bench.baselines "$baseline" --base-url "http://127.0.0.1:$PORT/v1" \
        --model qwen2.5-coder-1.5b --db "$DB" --gold "$GOLD"
done
kill $SERVER

for run in $($BIN/papersift sql "SELECT run_id FROM runs WHERE status = 'finished' ORDER BY started" \
        --db "$DB" --format csv | tail -n +2); do
    $BIN/papersift eval --gold "$GOLD" --run "$run" --db "$DB"
done
echo "papersift run: $PAPERSIFT_RUN"
