"""Script-aware pieces of the offline judge's text analysis: folding, tokens and word lists beyond English.

`text.py` keeps its English fast path (pure-ASCII text never reaches this module) and hands anything
else here. The decisions that shape it:

- Folding is NFKC, case folding, accents dropped from Latin letters ('Pelé' = 'Pele', 'Zürich' =
  'Zurich': English text spells foreign names both ways) and stress marks from Cyrillic ('Па́вел'),
  but not from other scripts (Devanagari vowel signs, Cyrillic 'й' are letters), and 'ё' read as 'е'
  (Russian text writes both).
- Letters of every script make words, with their combining marks (`script_tokens` builds the letter
  and mark classes from `unicodedata`, and makes the tokens).
  Text that folds to ASCII once dashes, quotes and symbols are set aside (most non-ASCII English)
  takes the ASCII tokeniser instead, which is several times faster.
- Han, kana and Hangul are written without spaces between words, so a "word" there is a character
  bigram (what Lucene's CJK analyzer does): "claim words found in the passage" then means "claim
  bigrams found", which rewards the same characters in the same order and, unlike single characters
  (which nearly every passage on a topic shares), still fails a claim that names another person or
  place. Runs are first cut where the script changes (Japanese writes content in kanji and katakana,
  grammar in hiragana) and at a few Chinese particles (的, 是, 了, ...), so that a paraphrase which
  reorders words ("日本の首都は東京" vs "東京は日本の首都") keeps every token. A katakana run is one
  token (a loanword or a foreign name, e.g. アームストロング); hiragana carries grammar and is dropped.
- Word lists (stopwords, negations, abbreviations, month names) cover the major European languages,
  Russian, Greek, Arabic and Hindi. A Latin-script stopword is listed only when it has 3+ letters and,
  accents dropped, (nearly) never occurs in English text (document frequency <= 5 of the IDF table's
  25k documents): 'die', 'war', 'son', 'los', 'la', 'der', 'mit', 'est', 'für' (= 'fur'), 'über'
  (= 'Uber'), 'são' (São Paulo) and names such as 'Nas' or 'ESA' stay content words.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from evaluators.offline import bounds

# Han (with 々 〆 〇), kana and Hangul syllables: the scripts written without spaces between words.
HAN = "\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
KATAKANA = "\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
HANGUL = "\uac00-\ud7af"
CJK = f"{HAN}\u3041-\u309f{KATAKANA}{HANGUL}"
GREEK = "\u0370-\u03ff\u1f00-\u1fff"
# Negation in CJK text, counted on the text (tokens are bigrams): 不/没 (Chinese, kanji), ない/ません/
# なかっ (Japanese), 않/못/없/아니 (Korean).
CJK_NEGATION = re.compile("不|没|沒|ない|なかっ|ません|않|못|없|아니")
CJK_BMP = CJK.replace("\U00020000-\U0002ffff", "")  # (scans: an astral range makes a class slow)
_SPECIAL_STOPS = re.compile(f"[{CJK_BMP}{GREEK}。！？｡︒।॥؟۔።፧։]")

_FRACTION_AFTER_DIGIT = re.compile("(\\d)(\\d\u2044)")
_MAY_HAVE_ACCENTS = re.compile("[\u00c0-\u036f\u1e00-\u1eff]")  # one scan, then the exact sub:
_ACCENTS = re.compile("[\u00c0-\u024f\u1e00-\u1eff]|[\u0300-\u036f]")  # Latin letters, combining accents
_REFOLD = (
    ("ё", "е"),
    ("\u2010", "-"),
    ("\u2011", "-"),
    ("\u066b", "."),
    ("\u066c", ","),
)  # (translate is slow)
# Characters never part of a token (spaces, dashes, quotes, currency and other symbols); not '²', '½',
# '①', 'ª', 'µ', '₨', which fold to digits or letters.
_SEPARATOR_RANGES = (
    "\u00a0-\u00a9\u00ab-\u00b1\u00b4\u00b6-\u00b8\u00bb\u00bf\u00d7\u00f7\u200b-\u200f\u2012-\u206f"
    "\u20a0-\u20a7\u20a9-\u20cf\u2190-\u245f\u2500-\u2bff\ufeff"
)
_NOT_SEPARATOR = re.compile(f"[^\x00-\x7f{_SEPARATOR_RANGES}]")
_NOT_SEPARATOR_OR_ACCENT = re.compile(f"[^\x00-\x7f\u0300-\u036f{_SEPARATOR_RANGES}]")
_COMBINING_ACCENT = re.compile("[\u0300-\u036f]+")
_LATIN_ONLY = re.compile(r"[\x00-\u024f\u0300-\u036f\u1e00-\u1eff]*")
# Word tokens of lower-cased ASCII text. A hyphen splits words ('in-sync' -> 'in', 'sync') except
# before a digit, where it joins a code ('b-52', 'covid-19', 's-6-a').
ASCII_WORD = re.compile(
    r"[a-z][a-z']*(?:-(?=\d)[a-z0-9]+(?:-[a-z0-9]+)*)?|\d+(?:[.,:]\d+)*(?:st|nd|rd|th)?%?", re.ASCII
)

# Sentence ends that nupunkt (trained on English) does not know: CJK full stops and marks, the
# Devanagari danda, the Arabic and Urdu question mark and full stop, Ethiopic and Armenian stops, the
# Greek question mark (';' between Greek words, before a capital), and .!? right after a CJK character.
HARD_STOP = re.compile(
    f"(?:[。！？｡︒।॥؟۔።፧։]|(?<=[{CJK}])[.!?]|(?<=[{GREEK}])[;\u037e](?=\\s*$|\\s+[\u0386-\u038f\u0391-\u03a9]))+"
    f"[」』〉》）)\\]\"'”’]*"
)
QUESTION_END = re.compile(f"(?:[?？؟\u037e]|(?<=[{GREEK}]);)[」』〉》）»]*$")
SENTENCE_OPENERS = frozenset({".", "!", "?", ":", '"', "。", "！", "？", "؟", "«", "„", "¿", "¡", "।"})


def _refold(text: str) -> str:
    for old, new in _REFOLD:
        if old in text:
            text = text.replace(old, new)
    return text


def fold(text: str) -> str:
    """Case, compatibility and Latin accents folded: 'Ｓｔｒａßｅ' -> 'strasse', 'Pelé' -> 'pele',
    'Пётр' -> 'петр', 'दिल्ली' unchanged, '３' -> '3', '8½' -> '8 1⁄2' (not '81⁄2')."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if "\u2044" in folded:  # a vulgar fraction became '1⁄2': keep it off the digits before it
        folded = _FRACTION_AFTER_DIGIT.sub(r"\1 \2", folded)
    if _MAY_HAVE_ACCENTS.search(folded):
        folded = _ACCENTS.sub(_unaccented, folded)
    return _refold(folded)


def _unaccented(match: re.Match[str]) -> str:
    return _plain_letter(match.group())


@lru_cache(maxsize=4096)  # letters: far more than any alphabet has accented
def _plain_letter(letter: str) -> str:
    """'é' -> 'e', 'ø' -> 'ø'; a combining accent (a stress mark left after NFKC: 'Па́вел') -> ''."""
    return "".join(c for c in unicodedata.normalize("NFD", letter) if not unicodedata.combining(c))


def _folded_set(words: str) -> frozenset[str]:
    return frozenset(fold(words).split())


STOPWORDS = _folded_set(
    """
    и в во не что он она оно они на я с со как а то все всё так его её ее но да ты к у же вы за бы по
    только мне было вот от меня ещё о из ему когда даже ли если уже или быть был была были него до
    вас там себя ей может тут где есть ней для мы тебя их чем сам чтобы это этот эта эти этого этой
    тот та те того кто при об про над под после через между который которая которое которые которого
    которой также является являются ним них нас вам им ими
    ist sich zu ein eine einen einem einer eines auch wird werden wurde wurden sind sein seine ihre
    nach noch bei dass daß vor bis seit sowie unter durch wenn diese dieser dieses zum zur vom ich sie
    ihm ihn aber oder
    une dans avec cette ils elles nous vous mais comme leur leurs été était sont ont qui que
    unos unas fue sobre entre este esta estos estas ese muy también
    gli delle degli sono hanno anche nella nelle tra fra
    ο η το οι τα του της των τον την και είναι σε στο στη στην με για από ένα μια που ως θα να
    في من على إلى عن أن إن هو هي التي الذي مع هذا هذه كان كانت
    का की के है हैं में से को और पर यह वह था थी थे ने भी तो ही हो कि लिए
    我们 你们 他们 她们 它们 这个 那个 一个 这些 那些 可以 因为 所以 但是 如果 以及 或者 已经 还是 就是
    """
)
NEGATIONS = _folded_set(
    """
    не нет ни никогда ничего никто ничто без nicht kein keine keinen keinem keiner keines nie niemals
    nichts pas jamais aucun aucune rien nunca jamás ningún ninguno ninguna tampoco nessuno nessuna
    nenhum nenhuma niet geen nooit nigdy inte aldrig ingen δεν μην όχι ποτέ ούτε لا لم لن ليس ليست
    नहीं न मत कभी
    """
)
FILLER = _folded_set(
    "спасибо пожалуйста надеюсь merci danke bitte gracias grazie obrigado obrigada 谢谢 感谢"
)
# Abbreviations nupunkt splits after (it knows English ones only). A title is followed by a name, so
# it never ends a sentence; the others do not when the next one starts in lower case or a digit.
TITLES = _folded_set("sr sra srta dña mme mlle sig проф акад")
ABBREVIATIONS = _folded_set(
    """
    т е д г гг см рис им ул стр др пр тыс млн млрд руб коп ок напр св вв
    z b h bzw usw vgl ggf evtl ca nr str jh jhd
    janv févr avr juil déc env av apr cf
    pág núm aprox
    """
)
MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        (
            "january jan januar janvier enero gennaio janeiro января январь январе",
            "february feb febr februar février févr febrero febbraio fevereiro февраля февраль феврале",
            "march mar märz mars marzo março марта март марте",
            "april apr avril abril aprile апреля апрель апреле",
            "may mai mayo maggio maio мая май мае",
            "june jun juni juin junio giugno junho июня июнь июне",
            "july jul juli juillet juil julio luglio julho июля июль июле",
            "august aug août agosto августа август августе",
            "september sep sept septembre septiembre setiembre settembre setembro сентября сентябрь сентябре",
            "october oct oktober octobre octubre ottobre outubro октября октябрь октябре",
            "november nov novembre noviembre novembro ноября ноябрь ноябре",
            "december dec dez dezember décembre déc diciembre dicembre dezembro декабря декабрь декабре",
        ),
        start=1,
    )
    for name in fold(names).split()
}


def ascii_digits(token: str) -> str:
    """Digits of any script as ASCII ('١٩٦٩', '१९६९', '１９６９' -> '1969'); other characters kept."""
    if token.isascii():
        return token
    return _refold("".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in token))


_SNOWBALL = (  # script range -> Snowball language
    ("\u0400", "\u04ff", "russian"),
    ("\u0370", "\u03ff", "greek"),
    ("\u0600", "\u06ff", "arabic"),
    ("\u0900", "\u097f", "hindi"),
)


@lru_cache(maxsize=bounds.WORDS)
def native_stem(word: str) -> str:
    """A folded word of Cyrillic, Greek, Arabic or Devanagari script stemmed by its language's
    Snowball stemmer, so 'Транссибирской' meets 'Транссибирская'; any other script unchanged."""
    first = word[:1]
    for low, high, language in _SNOWBALL:
        if low <= first <= high:
            return str(_stemmer(language).stemWord(word)) or word
    return word


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Any:
    import snowballstemmer  # (on first use: English-only traffic never pays its 25 ms import)

    return snowballstemmer.stemmer(language)


def is_latin(word: str) -> bool:
    """True for a word written in Latin letters (accents included): the English stemmer applies."""
    return word.isascii() or _LATIN_ONLY.fullmatch(word) is not None


def has_special_stops(text: str) -> bool:
    """True when the text may hold a sentence end nupunkt does not know (see HARD_STOP)."""
    return _SPECIAL_STOPS.search(text) is not None


@lru_cache(maxsize=4096)
def token_text(lowered: str) -> tuple[str, bool]:
    """(text to tokenise, whether the ASCII tokeniser is exact on it) for lower-cased non-ASCII text.

    Most such English text has nothing but separators outside ASCII ('tower – 1889', '“quoted”'),
    or accented Latin letters that drop their accents ('Pelé'): the ASCII tokeniser handles both,
    several times faster than the one for all scripts. Anything else is folded in full."""
    if not _NOT_SEPARATOR.search(lowered):
        return lowered, True
    decomposed = unicodedata.normalize("NFKD", lowered)
    if not _NOT_SEPARATOR_OR_ACCENT.search(decomposed):
        if "\u2044" in decomposed:  # a vulgar fraction became '1⁄2': keep it off the digits before it
            decomposed = _FRACTION_AFTER_DIGIT.sub(r"\1 \2", decomposed)
        plain = _COMBINING_ACCENT.sub("", decomposed)
        return (plain if decomposed is lowered else plain.lower()), True  # ('ℌ' decomposes to 'H')
    folded = fold(lowered)
    return folded, not _NOT_SEPARATOR.search(folded)
