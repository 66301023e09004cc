"""The one rule for what an image passage is, read by metrics, judges and the collector's adapters.

Multi-modal RAG retrieves images beside text; ragas keeps them in `retrieved_contexts` as paths, URLs
or base64 data, so ragpulse keeps them in `retrieval_context` as strings too. A passage is an image
when the whole passage (surrounding blanks aside) is one of:

- a data URI of an image: `data:image/<type>;base64,<base64>` (any `image/*` type; what a vision
  model accepts is its business, and a refusal is a clear judge error);
- an http(s) URL whose path ends in an image file extension (`.png .jpg .jpeg .gif .webp .bmp`),
  a query string or fragment after it allowed (signed URLs).

Nothing else is: a URL without an image extension cannot be told from a web page without fetching it
(ragpulse never fetches), and a local path is never read (a sidecar reading paths named by traffic
would be a hole). Size does not decide the kind: a huge data URI is still an image, never text.
The collector bounds what it keeps (`MAX_DATA_URI_CHARS`), since a trace can carry megabytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_DATA_URI = re.compile(r"data:image/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]*[A-Za-z0-9+/=]", re.IGNORECASE)
_IMAGE_URL = re.compile(
    r"https?://[^\s/?#]+/[^\s?#]*\.(?:png|jpe?g|gif|webp|bmp)(?:\?[^\s#]*)?(?:#\S*)?", re.IGNORECASE
)
_BLANK = re.compile(r"\s+")

# The largest data URI the collector keeps as a passage (~150 KB of image): a record travels through
# queues and Kafka topics (1 MB messages by default) and into the judge's request. OpenInference's
# own instrumentations cut base64 images at 32,000 characters by default.
MAX_DATA_URI_CHARS = 200_000


def is_image(passage: str) -> bool:
    """True when the passage is an image reference by the rule above."""
    candidate = passage.strip()
    if candidate[:5].lower() == "data:":
        return _DATA_URI.fullmatch(candidate) is not None
    return candidate[:4].lower() == "http" and _IMAGE_URL.fullmatch(candidate) is not None


def image_url(passage: str) -> str:
    """The reference as a vision request carries it: the passage stripped, blanks out of base64."""
    candidate = passage.strip()
    return _BLANK.sub("", candidate) if candidate[:5].lower() == "data:" else candidate


def image_positions(passages: Sequence[str] | None) -> list[int]:
    """0-based positions of the image passages, in order."""
    return [i for i, passage in enumerate(passages or ()) if is_image(passage)]


def short_form(passage: str) -> str:
    """An image passage as logs and reasons show it: a data URI by its type and size, never its bytes."""
    candidate = passage.strip()
    if candidate[:5].lower() == "data:" and is_image(candidate):
        return f"{candidate.split(',', 1)[0]},… ({len(candidate)} chars)"
    return candidate


def kept_image(reference: str) -> tuple[str | None, str]:
    """(the reference to keep as a passage, or None; why not) for an image an adapter found.

    Reasons are low-cardinality, for a counter: `too_large` (a data URI over MAX_DATA_URI_CHARS),
    `not_recognised` (a URL the rule cannot tell from a page, or an instrumentation's placeholder
    such as OpenInference's `__REDACTED__` for images past its own limit).
    """
    if not is_image(reference):
        return None, "not_recognised"
    url = image_url(reference)
    if len(url) > MAX_DATA_URI_CHARS:
        return None, "too_large"
    return url, ""
