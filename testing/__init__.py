"""Hand-written fakes of an OpenAI-compatible endpoint (NOT recordings, not a model), and
the harness the tests and the benchmarks share.

Every fake answers at the HTTP boundary, so the real client stack (httpx2, openai,
instructor, papersift's retrying transport) runs as it does against a real endpoint:

- ``mock``: scripted answers and the first-words model, through ``httpx2.MockTransport``;
- ``fakebatch``: OpenAI's Files and Batches routes, through ``httpx2.MockTransport``;
- ``faultserver``: a threaded loopback server serving faults by rule or at a rate;
- ``sim``: the asyncio loopback simulator (latency, slots, RPM/TPM limits, batches) that
  the benchmarks drive at scale (``bench.simendpoint`` re-exports it);
- ``bodies`` / ``drafts``: the chat-completion bodies and drafts all of them answer with.

Source checkouts only: the wheel does not ship it, and no production module imports it
(an import contract in pyproject.toml says so).
"""
