"""python -m papersift.testing.sim: run the simulated endpoint, or --selftest."""

from papersift.testing.sim.endpoint import main

raise SystemExit(main())
