"""Citation markers in an answer, and the retrieved passages they name.

Answers cite passages in many house styles: `[1]`, `[1, 3]`, `[1-2]`, `[doc-3]`, `[source 2]`, footnotes
`[^1]`, superscripts `¹`. The citation metrics need, per sentence, which passages it cites; this module
reads that deterministically, so no judge call is spent on finding citations.

Conventions (documented in docs/evaluators.md):
- A number is the passage's rank, 1-based unless `base=0` (`[1]` is `retrieval_context[0]`).
- `[doc-3]`-style labels name a passage id when the case carries ids, else rank 3.
- A bracketed number of three or more digits that names no passage (`[2023]`, `[100]`) is text, not a
  citation; a smaller one (`[7]` with five passages) is a citation of a passage that was not retrieved.
- Markdown links are not citations (`[the docs](https://...)`), except a numeric label (`[1](https://...)`);
  reference-style links (`[text][1]`), link definitions (`[1]: https://...`) and footnote definition lines
  (`[^1]: ...`) are not citations either, and such lines are not statements of the answer.
- A marker placed after the full stop (`... France. [1] It ...`) belongs to the sentence before it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_BRACKET = re.compile(r"(?<!!)\[(\^?)([^\[\]\n]{1,60})\]")
# After a word of three letters or more, or punctuation: 'tall¹', 'France.²', never 'm²' or 'mc²'.
_SUPERSCRIPT = re.compile(r"(?:(?<=[^\W\d_]{3})|(?<=[.,;:)\"'’]))([⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:[,˒][⁰¹²³⁴⁵⁶⁷⁸⁹]+)*)")
_SUPER_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_LINK_TARGET = re.compile(r"\([^()\s]*\)")
_NUMBER = re.compile(r"\d{1,4}")
_RANGE = re.compile(r"(\d{1,4})\s*[-–]\s*(\d{1,4})")
_PREFIXED = re.compile(
    r"(?:doc(?:ument)?|source|src|passage|ref(?:erence)?|context|chunk|snippet)[\s_-]*(\d{1,4})", re.I
)
_DEFINITION_LINE = re.compile(r"^\s*\[\^?[\w\s,.-]+\]:?(\s|$)")
_SOURCES_HEADING = re.compile(r"^\s*[#*_]*\s*(sources|references|citations|footnotes)\s*[*_]*:?\s*$", re.I)
_MAX_RANGE = 50
_TEXT_DIGITS = 3  # an unresolved bare number this long is a year or a quantity, not a citation
_ANY_PASSAGES = 999  # `without_citations`: every rank of up to three digits names a passage


@dataclass(frozen=True, slots=True)
class Citation:
    """One cited passage: `label` as written ('3', 'doc-3', '^1'), `passage` its 0-based index into the
    retrieval context, or None when it names no retrieved passage (`problem` then says why)."""

    label: str
    passage: int | None
    problem: str = ""

    @property
    def marker(self) -> str:
        return f"[{self.label}]"


@dataclass(frozen=True, slots=True)
class CitedSentence:
    """A sentence of the answer with its citation markers removed, and the passages it cites (each once)."""

    text: str
    citations: tuple[Citation, ...]


@dataclass(frozen=True, slots=True)
class Resolver:
    """Turns labels into passage indexes: `passages` retrieved, numbered from `base`, with optional ids."""

    passages: int
    base: int
    ids: tuple[str, ...]

    def rank(self, label: str, number: int) -> Citation:
        index = number - self.base
        if 0 <= index < self.passages:
            return Citation(label, index)
        if index < 0:
            return Citation(label, None, f"cites [{label}], but passages are numbered from {self.base}")
        count = f"{self.passages} passage{'s' if self.passages != 1 else ''}"
        verb = "was" if self.passages == 1 else "were"
        return Citation(label, None, f"cites [{label}], but only {count} {verb} retrieved")

    def identifier(self, token: str) -> int | None:
        key = _id_key(token)
        return next((i for i, known in enumerate(self.ids) if _id_key(known) == key), None)

    def group(self, footnote: str, body: str) -> list[Citation] | None:
        """The citations of one bracket group, or None when the group is not a citation."""
        found: list[Citation] = []
        for token in (t.strip() for t in re.split(r"[,;]", body)):
            label = f"{footnote}{token}"
            if (index := self.identifier(token)) is not None:
                found.append(Citation(label, index))
            elif _NUMBER.fullmatch(token):
                cited = self.rank(label, int(token))
                if cited.passage is None and not footnote and len(token) >= _TEXT_DIGITS:
                    return None  # '[2023]': a year in brackets
                found.append(cited)
            elif (span := _RANGE.fullmatch(token)) and not footnote:
                low, high = int(span.group(1)), int(span.group(2))
                textual = len(span.group(2)) >= _TEXT_DIGITS and self.rank("", high).passage is None
                if high < low or high - low > _MAX_RANGE or textual:
                    return None  # '[1990-2000]' is a span of years
                found.extend(self.rank(str(n), n) for n in range(low, high + 1))
            elif prefixed := _PREFIXED.fullmatch(token):
                found.append(self.rank(label, int(prefixed.group(1))))
            else:
                return None
        return found


def _id_key(text: str) -> str:
    return re.sub(r"[\s_-]+", "", text.casefold())


def parse_citations(
    text: str, passages: int, *, base: int = 1, ids: Sequence[str] | None = None
) -> list[Citation]:
    """Every citation in `text`, in order of appearance (a marker citing two passages gives two)."""
    return [
        c for _start, _end, cited in _markers(text, Resolver(passages, base, tuple(ids or ()))) for c in cited
    ]


def _markers(text: str, resolver: Resolver) -> list[tuple[int, int, list[Citation]]]:
    """(start, end, citations) of every citation marker in `text`, in order."""
    found: list[tuple[int, int, list[Citation]]] = []
    previous_end, previous_cited = -1, False
    for match in _BRACKET.finditer(text):
        start, end = match.span()
        after_link_text = start == previous_end and not previous_cited  # '[text][1]': a link reference
        group = None if after_link_text else resolver.group(match.group(1), match.group(2))
        if group and (link := _LINK_TARGET.match(text, end)):
            if all(_NUMBER.fullmatch(c.label) for c in group):
                end = link.end()  # '[1](https://...)': a numbered source link, target and all
            else:
                group = None  # '[doc-3](url)' may be a link to a file; only '[1](url)' is a citation
        previous_end, previous_cited = end, group is not None
        if group:
            found.append((start, end, group))
    for match in _SUPERSCRIPT.finditer(text):
        digits = [part.translate(_SUPER_DIGITS) for part in re.split("[,˒]", match.group(1))]
        found.append((*match.span(), [resolver.rank(d, int(d)) for d in digits]))
    return sorted(found, key=lambda item: item[0])


def without_citations(text: str) -> str:
    """`text` with its citation markers cut out ('330 metres tall [2].' -> '330 metres tall.'), for
    reading claims when the retrieval context is not at hand: any rank counts as a passage, while a
    bracketed year ('[2023]') stays text, as in `cited_sentences`. Lines are kept: they end sentences."""
    markers = _markers(text, Resolver(_ANY_PASSAGES, 1, ()))
    if not markers:
        return text
    kept, cursor = [], 0
    for start, end, _cited in markers:
        kept.append(text[cursor:start].rstrip(" \t"))
        cursor = end
    kept.append(text[cursor:])
    return "".join(kept)


def cited_sentences(
    answer: str, passages: int, *, base: int = 1, ids: Sequence[str] | None = None
) -> list[CitedSentence]:
    """The answer's sentences (the library's splitter), each with the passages it cites."""
    if base not in (0, 1):
        raise ValueError("citation_base must be 0 or 1")
    resolver = Resolver(passages, base, tuple(ids or ()))
    lines = [
        line
        for line in answer.splitlines()
        if not _DEFINITION_LINE.match(line) and not _SOURCES_HEADING.match(line)
    ]
    result: list[tuple[str, list[Citation]]] = []
    # The offline judge's sentence splitter (nupunkt and any script), imported on use: importing the
    # metrics (as the sidecar's main process does) must not load the offline judge's package.
    from evaluators.offline.sentences import sentences

    for sentence in sentences("\n".join(lines)):
        kept: list[str] = []
        own: list[Citation] = []
        cursor, opening = 0, bool(result)
        for start, end, cited in _markers(sentence, resolver):
            if sentence[cursor:start].strip():
                opening = False
            # '... France. [1] It has ...': a marker opening a sentence closes the one before it.
            (result[-1][1] if opening else own).extend(cited)
            kept.append(sentence[cursor:start])
            cursor = end
        kept.append(sentence[cursor:])
        text = re.sub(r"\s+([.,;:!?])", r"\1", " ".join("".join(kept).split()))
        if text.strip(" .,;:!?"):
            result.append((text, own))
        elif result:
            result[-1][1].extend(own)
    return [CitedSentence(text, _distinct(cited)) for text, cited in result]


def _distinct(citations: list[Citation]) -> tuple[Citation, ...]:
    """Each passage once per sentence ('[1] ... [doc-1]' cites one passage)."""
    seen: dict[int | str, Citation] = {}
    for citation in citations:
        seen.setdefault(citation.label if citation.passage is None else citation.passage, citation)
    return tuple(seen.values())
