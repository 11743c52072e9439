"""Logging set-up for the CLI edge, with secret values redacted from every record."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from brain.settings import LogSettings, mask_url

__all__ = ["RedactingFilter", "configure_logging", "redact"]

_MASK = "**********"
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with each known secret masked, and any password written in a URL (`scheme://user:pw@`).
    URLs are masked by `brain.settings.mask_url`, so a URL reads the same in every message and log line
    (`redis://user:***@host:6379/0`); other secrets become `**********`."""
    for secret in sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, _masked(secret))
    return _URL.sub(lambda found: mask_url(found.group(0)), text)


def _masked(secret: str) -> str:
    """How a known secret is shown: a URL as `mask_url` shows it (no credentials in it: as it is), any
    other secret, or a URL whose credentials `mask_url` cannot find, as `**********`."""
    if _URL.fullmatch(secret):
        shown = mask_url(secret)
        if shown != secret or "@" not in secret:
            return shown
    return _MASK


class RedactingFilter(logging.Filter):
    """Masks each known secret in a record's formatted message, and any password in a URL (`redact`)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = tuple(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact(message, self._secrets)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def configure_logging(settings: LogSettings, secrets: Iterable[str] = ()) -> logging.Handler:
    """Send log records (ours and the libraries') to stderr or `settings.file`, secrets redacted."""
    handler: logging.Handler = (
        logging.FileHandler(settings.file, encoding="utf-8") if settings.file else logging.StreamHandler()
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(settings.level)
    handler.addFilter(RedactingFilter(secrets))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(settings.level)
    return handler
