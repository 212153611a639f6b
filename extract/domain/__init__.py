"""Domain layer: pure functions of text and drafts. Reading inputs, grounding names and
numbers in the abstract, assembling the stored extraction, scoring against gold, prices.
Imports no HTTP client, no LLM SDK and nothing of the layers above."""
