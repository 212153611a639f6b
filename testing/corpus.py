"""A realistic warehouse for tests and benches: the bundled corpus run through the real
openai + instructor code, answered by the REAL recorded responses of the local model
(tests/recordings/), offline. Building one takes a few seconds. Also where the bundled
corpus and its recording lie in the source tree."""

from __future__ import annotations

from pathlib import Path

from papersift.extract.access.llm import Endpoint
from papersift.extract.access.recording import Recording, ReplayTransport
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.pipeline import RunSummary

ROOT = Path(__file__).resolve().parent.parent  # the source tree (this folder is linked)
CORPUS = ROOT / "examples" / "neurips-2026"
RECORDINGS = ROOT / "tests" / "recordings"
CORPUS_RECORDING = RECORDINGS / "neurips-2026.qwen2.5-coder-1.5b-q4_k_m.json"


def recorded_endpoint(recording: Recording) -> Endpoint:
    """The endpoint a recording was made with (its URL is never contacted)."""
    described = recording.meta["endpoint"]
    return Endpoint(
        base_url="http://127.0.0.1:1/v1",
        model=described["model"],
        mode=described["mode"],
        temperature=described["temperature"],
        max_tokens=described["max_tokens"],
        seed=described["seed"],
        constrain_json=described["constrain_json"],
        kind=described["kind"],
        identity=recording.meta["endpoint_identity"],
    )


def replay_corpus(db: Path) -> RunSummary:
    """Fill ``db`` with the bundled corpus, answered by the recording."""
    recording = Recording.load(CORPUS_RECORDING)
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, max_reasks=1),
                            transport=ReplayTransport(recording),
                            endpoint=recorded_endpoint(recording))
    return summary
