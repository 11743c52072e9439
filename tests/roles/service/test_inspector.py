"""The memory inspector page in headless Chromium (Debian's, driven by Playwright): it loads, shows
planted data, and a rollback from the page works; at common widths its buttons show whole and long texts
wrap inside their boxes, destructive actions ask first, empty views say so, and another key shows
nothing of the previous user (issue 26)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Dialog, Page, Request, Route, async_playwright, expect

from brain.memory.graph import Relation
from tests.roles.service.conftest import Served
from tests.support.stores import redis_tiers

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
    usage = page.locator("#usage tbody tr")
    await expect(usage).to_have_count(2)  # the chat's row, then all chats
    await expect(usage.first).to_contain_text("tea")
    await expect(usage.last).to_contain_text("all chats")
    assert "Bob's secret plan" not in await page.content()

    await page.check("#retired")
    await expect(page.locator("#facts tr.retired")).to_contain_text("Ann lives in Lisbon")

    page.on("dialog", lambda dialog: dialog.accept())  # "Roll back this change?"
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


COMMON = [(1280, 800), (800, 600)]
PHONE = (390, 844)  # narrower than the tables: each row shows as a card
URL = "https://example.com/" + "a-very-long-path/" * 20 + "?q=" + "x" * 200
HANZI = "我喜欢喝乌龙茶也喜欢在里斯本的海边散步" * 15  # 300 characters, no spaces
WORDS = "Ann keeps a long diary entry about her week in Lisbon and the tea she drank " * 12


async def _plant(
    served: Served,
    user: str,
    facts: list[str],
    chat: tuple[str, str, str] | None = None,
    relation: tuple[str, str, str] | None = None,
) -> str:
    """A key for `user`, whose memory holds `facts` (one retired if there are three or more), a chat
    (id, what the user said, the reply) and a graph relation (source, relation, target)."""
    secret = await served.key(user)
    async with served.client(secret) as http:
        ids = []
        for text in facts:
            added = await http.post("/v1/memories", json={"text": text, "infer": False})
            assert added.status_code == 201, added.text
            ids.append(added.json()["fact"]["id"])
        if len(ids) >= 3:
            assert (await http.delete(f"/v1/memories/{ids[-1]}")).status_code == 200
        if chat is not None:
            chat_id, said, reply = chat
            served.llm.add(reply)
            turn = await http.post("/v1/chat", json={"chat_id": chat_id, "text": said, "stream": False})
            assert turn.status_code == 200, turn.text
    if relation is not None:
        source, name, target = relation
        graph = redis_tiers(served.redis, prefix="svc").graph
        a, b = await graph.upsert(user, [(source, "person", []), (target, "place", [])])
        await graph.relate(user, Relation(source=a, relation=name, target=b), actor="test")
    return secret


async def _sized(browser: Browser, width: int, height: int) -> Page:
    return await browser.new_page(viewport={"width": width, "height": height})


async def _login(page: Page, secret: str, user: str | None = None) -> None:
    await page.fill("#key", secret)
    await page.click("text=Open")
    if user is not None:
        await expect(page.locator("#who")).to_have_text(f"user {user}")
        await expect(page.locator("#status")).to_have_text("Loaded.")


async def _everything_loaded(page: Page) -> None:
    await page.click("#chats a")
    await expect(page.locator("#chat .turn")).to_have_count(2)
    await page.check("#retired")
    await expect(page.locator("#facts tr.retired")).to_have_count(1)


# Whatever sticks out: past the viewport, past the section (a box) holding it, or scrolled sideways in a box.
_OVERFLOW = """() => {
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.className ? "." + String(el.className).replace(/ +/g, ".") : "");
  const width = document.documentElement.clientWidth;
  const out = [];
  if (document.documentElement.scrollWidth > window.innerWidth)
    out.push("document " + document.documentElement.scrollWidth + " > " + window.innerWidth);
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("[hidden]") || ["SCRIPT", "STYLE", "INPUT"].includes(el.tagName)) continue;
    const box = el.getBoundingClientRect();
    if (!box.width && !box.height) continue;
    if (box.left < -0.5 || box.right > width + 0.5)
      out.push(name(el) + " spans " + Math.round(box.left) + ".." + Math.round(box.right));
    const section = el.closest("section");
    if (section && section !== el) {
      const frame = section.getBoundingClientRect();
      if (box.left < frame.left - 0.5 || box.right > frame.right + 0.5)
        out.push(name(el) + " sticks out of its section");
    }
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible")
      out.push(name(el) + " scrolls sideways: " + el.scrollWidth + " > " + el.clientWidth);
  }
  return out;
}"""


# Where a button shows, with the page scrolled to it (up and down only: a box scrolled sideways to
# reveal it does not count): inside the viewport, inside the visible part of its section, not covered,
# and its label on one line.
_SEEN = """(button) => {
  window.scrollTo(0, 0);
  const top = button.getBoundingClientRect().top;
  window.scrollTo(0, Math.max(0, top - window.innerHeight / 2));
  const box = button.getBoundingClientRect();
  const section = button.closest("section");
  const frame = section.getBoundingClientRect();
  const left = frame.left + section.clientLeft, right = left + section.clientWidth;
  const range = document.createRange();
  range.selectNodeContents(button);
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return {
    box: [box.left, box.top, box.right, box.bottom], section: [left, right, section.scrollLeft],
    inViewport: box.left >= 0 && box.top >= 0
      && box.right <= document.documentElement.clientWidth && box.bottom <= window.innerHeight,
    inSection: box.left >= left && box.right <= right && section.scrollLeft === 0,
    onTop: hit === button,
    lines: new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size,
  };
}"""


@pytest.mark.parametrize(("width", "height"), COMMON)
async def test_the_roll_back_buttons_show_whole(
    served: Served, browser: Browser, width: int, height: int
) -> None:
    secret = await _plant(
        served,
        "ann",
        ["Ann lives in Lisbon", "Ann likes oolong tea", "Ann's wiki: https://example.com/wiki/Ann_Lisbon"],
        relation=("Ann", "lives_in", "Lisbon"),
    )
    page = await _sized(browser, width, height)
    await page.goto(f"{served.url}/ui")
    await _login(page, secret, "ann")
    buttons = page.locator("#history").get_by_role("button", name="Roll back")
    await expect(buttons).to_have_count(5)
    for i in range(5):
        seen = await buttons.nth(i).evaluate(_SEEN)
        assert seen["inViewport"] and seen["inSection"] and seen["onTop"], seen
        assert seen["lines"] == 1, seen  # "Roll back", not "Roll" over "back"


@pytest.mark.parametrize(("width", "height"), [*COMMON, PHONE])
async def test_long_texts_wrap_inside_their_boxes(
    served: Served, browser: Browser, width: int, height: int
) -> None:
    secret = await _plant(
        served,
        "ann",
        [URL, HANZI, WORDS, "Ann's retired note: " + URL],
        chat=("trip-" + "x" * 120, "Look at " + URL + " " + HANZI, "Noted: " + URL + WORDS),
        relation=("Ann", "bookmarked", "example.com/" + "y" * 150),
    )
    page = await _sized(browser, width, height)
    await page.goto(f"{served.url}/ui")
    await _login(page, secret, "ann")
    await _everything_loaded(page)
    await expect(page.locator("#chat")).to_contain_text(HANZI)
    sticking_out = await page.evaluate(_OVERFLOW)
    assert not sticking_out, "\n".join(sticking_out[:30])
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


async def test_destructive_actions_ask_first(served: Served, browser: Browser) -> None:
    secret = await _plant(served, "ann", ["Ann lives in Lisbon", "Ann likes oolong tea"])
    page = await _sized(browser, 1280, 800)
    asked: list[str] = []
    answer = {"accept": False}

    async def on_dialog(dialog: Dialog) -> None:
        asked.append(dialog.message)
        await (dialog.accept() if answer["accept"] else dialog.dismiss())

    sent: list[str] = []
    page.on("dialog", on_dialog)
    page.on("request", lambda r: sent.append(f"{r.method} {r.url}") if r.method != "GET" else None)
    await page.goto(f"{served.url}/ui")
    await _login(page, secret, "ann")

    async def settled() -> None:  # any request the click made has been sent and answered
        await page.evaluate("() => new Promise((done) => setTimeout(done, 300))")
        await expect(page.locator("#status")).not_to_have_text("Loading…")

    async def audit() -> list[str]:
        async with served.client(secret) as http:
            return [e["event"] for e in (await http.get("/v1/history")).json()]

    # Roll back, dismissed: nothing sent, nothing changed; accepted: undone.
    rollback = page.locator("#history tbody tr", has_text="Ann likes oolong tea").get_by_role("button")
    await rollback.click()
    await settled()
    assert len(asked) == 1 and "Roll back" in asked[0] and "Ann likes oolong tea" in asked[0]
    assert sent == [] and await audit() == ["ADD", "ADD"]
    answer["accept"] = True
    await rollback.click()
    await expect(page.locator("#status")).to_contain_text("Rolled back")
    assert len(asked) == 2 and len(sent) == 1 and sent[0].startswith("POST ") and "/rollback" in sent[0]
    assert await audit() == ["ADD", "ADD", "ROLLBACK"]
    await expect(page.locator("#facts tbody tr")).to_have_count(1)

    # Retire a memory, dismissed then accepted.
    answer["accept"] = False
    retire = page.locator("#facts tbody tr", has_text="Ann lives in Lisbon").get_by_role(
        "button", name="Retire"
    )
    await retire.click()
    await settled()
    assert len(asked) == 3 and "Retire" in asked[2] and "Ann lives in Lisbon" in asked[2]
    assert len(sent) == 1 and await audit() == ["ADD", "ADD", "ROLLBACK"]
    await expect(page.locator("#facts tbody tr")).to_have_count(1)
    answer["accept"] = True
    await retire.click()
    await expect(page.locator("#status")).to_contain_text("Retired")
    assert len(asked) == 4 and len(sent) == 2 and sent[1].startswith("DELETE ")
    assert await audit() == ["ADD", "ADD", "ROLLBACK", "DELETE"]
    await expect(page.locator("#facts")).to_contain_text("No facts yet")


async def test_an_empty_memory_says_so(served: Served, browser: Browser) -> None:
    secret = await served.key("cy")
    page = await _sized(browser, 1280, 800)
    await page.goto(f"{served.url}/ui")
    await _login(page, secret, "cy")
    await expect(page.locator("#chats")).to_have_text("No chats yet.")
    await expect(page.locator("#facts")).to_have_text("No facts yet.")
    await expect(page.locator("#history")).to_have_text("No history yet.")
    await expect(page.locator("#graph")).to_have_text("No relations yet.")
    await expect(page.locator("#blocks")).to_contain_text("persona")  # the default, until an edit
    await page.fill("#asof", "2020-01-01")
    await expect(page.locator("#facts")).to_have_text("No facts as of 2020-01-01.")


async def test_switching_keys_shows_nothing_of_the_previous_user(served: Served, browser: Browser) -> None:
    ann_said = ["Ann lives in Lisbon", "Ann likes oolong tea", "Ann's old flat in Porto"]
    ann = await _plant(
        served,
        "ann",
        ann_said,
        chat=("ann-trip", "Ann asks about trams", "Ann's reply about trams"),
        relation=("Annabel", "lives_in", "Lisboa"),
    )
    bob = await _plant(served, "bob", ["Bob drinks coffee"])
    texts_of_ann = [
        *ann_said,
        "ann-trip",
        "Ann asks about trams",
        "Ann's reply about trams",
        "Annabel",
        "Lisboa",
    ]
    page = await _sized(browser, 1280, 800)
    await page.goto(f"{served.url}/ui")
    await _login(page, ann, "ann")
    await _everything_loaded(page)
    await expect(page.locator("#graph")).to_contain_text("Annabel")
    content = await page.content()
    assert all(text in content for text in texts_of_ann)

    await _login(page, bob, "bob")
    await expect(page.locator("#facts")).to_contain_text("Bob drinks coffee")
    content = await page.content()
    assert [text for text in texts_of_ann if text in content] == []
    await expect(page.locator("#chats")).to_have_text("No chats yet.")

    await _login(page, "bk_0123456789abcdef_wrong")
    await expect(page.locator("#status")).to_have_text("unknown or revoked API key")
    await expect(page.locator("#who")).to_have_text("")
    assert await page.locator("#views").is_hidden()
    assert "Bob drinks coffee" not in await page.content()


async def test_a_late_answer_for_the_previous_key_is_dropped(served: Served, browser: Browser) -> None:
    ann = await _plant(served, "ann", ["Ann lives in Lisbon"], chat=("ann-trip", "Ann asks", "Ann's answer"))
    bob = await _plant(served, "bob", ["Bob drinks coffee"])
    page = await _sized(browser, 1280, 800)
    bob_shown = asyncio.Event()

    def anns(request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {ann}"

    async def hold_ann(route: Route) -> None:  # Ann's "who am I" answers only once Bob's memory shows
        if anns(route.request):
            await bob_shown.wait()
        await route.continue_()

    await page.route(lambda url: url.endswith("/v1/me"), hold_ann)
    await page.goto(f"{served.url}/ui")
    await _login(page, ann)
    await _login(page, bob, "bob")
    await expect(page.locator("#facts")).to_contain_text("Bob drinks coffee")
    async with page.expect_event("requestfinished", lambda r: r.url.endswith("/v1/me") and anns(r)):
        bob_shown.set()
    await page.evaluate("() => new Promise((done) => setTimeout(done, 500))")
    await expect(page.locator("#who")).to_have_text("user bob")
    await expect(page.locator("#status")).to_have_text("Loaded.")
    await expect(page.locator("#facts")).to_contain_text("Bob drinks coffee")
    content = await page.content()
    assert [text for text in ("Ann lives in Lisbon", "ann-trip", "user ann") if text in content] == []
