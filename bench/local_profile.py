"""Where a local request's time goes: the llama.cpp server's own timings per request,
the client's latency around them, and the cost of building the per-abstract grammar.

    python -m bench.local_profile --log SERVER.log [--db WAREHOUSE] [--run RUN_ID]
    python -m bench.local_profile --grammar 60 [--conference ../shared/conferences/F.jsonl]

The server log is what llama-cpp-python's server prints for each request (papersift's
LocalServer writes it to a temporary file: copy it before the run ends, or start the
server with a log path). For each request it gives the prompt tokens reused from the KV
cache ("prefix-match hit"), the prompt tokens evaluated and their time, the tokens
decoded and their time, and the request's total. What the total holds beyond prompt
evaluation and decoding is sampling under the grammar, grammar set-up and detokenising.
With --db, the client's latency of each call (the `calls` table, in order) adds what
HTTP, the server's Python layers and papersift's client cost beyond the server's total.

--grammar times llama-cpp-python's JSON-schema-to-grammar conversion on the schema each
abstract's request carries (it lists the numbers the abstract states, so it differs per
abstract and the server converts it on every request).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
_PROMPT = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_EVAL = re.compile(r"^llama_perf_context_print:\s+eval time =\s*([\d.]+) ms /\s*(\d+) runs")
_TOTAL = re.compile(r"total time =\s*([\d.]+) ms /\s*(\d+) tokens")


def parse_log(path: Path) -> list[dict[str, float]]:
    """One dict per request the server answered, in order."""
    requests: list[dict[str, float]] = []
    current: dict[str, float] = {}
    for line in path.read_text(errors="replace").splitlines():
        if (hit := _HIT.search(line)) is not None:
            current = {"reused": float(hit.group(1)), "remaining": float(hit.group(2))}
        elif (prompt := _PROMPT.search(line)) is not None:
            current.update(prompt_ms=float(prompt.group(1)), prompt_tokens=float(prompt.group(2)))
        elif (decode := _EVAL.search(line)) is not None:
            current.update(decode_ms=float(decode.group(1)), decode_tokens=float(decode.group(2)))
        elif (total := _TOTAL.search(line)) is not None and "decode_ms" in current:
            current["total_ms"] = float(total.group(1))
            current.setdefault("reused", 0.0)
            current["other_ms"] = current["total_ms"] - current.get("prompt_ms", 0.0) \
                - current["decode_ms"]
            requests.append(current)
            current = {}
    return requests


def client_latencies(db: str, run_id: str | None) -> list[float]:
    import duckdb

    con = duckdb.connect(db, read_only=True)
    run = run_id or con.execute("SELECT run_id FROM runs ORDER BY started DESC LIMIT 1").fetchone()
    rows = con.execute("SELECT latency_ms FROM calls WHERE run_id = ? AND latency_ms IS NOT NULL "
                       "ORDER BY started", [run if isinstance(run, str) else run[0]]).fetchall()
    return [float(r[0]) for r in rows]


def _line(label: str, values: list[float], unit: str) -> str:
    if not values:
        return f"{label:38} -"
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"{label:38} median {statistics.median(values):8.1f} {unit:6} p90 {p90:8.1f}  "
            f"mean {statistics.mean(values):8.1f}")


def report(requests: list[dict[str, float]], latencies: list[float]) -> None:
    print(f"{len(requests)} requests")
    print(_line("prompt tokens reused from the cache", [r["reused"] for r in requests], "tok"))
    print(_line("prompt tokens evaluated", [r.get("prompt_tokens", 0) for r in requests], "tok"))
    print(_line("prompt evaluation", [r.get("prompt_ms", 0) for r in requests], "ms"))
    print(_line("tokens decoded", [r["decode_tokens"] for r in requests], "tok"))
    print(_line("decoding", [r["decode_ms"] for r in requests], "ms"))
    print(_line("rest of the server's total", [r["other_ms"] for r in requests], "ms"))
    print(_line("server total", [r["total_ms"] for r in requests], "ms"))
    prompt_rate = sum(r.get("prompt_tokens", 0) for r in requests) / max(
        1e-9, sum(r.get("prompt_ms", 0) for r in requests) / 1000)
    decode_rate = sum(r["decode_tokens"] for r in requests) / max(
        1e-9, sum(r["decode_ms"] for r in requests) / 1000)
    print(f"{'rates':38} prompt {prompt_rate:.1f} tok/s, decode {decode_rate:.1f} tok/s")
    if latencies:
        paired = list(zip(latencies, requests, strict=False))
        print(_line("client latency", [c for c, _ in paired], "ms"))
        print(_line("client latency - server total", [c - r["total_ms"] for c, r in paired],
                    "ms"))
        share = {k: sum(r.get(k, 0.0) for _, r in paired) / sum(c for c, _ in paired)
                 for k in ("prompt_ms", "decode_ms", "other_ms")}
        print("share of client time: " + ", ".join(f"{k[:-3]} {v:.0%}" for k, v in share.items())
              + f", outside the server {1 - sum(share.values()):.0%}")


def grammar_seconds(count: int, conference: Path, seed: int) -> list[float]:
    from llama_cpp import LlamaGrammar

    from papersift.extract.domain.assembly.assemble import result_numbers
    from papersift.extract.domain.fields import DEFAULT_FIELDS

    lines = conference.read_text().splitlines()
    chosen = random.Random(seed).sample(lines, count)
    seconds = []
    for line in chosen:
        text = json.loads(line).get("abstract") or ""
        schema = DEFAULT_FIELDS.draft_json_schema(result_numbers(text))
        started = time.perf_counter()
        LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path)
    parser.add_argument("--db")
    parser.add_argument("--run", help="the run whose calls to pair (default: the latest)")
    parser.add_argument("--grammar", type=int, default=0, help="abstracts to time")
    parser.add_argument("--conference", type=Path,
                        default=REPO.parent / "shared/conferences/neurips2025.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.log:
        report(parse_log(args.log), client_latencies(args.db, args.run) if args.db else [])
    if args.grammar:
        seconds = [s * 1000 for s in grammar_seconds(args.grammar, args.conference, args.seed)]
        print(_line(f"grammar build ({args.grammar} abstracts)", seconds, "ms"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
