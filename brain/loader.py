"""Build `Settings` from defaults < YAML file < environment < explicit arguments.

The result depends only on the arguments (the file named, the `environ` mapping passed in, the process
environment when none is).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from brain.errors import ConfigError
from brain.logs import redact
from brain.settings import Settings

__all__ = [
    "ENV_VARS",
    "config_error",
    "find_config_file",
    "flatten",
    "load_settings",
    "load_settings_traced",
    "read_config_file",
]

# Environment variable -> dotted setting it sets.
ENV_VARS: dict[str, str] = {
    "OPENAI_API_KEY": "llm.api_key",
    "OPENAI_BASE_URL": "llm.base_url",
    "BRAIN_LLM_MODEL": "llm.model",
    "BRAIN_REDIS_URL": "redis.url",
    "BRAIN_HOME": "home",
    "BRAIN_LOCAL_MODEL": "local.model",
    "BRAIN_LOCAL_EMBEDDER": "local.embedder",
}

_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_PATH_KEYS = {"home", "log.file", "redis.ssl_ca_certs", "redis.ssl_certfile", "redis.ssl_keyfile"}


def find_config_file(explicit: str | Path | None, environ: Mapping[str, str]) -> Path | None:
    """`--config PATH`, else `$BRAIN_CONFIG`, else `~/.config/brain/config.yaml` when it exists."""
    if explicit is not None:
        return Path(explicit)
    if environ.get("BRAIN_CONFIG"):
        return Path(environ["BRAIN_CONFIG"])
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME", "~")) / ".config")
    candidate = Path(base).expanduser() / "brain" / "config.yaml"
    return candidate if candidate.is_file() else None


def load_settings(
    path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Load settings; `path` None means `find_config_file`, `environ` None the process environment (as the
    `brain` command and `openai` itself read it). Raises `ConfigError` on any problem."""
    return load_settings_traced(path, environ, overrides)[0]


def load_settings_traced(
    path: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    other_sections: Collection[str] = (),
) -> tuple[Settings, dict[str, str]]:
    """Like `load_settings`, plus where each set value came from: `file`, `env:VAR` or `argument`.

    Keys not in the returned mapping have their default. Top-level `other_sections` of the file (e.g. a
    deployment's `roles`) are left for their own reader.
    """
    env = dict(os.environ if environ is None else environ)
    file = find_config_file(path, env)
    sources: dict[str, str] = {}
    layers: list[tuple[dict[str, Any], str]] = []
    if file is not None:
        data = read_config_file(file, env)
        layers.append(({k: v for k, v in data.items() if k not in other_sections}, "file"))
    env_sources = {ENV_VARS[name]: f"env:{name}" for name, value in env.items() if name in ENV_VARS and value}
    env_layer = {key: env[source[4:]] for key, source in env_sources.items()}
    layers.append((_unflatten(env_layer, "environment"), "env"))
    layers.append((_unflatten(dict(overrides or {}), "arguments"), "argument"))

    merged: dict[str, Any] = {}
    for layer, kind in layers:
        for key, value in flatten(_alias_default_llm(layer, file)).items():
            sources[key] = env_sources.get(key, kind) if kind == "env" else kind
            _set(merged, key, value)
    merged = _inherit_named_llms(merged, sources)
    for key in _PATH_KEYS:
        value = _get(merged, key)
        if isinstance(value, str):
            _set(merged, key, _expand_home(value, env))
    if "home" not in merged:
        merged["home"] = _expand_home("~/.local/share/brain", env)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        raise config_error(exc, file, sources) from None
    return settings, sources


def read_config_file(file: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    """The YAML mapping in `file` with `${VAR}` interpolated; `ConfigError` saying where it is broken."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{file}: config file not found; create it, or drop --config/$BRAIN_CONFIG to use defaults"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read config file: {exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{file}:{at}: broken YAML ({problem}); fix the syntax") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: the top level must be a mapping of sections (llm:, redis:, ...)")
    result = _interpolate(data, environ, file, "")
    assert isinstance(result, dict)
    return result


def _interpolate(value: Any, environ: Mapping[str, str], file: Path, key: str) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(f"{file}: key {k!r} under {key or 'the top level'} must be a string")
            out[k] = _interpolate(v, environ, file, f"{key}.{k}" if key else k)
        return out
    if isinstance(value, list):
        return [_interpolate(v, environ, file, f"{key}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(
            f"{file}: {key}: environment variable {name} is not set; "
            f"export it, or write ${{{name}:-default}} to give a default"
        )

    return _VAR.sub(replace, value)


def _alias_default_llm(layer: dict[str, Any], file: Path | None) -> dict[str, Any]:
    """`llms.default` is another name for `llm`."""
    llms = layer.get("llms")
    if not isinstance(llms, dict) or "default" not in llms:
        return layer
    if "llm" in layer:
        raise ConfigError(f"{file or 'settings'}: llms.default: set either `llm` or `llms.default`, not both")
    layer = dict(layer)
    layer["llms"] = {k: v for k, v in llms.items() if k != "default"}
    layer["llm"] = llms["default"]
    return layer


def _inherit_named_llms(merged: dict[str, Any], sources: dict[str, str]) -> dict[str, Any]:
    """Each `llms.NAME` starts from the effective `llm` and overrides what it names."""
    llms = merged.get("llms")
    base = merged.get("llm", {})
    if not isinstance(llms, dict) or not isinstance(base, dict):
        return merged
    out = dict(merged)
    out["llms"] = {}
    for name, partial in llms.items():
        if not isinstance(partial, dict):
            out["llms"][name] = partial
            continue
        out["llms"][name] = {**base, **partial}
        for key in base:
            if key not in partial and f"llm.{key}" in sources:
                sources[f"llms.{name}.{key}"] = sources[f"llm.{key}"]
    return out


def config_error(
    exc: ValidationError,
    file: Path | None,
    sources: Mapping[str, str],
    prefix: str = "",
    model: Any = Settings,
) -> ConfigError:
    """A `ConfigError` naming, for each problem, where the value came from, its dotted key and the fix."""
    lines = []
    errors = exc.errors()
    locs = [tuple(e["loc"]) for e in errors]
    for err in errors:
        loc = tuple(err["loc"])
        if any(len(other) > len(loc) and other[: len(loc)] == loc for other in locs):
            continue  # a problem inside this value is reported on its own; the summary adds nothing
        key = prefix + ".".join(str(p) for p in err["loc"])
        origin = sources.get(key, "")
        if origin.startswith("env:"):
            where = f"environment variable {origin[4:]}"
        elif origin == "argument":
            where = "command-line argument"
        else:
            where = str(file) if file is not None else "settings"
        if err["type"] == "extra_forbidden":
            parent = key.rsplit(".", 1)[0] if "." in key else ""
            valid = _valid_keys(model, parent.removeprefix(prefix))
            hint = f"unknown key; remove it or check the spelling ({valid})"
        else:
            shown = _shown(key, err.get("input"))
            hint = f"{err['msg']}; got {shown}" if "input" in err else err["msg"]
        lines.append(f"{where}: {key}: {hint}")
    return ConfigError("invalid settings: " + "; ".join(lines))


def _valid_keys(model: Any, parent: str) -> str:
    for part in parent.split(".") if parent else []:
        if part.isdigit():
            continue
        field = model.model_fields.get(part)
        annotation = getattr(field, "annotation", None)
        for arg in getattr(annotation, "__args__", ()):  # list[X], X | None
            if hasattr(arg, "model_fields"):
                annotation = arg
        if annotation is None or not hasattr(annotation, "model_fields"):
            return "see config/default.yaml"
        model = annotation
    return "valid keys: " + ", ".join(f.alias or name for name, f in model.model_fields.items())


_SECRET_KEYS = ("api_key", "password", "url")


def _shown(key: str, value: Any) -> str:
    """A bad value as an error may show it: never a secret (keys, passwords, URLs that may hold one)."""
    if key.rsplit(".", 1)[-1] in _SECRET_KEYS:
        return f"a {type(value).__name__} (not shown: it may hold a secret)"
    return redact(_short(value))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _expand_home(value: str, environ: Mapping[str, str]) -> str:
    if value.startswith("~") and environ.get("HOME"):
        return environ["HOME"] + value[1:]
    return str(Path(value).expanduser())


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as `{"a.b": leaf}`; empty mappings are leaves."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            flat.update(flatten(value, dotted))
        else:
            flat[dotted] = value
    return flat


def _unflatten(flat: Mapping[str, Any], what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        if not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", key):
            raise ConfigError(f"{what}: bad setting name {key!r}; use dotted names like llm.model")
        _set(out, key, value)
    return out


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[last] = value


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node
