"""Readers of the NLI and paraphrase sets: premise / hypothesis pairs, labelled three ways or two.

Each reader takes the data folder (laid out as `sources.MANIFEST` says) and yields `Example`s.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

from scripts.grounding.examples import Example

_NLI = {"e": "supported", "n": "unsupported", "c": "contradicted"}


def anli(data: Path) -> Iterator[Example]:
    for r in (1, 2, 3):
        path = data / f"anli/ANLI_analysis_r{r}_dev.csv"
        for row in csv.DictReader(path.open(encoding="utf-8")):
            label = _NLI.get(row["gold_label"].strip())
            if label:
                yield Example("anli", "nli", (row["context"],), row["statement"], label, item=row["uid"])


_SICK = {"ENTAILMENT": "supported", "NEUTRAL": "unsupported", "CONTRADICTION": "contradicted"}


def sick(data: Path) -> Iterator[Example]:
    for row in csv.DictReader((data / "sick/SICK.txt").open(encoding="utf-8"), delimiter="\t"):
        a, b = row["sentence_A"], row["sentence_B"]
        forward = row["entailment_AB"].split("_")[1]  # A_neutral_B
        backward = row["entailment_BA"].split("_")[1]
        words = {"entails": "supported", "neutral": "unsupported", "contradicts": "contradicted"}
        yield Example("sick", "nli", (a,), b, words[forward], item=row["pair_ID"])
        yield Example("sick", "nli", (b,), a, words[backward], item=row["pair_ID"])


def rte(data: Path) -> Iterator[Example]:
    seen = set()
    for split in ("train", "dev"):
        path = data / f"rte/{split}.tsv"
        for row in csv.DictReader(path.open(encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE):
            label = "supported" if row["label"] == "entailment" else "not_supported"
            seen.add((row["sentence1"], row["sentence2"]))
            yield Example(
                "rte", "nli", (row["sentence1"],), row["sentence2"], label, item=f"glue{row['index']}"
            )
    with zipfile.ZipFile(data / "rte/rte.zip") as archive:
        for name in sorted(n for n in archive.namelist() if n.endswith(".xml")):
            root = ElementTree.fromstring(archive.read(name))
            for pair in root.iter("pair"):
                t, h = pair.findtext("t", "").strip(), pair.findtext("h", "").strip()
                value = (pair.get("value") or pair.get("entailment") or "").upper()
                if (t, h) in seen or value not in ("TRUE", "FALSE", "YES", "NO"):
                    continue
                seen.add((t, h))
                label = "supported" if value in ("TRUE", "YES") else "not_supported"
                yield Example("rte", "nli", (t,), h, label, item=f"{name}:{pair.get('id')}")


def mrpc(data: Path) -> Iterator[Example]:
    for split in ("train", "test"):
        text = (data / f"mrpc/msr_paraphrase_{split}.txt").read_text(encoding="utf-8-sig")
        for row in csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE):
            a, b, same = row["#1 String"], row["#2 String"], row["Quality"] == "1"
            item = f"{row['#1 ID']}-{row['#2 ID']}"
            yield Example("mrpc", "paraphrase", (a,), b, "supported" if same else "not_supported", item=item)
            if same:
                yield Example("mrpc", "paraphrase", (b,), a, "supported", item=item)


_WORDS3 = {"entailment": "supported", "neutral": "unsupported", "contradiction": "contradicted"}


def _tsv(path: Path) -> Iterator[dict[str, str]]:
    text = path.read_text(encoding="utf-8-sig")
    yield from csv.DictReader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)


def mnli(data: Path) -> Iterator[Example]:
    seen = set()
    for row in _tsv(data / "mnli/mnli_development_set_number_of_correct_responses.txt"):
        if label := _WORDS3.get(row["gold_label"]):
            seen.add((row["premise"], row["hypothesis"]))
            yield Example("mnli", "nli", (row["premise"],), row["hypothesis"], label, item=f"m{row['index']}")
    for row in _tsv(data / "mnli/taxinli10k.tsv"):  # MultiNLI dev pairs, mismatched genres among them
        if (label := _WORDS3.get(row["label"])) and (row["prem"], row["hyp"]) not in seen:
            seen.add((row["prem"], row["hyp"]))
            yield Example("mnli", "nli", (row["prem"],), row["hyp"], label, item=f"t{row['pairID']}")


def snli(data: Path) -> Iterator[Example]:
    for split in ("dev", "test"):
        lines = [
            (data / f"snli/{f}.{split}").read_text(encoding="utf-8").splitlines()
            for f in ("s1", "s2", "labels")
        ]
        for n, (a, b, gold) in enumerate(zip(*lines, strict=True)):
            if label := _WORDS3.get(gold.strip()):
                yield Example("snli", "nli", (a,), b, label, item=f"{split}{n}")


def cad(data: Path) -> Iterator[Example]:
    for split in ("train", "dev", "test"):
        for n, row in enumerate(_tsv(data / f"cad/{split}.tsv")):
            if label := _WORDS3.get(row["gold_label"]):
                yield Example(
                    "cad", "nli", (row["sentence1"],), row["sentence2"], label, item=f"{split}{n // 5}"
                )


def conjnli(data: Path) -> Iterator[Example]:
    for name in ("adversarial_train_15k", "conj_dev"):
        for n, row in enumerate(_tsv(data / f"conjnli/{name}.tsv")):
            if label := _WORDS3.get(row["Label"].strip()):
                yield Example(
                    "conjnli", "nli", (row["Premise"],), row["Hypothesis"], label, item=f"{name}{n}"
                )


def med(data: Path) -> Iterator[Example]:
    for row in _tsv(data / "med/MED.tsv"):
        if label := _WORDS3.get(row["gold_label"]):
            yield Example("med", "nli", (row["sentence1"],), row["sentence2"], label, item=row["pairID"])


def monli(data: Path) -> Iterator[Example]:
    for name in ("nmonli_train", "nmonli_test", "pmonli"):
        for n, line in enumerate((data / f"monli/{name}.jsonl").open(encoding="utf-8")):
            row = json.loads(line)
            if label := _WORDS3.get(row["gold_label"]):
                yield Example("monli", "nli", (row["sentence1"],), row["sentence2"], label, item=f"{name}{n}")


def breaking(data: Path) -> Iterator[Example]:
    with zipfile.ZipFile(data / "breaking_nli/breaking_nli_dataset.zip") as archive:
        for n, line in enumerate(archive.read("data/dataset.jsonl").decode("utf-8").splitlines()):
            row = json.loads(line)
            if label := _WORDS3.get(row["gold_label"]):
                yield Example(
                    "breaking_nli", "nli", (row["sentence1"],), row["sentence2"], label, item=str(n)
                )


def scitail(data: Path) -> Iterator[Example]:
    for split in ("dev", "test"):
        for line in (data / f"scitail/{split}.jsonl").open(encoding="utf-8"):
            row = json.loads(line)
            label = "supported" if row["gold_label"] == "E" else "unsupported"
            yield Example(
                "scitail", "nli_domains", (row["sentence1"],), row["sentence2"], label, item=row["id"]
            )


def tracie(data: Path) -> Iterator[Example]:
    for line in (data / "tracie/train_uniform.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if label := _WORDS3.get(row["label"]):
            claim = row["query"].removeprefix("event: ")
            yield Example("tracie", "nli_domains", (row["story"],), claim, label, item=row["id"])


_CONTROL = {"e": "supported", "n": "unsupported", "c": "contradicted"}


def control(data: Path) -> Iterator[Example]:
    for split in ("dev", "test"):
        for line in (data / f"control/{split}.jsonl").open(encoding="utf-8"):
            row = json.loads(line)
            label = _CONTROL.get(str(row["label"]).lower()[:1])
            if label:
                yield Example(
                    "control", "nli_domains", (row["premise"],), row["hypothesis"], label, item=row["uid"]
                )


def nli4ct(data: Path) -> Iterator[Example]:
    with zipfile.ZipFile(data / "nli4ct/Complete_dataset.zip") as archive:
        names = archive.namelist()
        for split in ("train", "dev", "Gold_test"):
            for _uid, row in json.loads(archive.read(f"Complete_dataset/{split}.json")).items():
                if row.get("Type") != "Single" or row.get("Label") not in ("Entailment", "Contradiction"):
                    continue
                trial = f"Complete_dataset/CT json/{row['Primary_id']}.json"
                if trial not in names:
                    continue
                section = json.loads(archive.read(trial)).get(row["Section_id"], [])
                lines = [
                    section[i].strip() for i in row.get("Primary_evidence_index", []) if i < len(section)
                ]
                label = "supported" if row["Label"] == "Entailment" else "contradicted"
                yield Example(
                    "nli4ct",
                    "nli_domains",
                    (" ".join(lines),),
                    row["Statement"],
                    label,
                    item=row["Primary_id"],
                )


def stsb(data: Path) -> Iterator[Example]:
    for split in ("train", "dev", "test"):
        for n, row in enumerate(csv.reader((data / f"stsb/stsb-en-{split}.csv").open(encoding="utf-8"))):
            score = float(row[2])
            if score >= 4.5:
                label = "supported"
            elif score <= 2.0:
                label = "not_supported"
            else:
                continue  # in between: partly the same meaning, neither label is safe
            yield Example("stsb", "paraphrase", (row[0],), row[1], label, item=f"{split}{n}")
