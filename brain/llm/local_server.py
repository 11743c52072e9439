"""The embedded model's own process: llama.cpp serving one GGUF model on loopback (`LocalModel` starts it).

It reads its configuration as one JSON line on stdin and answers one JSON line on stdout: `{"address": URL}`
once it serves, or `{"error": TEXT}`. Then it serves until its stdin ends, which is when the process that
started it closes it or dies, even by SIGKILL: it never outlives its user. A process of its own because
llama.cpp holds the GIL while it loads (half a second of a chat's start): here the load runs beside the
chat's imports, on another core. Ctrl-C in a terminal reaches every process of the foreground group: this
one ignores it, the chat that started it decides. Run as a file: it imports nothing of the library.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

__all__ = ["main"]


def _serve(config: dict[str, Any]) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = config["path"]
    params.n_ctx = config["n_ctx"]
    params.n_parallel = config["n_parallel"]
    params.api_keys = [config["key"]]
    params.use_jinja = True
    params.verbosity = -1  # llama.cpp's own log lines would fill the terminal
    params.warmup = False
    # a tiny model loops easily (the same fact again and again until the token limit cuts the JSON):
    # sample cooler, and let DRY penalise repeated sequences
    params.sampling.temp = 0.3
    params.sampling.dry_multiplier = 0.8
    params.sampling.seed = 20_261_127  # the same reply to the same prompt: reproducible memory work
    if config.get("threads") is not None:
        params.cpuparams.n_threads = params.cpuparams_batch.n_threads = config["threads"]
    return xllamacpp.Server(params)


def _say(answer: dict[str, str]) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        server = _serve(json.loads(sys.stdin.readline()))
    except Exception as exc:  # told to the starter, which raises it as LLMError
        _say({"error": str(exc) or type(exc).__name__})
        os._exit(1)
    _say({"address": server.listening_address})
    # nobody reads on after that line: what llama.cpp might print there must not fill the pipe and stall it
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    while sys.stdin.buffer.read(4096):
        pass  # nothing is sent after the configuration: this waits for the end of the input
    os._exit(0)  # llama.cpp's threads are not joined: the system takes back what they hold


if __name__ == "__main__":
    main()
