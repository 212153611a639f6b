"""A hand-written fake: a simulated OpenAI-compatible endpoint for benchmarks (NOT a model).

The simulator lives in papersift.testing.sim; this module re-exports its names for the
benchmarks and runs it as ``python -m bench.simendpoint``.
"""

from __future__ import annotations

from papersift.testing.sim import *  # noqa: F403  (the re-export this module is)
from papersift.testing.sim.endpoint import main

if __name__ == "__main__":
    raise SystemExit(main())
