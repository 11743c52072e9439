"""What `python -m build` makes of the tree: the packages it finds, the data files it ships, the one place the
version is written, the license metadata. (`.ci/wheel_check.py` builds, checks and installs the wheel.)"""

from __future__ import annotations

import ast
import glob
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
PACKAGES = ("brain", "roles", "actions")


def _version_literals(module: Path) -> list[str]:
    """Every `__version__ = "..."` in `module`, as written."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return [
        node.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]


def _source_files() -> list[Path]:
    return [
        path
        for top in (*PACKAGES, "tests", "benchmarks", "examples", "config", ".ci")
        for path in (ROOT / top).rglob("*")
        if path.suffix in {".py", ".toml", ".yaml", ".md", ""}
        and path.is_file()
        and "__pycache__" not in path.parts
    ] + [ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "Dockerfile", ROOT / "compose.yaml"]


def test_the_version_is_written_in_one_place() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert SETUPTOOLS["dynamic"]["version"] == {"attr": "brain.__version__"}
    [version] = _version_literals(ROOT / "brain" / "__init__.py")
    assert str(Version(version)) == version  # PEP 440, in its normal form
    written = [
        str(path.relative_to(ROOT))
        for path in _source_files()
        if path != ROOT / "brain" / "__init__.py"
        and any(
            form in path.read_text(encoding="utf-8", errors="replace")
            for form in (f'"{version}"', f"'{version}'", f"brain-assistant {version}")
        )
    ]
    assert written == []


def _packages() -> set[str]:
    """Every package of the tree (a folder with __init__.py under a top-level one), by dotted name."""
    tops = [p for p in ROOT.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith(".")]
    return {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in tops
        for init in top.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }


def test_the_wheel_holds_exactly_the_three_packages_and_all_their_subpackages() -> None:
    include = SETUPTOOLS["packages"]["find"]["include"]  # matched as setuptools' find does
    found = {name for name in _packages() if any(fnmatchcase(name, pattern) for pattern in include)}
    assert {name.split(".")[0] for name in found} == set(PACKAGES)
    assert "tests" in _packages() and "tests" not in found
    # A folder of modules without __init__.py would be left out of the wheel without a word.
    folders = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for top in PACKAGES
        for path in (ROOT / top).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert folders == found


def test_every_data_file_of_the_packages_is_shipped() -> None:
    """Each file of the packages that is not Python (loaded at run time, like roles/http/inspector.html, or
    read by type checkers, py.typed) is named by `package-data`, as setuptools matches it."""
    shipped = {
        (ROOT / package.replace(".", "/") / name).resolve()
        for package, patterns in SETUPTOOLS["package-data"].items()
        for pattern in patterns
        for name in glob.glob(pattern, root_dir=ROOT / package.replace(".", "/"))
    }
    data = {
        path.resolve()
        for top in PACKAGES
        for path in (ROOT / top).rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
    }
    assert {str(p.relative_to(ROOT)) for p in data} >= {
        "brain/py.typed",
        "roles/py.typed",
        "actions/py.typed",
        "roles/http/inspector.html",
    }
    assert data - shipped == set()


def test_the_license_is_an_spdx_expression_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    # PEP 639: with a license expression, no `License ::` classifier.
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    [floor] = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools>=")]
    assert Version(floor.removeprefix("setuptools>=")) >= Version("77")  # 77 writes License-Expression


def test_the_console_script_is_the_cli() -> None:
    assert PYPROJECT["project"]["scripts"] == {"brain": "roles.cli:main"}
