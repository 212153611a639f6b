"""OpenAI wire bodies shared by the hand-written fakes (NOT recordings): chat completions,
error bodies, and finding the abstract a papersift request is about."""

from __future__ import annotations

import re
from typing import Any

# The abstract as papersift's prompt frames it: Abstract:\n"""\n...\n""", after the
# input's title line ("Title: ...", then a blank line) when it has one.
ABSTRACT = re.compile(r'Abstract:\n"""\n(?:Title: [^\n]*\n\n)?(.*)\n"""', re.S)


def last_abstract(body: dict[str, Any]) -> str:
    """The abstract in the request's last message; fails loudly when it is not there."""
    match = ABSTRACT.search(body["messages"][-1]["content"])
    assert match, "the abstract must be the last thing in the request"
    return match.group(1)


def first_user_abstract(body: dict[str, Any]) -> str | None:
    """The abstract in the first user message (re-asks append messages after it)."""
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            match = ABSTRACT.search(str(message.get("content") or ""))
            return match.group(1) if match else None
    return None


def chat_completion(content: str | None, *, finish_reason: str = "stop",
                    prompt_tokens: int = 100, completion_tokens: int = 50,
                    tool: str | None = None, completion_id: str = "chatcmpl-handwritten",
                    model: str = "handwritten-fake",
                    call_id: str = "call_fake") -> dict[str, Any]:
    """A hand-written chat-completion body carrying ``content``, as a call of ``tool``
    when one is named."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool is not None:
        message = {"role": "assistant", "content": None,
                   "tool_calls": [{"id": call_id, "type": "function",
                                   "function": {"name": tool, "arguments": content}}]}
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def error_body(message: str, kind: str, code: str | None = None,
               param: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
