"""HTTP serving shared by the receivers, the page and the operator endpoint (/metrics, /healthz,
/readyz): one uvicorn server per port on its own thread, and the admission rules for each connection."""
