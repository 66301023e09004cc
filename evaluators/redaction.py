"""Credentials never reach an output: URLs are shown without them, error texts and log lines lose them.

A judge URL may carry credentials (`https://user:secret@gateway/v1`). httpx then sends them as HTTP
Basic auth and names the URL in its INFO line for every request, and a gateway that refuses them may
quote the Authorization header back in its error, which becomes a metric's reason (the results topic,
evaluation spans, the page, the eval reports). Every place that prints a URL, an error or a log line
goes through this module, so there is one definition of what a credential looks like:

- userinfo in a URL (`scheme://user:pass@`);
- `Bearer <token>`, `Basic <base64 of user:pass>` and OpenAI-style `sk-...` keys;
- the literal credentials of every URL a judge was configured with (`remember`), as `user:pass` and
  as the base64 that Basic auth sends, wherever they appear, with or without a prefix.

It lives in `evaluators` because the collector depends on the evaluators, never the other way round.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

REDACTED = "[redacted]"

_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@]*(?:@[^\s/?#@]*)*@")
_BASIC = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{4,}={0,2})")
_TOKENS = re.compile(r"(?i)\b(bearer\s+)\S+|\bsk-[A-Za-z0-9_\-]{8,}")
_MIN_SECRET = 4  # shorter literals are ordinary words: replacing them would garble every line
_MIN_PASSWORD_ALONE = 8  # a password on its own is redacted only when it cannot be a common word
_remembered: set[str] = set()


def without_credentials(url: str) -> str:
    """`https://user:secret@host/v1` -> `https://host/v1`: URLs are printed, credentials never."""
    try:
        parts = urlsplit(url)
        if parts.username is None and parts.password is None:
            return url
        host = parts.hostname or ""
        host = f"[{host}]" if ":" in host else host
        netloc = f"{host}:{parts.port}" if parts.port else host
    except ValueError:  # not parseable as a URL (a bad port): still never print its userinfo
        return _URL_USERINFO.sub(r"\1", url)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def url_credentials(url: str | None) -> tuple[str, ...]:
    """What of `url`'s credentials may come back in a server's reply: `user:pass` as written and
    decoded, the base64 that HTTP Basic auth sends of it, and a long enough password on its own."""
    try:
        parts = urlsplit(url or "")
        user, password = parts.username, parts.password
    except ValueError:
        return ()
    if user is None and password is None:
        return ()
    forms: set[str] = set()
    for name, secret in ((user or "", password or ""), (unquote(user or ""), unquote(password or ""))):
        pair = f"{name}:{secret}"
        forms.update((pair, base64.b64encode(pair.encode()).decode()))
        if len(secret) >= _MIN_PASSWORD_ALONE:
            forms.add(secret)
    return tuple(form for form in forms if len(form) >= _MIN_SECRET)


def remember(secrets: Iterable[str]) -> None:
    """Literal secrets (a configured URL's `url_credentials`) that `redact` removes from every text,
    log lines included, for the life of the process."""
    _remembered.update(secret for secret in secrets if len(secret) >= _MIN_SECRET)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` without credentials: the given and remembered literals, URL userinfo, Bearer and Basic
    values and sk- keys each become `[redacted]` (userinfo becomes `***@`)."""
    for secret in sorted({*secrets, *_remembered}, key=len, reverse=True):
        if len(secret) >= _MIN_SECRET and secret in text:
            text = text.replace(secret, REDACTED)
    text = _URL_USERINFO.sub(r"\1***@", text)
    text = _BASIC.sub(_basic, text)
    return _TOKENS.sub(lambda m: (m.group(1) or "") + REDACTED, text)


def _basic(match: re.Match[str]) -> str:
    """`Basic <token>` is a credential when the token is base64 of `user:pass`; "Basic plan" is not."""
    token = match.group(2)
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return match.group(0)
    return match.group(1) + REDACTED if ":" in decoded else match.group(0)


class RedactingFilter(logging.Filter):
    """Rewrites a record whose message (or traceback) holds a credential; drops nothing. On a logger
    it sees that logger's own records (before any handler, pytest's caplog included); on a handler,
    every record the handler writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: logging reports it, it is not ours to fix
            return True
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


_FILTER = RedactingFilter()
# The HTTP clients' loggers: httpx names the full URL (userinfo included) at INFO on every request.
# The `openai` client ships its own copies (`httpx2`, `httpcore2`), so loggers are matched by prefix too.
_HTTP_PREFIXES = ("httpx", "httpcore")
_HTTP_LOGGERS = (
    "httpx",
    "httpx2",
    *(f"{core}.{part}" for core in ("httpcore", "httpcore2") for part in ("connection", "http11", "proxy")),
)


def guard_logs(handlers: Iterable[logging.Handler] = ()) -> None:
    """Put the redacting filter on the HTTP clients' loggers and on `handlers` (a CLI's root handlers:
    every logger then). Idempotent: called by every judge that is built and by each command line."""
    names = {*_HTTP_LOGGERS, *(n for n in logging.Logger.manager.loggerDict if n.startswith(_HTTP_PREFIXES))}
    for target in (*(logging.getLogger(name) for name in sorted(names)), *handlers):
        if _FILTER not in target.filters:
            target.addFilter(_FILTER)
