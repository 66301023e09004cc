"""Assembly: spans gathered into traces (the query, the nodes and the response sit on different
spans), and extracted records into conversations."""
