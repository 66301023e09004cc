"""Pair each generation with the retrieved context it consumed: one `Found` per RAG generation.

Conventions differ in where they put things, not in what a RAG trace is: retrievals (a query and
passages), generations (an LLM call: its messages, its output, its model) and, around them, the
app's own chain or workflow spans (the user's question and the final answer). Each convention
reads its attributes into these three shapes; this module decides, once for all of them, which
generation consumed which passages:

- a generation consumed the retrievals that ended since the previous generation (agentic RAG:
  retrieve, generate, retrieve again, generate again gives two records, each on its own LLM span);
- a later generation whose prompt repeats earlier passages (LlamaIndex's refine mode) consumed those;
- a tool call's result is a retrieval (`tools`): the agent's generation after it consumed it. A tool
  that ran a retriever itself (LlamaIndex's QueryEngineTool, LangChain's retriever tool) counts by its
  retriever's passages, not by its result, which is derived from them; the LLM calls inside a tool are
  the tool's workings, not the answer, and give no record. With no tool span, the tool results in the
  generation's prompt since the user's last message are its passages;
- with no retrieval span in the trace, the context is read from the prompt itself (the system
  message, or the user message around the question; see `prompt_context`);
- images in the prompt (a user or system message's image parts) are context the generation saw:
  they become image passages of its record, after the retrieved ones, once each (an image a
  retriever returned and the app then attached is one passage).

The question is the outermost enclosing chain's input (the user's question, not a sub-step's), else
the retrieval query, else the last user message (before a tool call's arguments, which are the
agent's search, not the user's question). A response written in a framework's template (DSPy's
`[[ ## answer ## ]]`) is its answer field (`markup`). The answer is the generation's own output: chain
outputs are often a framework object's repr (Haystack's pipeline output is `ChatMessage(...)`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from collector.conventions.common import Found, ancestors, parent_map
from collector.conventions.markup import answer_text
from collector.conventions.prompt_context import Message, PromptContext, context_from_prompt
from collector.conventions.tools import argument_text, tool_nodes
from collector.records import RetrievedNode
from collector.spans import Span


@dataclass(slots=True)
class Retrieval:
    span: Span
    query: str | None
    nodes: list[RetrievedNode]
    tool: bool = False  # a tool call's result (its query: the text of the tool's arguments)


@dataclass(slots=True)
class Generation:
    span: Span
    messages: list[Message]
    response: str | None
    model: str = ""


class Chain:
    """An app-level span (chain, workflow, agent) with the question it got and the answer it gave.

    Both are read only when asked for (a trace has many chain spans, and only the ones that enclose
    a generation matter): `read(span, direction)` reads "input" or "output".
    """

    def __init__(self, span: Span, read: Callable[[Span, str], str | None]) -> None:
        self.span, self._read = span, read

    @cached_property
    def question(self) -> str | None:
        return self._read(self.span, "input")

    @cached_property
    def answer(self) -> str | None:
        return self._read(self.span, "output")


@dataclass(slots=True)
class TraceShapes:
    """What a convention read from one trace, in its own vocabulary's terms."""

    retrievals: list[Retrieval] = field(default_factory=list)
    generations: list[Generation] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.retrievals or self.generations)


def pair(shapes: TraceShapes, spans: Sequence[Span], prompt: PromptContext) -> list[Found]:
    """One Found per generation that consumed context; a chain-level record when there is no LLM span."""
    parents = parent_map(spans)
    retrievals, inside_tools = _through_tools(shapes.retrievals, parents)
    retrievals.sort(key=lambda r: (r.span.start_ns, r.span.end_ns))
    generations = sorted(
        (g for g in shapes.generations if g.response and g.span.span_id not in inside_tools),
        key=lambda g: (g.span.start_ns, g.span.end_ns),
    )
    question_for = _enclosing(shapes.chains, parents, lambda c: c.question)
    found: list[Found] = []
    consumed_up_to = 0  # index into retrievals: those before it fed an earlier generation
    for generation in generations:
        fresh = [r for r in retrievals[consumed_up_to:] if r.span.start_ns <= generation.span.start_ns]
        consumed_up_to += len(fresh)
        feeding = fresh or _repeated_in_prompt(retrievals[:consumed_up_to], generation)
        tool_results = [] if feeding else _prompt_tool_results(generation)
        if feeding:
            nodes = [node for r in feeding for node in r.nodes]
            query = question_for(generation.span) or next(
                (r.query for r in feeding if r.query and not r.tool), None
            )
            query = query or _last_user_text(generation) or next((r.query for r in feeding if r.query), None)
        elif tool_results:  # the tool calls were not traced, their results are in the prompt
            nodes, query = tool_results, question_for(generation.span) or _last_user_text(generation)
        elif not retrievals:  # no retriever span anywhere: the context, if any, is in the prompt
            question = question_for(generation.span)
            extracted = context_from_prompt(generation.messages, question, prompt)
            if extracted is None and not _prompt_images(generation):
                continue
            query, nodes = extracted or (question or _last_user_text(generation), [])
        else:
            continue  # e.g. a query-rewriting or routing call before the retrieval
        if query and query.lstrip().startswith("{"):  # a call's arguments, `{'query': '...'}`: its text
            query = argument_text(query) or query
        if query and generation.response:
            nodes = _with_prompt_images(nodes, generation)
            response = answer_text(generation.response)  # DSPy's template: its answer field
            found.append(Found(query, response, generation.span, nodes, generation.model))
    if not found and not generations:
        found.extend(_chain_level(shapes, retrievals, question_for))
    return found


def _chain_level(
    shapes: TraceShapes, retrievals: list[Retrieval], question_for: Callable[[Span], str | None]
) -> list[Found]:
    """No LLM span (a custom generator, or the LLM not instrumented): the outermost chain's answer."""
    if not retrievals:  # an index build or an embedding batch: do not read every chain's output
        return []
    answered = [c for c in shapes.chains if c.answer and c.question]
    if not answered:
        return []
    chain = min(answered, key=lambda c: (not c.span.is_root, c.span.start_ns))
    nodes = [node for r in retrievals for node in r.nodes]
    assert chain.question is not None and chain.answer is not None
    return [Found(chain.question, chain.answer, chain.span, nodes)]


def _enclosing(
    chains: list[Chain], parents: dict[str, str], value: Callable[[Chain], str | None]
) -> Callable[[Span], str | None]:
    """A reader of `value` on the outermost enclosing chain that has one (read lazily, outermost first)."""
    by_id = {c.span.span_id: c for c in chains}

    def read(span: Span) -> str | None:
        enclosing = [by_id[a] for a in ancestors(span.span_id, parents) if a in by_id]
        return next((v for chain in reversed(enclosing) if (v := value(chain))), None)

    return read


def _through_tools(retrievals: list[Retrieval], parents: dict[str, str]) -> tuple[list[Retrieval], set[str]]:
    """(the retrievals that count, the span ids of generations inside a tool call). A tool call that
    ran a retriever counts by that retriever's passages; what the LLM calls inside a tool call answer
    is the tool's result, not the agent's answer."""
    tools = {r.span.span_id for r in retrievals if r.tool}
    if not tools:
        return list(retrievals), set()
    around = {a for r in retrievals if not r.tool and r.nodes for a in ancestors(r.span.span_id, parents)}
    kept = [r for r in retrievals if not (r.tool and r.span.span_id in around)]
    inside = {span_id for span_id in parents if any(a in tools for a in ancestors(span_id, parents))}
    return kept, inside


def _prompt_tool_results(generation: Generation) -> list[RetrievedNode]:
    """Passages of the tool results in the prompt since the user's last message (this turn's calls)."""
    last_user = max((i for i, m in enumerate(generation.messages) if m.role == "user" and m.text), default=-1)
    results = [m.text for m in generation.messages[last_user + 1 :] if m.role == "tool" and m.text]
    span, key = generation.span, "tool message"
    return [node for result in results for node in tool_nodes(result, span, key)]


def _repeated_in_prompt(earlier: list[Retrieval], generation: Generation) -> list[Retrieval]:
    prompt = "\n".join(m.text for m in generation.messages)
    return [r for r in earlier if any(n.text and n.text[:200].strip() in prompt for n in r.nodes)]


def _prompt_images(generation: Generation) -> list[str]:
    return [image for m in generation.messages if m.role in ("user", "system") for image in m.images]


def _with_prompt_images(nodes: list[RetrievedNode], generation: Generation) -> list[RetrievedNode]:
    """The passages, then the prompt's images not already among them (ids `image-N`, prompt order)."""
    seen = {node.text for node in nodes}
    extra = [image for image in dict.fromkeys(_prompt_images(generation)) if image not in seen]
    return nodes + [RetrievedNode(id=f"image-{n}", text=image) for n, image in enumerate(extra)]


def _last_user_text(generation: Generation) -> str | None:
    return next((m.text for m in reversed(generation.messages) if m.role == "user" and m.text), None)
