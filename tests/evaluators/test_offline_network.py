"""The offline judges never need the network: they load and judge with every socket refused."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import asyncio, socket

    def refuse(*args, **kwargs):
        raise AssertionError("the offline judge opened a network connection")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    from evaluators.judges.base import ExtractKind, VerdictTask
    import sys
    from evaluators.offline import LearnedJudge, OfflineJudge

    async def main():
        judge = LearnedJudge() if sys.argv[1:] == ["learned"] else OfflineJudge()
        claims = await judge.extract("The tower is 330 metres tall. It opened in 1889.", ExtractKind.CLAIMS)
        nodes = ["The tower is 330 metres tall.", "It opened to the public in 1889."]
        supported = await judge.verdicts(claims, nodes, VerdictTask.SUPPORTED)
        relevant = await judge.verdicts(claims, ["How tall is the tower?"], VerdictTask.RELEVANT)
        await judge.embed(["a", "b"])
        print([v.verdict for v in supported], len(relevant))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("judge", ["lexical", "learned"])
def test_load_and_judge_with_no_network_and_hub_offline(judge: str) -> None:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env |= {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, judge],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("2")
    if judge == "lexical":
        assert done.stdout.strip() == "['yes', 'yes'] 2"
