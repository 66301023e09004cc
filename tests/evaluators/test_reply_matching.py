"""`place`: each verdict of a judge's reply goes to the item it names, never to its position by luck.

The HTTP path (a misshaped reply through the `openai` client, scored and counted by the sidecar) is in
tests/reliability/test_judge_reply_mismatch.py; these are the placement rules themselves."""

from __future__ import annotations

from evaluators.judges.base import ReplyMismatch
from evaluators.judges.matching import place
from evaluators.judges.schemas import VerdictsReply

ITEMS = ["Paris is in France.", "It has 2 million inhabitants.", "It is the capital."]


def test_a_full_list_in_order_lines_up_with_or_without_echoes() -> None:
    assert place(ITEMS, [(0, ""), (1, ""), (2, "")]).mismatch is None
    assert place(ITEMS, [(-1, ""), (-1, ""), (-1, "")]).entries == [0, 1, 2]  # as replies were always read


def test_a_short_list_without_echoes_places_nothing_rather_than_guess() -> None:
    placement = place(ITEMS, [(-1, ""), (-1, "")])
    assert placement.entries == [None, None, None]
    assert placement.mismatch == ReplyMismatch(3, (0, 1, 2), ignored=2)


def test_echoed_text_wins_over_the_index_and_ignores_case_and_spacing() -> None:
    placement = place(ITEMS, [(0, "it is the  CAPITAL."), (1, ""), (5, "")])
    assert placement.entries == [None, 1, 0]
    assert placement.mismatch == ReplyMismatch(3, (0,), ignored=1, reordered=True)


def test_indexes_one_to_n_in_a_full_list_were_meant_one_based() -> None:
    assert place(ITEMS, [(1, ""), (2, ""), (3, "")]).entries == [0, 1, 2]
    assert place(ITEMS, [(1, ""), (2, "")]).entries == [None, 0, 1]  # short: taken as written


def test_a_repeated_item_is_judged_once_and_the_repeat_ignored() -> None:
    placement = place(ITEMS, [(0, ""), (0, ""), (1, ""), (2, "")])
    assert placement.entries == [0, 2, 3] and placement.mismatch == ReplyMismatch(3, (), ignored=1)


def test_a_model_naming_the_text_its_own_way_is_read_in_json_mode() -> None:
    reply = VerdictsReply.model_validate_json(
        '{"verdicts": [{"claim": "It is the capital.", "verdict": "yes"}, {"statement": "Paris is in '
        'France.", "verdict": "no"}]}'
    )
    assert place(ITEMS, [(v.index, v.item) for v in reply.verdicts]).entries == [1, None, 0]
