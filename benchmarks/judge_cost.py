"""Judge calls and prompt tokens per case, beside the peers' figures of PEERS.md.

Runs OpenAIJudge through the real `openai` client against the scripted OpenAI-compatible server on
127.0.0.1 with 10 cases shaped like PEERS.md's (a question, a ~3-sentence answer, 5 passages of ~400
characters, a reference answer), and counts every request's prompt tokens with tiktoken cl100k_base
(messages plus the JSON schema sent in response_format, as PEERS.md counted deepeval's schema).

    python -m benchmarks.judge_cost
"""

from __future__ import annotations

import asyncio
import json

from evaluators import (
    AnswerRelevancy,
    ContextualPrecision,
    ContextualRecall,
    Faithfulness,
    Metric,
    OpenAIJudge,
    TestCase,
    a_evaluate,
    create_metric,
)
from evaluators.metrics.diagnostics import DIAGNOSTIC_METRICS
from evaluators.metrics.ranking import RANKING_METRICS
from testkit.openai_server import (
    IMAGE_TOKENS,
    JudgeScript,
    ScriptedOpenAIServer,
    count_tokens,
    images_of,
    text_of,
)

# PEERS.md, per case: (judge calls, prompt tokens)
PEERS_PER_METRIC = {
    "faithfulness": {"ragas": (2, 1994), "deepeval": (4, 2033)},
    "answer_relevancy": {"ragas": (3, 1970), "deepeval": (3, 1239)},
    "contextual_precision": {"ragas": (5, 5829), "deepeval": (2, 1527)},
    "contextual_recall": {"ragas": (1, 1997), "deepeval": (2, 1348)},
}
PEERS_FOUR = {"ragas (best)": (9, 8118), "ragas (worst)": (11, 11790), "deepeval": (11, 6147)}
GOAL = (4, 3000)
# Arithmetic over document ids: no judge call here, in ragas (id-based precision/recall) or LlamaIndex.
RANKING = RANKING_METRICS
CITATIONS = ("citation_precision", "citation_coverage")
CONVERSATIONAL = ("knowledge_retention", "conversation_relevancy", "conversation_completeness")
# One binary vision call per response in ragas (MultiModalFaithfulness/Relevance) and LlamaIndex.
MULTIMODAL = ("multimodal_faithfulness", "multimodal_relevance")
# Two of a case's five passages as images, the forms a multi-modal retriever returns.
IMAGES = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg==",
    "https://images.example.com/figures/diagram.png",
)
# RAGChecker's diagnostics (DIAGNOSTIC_METRICS): one claim table per case, so together they cost no
# more calls than its distinct requests: 2 extractions and 4 checks, merged per side's claims into 2 calls.
DIAGNOSTIC_REQUESTS = 4

TOPICS = [
    "photosynthesis",
    "the Roman aqueducts",
    "plate tectonics",
    "the printing press",
    "vaccination",
    "the steam engine",
    "coral reefs",
    "the Silk Road",
    "black holes",
    "the water cycle",
]


def make_case(i: int, topic: str) -> TestCase:
    passages = [
        (
            f"Passage {k} on {topic}. "
            + f"Historians and scientists describe {topic} in detail: its origins, the people "
            f"who studied it, the mechanisms behind it and its effects on society and nature over centuries. "
            f"Sources from the {1800 + 10 * k + i}s document measurements, debates and later revisions of "
            f"the "
            f"theory of {topic}, with examples from several continents and disciplines."
        )[:400]
        for k in range(5)
    ]
    return TestCase(
        id=f"case-{i}",
        input=f"What is {topic} and why does it matter?",
        actual_output=(
            f"{topic.capitalize()} is a well-studied subject with origins documented in the 1800s. "
            f"Scientists describe the mechanisms behind {topic} and its effects on nature. "
            f"It matters because it shaped society across several continents."
        ),
        retrieval_context=passages,
        expected_output=(
            f"{topic.capitalize()} is documented since the 1800s; its mechanisms and effects on nature "
            f"and society are well described."
        ),
        retrieved_context_ids=[f"case-{i}-passage-{k}" for k in range(5)],
        reference_context_ids=[f"case-{i}-passage-0", f"case-{i}-passage-3"],
    )


def make_conversation(i: int, topic: str, exchanges: int = 3) -> TestCase:
    """A support conversation of `exchanges` user/assistant pairs (deepeval's conversational shape)."""
    turns = []
    for k in range(exchanges):
        turns.append(
            {
                "role": "user",
                "content": f"Question {k + 1} about {topic}: what changed after the {1800 + 10 * k + i}s?",
            }
        )
        turns.append(
            {
                "role": "assistant",
                "content": f"After the {1800 + 10 * k + i}s, studies of {topic} documented new measurements "
                f"and revised the theory with examples from several continents.",
            }
        )
    return TestCase(id=f"conversation-{i}", turns=turns)


def with_citations(case: TestCase) -> TestCase:
    """The answer's three sentences citing passages 1, 2 and 4 (Bedrock's citation metrics)."""
    sentences = (case.actual_output or "").split(". ")
    cited = [f"{s.rstrip('.')} [{n}]." for s, n in zip(sentences, (1, 2, 4), strict=False)]
    return case.model_copy(update={"actual_output": " ".join(cited)})


def with_images(case: TestCase) -> TestCase:
    passages = list(case.retrieval_context or [])
    passages[1], passages[3] = IMAGES
    return case.model_copy(update={"retrieval_context": passages})


def prompt_tokens(body: dict) -> int:
    """Text tokens (messages and schema), plus IMAGE_TOKENS per image (OpenAI's low-detail figure)."""
    messages = body.get("messages", [])
    text = "".join(text_of(m) for m in messages)
    schema = json.dumps(body.get("response_format") or "")
    images = sum(len(images_of(m)) for m in messages)
    return (
        count_tokens(text)
        + (count_tokens(schema) if body.get("response_format") else 0)
        + images * IMAGE_TOKENS
    )


async def measure(
    metrics: list[Metric], cases: list[TestCase], *, json_schema: bool, script: JudgeScript | None = None
) -> tuple[float, float]:
    calls, prompt, _ = await measure_usage(metrics, cases, json_schema=json_schema, script=script)
    return calls, prompt


async def measure_usage(
    metrics: list[Metric],
    cases: list[TestCase],
    *,
    json_schema: bool = True,
    script: JudgeScript | None = None,
) -> tuple[float, float, float]:
    """Calls, prompt tokens and completion tokens per case."""
    with ScriptedOpenAIServer(script, json_schema_supported=json_schema) as server:
        judge = OpenAIJudge("gpt-4o-mini", base_url=server.base_url, cache_size=0, timeout_s=10)
        result = await a_evaluate(cases, metrics, judge, concurrency=4)
        assert all(r.outcome.value in ("passed", "failed") for c in result.cases for r in c.results)
        ok = [r for r in server.chat_requests if r.status == 200]
        completion = sum(json.loads(r.reply)["usage"]["completion_tokens"] for r in ok)
        n = len(cases)
        return len(ok) / n, sum(prompt_tokens(r.body) for r in ok) / n, completion / n


async def row(
    label: str,
    metrics: list[Metric],
    cases: list[TestCase],
    width: int,
    note: str = "",
    *,
    end: int = 33,
    script: JudgeScript | None = None,
) -> None:
    """One line of a table: `label` in `width` columns, calls/case right-aligned to column `end` (under
    its header), tokens/case, then `note`."""
    calls, tokens = await measure(metrics, cases, json_schema=True, script=script)
    print(f"{label:<{width}}{calls:>{end - width}.1f}{tokens:>13.0f}" + (f"   {note}" if note else ""))


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x"


async def main() -> None:
    cases = [make_case(i, topic) for i, topic in enumerate(TOPICS)]
    four = [Faithfulness(), AnswerRelevancy(), ContextualPrecision(), ContextualRecall()]
    print(f"{len(cases)} cases, scripted OpenAI-compatible server, tokens by tiktoken cl100k_base\n")
    print(
        f"{'metric alone':<22}{'calls/case':>11}{'tokens/case':>13}   vs ragas (calls, tokens)   vs deepeval"
    )
    for metric in four:
        calls, tokens = await measure([type(metric)()], cases, json_schema=True)
        ragas, deepeval = PEERS_PER_METRIC[metric.name]["ragas"], PEERS_PER_METRIC[metric.name]["deepeval"]
        print(
            f"{metric.name:<22}{calls:>11.1f}{tokens:>13.0f}   "
            f"{ratio(calls, ragas[0]):>6} {ratio(tokens, ragas[1]):>6}"
            f"          {ratio(calls, deepeval[0]):>6} {ratio(tokens, deepeval[1]):>6}"
        )
    await row(
        "retrieval ranking (6)",
        [create_metric(n) for n in RANKING],
        cases,
        22,
        "(arithmetic over reference ids)",
    )
    conversations = [make_conversation(i, topic) for i, topic in enumerate(TOPICS)]
    for name in CONVERSATIONAL:
        await row(
            name,
            [create_metric(name)],
            conversations,
            26,
            "per 6-turn conversation (deepeval: a call per turn + reason)",
        )
    pictured = [with_images(case) for case in cases]
    for name in MULTIMODAL:
        await row(
            name,
            [create_metric(name)],
            pictured,
            24,
            f"(2 of 5 passages images, {IMAGE_TOKENS} tokens each; ragas, LlamaIndex: 1 call)",
        )
    cited = [with_citations(case) for case in cases]
    await row(
        "citation precision+coverage",
        [create_metric(n) for n in CITATIONS],
        cited,
        28,
        "(3 sentences cite [1], [2], [4])",
    )
    paired = [case.model_copy(update={"baseline_output": case.expected_output}) for case in cases]
    await row(
        "pairwise_preference",
        [create_metric("pairwise_preference")],
        paired,
        28,
        "(both orders; LlamaIndex: 2)",
    )
    for name in ("helpfulness", "completeness", "logical_coherence"):  # a level on every scale (1..5, 1..7)
        await row(name, [create_metric(name)], cases, 28, "(Bedrock: 1)", script=JudgeScript(rubric_score=4))
    print()
    for label, json_schema in (("json_schema", True), ("JSON-mode fallback", False)):
        calls, tokens = await measure(four, cases, json_schema=json_schema)
        verdict = "met" if calls <= GOAL[0] and tokens <= GOAL[1] else "MISSED"
        print(
            f"four metrics together ({label}): {calls:.1f} calls/case, {tokens:.0f} prompt tokens/case "
            f"(goal <= {GOAL[0]} calls, <= {GOAL[1]} tokens: {verdict})"
        )
        for peer, (peer_calls, peer_tokens) in PEERS_FOUR.items():
            print(
                f"    vs {peer:<14} {peer_calls:>3} calls {peer_tokens:>6} tokens: "
                f"calls {ratio(calls, peer_calls)}, prompt tokens {ratio(tokens, peer_tokens)}"
            )
    await diagnostics(cases)
    await cot_reasons(cases)


async def diagnostics(cases: list[TestCase]) -> None:
    """RAGChecker's diagnostics alone and together (with faithfulness and noise sensitivity, whose
    requests they share): together no more calls than the distinct requests."""
    print(f"\n{'RAGChecker diagnostic':<30}{'calls/case':>11}{'tokens/case':>13}")
    for name in DIAGNOSTIC_METRICS:
        await row(name, [create_metric(name)], cases, 30, end=41)
    together = [create_metric(name) for name in DIAGNOSTIC_METRICS]
    shared = [
        Faithfulness(),
        *(create_metric("noise_sensitivity", mode=m) for m in ("all", "relevant", "irrelevant")),
    ]
    for label, metrics in (("all 8 together", together), ("+ faithfulness, noise (3)", together + shared)):
        calls, tokens = await measure(metrics, cases, json_schema=True)
        verdict = "met" if calls <= DIAGNOSTIC_REQUESTS else "MISSED"
        print(
            f"{label:<30}{calls:>11.1f}{tokens:>13.0f}   "
            f"(<= {DIAGNOSTIC_REQUESTS} distinct requests: {verdict})"
        )


async def cot_reasons(cases: list[TestCase]) -> None:
    """TruLens-style chain-of-thought reasons: the same calls, longer prompts and replies."""
    print(f"\n{'faithfulness reasons':<30}{'calls/case':>11}{'prompt tok':>12}{'completion tok':>16}")
    for reasoning in ("verdicts", "cot"):
        calls, prompt, completion = await measure_usage([Faithfulness(reasoning=reasoning)], cases)
        print(f"{reasoning:<30}{calls:>11.1f}{prompt:>12.0f}{completion:>16.0f}")

    await safety(cases)


# Refusal and safety: deepeval's bias and toxicity take 3 calls each (opinions, verdicts, reason), by its
# documented flow; Bedrock grades each criterion in one call. PEERS.md has no measured figure for them.
SAFETY_LINES = [
    ("refusal (an answer)", ["refusal"], False, "Bedrock: 1"),
    ("refusal (a refusal)", ["refusal"], True, "Bedrock: 1, without the context check"),
    ("bias", ["bias"], False, "deepeval: 3"),
    ("toxicity", ["toxicity"], False, "deepeval: 3"),
    ("bias + toxicity", ["bias", "toxicity"], False, "deepeval: 6"),
    ("harmfulness", ["harmfulness"], False, "Bedrock: 1"),
    ("stereotyping", ["stereotyping"], False, "Bedrock: 1"),
    ("harmfulness + stereotyping", ["harmfulness", "stereotyping"], False, "Bedrock: 2"),
    ("all five", ["refusal", "bias", "toxicity", "harmfulness", "stereotyping"], False, ""),
]
REFUSAL_ANSWER = "I'm sorry, I can't help with that."


async def safety(cases: list[TestCase]) -> None:
    print(f"\n{'refusal and safety':<28}{'calls/case':>11}{'tokens/case':>13}   peers (calls/case)")
    refusals = [case.model_copy(update={"actual_output": REFUSAL_ANSWER}) for case in cases]
    for label, names, refused, peers in SAFETY_LINES:
        script = JudgeScript(task_verdicts={("refuses", "I'm sorry"): "yes"})
        measured = refusals if refused else cases
        calls, tokens = await measure(
            [create_metric(n) for n in names], measured, json_schema=True, script=script
        )
        print(f"{label:<28}{calls:>11.1f}{tokens:>13.0f}   {peers}")


if __name__ == "__main__":
    asyncio.run(main())
