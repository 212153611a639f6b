"""Who may talk to the server and how: the token, CSRF checks, read-only mode and the
body size limit, as one ASGI middleware in front of every route.

- Without a token the server answers only requests whose ``Host`` names it on loopback
  (``localhost``, ``127.0.0.1``, ``[::1]``, with its port): a page on another site whose
  name an attacker re-points at 127.0.0.1 (DNS rebinding) sends its own name, and is
  refused.
- With a token (required off loopback), every request carries it: ``Authorization:
  Bearer T``, or the ``papersift_token`` cookie that opening ``/?token=T`` once sets.
- A state-changing request (POST, PUT, PATCH, DELETE) from another site is refused: a
  foreign ``Origin`` (without a token, any but the loopback origins above; the request's
  own Host is never the measure, since a rebinding page sets it) or ``Sec-Fetch-Site``;
  the review pages' requests carry the page's CSRF token in ``X-CSRF-Token``; API
  requests must be ``application/json``, which a browser cannot send cross-site without
  a CORS preflight this server never grants.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "papersift_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def _reply(send: Send, status: int, message: str,
                 extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


def loopback_hosts(port: int, bound: str) -> frozenset[str]:
    """The Host values a server without a token answers: its loopback names with its
    port (and without it on port 80, where browsers leave it out)."""
    names = {"localhost", "127.0.0.1", "[::1]"}
    if bound not in ("", "0.0.0.0", "::"):
        names.add(f"[{bound}]" if ":" in bound else bound)
    found = {f"{name}:{port}" for name in names}
    return frozenset(found | (names if port == 80 else set()))


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


class Guard:
    """The middleware; ``csrf`` is the secret the pages embed, new for every start."""

    def __init__(self, app: ASGIApp, *, token: str | None, csrf: str, read_only: bool,
                 max_body_bytes: int, hosts: frozenset[str] = frozenset()) -> None:
        self.app = app
        self.token = token
        self.hosts = hosts  # the Host values accepted without a token (lower case)
        self.csrf = csrf
        self.read_only = read_only
        self.max_body_bytes = max_body_bytes

    def _token_of(self, headers: dict[str, str]) -> str | None:
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header carries no token
            return None
        morsel = cookie.get(TOKEN_COOKIE)
        return morsel.value if morsel else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "").strip().lower()
        if self.token is None and host not in self.hosts:
            await _reply(send, 421, f"this server answers only as {' or '.join(sorted(self.hosts))}"
                         f" (the request named {host[:100]!r}); to reach it under another "
                         "name, start it with --token")
            return
        if self.token is not None and not await self._authorised(scope, headers, send):
            return
        method = scope["method"]
        if method in UNSAFE:
            problem = self._unsafe_problem(scope, headers)
            if problem is not None:
                await _reply(send, problem[0], problem[1])
                return
            body = await self._body(receive, headers)
            if body is None:
                await _reply(send, 413, f"request body over {self.max_body_bytes} bytes")
                return
            if not _is_text(body):
                await _reply(send, 400, "the body is not text: it holds invalid UTF-8 or "
                             "an escaped lone surrogate (\\ud800 to \\udfff)")
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    async def _authorised(self, scope: Scope, headers: dict[str, str], send: Send) -> bool:
        assert self.token is not None
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.get("token", [None])[0]
        if given is not None and scope["method"] == "GET" and _same(given, self.token):
            # a browser opening /?token=T once: keep it in a cookie, drop it from the URL
            rest = {k: v for k, v in query.items() if k != "token"}
            location = scope["path"] + (("?" + urlencode(rest, doseq=True)) if rest else "")
            cookie = f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            await send({"type": "http.response.start", "status": 303,
                        "headers": [(b"location", location.encode()),
                                    (b"set-cookie", cookie.encode()),
                                    (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return False
        carried = self._token_of(headers)
        if carried is None or not _same(carried, self.token):
            await _reply(send, 401, "this server needs its token: send 'Authorization: "
                         "Bearer TOKEN', or open /?token=TOKEN once in a browser",
                         [(b"www-authenticate", b"Bearer")])
            return False
        return True

    def _unsafe_problem(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        if self.read_only:
            return 403, "this server is read-only (--read-only): nothing can be changed"
        scheme = scope.get("scheme", "http")
        # with a token, the Host is whatever name the token holder used; without one,
        # only the loopback names the Host check above let through
        own = ({f"{scheme}://{host}" for host in self.hosts} if self.token is None
               else {f"{scheme}://{headers.get('host', '')}"})
        origin = headers.get("origin")
        if origin is not None and origin != "null" and origin.lower() not in own:
            return 403, (f"cross-origin request refused (Origin {origin}, this server "
                         f"{' or '.join(sorted(own))})")
        if origin == "null":
            return 403, "cross-origin request refused (Origin null)"
        site = headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return 403, f"cross-site request refused (Sec-Fetch-Site: {site})"
        if scope["path"].startswith("/api/"):
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                return 415, "API requests that change something must be application/json"
            return None
        if not _same(headers.get(CSRF_HEADER, ""), self.csrf):
            return 403, "missing or wrong CSRF token: reload the page"
        return None

    async def _body(self, receive: Receive, headers: dict[str, str]) -> bytes | None:
        """The whole request body, or None when it is over the limit."""
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            return None
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(parts)


def _is_text(body: bytes) -> bool:
    """Whether a body is UTF-8 and, if JSON, names no lone surrogate: those strings
    cannot be stored or even echoed in an error (they were a 500 with a traceback)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if "\\u" not in text.lower():
        return True
    try:
        parsed = json.loads(text)
    except ValueError:
        return True  # not JSON: the route says what is wrong with it
    try:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _replay(body: bytes, original: Receive) -> Receive:
    """The body read ahead, then whatever the connection says next (its disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await original()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive
