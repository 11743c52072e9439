"""Deployments name their role classes as `module:Class`: loading (so `brain run --dry-run` too) imports and
checks each one, and an error names the file and the dotted key."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from brain.errors import ConfigError
from roles.deploy import load_deployment
from tests.roles.cli.test_chat import brain

ACTIONS = "    actions: [{name: A, instruction: x}]\n"


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("nowhere:Nothing", r"roles\.0\.class: cannot import 'nowhere:Nothing': ModuleNotFoundError"),
        ("roles.role:Nope", r"roles\.0\.class: cannot import 'roles.role:Nope': module 'roles.role' has no"),
        ("json:dumps", r"roles\.0\.class: 'json:dumps' is a function, not a subclass of roles\.Role"),
        ("brain.errors:BrainError", r"'brain.errors:BrainError' is class BrainError, not a subclass of"),
        ("roles.tiered:TieredAssistant", r"is an assistant, which needs memory: write class: assistant"),
        ("roles.role:", r"roles\.0\.class: 'roles.role:': write assistant, role, or module:Class"),
    ],
)
def test_a_role_class_that_is_not_a_role_is_refused_on_loading(
    kind: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(f"roles:\n  - name: W\n    class: '{kind}'\n{ACTIONS}pipeline: {{idea: go}}\n")
    with pytest.raises(ConfigError) as caught:
        load_deployment(path, {})
    assert str(caught.value).startswith(f"{path}: ") and re.search(message, str(caught.value))


def test_a_module_that_fails_while_importing_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fragile_roles.py").write_text("raise RuntimeError('needs a GPU')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "deploy.yaml"
    path.write_text(f"roles:\n  - name: W\n    class: fragile_roles:Writer\n{ACTIONS}")
    with pytest.raises(ConfigError) as caught:
        load_deployment(path, {})
    assert str(caught.value) == (
        f"{path}: roles.0.class: importing 'fragile_roles' failed: RuntimeError: needs a GPU"
    )


def test_a_good_role_class_loads(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(
        f"roles:\n  - name: A\n    class: assistant\n  - name: W\n    class: roles.role:Role\n{ACTIONS}"
    )
    _, deployment = load_deployment(path, {})
    assert [r.kind for r in deployment.roles] == ["assistant", "roles.role:Role"]


def test_dry_run_checks_role_classes(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(f"roles:\n  - name: W\n    class: nowhere:Nothing\n{ACTIONS}pipeline: {{idea: go}}\n")
    result = brain("run", str(path), "--dry-run", env=dict(os.environ))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(
        f"brain: config error: {path}: roles.0.class: cannot import 'nowhere:Nothing'"
    )
    actions = tmp_path / "actions.yaml"
    actions.write_text("roles:\n  - name: W\n    actions: [{name: A, instruction: x, class: 'x:Y'}]\n")
    result = brain("run", str(actions), "--dry-run", env=dict(os.environ))
    assert result.returncode == 2 and "roles.0.actions.0.class: unknown key" in result.stderr
