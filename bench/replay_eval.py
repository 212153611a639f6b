"""Score the grounding code on recorded model answers, without running a model.

    python -m bench.replay_eval [--recording R] [--input PATH] --gold G [--errors] [--by-source]

Replays a recording (default: the test suite's recording of the bundled corpus) through the
real openai + instructor code into a fresh warehouse, so the current assembly code grounds
the recorded drafts, then prints `papersift eval` for it. A change to the grounding rules
is measured this way in seconds; a change to the prompt or grammar needs a new recording
(the replay fails loudly on a request the recording lacks).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from papersift.extract.access.recording import Recording, ReplayTransport
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.interface.cli import cli
from papersift.testing.corpus import recorded_endpoint

REPO = Path(__file__).resolve().parents[1]

DEFAULT_RECORDING = REPO / "tests/recordings/neurips-2026.qwen2.5-coder-1.5b-q4_k_m.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recording", type=Path, default=DEFAULT_RECORDING)
    parser.add_argument("--input", default=str(REPO / "examples/neurips-2026"))
    parser.add_argument("--gold", default=str(REPO / "bench/gold/neurips-2026.gold.json"))
    parser.add_argument("--db", type=Path, help="keep the warehouse here (default: temporary)")
    parser.add_argument("--errors", action="store_true")
    parser.add_argument("--by-source", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    args = parser.parse_args()
    recording = Recording.load(args.recording)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "replay.duckdb"
        replay = ReplayTransport(recording)
        run_inputs([args.input], RunSettings(db=db, max_reasks=1), transport=replay,
                   endpoint=recorded_endpoint(recording))
        if replay.missing:
            print(f"{len(replay.missing)} request(s) not in the recording", file=sys.stderr)
        command = ["eval", "--gold", args.gold, "--db", str(db)]
        command += ["--errors"] * args.errors + ["--by-source"] * args.by_source
        command += ["--format", "json"] * args.json
        result = CliRunner().invoke(cli, command, catch_exceptions=False)
        print(result.output)
        if args.json:
            json.loads(result.output)
        return result.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
