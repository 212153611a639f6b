"""Model-access layer: the one road to every model. The OpenAI-compatible client factory,
retries and request pacing, endpoints, the local llama.cpp server and its weights,
recordings, and the extractor that turns one abstract into one grounded extraction."""
