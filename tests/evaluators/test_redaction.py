"""One definition of a credential, for every output: URLs, error texts and log lines."""

from __future__ import annotations

import base64
import io
import logging

from evaluators.redaction import guard_logs, redact, remember, url_credentials, without_credentials


def test_urls_are_shown_without_their_credentials() -> None:
    assert (
        without_credentials("https://user:secret@llm.example:8443/v1?x=1")
        == "https://llm.example:8443/v1?x=1"
    )
    assert without_credentials("http://token@[::1]:9/v1") == "http://[::1]:9/v1"
    assert without_credentials("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_what_a_gateway_may_echo_is_redacted_and_ordinary_words_are_not() -> None:
    basic = base64.b64encode(b"alice:pa55word").decode()
    text = (
        f"refused Authorization: Basic {basic}; Bearer tk-123 key sk-abcdefghijkl; "
        "at http://alice:pa55word@gw/v1; the Basic plan costs 10 euros"
    )
    clean = redact(text)
    assert clean == (
        "refused Authorization: Basic [redacted]; Bearer [redacted] key [redacted]; "
        "at http://***@gw/v1; the Basic plan costs 10 euros"
    )


def test_a_configured_urls_credentials_are_redacted_wherever_they_appear() -> None:
    url = "http://judge%40corp:p%2Fss-w0rd-long@gateway/v1"
    forms = url_credentials(url)
    decoded = base64.b64encode(b"judge@corp:p/ss-w0rd-long").decode()
    assert {"judge@corp:p/ss-w0rd-long", decoded, "p/ss-w0rd-long"} <= set(forms)
    assert redact(f"user={decoded[:-2]}.. full={decoded}", forms) == f"user={decoded[:-2]}.. full=[redacted]"
    assert url_credentials("http://gateway/v1") == ()


def test_every_record_a_guarded_handler_writes_is_redacted() -> None:
    """What `ragpulse run` installs on its root handlers: any logger, not only the HTTP clients'."""
    remember(url_credentials("http://svc:long-password-9@phoenix:6006"))
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    guard_logs([handler])
    logger = logging.getLogger("ragpulse.test_redaction")
    logger.addHandler(handler)
    try:
        logger.warning(
            "posting to %s failed: %s", "http://svc:long-password-9@phoenix:6006", "echo svc:long-password-9"
        )
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == "posting to http://***@phoenix:6006 failed: echo [redacted]\n"
