"""The memory inspector page in headless Chromium (Debian's, driven by Playwright): it loads, shows
planted data, and a rollback from the page works."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from tests.roles.service.conftest import Served

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        await launched.close()


async def _open(browser: Browser, served: Served, secret: str) -> Page:
    page = await browser.new_page()
    await page.goto(f"{served.url}/ui")
    await page.fill("#key", secret)
    await page.click("text=Open")
    await expect(page.locator("#status")).to_have_text("Loaded.")
    return page


async def test_the_page_shows_a_users_memory_and_rolls_back_from_the_page(
    served: Served, browser: Browser
) -> None:
    secret = await served.key("ann")
    served.llm.add("Noted: oolong tea.")
    async with served.client(secret) as http:
        tea = await http.post("/v1/memories", json={"text": "我喜欢喝乌龙茶", "infer": False})
        said = {"text": "Ann lives in Lisbon", "infer": False}
        lisbon = (await http.post("/v1/memories", json=said)).json()["fact"]
        await http.delete(f"/v1/memories/{lisbon['id']}", params={"reason": "moved"})
        await http.post("/v1/chat", json={"chat_id": "tea", "text": "I love oolong tea", "stream": False})
    async with served.client(await served.key("bob")) as bob:
        await bob.post("/v1/memories", json={"text": "Bob's secret plan", "infer": False})

    page = await _open(browser, served, secret)
    await expect(page.locator("#who")).to_have_text("user ann")
    facts = page.locator("#facts tbody tr")
    await expect(facts).to_have_count(1)
    await expect(facts.first).to_contain_text("我喜欢喝乌龙茶")
    await expect(page.locator("#chats")).to_contain_text("tea")
    await page.click("#chats a")
    await expect(page.locator("#chat")).to_contain_text("Lily: Noted: oolong tea.")
    assert "Bob's secret plan" not in await page.content()

    await page.check("#retired")
    await expect(page.locator("#facts tr.retired")).to_contain_text("Ann lives in Lisbon")

    delete_row = page.locator("#history tbody tr", has_text="DELETE")
    await delete_row.get_by_role("button", name="Roll back").click()
    await expect(page.locator("#status")).to_contain_text("Rolled back")
    await page.uncheck("#retired")
    await expect(page.locator("#facts tbody tr")).to_have_count(2)
    await expect(page.locator("#history tbody tr").first).to_contain_text("ROLLBACK")
    async with served.client(secret) as http:
        current = {f["text"] for f in (await http.get("/v1/memories")).json()}
    assert current == {tea.json()["fact"]["text"], "Ann lives in Lisbon"}


async def test_a_wrong_key_shows_an_error_and_no_data(served: Served, browser: Browser) -> None:
    page = await browser.new_page()
    await page.goto(f"{served.url}/ui")
    await page.fill("#key", "bk_0123456789abcdef_wrong")
    await page.click("text=Open")
    await expect(page.locator("#status")).to_have_text("unknown or revoked API key")
    assert await page.locator("#views").is_hidden()
