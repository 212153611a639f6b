"""Raw llama.cpp speed on this machine: prompt evaluation, generation, prefix reuse.

Usage:
    python -m bench.local_speed MODEL.gguf [--threads N] [--prompt-tokens 1500]
        [--suffix-tokens 300] [--generate-tokens 200] [--flash-attn]

This is the physical limit for the local backend: no HTTP, no chat template, no
grammar. It drives ``llama_cpp.Llama`` directly with n_ctx 8192 and, unless
--threads is given, llama-cpp-python's default thread counts.

Prefix reuse goes through ``Llama.generate``, the path the server uses: it keeps
the tokens of the previous call in the KV cache and only evaluates the part of the
new prompt after the longest common prefix.

The last figure is the cost of JSON-schema constrained decoding (what the server
does for ``response_format={"type": "json_object", "schema": ...}``): decode speed
of the same chat request with and without the schema grammar.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Iterator, Sequence
from typing import Any

# Abstract-like filler, so the tokenizer sees ordinary scientific English.
_FILLER = (
    "We study how sparse attention patterns affect the sample efficiency of small "
    "transformer models trained on synthetic reasoning tasks. Across 14 benchmarks "
    "and three model sizes, structured sparsity reduces training compute by 38% "
    "while matching dense baselines within one point of accuracy. We release code, "
    "data and checkpoints, and discuss limitations of the evaluation protocol. "
)


def _tokens(llm: Any, text_seed: str, count: int) -> list[int]:
    """Exactly ``count`` tokens of filler text, varied by ``text_seed``."""
    text = text_seed
    tokens: list[int] = llm.tokenize(text.encode(), add_bos=False)
    while len(tokens) < count:
        text += _FILLER
        tokens = llm.tokenize(text.encode(), add_bos=False)
    return tokens[:count]


def _first_token_seconds(llm: Any, prompt: Sequence[int]) -> float:
    """Seconds until ``Llama.generate`` yields its first token (prompt eval + 1 sample)."""
    started = time.perf_counter()
    stream: Iterator[int] = llm.generate(prompt, temp=0.0)
    next(stream)
    return time.perf_counter() - started


_KEYWORD_SCHEMA = {
    "type": "object",
    "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
    "required": ["keywords"],
}


def _decode_rate(llm: Any, constrained: bool, max_tokens: int) -> tuple[int, float]:
    """Chunks streamed after the first one, and their rate, for one chat request."""
    request: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "Answer with a JSON object only."},
            {"role": "user", "content": "List 60 machine learning keywords as {keywords: [...]}."},
        ],
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "stream": True,
    }
    if constrained:
        request["response_format"] = {"type": "json_object", "schema": _KEYWORD_SCHEMA}
    llm.reset()
    chunks = iter(llm.create_chat_completion(**request))
    next(chunks)
    started = time.perf_counter()
    count = sum(1 for _ in chunks)
    return count, count / (time.perf_counter() - started)


def main() -> None:
    """Run the measurements and print a short report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="path to a GGUF file")
    parser.add_argument("--threads", type=int, default=None, help="generation threads")
    parser.add_argument("--prompt-tokens", type=int, default=1500)
    parser.add_argument("--suffix-tokens", type=int, default=300)
    parser.add_argument("--generate-tokens", type=int, default=200)
    parser.add_argument("--n-batch", type=int, default=512)
    parser.add_argument("--flash-attn", action="store_true")
    args = parser.parse_args()

    from llama_cpp import Llama

    load_started = time.perf_counter()
    llm = Llama(
        model_path=args.model,
        n_ctx=8192,
        n_batch=args.n_batch,
        n_threads=args.threads,
        flash_attn=args.flash_attn,
        verbose=False,
    )
    load_seconds = time.perf_counter() - load_started
    print(f"model        {args.model}")
    print(
        f"cpus         {multiprocessing.cpu_count()}  threads {llm.n_threads} "
        f"(batch {llm.n_threads_batch})  n_batch {args.n_batch}  "
        f"flash_attn {args.flash_attn}"
    )
    print(f"load         {load_seconds:.2f} s")

    # Warm-up: touch the weights once so page-cache faults do not count.
    llm.reset()
    llm.eval(_tokens(llm, "Warm up. ", 32))

    # 1. Prompt evaluation.
    prompt = _tokens(llm, "Abstract. ", args.prompt_tokens)
    llm.reset()
    started = time.perf_counter()
    llm.eval(prompt)
    prompt_seconds = time.perf_counter() - started
    print(
        f"prompt eval  {len(prompt)} tokens in {prompt_seconds:.2f} s = "
        f"{len(prompt) / prompt_seconds:.1f} tok/s"
    )

    # 2. Generation after that prompt (greedy; EOS is ignored so the count is exact).
    llm.reset()
    stream: Iterator[int] = llm.generate(prompt, temp=0.0)
    next(stream)  # prompt evaluation and the first token
    started = time.perf_counter()
    for _ in range(args.generate_tokens - 1):
        next(stream)
    generate_seconds = time.perf_counter() - started
    produced = args.generate_tokens - 1
    print(
        f"generation   {produced} tokens in {generate_seconds:.2f} s = "
        f"{produced / generate_seconds:.1f} tok/s (context {len(prompt)}+)"
    )

    # 3. Prefix reuse: the same long prefix P with two different suffixes.
    prefix = _tokens(llm, "Instructions. ", args.prompt_tokens)
    first = prefix + _tokens(llm, "First abstract: graphs. ", args.suffix_tokens)
    second = prefix + _tokens(llm, "Second abstract: proteins. ", args.suffix_tokens)
    llm.reset()
    _first_token_seconds(llm, first)
    reused_seconds = _first_token_seconds(llm, second)
    llm.reset()
    fresh_seconds = _first_token_seconds(llm, second)
    print(
        f"prefix reuse P={len(prefix)} + suffix {args.suffix_tokens}: "
        f"second prompt {reused_seconds:.2f} s with reuse vs {fresh_seconds:.2f} s fresh "
        f"({fresh_seconds / reused_seconds:.1f}x)"
    )

    # 4. Grammar cost: the same request, free vs. constrained by a JSON schema.
    free_count, free_rate = _decode_rate(llm, constrained=False, max_tokens=args.generate_tokens)
    json_count, json_rate = _decode_rate(llm, constrained=True, max_tokens=args.generate_tokens)
    print(
        f"json schema  decode {json_rate:.1f} tok/s constrained ({json_count} chunks) vs "
        f"{free_rate:.1f} tok/s free ({free_count} chunks)"
    )
    llm.close()


if __name__ == "__main__":
    main()
