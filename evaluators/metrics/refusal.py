"""Refusal (Amazon Bedrock's "Refusal"): does the answer decline to answer? 1 = refused, lower is better.

Bedrock grades the response alone. A RAG service also needs to know whose failure a refusal is: when
the retrieved passages hold the answer, declining is the generator's failure (retrieval did its job);
when they do not, declining was right and the retriever missed. So a refusal is followed by one more
question, whether the passages answer the question, and `details["context_has_answer"]` carries it
to `evaluators.causes`.

Judge calls per case: 1 (the refusal verdict); 2 when the answer refuses and passages were retrieved.
"""

from __future__ import annotations

from evaluators.case import CaseField, TestCase
from evaluators.judges.base import Verdict, VerdictTask
from evaluators.metrics.base import Metric, Scored, record, undecided
from evaluators.session import JudgeSession

# A refusal of a request that should be declined (harmful, out of scope) is no retrieval failure.
_MISS = " (a retrieval miss, if the question should be answerable)"


class Refusal(Metric):
    """1 when the answer declines the request (Bedrock's refusal rubric), else 0.

    `details`: `refused`, and for a refusal `context_has_answer` (True / False; None when nothing was
    retrieved or the judge could not tell) with `answering_passages` (0-based).
    """

    name = "refusal"
    lower_is_better = True
    required_fields = (CaseField.INPUT, CaseField.ACTUAL_OUTPUT)

    async def score_case(self, case: TestCase, session: JudgeSession) -> Scored:
        question, answer = case.input or "", case.actual_output or ""
        [refuses] = await session.verdicts([answer], [question], VerdictTask.REFUSES)
        records = [record("answer", answer, refuses, VerdictTask.REFUSES.value)]
        if refuses.verdict == "idk":
            raise undecided(session, [refuses], "the judge could not tell whether it refuses")
        if refuses.verdict == "no":
            return Scored(0.0, _because("the answer does not refuse", refuses), records, {"refused": False})
        passages = [p for p in case.retrieval_context or [] if p.strip()]
        details: dict[str, object] = {"refused": True, "context_has_answer": None, "answering_passages": []}
        if not passages:
            reason = f"the answer refuses, and nothing was retrieved: declining was right{_MISS}"
            return Scored(1.0, _because(reason, refuses), records, details)
        [answerable] = await session.verdicts([question], passages, VerdictTask.ANSWERABLE)
        records.append(record("question", question, answerable, VerdictTask.ANSWERABLE.value))
        if answerable.verdict == "yes":
            nodes = ", ".join(str(i) for i in answerable.supporting_ids)
            details |= {"context_has_answer": True, "answering_passages": list(answerable.supporting_ids)}
            where = f" (node {nodes})" if nodes else ""
            reason = f"the answer refuses although the retrieved context answers the question{where}: "
            reason += "a generation failure"
        elif answerable.verdict == "no":
            details["context_has_answer"] = False
            reason = (
                "the answer refuses, and the retrieved context does not answer the question: "
                f"declining was right{_MISS}"
            )
        else:
            reason = "the answer refuses; the judge could not tell whether the retrieved context answers it"
        return Scored(1.0, _because(reason, refuses, answerable), records, details)


def _because(summary: str, *verdicts: Verdict) -> str:
    """The summary, then the judge's own words for each verdict it rests on."""
    said = "; ".join(v.reason for v in verdicts if v.reason)
    return f"{summary} ({said})" if said else summary
