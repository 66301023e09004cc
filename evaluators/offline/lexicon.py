"""Word lists the offline judge needs to see a contradiction or an abstention that words alone hide.

`ANTONYMS`: a claim that says 'increased' where the passage says 'decreased' shares every other
word with it, so word overlap calls it supported; only knowing the two words are opposites catches
it. The list is curated for *factual* conflict (policy, medicine, software, finance, geography,
sport, history, family, time), not for every dictionary antonym: polysemous words whose other
sense is common ('left' the club / turn 'right', 'light' weight / daylight, 'fire') are left out
because a false antonym turns a correct paraphrase into a contradiction.

`ABSTENTION`: 'The documents do not mention X' is a claim about the *context*, not about the
world: it is supported when the context lacks X and unsupported when it states X, the reverse of
what its words suggest. `abstention_topic` extracts X so the judge can check exactly that.

Everything is looked up by a stem-ish key (lower case, `text.stem`, no final 'e', no doubled final
consonant), so 'increased', 'increases' and 'increasing' all meet 'decrease'. O(1) per pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from evaluators.offline import bounds
from evaluators.offline.text import stem

# One group a line-item: every word left of '/' is an antonym of every word right of it; '|'
# separates alternatives. Inflections need not be listed (the key covers them), irregular ones do.
# '=' marks complements, where denying one word states the other: 'not allowed' is 'prohibited', but
# 'not large' is not 'small', nor 'not released' 'arrested'. ('quit' is left out: 'quite' shares its key.)
_GROUPS = """
=allow|permit|authorize|authorise|allowed|permitted/prohibit|forbid|forbidden|ban|disallow
=required|mandatory|compulsory|obligatory/optional|voluntary
include|inclusive/exclude|exclusive   =eligible/ineligible   =legal|lawful/illegal|unlawful
=valid/invalid   approve|approval/reject|rejection|deny|denial|veto   accept/reject|refuse|decline
grant/revoke|deny   =refundable/non-refundable|nonrefundable   =paid/unpaid   =taxable/tax-free|tax-exempt
=temporary|temporarily/permanent|permanently   full-time/part-time   =public|publicly/private|privately
=official|officially/unofficial|unofficially   formal/informal   =compliant/non-compliant
enforce/waive   =guilty/innocent   convict|convicted/acquit|acquitted   plaintiff/defendant
prosecution/defence|defense   arrest|detain|imprison/release   support|supporter/oppose|opponent
majority/minority   conservative/liberal|progressive   left-wing/right-wing   ally|allies/enemy|enemies|foe
friend/enemy|foe   war/peace   victory|victorious/defeat|defeated   establish/abolish   ratify/reject
build|built|construct/demolish|destroy   =employed/unemployed   employer/employee   landlord/tenant
appoint|hire/dismiss|sack   lender|creditor/borrower|debtor   lend/borrow   buy|bought|buyer/sell|sold|seller
purchase/sale   profit|profitable/loss|unprofitable   gain/loss|lose|lost   surplus/deficit
credit/debit   asset/liability   bull|bullish/bear|bearish   inflation/deflation
appreciate|appreciation/depreciate|depreciation   overvalued/undervalued   expensive/cheap|inexpensive
fixed/variable|floating|adjustable   secured/unsecured   gross/net   solvent/insolvent   liquid/illiquid
listed/unlisted   import|importer/export|exporter   outperform/underperform   overweight/underweight
deposit/withdraw|withdrawal   income/expenditure   deductible/non-deductible   hike/cut
rise|rose|risen/fall|fell|fallen|drop|decline   increase/decrease|reduce|reduction
expand|expansion/contract|contraction|shrink   grow|growth/shrink   raise/lower|cut
high|higher|highest/low|lower|lowest   more/less|fewer   most/least|fewest   maximum|max/minimum|min
above/below   upper/lower   top/bottom   inside/outside   internal|interior/external|exterior
before/after   earlier/later   earliest/latest   early/late   first/last|final   beginning/end|ending
prior/subsequent   past/future   ancient/modern   new|newer|newest/old|older|oldest
young|younger|youngest/old|older|oldest|elderly   previous/next   former/current
predecessor/successor   =alive|living/dead|deceased   birth/death   born/died   survive|survived/die|died
start|begin|began|begun/end|finish|stop|ended   =open|reopen/close|closed|shut   enter|entry|entrance/exit
arrive|arrival/depart|departure   incoming|inbound/outgoing|outbound   send|sender/receive|receiver|recipient
north|northern|northward/south|southern|southward   east|eastern|eastward/west|western|westward
northeast|northeastern/southwest|southwestern   northwest|northwestern/southeast|southeastern
northernmost/southernmost   easternmost/westernmost   upstream/downstream   uphill/downhill
urban/rural   coastal/inland   domestic/foreign|international   =indoor|indoors/outdoor|outdoors
win|won|winner|winning/lose|lost|loser|losing   home/away   offense|offence|offensive/defense|defensive
attack|attacker/defend|defender   professional/amateur   promoted|promotion/relegated|relegation
qualified|qualify/eliminated|disqualified   score/concede   ahead/behind   leading/trailing
undefeated|unbeaten/defeated|beaten   =pass|passed/fail|failed   =success|successful/failure|unsuccessful
=succeed/fail   acute/chronic   =benign/malignant   positive/negative   hypertension/hypotension
hyperglycemia|hyperglycaemia/hypoglycemia|hypoglycaemia   hyperthyroidism/hypothyroidism
=safe|safety/unsafe|dangerous|harmful   =effective/ineffective   =contagious/non-contagious
=infectious/non-infectious   =symptomatic/asymptomatic   =conscious/unconscious   =stable/unstable
healthy/unhealthy|sick|ill   =fatal|lethal/non-fatal|nonfatal   indicated/contraindicated
inpatient/outpatient   =invasive/non-invasive|noninvasive   dominant/recessive   dilate/constrict
excess/deficiency   =sufficient/insufficient|deficient   =vaccinated/unvaccinated   sterile/contaminated
male|man|men|boy/female|woman|women|girl   husband/wife   father|paternal/mother|maternal
son/daughter   brother/sister   uncle/aunt   nephew/niece   grandfather/grandmother
grandson/granddaughter   king/queen   prince/princess   =married/unmarried married/divorced
=enable|enabled/disable|disabled   =synchronous|sync/asynchronous|async   =online/offline
=connect|connected/disconnect|disconnected   =encrypted/unencrypted|plaintext   encrypt/decrypt
=secure/insecure   =mutable/immutable   static/dynamic   read-only/writable|read-write
=stateful/stateless   =blocking/non-blocking|nonblocking   local/remote   client/server   input/output
upload/download   push/pull   install/uninstall   mount/unmount   lock/unlock   attach/detach
allowlist|whitelist/denylist|blocklist|blacklist   =true/false   =supported/unsupported supported/deprecated
=compatible/incompatible   =available|availability/unavailable|unavailability   =visible/hidden|invisible
=explicit|explicitly/implicit|implicitly   =manual|manually/automatic|automatically
ascending/descending   increment/decrement   compress/decompress   encode/decode
serialize|serialise/deserialize|deserialise   lowercase/uppercase   add/remove   insert/delete
create/delete|destroy   subscribe/unsubscribe   login/logout   major/minor
centralized|centralised/decentralized|decentralised   horizontal|horizontally/vertical|vertically
primary/secondary|replica   leader/follower   ingress/egress   =correct|correctly/incorrect|incorrectly|wrong
=possible/impossible   =likely/unlikely   =certain/uncertain   =known/unknown   =same|identical/different
=similar/dissimilar|different   =equal/unequal   common/rare|uncommon   frequent/infrequent|rare
always/never|rarely   often|frequently/rarely|seldom   usually/rarely   all/none   everyone/nobody
everything/nothing   many/few   large|larger|largest/small|smaller|smallest   big|bigger|biggest/small|little
huge/tiny   long|longer|longest/short|shorter|shortest   tall|taller|tallest/short|shorter|shortest
wide|wider/narrow|narrower   broad/narrow   thick/thin   heavy|heavier|heaviest/lightweight
deep|deeper/shallow|shallower   fast|faster|fastest/slow|slower|slowest   quick|quickly/slow|slowly
hot|hotter/cold|colder   warm|warmer/cool|cooler|cold   wet/dry   full/empty   rich|wealthy/poor
strong|stronger|strength/weak|weaker|weakness   hard/soft|easy   difficult/easy   simple/complex|complicated
good/bad   better/worse   best/worst   happy/sad|unhappy   love/hate   =agree|agreement/disagree|disagreement
=present|presence/absent|absence   day/night   morning/evening   =able/unable   =aware/unaware
=fair/unfair   =limited/unlimited   =necessary/unnecessary   popular/unpopular   =usual/unusual
=armed/unarmed   =capable/incapable   =complete/incomplete   =direct|directly/indirect|indirectly
=dependent/independent   =voluntary/involuntary   =adequate/inadequate   =accurate/inaccurate
=active/inactive   =literate/illiterate   =mature/immature   =mortal/immortal   =moral/immoral
=regular/irregular   =relevant/irrelevant   =responsible/irresponsible   =reversible/irreversible
=honest/dishonest   =loyal/disloyal   approve/disapprove   appear/disappear   =continue/discontinue
keep|kept|continue|persist/stop|cease|halt
=obey/disobey   advantage/disadvantage   =constitutional/unconstitutional   =include|included/excluded
"""

# Exclusive kinds: every value of a line is the opposite of every other ('a horror film' where the
# passage says 'has genre Drama'; 'a tennis player' of a cricketer). Only words whose other senses are
# rare: 'action', 'crime', 'war', 'family' and 'fiction' are kinds of film too, but not only that.
_KINDS = """
thriller|thrillers/horror/comedy|comedies|comedic|rom-com|rom-coms/romance|romantic/sci-fi|science-fiction
/fantasy/drama|dramas/documentary|documentaries/sitcom|sitcoms/mystery|mysteries/suspense/western|westerns
basketball/tennis/cricket|cricketer/football|footballer|soccer/golf|golfer/baseball/hockey/badminton/rugby
/volleyball/boxer/wrestling|wrestler/skiing|skier/swimming|swimmer/cyclist
goalkeeper|goalie/defender/midfielder/striker/quarterback/linebacker/pitcher
"""


@lru_cache(maxsize=bounds.WORDS)
def antonym_key(word: str) -> str:
    """The stem-ish form both sides are looked up by: 'Increased' -> 'increas', 'banned' -> 'ban'; a
    kind's value by its first word: 'romantic' -> 'romanc'."""
    key = _stem_key(word)
    return _KIND_VALUES.get(key, key)


def _stem_key(word: str) -> str:
    key = stem(word.strip().lower().replace("’", "'"))
    if len(key) > 4 and key.endswith("e"):
        key = key[:-1]
    if len(key) > 3 and key[-1] == key[-2] and key[-1] not in "lsz" and key[-1].isalpha():
        key = key[:-1]
    return key


_KIND_LINES = _KINDS.replace("\n/", "/")  # a line opening with '/' goes on the one before
# Each way of giving a kind's value, by key, to the key of its first word.
_KIND_VALUES = {
    _stem_key(word): _stem_key(value.split("|")[0])
    for value in re.split(r"[/\s]+", _KIND_LINES)
    if value
    for word in value.split("|")
}


def _parse(groups: str) -> tuple[tuple[str, str], ...]:
    """Every word of a '/'-separated value against every word of each later one."""
    pairs: dict[tuple[str, str], None] = {}
    for item in groups.split():
        values = [v.split("|") for v in item.removeprefix("=").split("/")]
        for i, left in enumerate(values):
            for right in values[i + 1 :]:
                pairs |= dict.fromkeys((a, b) for a in left for b in right)
    return tuple(pairs)


def _keyed(pairs: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """Both ways, by `antonym_key`."""
    found: dict[str, frozenset[str]] = {}
    for a, b in pairs:
        ka, kb = antonym_key(a), antonym_key(b)
        if ka != kb:
            found[ka] = found.get(ka, frozenset()) | {kb}
            found[kb] = found.get(kb, frozenset()) | {ka}
    return found


PAIRS: tuple[tuple[str, str], ...] = _parse(_GROUPS + _KIND_LINES)  # surface forms
ANTONYMS: dict[str, frozenset[str]] = _keyed(PAIRS)
KINDS: frozenset[str] = frozenset(_KIND_VALUES.values())  # by key
COMPLEMENTS: dict[str, frozenset[str]] = _keyed(_parse(" ".join(i for i in _GROUPS.split() if i[0] == "=")))


@lru_cache(maxsize=bounds.WORDS)
def _opposite_keys(ka: str) -> frozenset[str]:
    """The keys of the words opposite a word with key `ka`: its listed antonyms, 'non-X' for X, and X
    for 'non-X'."""
    return (ANTONYMS.get(ka, frozenset()) | _non(ka)) - {ka}


@lru_cache(maxsize=bounds.WORDS)
def _complement_keys(ka: str) -> frozenset[str]:
    """The keys of the words a denied word with key `ka` restates: its listed complements, 'non-X' for X
    and X for 'non-X'."""
    return (COMPLEMENTS.get(ka, frozenset()) | _non(ka)) - {ka}


@lru_cache(maxsize=bounds.WORDS)
def complement_stems(word: str) -> frozenset[str]:
    """Every stem whose `antonym_key` is a key of `word`'s complements: the key drops a final 'e' and a
    doubled last letter, so each key stands for four stems. A text whose stems hold none of them has
    no complement of `word` (a set test on stems already read, where `complements` keys each word)."""
    keys = _complement_keys(antonym_key(word))
    return frozenset(s for k in keys for s in (k, f"{k}e", f"{k}{k[-1:]}", f"{k}{k[-1:]}e"))


def _non(ka: str) -> frozenset[str]:
    return frozenset((f"non-{ka}", ka[4:])) if ka.startswith("non-") else frozenset((f"non-{ka}",))


def may_oppose(word: str, keys: frozenset[str]) -> bool:
    """False when no word whose `antonym_key` is in `keys` can be `word`'s opposite: a set lookup that
    spares `opposites` its pass over a window's words for the many claim words with none there."""
    return not _opposite_keys(antonym_key(word)).isdisjoint(keys)


def antonym(a: str, b: str) -> bool:
    """True when the two words are listed opposites (any inflection, either order).

    'non-X' against 'X' counts too, for every X: 'non-refundable' vs 'refundable'."""
    return bool(opposites(a, (b,)))


def opposites(word: str, others: Iterable[str]) -> list[str]:
    """The words of `others` that are `word`'s antonyms, in order (`word` is looked up once)."""
    keys = _opposite_keys(antonym_key(word))
    return [other for other in others if antonym_key(other) in keys]


def complements(word: str, others: Iterable[str]) -> list[str]:
    """The words of `others` that are `word`'s complements (denying one states the other), in order."""
    keys = _complement_keys(antonym_key(word))
    return [other for other in others if antonym_key(other) in keys]


# -- abstentions -------------------------------------------------------------------------------

_LEAD = r"(?:(?:unfortunately|however|sorry|but|also|note that|please note that),?\s+)*"
_SOURCE_NOUN = (
    r"(?:documents?|docs|contexts?|sources?|passages?|texts?|excerpts?|snippets?|articles?|materials?"
    r"|information|knowledge base|references?|search results|records provided)"
)
_SOURCE = (
    r"(?:(?:the|these|those|your|my|our|any of the)\s+)?(?:(?:provided|given|retrieved|available|supplied"
    rf"|attached|above|cited|referenced|supporting)\s+)?{_SOURCE_NOUN}(?:\s+(?:provided|given|available|above))?"
)
_SAY = (
    r"(?:mention|say|state|specify|include|contain|provide|discuss|cover|indicate|give|address|explain"
    r"|describe|tell|list|reference|reveal|disclose|identify|name|report|detail|note|confirm|clarify)"
)
# Filler words are lower case only ('(?-i:...)'): 'do not mention Data Protection Act' keeps 'Data'.
_ANYTHING = (
    r"(?-i:(?:\s+(?:us|explicitly|specifically|directly|clearly|anywhere))*(?:\s+(?:anything|any|much))?)"
)
_INFO = r"(?-i:(?:\s+(?:information|details?|data|mention|specifics|reference))?)"
_ABOUT = r"(?:\s+(?:about|on|regarding|concerning|of|as to|for|to))?"
_NOT = r"(?:\s+not|n't|n’t)"
_ABSENT = r"(?:mentioned|specified|stated|given|provided|listed|included|described|disclosed|documented|covered|discussed|addressed|indicated|identified|named|reported|found)"  # noqa: E501
_IN_SOURCE = rf"(?:\s+(?:anywhere\s+)?(?:in|within|from|by)\s+{_SOURCE})"
# A period after an initial or a title does not end the topic: 'Pearl S. Buck', 'Mr. Ripley'.
_NOT_AN_END = r"(?<!\b[A-Z])(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bDr)(?<!\bSt)(?<!\bJr)(?<!\bSr)(?<!\bvs)"
_TOPIC = (
    r"\s+(?P<{}>.+?)"
    + _NOT_AN_END
    + r"(?=\s*(?:[.!?;]\s|[.!?;]?\s*$|,\s+(?:but|and|so|although|though|while|however|yet)\s))"
)
_END = r"\s*[.!]?\s*$"

ABSTENTION = re.compile(
    "|".join(
        (
            # The documents do not mention X / the context doesn't say whether X
            rf"\b{_LEAD}{_SOURCE}\s+(?:do|does|did){_NOT}{_ANYTHING}\s+{_SAY}{_ANYTHING}{_INFO}{_ABOUT}"
            + _TOPIC.format("t0"),
            # None of the sources mention X
            rf"\bnone of the\s+(?:\w+\s+)?{_SOURCE_NOUN}\s+{_SAY}s?{_ANYTHING}{_INFO}{_ABOUT}"
            + _TOPIC.format("t1"),
            # The documents make no mention of X / contain no information about X
            rf"\b{_SOURCE}\s+(?:makes?|contains?|gives?|provides?|includes?|offers?|has|have)\s+no\s+"
            r"(?:mention|information|details?|data|reference)" + _ABOUT + _TOPIC.format("t2"),
            # The context is silent on X
            rf"\b{_SOURCE}\s+(?:is|are|remains?)\s+silent\s+(?:on|about|regarding|as to)"
            + _TOPIC.format("t3"),
            # There is no information about X / no mention is made of X
            r"\bthere(?:\s+is|\s+are|'s|’s)\s+no\s+(?:information|mention|details?|data|specifics|reference)"
            + rf"{_IN_SOURCE}?{_ABOUT}"
            + _TOPIC.format("t4"),
            r"\bno\s+(?:information|mention|details?|data)\s+(?:is|was|are|were)\s+(?:given|provided|available"
            rf"|made|included|found){_IN_SOURCE}?{_ABOUT}" + _TOPIC.format("t5"),
            # X is not mentioned / X is not specified in the provided documents
            rf"^{_LEAD}(?P<t6>.+?)\s+(?:is|are|was|were){_NOT}(?:\s+\w+ly)?\s+(?:mentioned|specified|stated)"
            + rf"{_IN_SOURCE}?{_END}",
            rf"^{_LEAD}(?P<t7>.+?)\s+(?:is|are|was|were){_NOT}(?:\s+\w+ly)?\s+{_ABSENT}{_IN_SOURCE}{_END}",
            # It is not mentioned (in the context) whether X
            rf"\bit(?:\s+is|'s|’s){_NOT}(?:\s+\w+ly)?\s+(?:mentioned|stated|specified|said|indicated|explained)"
            + rf"{_IN_SOURCE}?"
            + _TOPIC.format("t8"),
            rf"\bit(?:\s+is|'s|’s){_NOT}\s+(?:clear|known){_IN_SOURCE}" + _TOPIC.format("t9"),
            # I could not find X in the sources / I have no information about X
            r"\bI\s+(?:could\s+not|couldn't|couldn’t|cannot|can\s+not|can't|can’t|did\s+not|didn't|didn’t"
            r"|was\s+unable\s+to|am\s+unable\s+to|was\s+not\s+able\s+to|wasn't\s+able\s+to)\s+"
            r"(?:find|locate|see|identify|determine|tell)(?:\s+(?:any|anything))?"
            + _INFO
            + _ABOUT
            + _TOPIC.format("t10"),
            r"\bI\s+(?:have\s+no|do\s+not\s+have\s+any|don't\s+have\s+any|don’t\s+have\s+any)\s+(?:information"
            r"|details?|data)" + _ABOUT + _TOPIC.format("t11"),
            # I'm not sure about X / I don't know whether X (what a chat reply says it cannot tell)
            r"\bI(?:\s+am|'m|’m)\s+not\s+(?:(?:quite|really|exactly|entirely|too)\s+)?(?:sure|certain)"
            r"(?:\s+(?:about|of|whether|if))?" + _TOPIC.format("t12"),
            rf"\bI(?:\s+do|\s+really)?{_NOT}\s+(?:really\s+)?know(?:\s+(?:about|of|whether|if))?"
            + _TOPIC.format("t13"),
        )
    ),
    re.IGNORECASE,
)
# Every abstention above says one of these ('not', "n't", 'no', 'none', 'cannot', 'silent', 'unable'):
# a sentence without any is no abstention, and the scan for them is ~50 times cheaper than `ABSTENTION`.
_MAY_ABSTAIN = re.compile(r"no|n['’]t|silent|unable", re.IGNORECASE)
_TRAILING = re.compile(
    rf"(?:{_IN_SOURCE}|\s+at all|\s+or not|\s+either|[\s.!,;:]+)+$"  # '... in the documents.'
    r"|^(?-i:[Ww]hether|[Ii]f|any|anything about)\s+",  # 'whether X' -> 'X' ('Any Given Sunday' stays)
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)  # hallucination asks again for each claim against each passage
def abstention_topic(sentence: str) -> str | None:
    """The thing an abstaining sentence says the sources lack, or None if it is no abstention.

    'The context does not say whether the refund includes shipping.' -> 'the refund includes
    shipping'; 'Paris is the capital of France.' -> None."""
    if _MAY_ABSTAIN.search(sentence) is None:
        return None
    match = ABSTENTION.search(sentence.strip())
    if match is None:
        return None
    topic = next((value for value in match.groupdict().values() if value), "")
    previous = None
    while topic != previous:
        previous, topic = topic, _TRAILING.sub("", topic).strip()
    return topic or None
