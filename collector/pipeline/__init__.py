"""The pipeline: the composition root (`service`), the flow from receivers to exporters
(`pipeline`), the evaluation queue, acknowledgements and offsets, dead letters and bounded teardown."""
