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
import functools
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import SplitResult, parse_qsl, unquote_plus, urlsplit, urlunsplit

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


# A parameter whose name (without case, '-', '_') holds one of these carries a secret:
# subscription-key, Ocp-Apim-Subscription-Key, private_token, client_secret, X-Sig...
_SECRET_WORD = re.compile(r"key|token|secret|sig|auth|passw|pwd|credential|bearer|cookie")
# Prefixes of well-known API keys (OpenAI, Anthropic, Hugging Face, GitHub, GitLab, Slack,
# Google, AWS access key ids).
_KEY_PREFIX = re.compile(r"(?:sk|pk|rk)[-_]|hf_|gh[pousr]_|glpat-|xox[abpr]-|AIza|AKIA|ASIA")
# One piece (between '-', '_', '.', '~') of a value that looks like a generated
# credential: 20 or more letters and digits, both; model and deployment names have
# shorter pieces, UUIDs too.
_RANDOM_PIECE = re.compile(r"(?=[A-Za-z0-9+/=]*\d)(?=[A-Za-z0-9+/=]*[A-Za-z])[A-Za-z0-9+/=]{20,}")


class CredentialInURLError(PapersiftError, ValueError):
    """An endpoint URL carries a credential; the message shows the URL redacted."""


def _secret_param(name: str) -> bool:
    normal = re.sub(r"[-_.\s]", "", name).lower()
    return normal in SECRET_PARAMS or bool(_SECRET_WORD.search(normal))


def looks_like_credential(value: str) -> bool:
    """Whether a URL's value has a credential's shape: a known key prefix, or a long
    random-looking piece (a 32-digit hex key, a Base64 token)."""
    value = unquote_plus(value)
    if len(value) >= 16 and _KEY_PREFIX.match(value):
        return True
    pieces = {*re.split(r"[-_.~]", value), *re.split(r"[-_.~/]", value)}
    return any(_RANDOM_PIECE.fullmatch(piece) for piece in pieces)


def _redact_params(text: str, separator: str) -> str:
    """``name=value`` pairs joined by ``separator``: a secret name's or a credential-shaped
    value replaced."""
    pieces = []
    for piece in text.split(separator):
        name, sep, value = piece.partition("=")
        secret = (bool(sep) and _secret_param(unquote_plus(name))) or looks_like_credential(
            value if sep else name)
        pieces.append((f"{name}{sep}{PLACEHOLDER}" if sep else PLACEHOLDER) if secret
                      else piece)
    return separator.join(pieces)


def _redact_path(path: str) -> str:
    """Each segment of a path, and each of its ``;name=value`` parameters, redacted."""
    segments = []
    for segment in path.split("/"):
        head, sep, params = segment.partition(";")
        head = PLACEHOLDER if head and looks_like_credential(head) else head
        segments.append(head + sep + (_redact_params(params, ";") if sep else ""))
    return "/".join(segments)


def redact_url(url: str, *, keep_fragment: bool = False) -> str:
    """The URL with its userinfo, every credential query or path parameter and every
    credential-shaped value replaced (and its fragment dropped, unless ``keep_fragment``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return PLACEHOLDER
    netloc = parts.netloc
    if "@" in netloc:
        netloc = PLACEHOLDER + "@" + netloc.rsplit("@", 1)[1]
    query = _redact_params(parts.query, "&") if parts.query else ""
    fragment = parts.fragment if keep_fragment else ""
    return urlunsplit((parts.scheme, netloc, _redact_path(parts.path), query, fragment))


def _named_secrets(parts: SplitResult) -> list[str]:
    """The names of the query and ``;`` path parameters that carry a secret."""
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    for segment in parts.path.split("/"):
        pairs += [(name, value) for name, _, value in
                  (param.partition("=") for param in segment.split(";")[1:])]
    return sorted({name for name, value in pairs
                   if _secret_param(name) or (value and _KEY_PREFIX.match(value))})


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
    secret_names = _named_secrets(parts)
    if secret_names:
        where.append("the parameter(s) " + ", ".join(secret_names))
    if any(len(segment) >= 16 and _KEY_PREFIX.match(unquote_plus(segment))
           for segment in parts.path.split("/")):
        where.append("an API key in the path")
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


# Between two characters of an echoed secret: nothing, or what splits it for display
# (spaces, dashes, dots, colons, commas, backslashes...); a hex dump may also put \x, 0x
# or % before each byte.
_SPLIT = r"(?:[\s\-_.:,;|/\\%'\"]|\\x|0x)*"
# Transformed forms are looked for only for secrets this long: a short one (a test's
# "k") would match ordinary text once split, reversed or cased differently.
_MIN_TRANSFORMED = 8


def _spread(form: str) -> str:
    """A pattern matching ``form`` with any case and separators between its characters."""
    return _SPLIT.join(re.escape(char) for char in form)


@functools.lru_cache(maxsize=64)
def transformed_pattern(secret: str) -> re.Pattern[str] | None:
    """One pattern for the secret echoed transformed: upper- or lower-cased, reversed,
    split by spaces or dashes, hex-encoded (and the hex reversed or split), in any mix."""
    if len(secret) < _MIN_TRANSFORMED:
        return None
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, secret[::-1], raw.hex(), raw[::-1].hex(), raw.hex()[::-1]}
    return re.compile("|".join(_spread(form) for form in sorted(forms, key=len, reverse=True)),
                      re.IGNORECASE)


def hide_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every known secret replaced, in every form a server or a model may
    echo it: as is, Base64 (alone, as Basic auth, or glued to other Base64), hex, reversed,
    re-cased or split. No shape rules: this is safe on a model's answer."""
    known = [secret for secret in secrets if secret]
    for secret in known:
        for form in secret_forms(secret):
            text = text.replace(form, PLACEHOLDER)
        pattern = transformed_pattern(secret)
        if pattern is not None:
            text = pattern.sub(PLACEHOLDER, text)
    if known:  # Basic auth of 'user:secret', or any other Base64 that hides a secret
        hidden = [*known, *(secret[::-1] for secret in known
                            if len(secret) >= _MIN_TRANSFORMED)]
        # Base64 of a text holding a secret is at least about 4/3 of the secret long:
        # shorter runs (a long word in a model's answer) cannot hide one
        need = 4 * min(map(len, known)) // 3 - 4
        text = _BASE64.sub(lambda m: PLACEHOLDER if len(m[0]) >= need and
                           _hides(m[0], hidden) else m[0], text)
    return text


def in_every_string(value: Any, replace: Callable[[str], str]) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, scalars) with ``replace`` applied to
    every string in it, at any depth."""
    if isinstance(value, str):
        return replace(value)
    if isinstance(value, dict):
        return {key: in_every_string(item, replace) for key, item in value.items()}
    if isinstance(value, list):
        return [in_every_string(item, replace) for item in value]
    return value


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every known secret (see hide_secrets), credential header value,
    ``Bearer``/``Basic`` token and URL credential replaced by a placeholder."""
    text = _HEADER.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{PLACEHOLDER}", text)
    text = _SCHEME_TOKEN.sub(lambda m: f"{m[1]} {PLACEHOLDER}", text)
    text = _URL.sub(lambda m: redact_url(m[0], keep_fragment=True)
                    if _has_url_secret(m[0]) else m[0], text)
    return hide_secrets(text, secrets)


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
    """Userinfo, a credential parameter or a credential-shaped value (a fragment alone
    is no secret here)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return "@" in parts.netloc or redact_url(url, keep_fragment=True) != url
