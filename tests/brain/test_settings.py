from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from brain import ConfigError, Settings, load_settings, load_settings_traced
from brain.loader import find_config_file, flatten
from brain.logs import RedactingFilter
from brain.settings import LLMSettings, mask_url

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str, name: str = "brain.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_defaults_without_file_or_environment(tmp_path: Path) -> None:
    settings = load_settings(environ={"HOME": str(tmp_path)})
    assert settings.llm.model == "gpt-4o-mini"
    assert settings.redis.url is None
    assert settings.memory.ttl_seconds is None
    assert settings.home == tmp_path / ".local/share/brain"
    assert not settings.llm.configured


def test_precedence_default_file_env_argument(tmp_path: Path) -> None:
    path = write(tmp_path, "llm:\n  model: from-file\n  timeout: 12\nredis:\n  url: redis://file:6379/0\n")
    env = {"BRAIN_LLM_MODEL": "from-env", "HOME": str(tmp_path)}
    settings, sources = load_settings_traced(path, env, {"llm.timeout": 7})
    assert settings.llm.model == "from-env"
    assert settings.llm.timeout == 7
    assert settings.redis.url is not None and settings.redis.url.get_secret_value() == "redis://file:6379/0"
    assert sources["llm.model"] == "env:BRAIN_LLM_MODEL"
    assert sources["llm.timeout"] == "argument"
    assert sources["redis.url"] == "file"
    assert "llm.max_retries" not in sources  # still the default


def test_every_environment_variable(tmp_path: Path) -> None:
    env = {
        "OPENAI_API_KEY": "sk-env",
        "OPENAI_BASE_URL": "http://localhost:11434/v1",
        "BRAIN_REDIS_URL": "redis://127.0.0.1:7000/1",
        "BRAIN_LLM_MODEL": "llama3",
        "BRAIN_HOME": str(tmp_path / "h"),
    }
    s = load_settings(environ=env)
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == "sk-env"
    assert s.llm.base_url == "http://localhost:11434/v1"
    assert s.redis.url is not None and s.redis.url.get_secret_value().endswith(":7000/1")
    assert s.llm.model == "llama3"
    assert s.home == tmp_path / "h"


def test_config_file_discovery_order(tmp_path: Path) -> None:
    home_cfg = tmp_path / "home/.config/brain/config.yaml"
    env = {"HOME": str(tmp_path / "home")}
    assert find_config_file(None, env) is None
    home_cfg.parent.mkdir(parents=True)
    home_cfg.write_text("llm: {model: home}\n")
    assert load_settings(environ=env).llm.model == "home"
    env_cfg = write(tmp_path, "llm: {model: envfile}\n", "env.yaml")
    assert load_settings(environ={**env, "BRAIN_CONFIG": str(env_cfg)}).llm.model == "envfile"
    explicit = write(tmp_path, "llm: {model: explicit}\n", "x.yaml")
    assert load_settings(explicit, {**env, "BRAIN_CONFIG": str(env_cfg)}).llm.model == "explicit"


def test_interpolation(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "llm:\n  api_key: ${KEY}\n  base_url: http://${HOST:-localhost}:${PORT:-11434}/v1\n"
        "  model: cost$$ly\n  timeout: ${T}\n",
    )
    s = load_settings(path, {"KEY": "sk-x", "PORT": "9", "T": "3.5"})
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == "sk-x"
    assert s.llm.base_url == "http://localhost:9/v1"
    assert s.llm.model == "cost$ly"
    assert s.llm.timeout == 3.5


def test_named_llms_inherit_from_default(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "llms:\n  default: {model: gpt-4o, api_key: sk-main, base_url: 'http://h/v1'}\n"
        "  memory: {model: gpt-4o-mini}\n",
    )
    s, sources = load_settings_traced(path, {})
    assert s.llm.model == "gpt-4o"
    memory = s.llm_for("memory")
    assert memory.model == "gpt-4o-mini"
    assert memory.base_url == "http://h/v1"
    assert memory.api_key is not None and memory.api_key.get_secret_value() == "sk-main"
    assert s.llm_for("nonexistent") is s.llm
    assert sources["llms.memory.base_url"] == "file"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("llm:\n  modle: x\n", r"brain.yaml: llm.modle: unknown key.*valid keys: api_type, model"),
        ("llm:\n  timeout: soon\n", r"brain.yaml: llm.timeout: Input should be a valid number.*'soon'"),
        ("redis: [1, 2]\n", r"brain.yaml: redis: .*valid dictionary"),
        ("llm:\n  model: [unclosed\n", r"brain.yaml: line \d+, column \d+: broken YAML"),
        ("just a string\n", r"top level must be a mapping"),
        ("llm:\n  api_key: ${NOPE}\n", r"brain.yaml: llm.api_key: environment variable NOPE is not set"),
        ("redis:\n  url: http://x\n", r"redis.url: Value error, must start with redis://"),
        ("llm: {model: a}\nllms: {default: {model: b}}\n", r"set either `llm` or `llms.default`"),
        ("llms: {'bad name': {}}\n", r"bad LLM name"),
        ("llm: {api_type: azure}\n", r"llm: Value error, api_type azure needs base_url"),
        (
            "llm: {base_url: 'localhost:11434/v1'}\n",
            r"llm.base_url: Value error, base_url must be the endpoint's",
        ),
        ("llm: {base_url: 'http://h/v1?key=x'}\n", r"llm.base_url: .*a query or a fragment"),
        ("llm: {base_url: 'http:///v1'}\n", r"llm.base_url: .*http\(s\) URL"),
        ("llm: {base_url: 'http://h:99999/v1'}\n", r"llm.base_url: .*http\(s\) URL"),
        ("llm: {base_url: 'http://h:0/v1'}\n", r"llm.base_url: .*http\(s\) URL"),
        ("llm: {base_url: 'http://[::1/v1'}\n", r"llm.base_url: .*http\(s\) URL"),
        ('llm: {base_url: "http://h/v1\\nx"}\n', r"llm.base_url: .*without spaces"),
        ("llm: {base_url: 'http://h /v1'}\n", r"llm.base_url: .*without spaces"),
        (
            "memory:\n  summarize_share: 2\n",
            r"memory.summarize_share: Input should be less than or equal to 1",
        ),
    ],
)
def test_config_errors_name_file_key_and_fix(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message):
        load_settings(path, {})


def test_a_blank_base_url_is_unset_and_one_is_kept_as_written_but_for_spaces() -> None:
    assert LLMSettings(base_url="  ").base_url is None and not LLMSettings(base_url="").configured
    assert (
        LLMSettings(base_url=" https://me:tok@llm.example/v1/ ").base_url == "https://me:tok@llm.example/v1/"
    )


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope.yaml: config file not found"):
        load_settings(tmp_path / "nope.yaml", {})
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(environ={"BRAIN_CONFIG": str(tmp_path / "gone.yaml")})


def test_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"environment variable BRAIN_REDIS_URL: redis\.url"):
        load_settings(environ={"BRAIN_REDIS_URL": "mysql://x"})


def test_bad_argument_names_the_argument() -> None:
    with pytest.raises(ConfigError, match=r"command-line argument: llm\.max_retries"):
        load_settings(environ={}, overrides={"llm.max_retries": 99})


def test_settings_are_frozen() -> None:
    s = Settings()
    with pytest.raises(ValueError, match="frozen"):
        s.llm = s.llm  # type: ignore[misc]


def test_secrets_hidden_from_repr_and_dump(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "llm: {api_key: sk-SECRET-1}\nredis: {url: 'redis://u:pw-SECRET-2@h:1/0', password: pw-SECRET-3}\n",
    )
    s = load_settings(path, {})
    text = repr(s) + str(s) + s.model_dump_json()
    for secret in ("sk-SECRET-1", "pw-SECRET-2", "pw-SECRET-3"):
        assert secret not in text
    assert s.redis.masked_url == "redis://u:***@h:1/0"
    assert set(s.secrets()) >= {"sk-SECRET-1", "pw-SECRET-2", "pw-SECRET-3"}


def test_mask_url() -> None:
    assert mask_url("rediss://:p%40ss@host:6380/2") == "rediss://:***@host:6380/2"
    assert mask_url("redis://host:6379") == "redis://host:6379"
    assert mask_url("unix:///run/redis.sock") == "unix:///run/redis.sock"


def test_redacting_filter_masks_secrets_in_log_records(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("brain.test.redact")
    logger.addFilter(RedactingFilter(["sk-SECRET-9"]))
    with caplog.at_level(logging.INFO, logger="brain.test.redact"):
        logger.info("calling with key %s", "sk-SECRET-9")
    assert "sk-SECRET-9" not in caplog.text
    assert "calling with key **********" in caplog.text


def test_default_yaml_documents_every_setting_with_its_default() -> None:
    path = ROOT / "config" / "default.yaml"
    data = yaml.safe_load(path.read_text())
    assert load_settings(path, {"HOME": "/h"}) == load_settings(None, {"HOME": "/h"})

    def fields(model: type, prefix: str = "") -> set[str]:
        out = set()
        for name, field in model.model_fields.items():  # type: ignore[attr-defined]
            sub = field.annotation
            if hasattr(sub, "model_fields"):
                out |= fields(sub, f"{prefix}{name}.")
            else:
                out.add(prefix + name)
        return out

    documented = set(flatten(data))
    assert fields(Settings) - {"home"} <= documented
    text = path.read_text()
    for key in fields(Settings) - {"home", "llms"}:
        line = next(line for line in text.splitlines() if line.strip().startswith(key.split(".")[-1] + ":"))
        assert "#" in line, f"{key} has no one-line comment in config/default.yaml"


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"llm.api_key": ["sk-SECRET-123"]}, "llm.api_key"),
        ({"llms.memory.api_key": {"k": "sk-SECRET-123"}}, "llms.memory.api_key"),
        ({"redis.url": "http://user:pw-SECRET-123@example.com:6379"}, "redis.url"),
        ({"redis.password": ["pw-SECRET-123"]}, "redis.password"),
        ({"redis.username": "u", "redis.max_connections": "redis://u:pw-SECRET-123@h"}, "max_connections"),
    ],
)
def test_config_errors_never_show_secrets(overrides: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, {}, overrides)
    assert key in str(caught.value) and "SECRET" not in str(caught.value)
