"""The API's schema and documentation: the committed schema (`docs/openapi.json`) is the app's, every
`/v1` operation declares the bearer key, times are ISO 8601, and `/docs` and `/redoc` work offline (their
assets served by the app; in Chromium no request leaves the server)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from playwright.async_api import Browser, Route, async_playwright, expect

from roles.http.docs import ASSETS, SCHEME
from roles.http.openapi import COMMITTED, REGENERATE, comparable, current_schema, main
from tests.roles.service.conftest import Served

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def test_the_committed_schema_is_the_apps() -> None:
    kept = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert comparable(kept) == comparable(current_schema()), (
        f"the API changed: if on purpose, run `{REGENERATE}` and commit {COMMITTED.name}"
    )
    assert main(["--check"]) == 0


def test_the_check_fails_on_a_stale_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = current_schema()
    del stale["paths"]["/v1/stats"]
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps(stale))
    assert main(["--check", str(path)]) == 1
    assert REGENERATE in capsys.readouterr().err
    stale["info"]["version"] = "9.9.9"  # a release alone changes nothing
    assert main([str(path)]) == 0 and main(["--check", str(path)]) == 0


def test_every_v1_operation_declares_the_bearer_key_and_its_refusals() -> None:
    schema = current_schema()
    assert schema["components"]["securitySchemes"][SCHEME] == {
        "type": "http",
        "scheme": "bearer",
        "description": "an API key (`brain keys create`), sent as `Authorization: Bearer bk_…`",
    }
    protected = 0
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            if path.startswith("/v1/"):
                protected += 1
                assert operation["security"] == [{SCHEME: []}], path
                assert {"401", "429"} <= set(operation["responses"]), path
            else:
                assert "security" not in operation, path
    assert protected == 26


def test_times_are_declared_as_iso_date_times() -> None:
    schemas = current_schema()["components"]["schemas"]
    for model, field in [("FactView", "created_at"), ("AuditEventView", "at"), ("DeadLetterView", "at")]:
        declared = schemas[model]["properties"][field]
        assert (declared["type"], declared["format"]) == ("string", "date-time"), (model, field)
    valid_at = schemas["FactView"]["properties"]["valid_at"]["anyOf"]
    assert {"type": "string", "format": "date-time"} in valid_at


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        await launched.close()


async def test_the_docs_pages_name_only_the_servers_own_assets(served: Served) -> None:
    async with httpx2.AsyncClient(base_url=served.url) as http:
        for page in ("/docs", "/redoc"):
            html = (await http.get(page)).text
            urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", html)
            assert urls and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
            assert "cdn" not in html.lower() and "fonts.googleapis" not in html
            assert "default-src 'self'" in (await http.get(page)).headers["content-security-policy"]
        assert '"validatorUrl": null' in (await http.get("/docs")).text
        for name, kind in ASSETS.items():
            asset = await http.get(f"/docs/assets/{name}")
            assert (
                asset.status_code == 200
                and asset.headers["content-type"] == kind
                and len(asset.content) > 1_000
            )
        assert (await http.get("/docs/assets/..%2Fcore.py")).status_code == 404
        assert (await http.get("/docs/assets/other.js")).status_code == 404


async def test_swagger_ui_and_redoc_render_with_every_outside_request_refused(
    served: Served, browser: Browser
) -> None:
    outside: list[str] = []

    async def only_the_server(route: Route) -> None:
        if route.request.url.startswith(served.url):
            await route.continue_()
        else:
            outside.append(route.request.url)
            await route.abort()

    page = await browser.new_page()
    await page.route("**/*", only_the_server)
    await page.goto(f"{served.url}/docs")
    await expect(page.locator(".swagger-ui .info .title")).to_contain_text("brain-assistant")
    await expect(page.locator(".opblock-summary-path", has_text="/v1/memories/search")).to_have_count(1)
    await expect(page.locator(".btn.authorize")).to_be_visible()  # the bearer scheme
    await page.goto(f"{served.url}/redoc")
    await expect(page.locator("h1").first).to_contain_text("brain-assistant")
    await expect(page.get_by_text("/v1/memories/search").first).to_be_attached()
    await page.close()
    assert outside == []
