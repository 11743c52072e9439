"""`brain memory archive --idle-days N [--dry-run]` and `brain memory restore --user U`."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.roles.cli.test_chat import brain, env_for
from tests.support.openai_server import Chat, ScriptedOpenAIServer


def test_archive_idle_users_then_bring_them_back(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.script(Chat("Hello, Sten."), Chat("You said hi."))
    env = env_for(openai_server)
    assert brain("chat", "--user", "sten", env=env, stdin="hi\n").returncode == 0
    time.sleep(0.3)  # 1e-6 days is 0.0864 s
    dry = brain("memory", "archive", "--idle-days", "0.000001", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0].startswith("'sten'  last active ")
    assert dry.stdout.splitlines()[-1] == "1 users idle 1e-06 days; nothing archived (--dry-run)"
    folder = Path(os.environ["BRAIN_HOME"]) / "archive"
    assert not folder.exists() or not list(folder.iterdir())
    done = brain("memory", "archive", "--idle-days", "0.000001", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("archived 1 of 1 idle users (") and str(folder) in done.stdout
    assert len(list(folder.iterdir())) == 1
    stats = brain("memory", "stats", "--user", "sten", env=env)
    families = [line.split()[0] for line in stats.stdout.splitlines()[1:]]
    assert families[: families.index("total")] == ["archive"]  # the marker only
    again = brain("chat", "--user", "sten", env=env, stdin="what did I say?\n")  # brought back first
    assert again.returncode == 0 and again.stdout == "You said hi.\n"
    sent = [m["content"] for m in openai_server.chat_requests()[-1].body["messages"][1:]]
    assert sent == ["hi", "Hello, Sten.", "what did I say?"]
    assert list(folder.iterdir()) == []
    absent = brain("memory", "restore", "--user", "sten", env=env)
    assert absent.stdout == "user 'sten' is not in the cold archive\n"
    time.sleep(0.3)
    assert brain("memory", "archive", "--idle-days", "0.000001", env=env).returncode == 0
    back = brain("memory", "restore", "--user", "sten", env=env)
    assert back.returncode == 0 and back.stdout == "restored user 'sten' from the cold archive\n"
