"""How many distinct words the offline judge's word-level caches remember (docs/offline-judge.md, Memory).

One bound for every cache keyed by a single word (stems, antonym keys, native-script stems, token ids,
nupunkt's memo of token strings): traffic brings new ids and numbers without end, so each such cache
fills and then evicts, and a worker's memory levels off once they have all filled, after about this
many records with a new word each (~0.8 MB a cache when full).
"""

WORDS = 4096
