"""A LlamaIndex RAG app, instrumented with OpenInference, exporting its traces to ragpulse.

What a Phoenix user already runs; nothing ragpulse-specific but the OTLP endpoint. Needs the packages
of docs/examples/requirements.txt in a virtualenv and an OpenAI-compatible endpoint (OPENAI_BASE_URL /
OPENAI_API_KEY: OpenAI, vLLM, Ollama, or the scripted server of docs/quickstart.md step 2):

    python3 -m venv app-venv && app-venv/bin/pip install -r docs/examples/requirements.txt
    app-venv/bin/python docs/examples/quickstart_app.py "When is the Lisbon office open?"
"""

import os
import sys

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.embeddings.openai import OpenAIEmbedding
from llama_index.llms.openai import OpenAI
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# 1. Traces go to ragpulse's OTLP/HTTP receiver (or to your OTel Collector, which forwards them).
endpoint = os.environ.get("RAGPULSE_OTLP_ENDPOINT", "http://127.0.0.1:4318/v1/traces")
provider = TracerProvider(resource=Resource.create({"service.name": "quickstart-rag-app"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
LlamaIndexInstrumentor().instrument(tracer_provider=provider)

# 2. The RAG app itself, as LlamaIndex's starter tutorial writes it.
base_url = os.environ.get("OPENAI_BASE_URL")
Settings.llm = OpenAI(model="gpt-4o-mini", api_base=base_url)
Settings.embed_model = OpenAIEmbedding(model="text-embedding-3-small", api_base=base_url)
documents = [
    Document(text="Full-time staff receive 27 days of paid leave per year."),
    Document(text="Customers can request a full refund within 45 days of purchase."),
    Document(text="The Lisbon office is open Monday to Friday from 08:30 to 17:30."),
]
query_engine = VectorStoreIndex.from_documents(documents).as_query_engine(similarity_top_k=2)
question = sys.argv[1] if len(sys.argv) > 1 else "How many days of paid leave do staff receive per year?"
print(query_engine.query(question))

provider.shutdown()  # flush the spans before exiting
