"""The HTTP names the interface layer uses, so that it never imports httpx2 itself: the
type of a replacement transport (tests, replays, benches) and one small JSON POST."""

from __future__ import annotations

from typing import TypeAlias

import httpx2

# What a test or a replay hands a run in place of the network (a RecordingTransport,
# a ReplayTransport, a MockTransport).
Transport: TypeAlias = httpx2.BaseTransport


def post_json(url: str, *, headers: dict[str, str], timeout: float) -> object | None:
    """The decoded JSON of a 200 answer to an empty JSON object POSTed to ``url``; None
    for anything else (nobody listening, an error status, a body that is not JSON)."""
    try:
        answer = httpx2.post(url, content=b"{}", headers=headers, timeout=timeout)
        return answer.json() if answer.status_code == 200 else None
    except (httpx2.HTTPError, ValueError):
        return None
