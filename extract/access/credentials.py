"""Keeping credentials out of everything papersift stores or prints.

Two rules. An endpoint URL that carries a credential (``user:password@`` or a query
parameter such as ``api-key=``) is refused where endpoints are parsed, so no secret ever
reaches an :class:`Endpoint`, a run row, a recording or a log line. And every error text
papersift keeps or shows goes through :func:`scrub`, which blanks the known secrets and
anything that looks like a credential header (``Authorization: Bearer ...``, ``Basic ...``,
``api-key: ...``, ``x-api-key: ...``) or a credential inside a URL.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import parse_qsl, unquote_plus, urlsplit, urlunsplit

from papersift.errors import PapersiftError

PLACEHOLDER = "[REDACTED]"
# Query parameters that carry a credential, compared without case, '-' and '_'.
SECRET_PARAMS = frozenset({
    "apikey", "key", "token", "accesstoken", "authtoken", "idtoken", "refreshtoken",
    "sig", "signature", "secret", "clientsecret", "password", "passwd", "pwd", "auth",
    "authorization", "bearer", "session", "sessiontoken", "xapikey", "code", "credential",
    "credentials", "xamzsignature", "xamzcredential", "xamzsecuritytoken", "xgoogsignature",
})
_HEADER = re.compile(
    r"(?i)(\b(?:proxy-)?authorization|\bx-api-key|\bapi-key|\bapi_key|\bx-auth-token|"
    r"\bopenai-api-key|\bcookie|\bset-cookie)"
    r"(\s*[\"']?\s*[:=]\s*[\"']?\s*)"  # the separator: ': ', '": "', "='"...
    r"((?:bearer|basic|token|digest)\s+)?"
    r"([^\s\"',;}\]]+)")
# A token after Bearer/Basic: long, and with a digit or Base64 padding, so that prose
# ("basic research") is left alone.
_SCHEME_TOKEN = re.compile(
    r"(?i)(bearer|basic)\s+(?=[A-Za-z0-9._~+/=\-]*[0-9=+/])([A-Za-z0-9._~+/=\-]{12,})")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}")
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s\"'<>]+")


class CredentialInURLError(PapersiftError, ValueError):
    """An endpoint URL carries a credential; the message shows the URL redacted."""


def _secret_param(name: str) -> bool:
    return re.sub(r"[-_.\s]", "", name).lower() in SECRET_PARAMS


def redact_url(url: str, *, keep_fragment: bool = False) -> str:
    """The URL with its userinfo and every credential query value replaced (and its
    fragment dropped, unless ``keep_fragment``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return PLACEHOLDER
    netloc = parts.netloc
    if "@" in netloc:
        netloc = PLACEHOLDER + "@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pieces = []
        for piece in query.split("&"):
            name, sep, _ = piece.partition("=")
            secret = _secret_param(unquote_plus(name))
            pieces.append(f"{name}{sep}{PLACEHOLDER}" if secret else piece)
        query = "&".join(pieces)
    fragment = parts.fragment if keep_fragment else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def check_endpoint_url(url: str, source: str = "--base-url") -> str:
    """The URL, if it carries no credential; raises CredentialInURLError otherwise.

    A key belongs in OPENAI_API_KEY or --api-key-file, where papersift keeps it out of
    storage; in a URL it would be sent as Basic auth and end up in every place the
    endpoint is recorded.
    """
    try:
        parts = urlsplit(url)
    except ValueError as error:
        raise CredentialInURLError(f"{source} is not a URL: {error}") from None
    where = []
    if "@" in parts.netloc:
        where.append("a user name or password before '@'")
    secret_names = sorted({name for name, _ in parse_qsl(parts.query, keep_blank_values=True)
                           if _secret_param(name)})
    if secret_names:
        where.append("the query parameter(s) " + ", ".join(secret_names))
    if parts.fragment:
        where.append("a '#' fragment")
    if where:
        raise CredentialInURLError(
            f"{source} {redact_url(url)} carries a credential ({'; '.join(where)}): papersift "
            "never stores credentials with the endpoint. Pass the URL without it and the key "
            "through OPENAI_API_KEY or --api-key-file.")
    return url


def secret_forms(secret: str) -> tuple[str, ...]:
    """The ways a secret can reappear in an echoed request: as is, and Base64 encoded as
    Basic auth would send it (alone, or after a user name)."""
    forms = {secret}
    for material in (secret, f":{secret}"):
        encoded = base64.b64encode(material.encode("utf-8", "surrogatepass")).decode()
        forms.add(encoded)
        forms.add(encoded.rstrip("="))
    return tuple(sorted((form for form in forms if len(form) >= 4), key=len, reverse=True))


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every known secret, credential header value, ``Bearer``/``Basic``
    token and URL credential replaced by a placeholder."""
    text = _HEADER.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{PLACEHOLDER}", text)
    text = _SCHEME_TOKEN.sub(lambda m: f"{m[1]} {PLACEHOLDER}", text)
    text = _URL.sub(lambda m: redact_url(m[0], keep_fragment=True)
                    if _has_url_secret(m[0]) else m[0], text)
    known = [secret for secret in secrets if secret]
    for secret in known:
        for form in secret_forms(secret):
            text = text.replace(form, PLACEHOLDER)
    if known:  # Basic auth of 'user:secret', or any other Base64 that hides a secret
        text = _BASE64.sub(lambda m: PLACEHOLDER if _hides(m[0], known) else m[0], text)
    return text


_LONGEST_TOKEN = 4096  # a Base64 run longer than this is checked on its first part only


def _hides(token: str, secrets: list[str]) -> bool:
    """Whether some stretch of ``token`` is Base64 of a text that holds a secret. The run of
    Base64 letters the pattern found may have other letters glued on either side ("…Basic
    dXNl…Authorization"), so every alignment and every length is decoded."""
    token = token[:_LONGEST_TOKEN]
    for start in range(4):
        body = token[start:]
        for end in range(len(body) - len(body) % 4, 11, -4):
            try:
                decoded = base64.b64decode(body[:end]).decode("utf-8", "replace")
            except ValueError:
                continue
            if any(secret in decoded for secret in secrets):
                return True
    return False


def _has_url_secret(url: str) -> bool:
    """Userinfo or a credential query parameter (a fragment alone is no secret here)."""
    try:
        parts = urlsplit(url)
        names = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True)]
    except ValueError:
        return False
    return "@" in parts.netloc or any(_secret_param(name) for name in names)
