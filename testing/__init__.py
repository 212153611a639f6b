"""Hand-written fakes of an OpenAI-compatible endpoint (NOT recordings, not a model), and
the harness the tests and the benchmarks share.

Every fake answers at the HTTP boundary, so the real client stack (httpx2, openai,
instructor, papersift's retrying transport) runs as it does against a real endpoint:

- ``mock``: scripted answers and the first-words model, through ``httpx2.MockTransport``;
- ``fakebatch``: OpenAI's Files and Batches routes, through ``httpx2.MockTransport``;
- ``sim``: the one loopback fake OpenAI server (asyncio, real HTTP): faults by rule or
  at a rate and a request log (``fault_profile``), latency, slots, RPM/TPM limits, files
  and batches; tests and benchmarks both drive it (``bench.simendpoint`` re-exports it);
- ``bodies`` / ``drafts``: the chat-completion bodies and drafts all of them answer with.

Source checkouts only: the wheel does not ship it, and no production module imports it
(an import contract in pyproject.toml says so).
"""
