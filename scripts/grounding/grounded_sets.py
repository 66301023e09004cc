"""Readers of the grounded sets: claims checked against evidence, answers and summaries against their
sources (fact-checking, long-form QA, summarisation, HaluEval).

Each reader takes the data folder (laid out as `sources.MANIFEST` says) and yields `Example`s.
"""

from __future__ import annotations

import ast
import csv
import json
import pickle
from collections.abc import Iterator
from pathlib import Path

from evaluators.offline.sentences import sentences
from scripts.grounding.examples import Example

_STANCE = {
    "completely-support": "supported",
    "partially-support": "not_supported",
    "refute": "contradicted",
    "irrelevant": "unsupported",
}


def factcheck(data: Path) -> Iterator[Example]:
    for line in (data / "factcheck_gpt/subtask3_claim_evidence_stance.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        label = _STANCE.get(row.get("stance", ""))
        if label and row.get("evidence"):
            yield Example(
                "factcheck_gpt", "factcheck", (row["evidence"],), row["claim"], label, item=row["claim"]
            )


_DIALFACT = {"SUPPORTS": "supported", "REFUTES": "contradicted", "NOT ENOUGH INFO": "unsupported"}


def dialfact(data: Path) -> Iterator[Example]:
    for line in (data / "dialfact/testsmall.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        evidence = row.get("evidence_list") or []
        evidence = ast.literal_eval(evidence) if isinstance(evidence, str) else evidence
        passages = tuple(e[2] for e in evidence if len(e) > 2 and e[2])
        label = _DIALFACT.get(row["response_label"])
        if label and passages:
            yield Example("dialfact", "factcheck", passages, row["response"], label, item=row["context_id"])


_LFQA_DOCS = {
    "webgpt": "webgpt",
    "gpt3_wdoc": "webgpt",
    "alpaca_wdoc": "webgpt",
    "gpt3": "webgpt",
    "alpaca": "webgpt",
    "gpt3_whudoc": "human",
}


def lfqa(data: Path) -> Iterator[Example]:
    base = data / "lfqa"
    docs = {
        kind: {d["question_id"]: d["docs"] for d in json.loads((base / f"docs-{kind}.json").read_text())}
        for kind in ("webgpt", "human")
    }
    for answers, kind in _LFQA_DOCS.items():
        for entry in json.loads((base / f"annotations-{answers}.json").read_text()):
            passages = tuple(d["text"] for d in docs[kind].get(entry["question_id"], []) if d.get("text"))
            if not passages:
                continue
            for note in entry["annotations"]:
                votes = note["labels"]
                top = max(set(votes), key=votes.count)
                if votes.count(top) * 2 <= len(votes):
                    continue  # no majority
                label = "supported" if top == "supported" else "not_supported"
                yield Example(
                    "lfqa",
                    "lfqa",
                    passages,
                    note["answer"].strip(),
                    label,
                    question=entry["question"],
                    item=f"{answers}:{entry['question_id']}",
                )


def qags(data: Path) -> Iterator[Example]:
    for part in ("cnndm", "xsum"):
        for n, line in enumerate((data / f"qags/mturk_{part}.jsonl").open(encoding="utf-8")):
            row = json.loads(line)
            for sentence in row["summary_sentences"]:
                votes = [r["response"] for r in sentence["responses"]]
                label = "supported" if votes.count("yes") * 2 > len(votes) else "not_supported"
                yield Example(
                    "qags", "summaries", (row["article"],), sentence["sentence"], label, item=f"{part}{n}"
                )


def aggrefact(data: Path) -> Iterator[Example]:
    for name in ("CLIFF", "Goyal21"):
        for row in csv.DictReader((data / f"aggrefact/{name}_error_types.csv").open(encoding="utf-8")):
            spans = _spans(row["annotated_span"])
            correct = row["error_type"] in ("correct", "[]", "") and not spans
            for sentence in sentences(row["summ"]):
                bad = any(span.lower() in sentence.lower() for span in spans)
                label = "supported" if correct or not bad else "not_supported"
                yield Example(
                    name.lower(), "summaries", (row["doc"],), sentence, label, item=f"{name}{row['id']}"
                )


def _spans(text: str) -> list[str]:
    try:
        value = ast.literal_eval(text) if text.strip() else []
    except (ValueError, SyntaxError):
        return []
    flat: list[str] = []
    for v in value if isinstance(value, list) else []:
        flat.extend(x for x in (v if isinstance(v, list) else [v]) if isinstance(x, str) and x.strip())
    return flat


_HALUEVAL = {
    "qa": ("knowledge", "question", "right_answer", "hallucinated_answer"),
    "dialogue": ("knowledge", "dialogue_history", "right_response", "hallucinated_response"),
    "summarization": ("document", None, "right_summary", "hallucinated_summary"),
}


def halueval(data: Path) -> Iterator[Example]:
    for task, (context, question, right, wrong) in _HALUEVAL.items():
        path = data / f"halueval/dataset_halueval_{task}.jsonl"
        for n, line in enumerate(path.open(encoding="utf-8")):
            row = json.loads(line)
            asked = row[question] if question else ""
            for field, label in ((right, "supported"), (wrong, "not_supported")):
                yield Example(
                    f"halueval_{task}",
                    "halueval",
                    (row[context],),
                    row[field],
                    label,
                    question=asked,
                    item=f"{task}{n}",
                    answer_level=True,
                )


_FEVER = {"SUPPORTS": "supported", "REFUTES": "contradicted"}


def fever_symmetric(data: Path) -> Iterator[Example]:
    seen = set()
    for name in (
        "fever_symmetric_full",
        "fever_symmetric_generated",
        "fever_symmetric_dev",
        "fever_symmetric_test",
    ):
        for line in (data / f"fever_symmetric/{name}.jsonl").open(encoding="utf-8"):
            row = json.loads(line)
            evidence = row.get("evidence_sentence") or row.get("evidence") or ""
            label = _FEVER.get(row.get("label") or row.get("gold_label", ""))
            if label and evidence and (evidence, row["claim"]) not in seen:
                seen.add((evidence, row["claim"]))
                claim, passage = _fever_text(row["claim"]), _fever_text(evidence)
                yield Example(
                    "fever_symmetric", "factcheck", (passage,), claim, label, item=str(row.get("id", ""))
                )


_PTB = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-COLON-": ":",
    " ,": ",",
    " .": ".",
    " 's": "'s",
}


def _fever_text(text: str) -> str:
    for token, plain in _PTB.items():
        text = text.replace(token, plain)
    return " ".join(text.split())


class _Builtins(pickle.Unpickler):
    """Reads a pickle of plain containers only: no code runs from a data file."""

    def find_class(self, module: str, name: str) -> type:
        if module == "builtins" and name in ("dict", "list", "tuple", "set", "str", "int", "float"):
            return getattr(__import__("builtins"), name)
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")


def summeval(data: Path) -> Iterator[Example]:
    documents = _Builtins((data / "summeval/data.pkl").open("rb")).load()
    for doc_id, doc in sorted(documents.items()):
        for _system, summary in sorted(doc["sys_summs"].items()):
            consistency = summary["scores"]["consistency"]
            if consistency == 5.0 or consistency <= 3.0:  # the experts agree it is, or that it is not
                label = "supported" if consistency == 5.0 else "not_supported"
                summary_text = summary["sys_summ"]
                yield Example(
                    "summeval",
                    "summaries",
                    (doc["src"],),
                    summary_text,
                    label,
                    item=doc_id,
                    answer_level=True,
                )
