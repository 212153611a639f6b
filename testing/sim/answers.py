"""What the simulator (a hand-written fake endpoint, NOT a model) answers: a papersift
draft built by code from the abstract in the request, as a chat completion."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from papersift.testing.sim.tokens import (
    TOOL_CALL_TOKENS,
    canonical,
    content_text,
    count_tokens,
    prompt_tokens,
)

_ABSTRACT = re.compile(r'Abstract:\s*"""\n?(.*?)\n?"""', re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[$\\])")
_PROPOSAL = re.compile(r"\b(we|our|this (paper|work))\b[^.;]{0,80}?\b(propos|introduc|present|"
                       r"develop|design|call|build|formulat|creat)\w*", re.I)
_EVALUATION = re.compile(r"\b(benchmark|dataset|experiment|evaluat|datasets|corpus|suite)\w*",
                         re.I)
_NAME = re.compile(r"(?<![\w$\\{-])[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
                   r"(?![\w}-])")
_MODEL_FAMILY = re.compile(r"^(GPT|LLaMA|Llama|Qwen|Gemini|Claude|DeepSeek|Mistral|BERT|"
                           r"RoBERTa|T5|ViT|ResNet|CLIP|LLM|LLMs|AI|ML|RL|NLP|II|III|IV)\b")
_RESULT = re.compile(r"(?<![\w.^_@-])(\d+\.\d+|\d+)(?=\s*(%|\\%|percent|x\b|×|-fold|points?\b"
                     r"|pp\b))")
_PHRASE_END = re.compile(r"[,;:(]")
_CODEBLOCK_HINT = "```json codeblock"
CONTRIBUTION = "method"


def abstract_of(messages: Any) -> str:
    """The abstract a chat request is about: the text between the prompt's triple quotes
    (searched from the last message back), else the last user message's text."""
    if not isinstance(messages, list):
        return ""
    texts = [content_text(m.get("content")) for m in messages if isinstance(m, dict)]
    for text in reversed(texts):
        found = _ABSTRACT.search(text)
        if found:
            return found.group(1).strip()
    users = [content_text(m.get("content")) for m in messages
             if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1].strip() if users else ""


def _task_phrase(sentence: str) -> str:
    """The head of a sentence, cut at its first comma or parenthesis, at most 14 words and
    100 characters, trimmed to start and end on letters or digits (an exact slice)."""
    head = _PHRASE_END.split(sentence, maxsplit=1)[0]
    words = head.split()[:14]
    phrase = " ".join(words)
    while len(phrase) > 100 and len(words) > 1:
        words = words[:-1]
        phrase = " ".join(words)
    phrase = re.sub(r"^[^\w]+|[^\w]+$", "", phrase)
    return phrase if phrase in sentence else re.sub(r"^[^\w]+|[^\w]+$", "", sentence[:100])


def _names(sentence: str) -> list[str]:
    return [m.group() for m in _NAME.finditer(sentence) if not _MODEL_FAMILY.match(m.group())
            and 2 <= len(m.group()) <= 40]


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks the answer to follow, wherever the mode put it."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        direct = response_format.get("schema")
        if isinstance(direct, dict):
            return direct
        inner = response_format.get("json_schema")
        nested = inner.get("schema") if isinstance(inner, dict) else None
        if isinstance(nested, dict):
            return nested
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict):
        parameters = tools[0].get("function", {}).get("parameters")
        if isinstance(parameters, dict):
            return parameters
    return None


def _gain_enum(schema: dict[str, Any]) -> list[str] | None:
    """The values a gain may take when the schema restricts them ([] when it allows no
    gains), None when it does not restrict them."""
    gains = schema.get("properties", {}).get("gains", {})
    if isinstance(gains, dict) and gains.get("maxItems") == 0:
        return []
    definition = schema.get("$defs", {}).get("DraftGain", {})
    value = definition.get("properties", {}).get("value", {}) if isinstance(definition,
                                                                           dict) else {}
    enum = value.get("enum") if isinstance(value, dict) else None
    return [str(v) for v in enum] if isinstance(enum, list) else None


def _metric_before(text: str, start: int) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z-]+", text[max(0, start - 60):start])
    return " ".join(words[-3:]) or "reported result"


def draft_for(abstract: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """A papersift draft (schema v2) built by code from the abstract: its opening task
    phrase, up to two names from sentences where the authors propose something, one name
    from an evaluation sentence, and one result number (from the schema's enum when the
    request restricts gain values)."""
    text = " ".join(abstract.split()) if abstract.strip() else "an empty abstract"
    sentences = [s for s in _SENTENCE.split(text) if s.strip()] or [text]
    methods: list[str] = []
    for sentence in sentences:
        if len(methods) >= 2:
            break
        lowered = sentence.lower()
        if ("we " in lowered or "our " in lowered or "this " in lowered) \
                and _PROPOSAL.search(sentence):
            methods += [n for n in _names(sentence) if n not in methods]
    methods = methods[:2]
    benchmarks: list[dict[str, Any]] = []
    for sentence in sentences:
        if _EVALUATION.search(sentence):
            names = [n for n in _names(sentence) if n not in methods]
            if names:
                benchmarks.append({"name": names[0], "new": False})
                break
    gains: list[dict[str, Any]] = []
    allowed = _gain_enum(schema) if schema is not None else None
    if allowed:
        value = allowed[0]
        place = text.find(value)
        gains.append({"value": value, "metric": _metric_before(text, max(place, 0)),
                      "vs": None, "on": None})
    elif allowed is None:
        match = _RESULT.search(text)
        if match:
            gains.append({"value": match.group(1), "metric": _metric_before(text, match.start()),
                          "vs": None, "on": None})
    draft = {"tasks": [_task_phrase(sentences[0]) or "the problem"], "methods": methods,
             "benchmarks": benchmarks, "gains": gains, "types": [CONTRIBUTION]}
    return {**draft, **_user_answers(schema, text, draft)}


def _user_answers(schema: dict[str, Any] | None, text: str,
                  draft: dict[str, Any]) -> dict[str, Any]:
    """Answers to the properties a request adds to the draft (a run's user fields), by
    their JSON type: a value of an enum the text names (else its last, often 'other'), the
    first of a list enum (the grammar's numbers), a name, a sentence, or false."""
    answers: dict[str, Any] = {}
    for name, prop in (schema or {}).get("properties", {}).items():
        if name in draft or not isinstance(prop, dict):
            continue
        many = prop.get("type") == "array"
        item = prop.get("items", {}) if many else prop
        enum = item.get("enum") if isinstance(item, dict) else None
        if isinstance(enum, list) and enum:
            named = [v for v in enum if re.search(rf"\b{re.escape(str(v))}\b", text, re.I)]
            value: Any = (named or enum[-1:])[0] if not many else enum[:1]
        elif item.get("type") == "boolean":
            value = False
        elif many:
            value = _names(text)[:1]
        else:
            value = text.split(". ", maxsplit=1)[0][:80]
        answers[name] = [value] if many and not isinstance(value, list) else value
    return answers


def _request_hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()[:24]


def completion_for(body: dict[str, Any], model: str, created: int) -> dict[str, Any]:
    """The chat-completion body answering ``body``: the draft as content (in a ```json
    block when the request asks for one) or as a tool call when the request has tools."""
    messages = body.get("messages")
    draft = draft_for(abstract_of(messages), _schema_of(body))
    arguments = json.dumps(draft)
    digest = _request_hash(body)
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        name = str(tools[0].get("function", {}).get("name", "PaperDraft"))
        message["tool_calls"] = [{"id": f"call_{digest[:16]}", "type": "function",
                                  "function": {"name": name, "arguments": arguments}}]
        finish = "tool_calls"
    else:
        texts = [content_text(m.get("content")) for m in messages or [] if isinstance(m, dict)]
        wants_block = any(_CODEBLOCK_HINT in t for t in texts)
        message["content"] = f"```json\n{arguments}\n```" if wants_block else arguments
        finish = "stop"
    completion = count_tokens(arguments) + (TOOL_CALL_TOKENS if message.get("tool_calls") else 0)
    prompt = prompt_tokens(body)
    return {
        "id": f"chatcmpl-sim{digest}",
        "object": "chat.completion",
        "created": created,
        "model": str(body.get("model") or model),
        "system_fingerprint": "fp_sim",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0}},
    }


def bad_chat_request(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    return None
