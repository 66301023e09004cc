"""OpenLIT switched on as its docs say (`openlit.init()`), in an instrumentor's shape for instrument.setup.

`openlit.init` finds the app's TracerProvider and LoggerProvider (instrument.setup made them, with the
stock OTLP exporters) and instruments the openai SDK: a chat span per call, and a
`gen_ai.client.inference.operation.details` log event with the content. Its metrics are off here
(`disable_metrics=True`): the conformance run compares traces and logs only.
"""

from __future__ import annotations

from typing import Any

import openlit


class OpenLIT:
    def instrument(self, **_: Any) -> None:
        openlit.init(application_name="brightleaf-handbook", disable_metrics=True)
