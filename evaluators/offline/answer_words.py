"""The word lists that say what type of answer a question asks for and what a statement supplies.

Data for `question_type` (kept apart so that the rules there read without the lists in the way): one
list a line, an indented line continues it. "how ..." and "head ..." lists map the word after 'how'
and the head noun after 'what'/'which' to the types they ask; the supply lists are matched by stem.
"""

from __future__ import annotations

from enum import StrEnum

from evaluators.offline.text import stem


class AnswerType(StrEnum):
    TIME = "time"  # a date, time of day, period, duration or frequency
    QUANTITY = "quantity"  # a number, amount, measure or price
    PLACE = "place"
    PERSON = "person"  # a person or an organisation
    PROCEDURE = "procedure"  # steps or an instruction
    REASON = "reason"
    YESNO = "yes/no"  # a stance, or the fact asked about stated


T, Q, PL, PE, PR, R, YN = AnswerType

LISTS = """
aux: is are was were am do does did can could will would should shall has have had may might must isn't aren't
  wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't hasn't haven't hadn't
function: the a an of to in on at by for with from through into about what when where who whom whose which
  why how and or but it this that these those there i you we he she they my your our his her its their as than
  not no many much long any some after before be been being within without per each all more most only also
  just if then up out over under between during until every
wh: what when where who whom whose which why how
sentence break: ; : . ? !
clause break: ; : . ? ! , and or but so then also
indirect: know tell explain show say wonder ask describe clarify idea sure remember confirm find
agents: i we you one someone somebody anyone people users customers employees staff
modals: do can could should would may might must shall
pronouns: it they he she i you we there
prepositions: to for by from with in on at since until till of
fillers: so and but also ok okay hi hey hello please quick question sorry well then now just , :
determiners: the a an your my our its their his her this that these those
scan stop: of in on at to for from with by between and or ? , . ; :
how quantity: many much tall high big large far heavy deep wide small short hot cold expensive cheap thick
  close low loud strong steep
how time quantity: long often frequently quickly fast old
how time: soon early late recently
how reason: come
how procedure: to
head time: year years date dates day days month months time times hour hours century decade deadline birthday
  birthdate anniversary schedule timeframe timeline duration weekday
head place: city cities country countries state states town village county province region location place
  places continent island address street venue neighborhood neighbourhood district capital headquarters site
  port airport station building room floor river mountain lake ocean sea nation territory borough
  municipality hometown birthplace destination folder directory path
head person: person people man woman actor actress director author writer singer player artist musician
  composer founder president ceo leader manager owner team company companies organisation organization firm
  band brand manufacturer university club agency department politician king queen emperor scientist inventor
  architect designer producer creator coach member employee candidate winner officer chairman minister party
  network channel studio publisher label developer vendor
head quantity: number amount percentage percent proportion share price cost costs fee fees salary wage size
  height length width depth weight population age distance temperature speed dose dosage rate capacity limit
  total sum value score budget revenue income count volume ratio quantity balance charge margin maximum
  minimum threshold tax calories
head time quantity: frequency
head procedure: way ways steps step procedure process
head reason: reason reasons cause causes purpose point
time: january february april june july august september october november december jan feb apr jun jul aug
  sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday weekday weekend weeknight noon
  midnight today tomorrow yesterday tonight now currently nowadays recently soon later earlier already ago
  annual annually biannual biennial daily weekly monthly yearly hourly nightly quarterly fortnightly always
  never once twice every overnight immediately instantly shortly eventually until till since after before
  during whenever when morning afternoon evening night spring summer autumn winter holiday christmas easter
  century centuries decade era season deadline period date
time units: second minute hour day week fortnight month quarter year
counters: a an one two three four five six seven eight nine ten several few many some each per next last this
  that same working business calendar full
quantity: zero two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
  seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million
  billion dozen half twice double triple quarter several few numerous multiple countless unlimited none
  majority minority free expensive cheap costly affordable second third fourth fifth sixth seventh eighth
  ninth tenth eleventh twelfth
place: area neighbourhood road avenue square office campus branch store shop warehouse factory plant lab
  laboratory hospital clinic pharmacy coast valley forest desert north south east west northern southern
  eastern western central abroad overseas worldwide nationwide locally nearby online website page portal app
  menu tab panel dashboard setting file repository server cluster namespace cloud bucket section drawer shelf
  desk counter reception lobby entrance basement upstairs downstairs here home located situated based
  headquartered native originated grown border suburb downtown centre center park zone
person: he she him her his hers they them i we you me us someone somebody anyone anybody everyone everybody
  nobody whoever staff hr support admin administrator user customer client doctor pharmacist nurse physician
  engineer operator maintainer cfo cto board committee council government authority supplier provider bank
  lender landlord tenant parent caregiver partner colleague supervisor lead clerk agent representative driver
  pilot crew family group daemon scheduler controller
imperative: open run set click tap select choose go enter type add edit create install configure enable
  disable call contact send submit fill sign log use apply specify define pass include visit email ask request
  book download upload navigate restart reset change update remove delete press follow check make start stop
  take put write read copy paste save mount deploy export import register first
procedure: via using through first then next finally afterwards step
participles: set configured defined specified enabled disabled changed reset added created installed done
reason: because therefore hence thus consequently otherwise reason why explains cause caused resulted
purpose: avoid prevent reduce protect ensure keep allow help improve save stop limit increase lower
yes: yes yeah yep yup yea correct right true indeed absolutely certainly definitely sure exactly
no: no nope not never incorrect wrong false
stance: only both neither either nor unfortunately open closed allowed permitted prohibited forbidden
  required mandatory optional possible impossible available unavailable enabled disabled included excluded
  supported unsupported same different always usually rarely cannot
"""
PHRASES = {  # matched in the statement's lower-case tokens joined by spaces
    Q: "more than|less than|fewer than|at least|at most|up to|as many as|as much as",
    PR: "you can|you should|you need|you must|you have to|you may|you just|you'll|go to",
    R: "due to|owing to|thanks to|as a result|so that|in order to|so as to|leads to|lead to|led to|"
    "results in|result in|results from|stems from|which means|, so",
}


def _parse(text: str) -> dict[str, frozenset[str]]:
    lists: dict[str, list[str]] = {}
    for line in text.strip().splitlines():
        if line.startswith(" "):
            lists[next(reversed(lists))] += line.split()
        else:
            name, _, words = line.partition(": ")
            lists[name] = words.split()
    return {name: frozenset(words) for name, words in lists.items()}


WORDS = _parse(LISTS)  # the lists by name
WORDS["stance"] |= WORDS["yes"] | WORDS["no"]  # a reply's yes or no takes a stance, as 'closed' does
STEMS = {name: frozenset(map(stem, words)) for name, words in WORDS.items()}  # by stem, for statements
HOW = {
    w: frozenset({AnswerType(t) for t in k.split()[1:]})
    for k in WORDS
    if k.startswith("how ")
    for w in WORDS[k]
}
HEADS = {
    w: frozenset({AnswerType(t) for t in k.split()[1:]})
    for k in WORDS
    if k.startswith("head ")
    for w in WORDS[k]
}
HEAD_NOUNS = frozenset(HEADS)  # 'length', 'author', 'year': what a 'what ...' question asks for
STEMS["place"] |= {stem(w) for w, types in HEADS.items() if types == {PL}}
STEMS["person"] |= {stem(w) for w, types in HEADS.items() if types == {PE}}
