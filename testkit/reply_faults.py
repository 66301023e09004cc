"""Verdict lists that do not line up with the items asked about, as weak judge models return them.

`ScriptedOpenAIServer` bends its scripted verdict reply with one of these modes when a test queues it
(`fail_next`: it waits for the next verdict request) or sets it for every request (`failing`, so the
repair turn gets the same). Each mode is
a way real models miscount: they skip an item, answer in their own order, or judge one item twice.
The scripted verdicts echo each item's 0-based `index`, as the judge's schema asks, so the judge can
tell which verdict is about which item whatever the list's length.
"""

from __future__ import annotations

from typing import Any

# "short": the first item's verdict is left out (the others keep their index, so only the index places
# them); "reordered": the list reversed, each verdict echoing its item's text instead of its index;
# "extra": one more verdict, about an item beyond those asked (index = the number of items).
MODES = ("short", "reordered", "extra")


def asks_verdicts(operation: str) -> bool:
    """The request asks for a verdict list (one check, or several merged): what a mode applies to."""
    return operation.startswith("verdicts_") or operation == "checks"


def misshape(reply: dict[str, Any], mode: str, items: list[str]) -> dict[str, Any]:
    """`reply` (a `verdicts` or `checks` reply for `items`) bent as `mode` says."""
    key = "verdicts" if "verdicts" in reply else "items"
    entries: list[dict[str, Any]] = list(reply[key])
    if mode == "short":
        entries = entries[1:]
    elif mode == "reordered":
        entries = [_echoing_text(entry, items) for entry in reversed(entries)]
    elif mode == "extra" and entries:
        entries.append({**entries[-1], "index": len(items)})
    return {**reply, key: entries}


def _echoing_text(entry: dict[str, Any], items: list[str]) -> dict[str, Any]:
    index = entry.get("index", -1)
    echoed = {name: value for name, value in entry.items() if name != "index"}
    return {"item": items[index] if 0 <= index < len(items) else "", **echoed}
