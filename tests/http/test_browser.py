"""The memory browser in a real headless browser (Debian's chromium over its DevTools
protocol) against a real daemon: every page loads with no console error, a search shows its
hits and its trace, forget and restore round-trip from a memory's page, the keyboard reaches
everything, text has readable contrast, and hostile memory text stays text. A screenshot of
each page is kept in test-artifacts/browser/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"

MEMORIES = [
    ("We chose SQLite WAL over a custom log because crash recovery comes free", "wisdom"),
    ("The staging database runs PostgreSQL 16 on port 5433", "insight"),
    ("Deploys go out on Tuesdays after the release review", "insight"),
    ("<img src=x onerror=\"document.title='owned'\"> is how the XSS report began", "insight"),
]
PAGES = ["#/search", "#/status", "#/calibration", "#/graph", "#/code"]

#: WCAG 2.1 contrast of every element with text against its nearest opaque background.
CONTRAST = """(() => {
  const lum = (rgb) => { const c = rgb.match(/[\\d.]+/g).slice(0, 3).map(Number).map((v) => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; };
  const bg = (node) => { for (let n = node; n; n = n.parentElement) {
    const b = getComputedStyle(n).backgroundColor;
    if (b && !b.startsWith("rgba(0, 0, 0, 0)") && b !== "transparent") return b; }
    return "rgb(255, 255, 255)"; };
  const worst = [];
  for (const node of document.querySelectorAll("body *")) {
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!own || !node.getClientRects().length) continue;
    const a = lum(getComputedStyle(node).color), b = lum(bg(node));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) worst.push([node.tagName, node.textContent.slice(0, 30), ratio.toFixed(2)]);
  }
  return worst; })()"""


@pytest.fixture
def stocked(http_daemon):
    ids = [http_daemon.request("/api/remember", {"content": text, "kind": kind})[1]["id"]
           for text, kind in MEMORIES]  # fmt: skip
    http_daemon.request("/api/add_triplet", {"subject": "auth.py", "predicate": "imports",
                                             "object": "jwt"})  # fmt: skip
    return ids


def search(browser, query: str) -> None:
    browser.evaluate(f"document.getElementById('q').value = {json.dumps(query)};"
                     "document.querySelector('form.search').requestSubmit(); true")  # fmt: skip
    browser.wait_for("document.getElementById('hits') || document.querySelector('.error')")


def test_every_page_loads_without_a_console_error(browser, logged_in, stocked) -> None:
    for route in PAGES:
        logged_in(route)
        browser.wait_for(
            "!document.querySelector('#main .note') || "
            "!document.querySelector('#main .note').textContent.startsWith('Load')"
        )
        assert browser.evaluate("document.querySelector('#main h1').textContent")
        browser.screenshot(ARTIFACTS / (route.strip("#/") + ".png"))
    logged_in(f"#/memory/{stocked[0]}")
    browser.wait_for("document.getElementById('main').dataset.ready === 'yes'")
    browser.screenshot(ARTIFACTS / "memory.png")
    assert browser.messages == []


def test_a_search_shows_its_hits_with_their_lanes_and_its_trace(browser, logged_in, stocked):
    logged_in("#/search")
    search(browser, "why not our own write-ahead log?")
    assert browser.evaluate("document.querySelector('#hits li').dataset.id") == stocked[0]
    assert browser.evaluate("document.getElementById('band').textContent").startswith("KNOWN")
    assert browser.evaluate("document.querySelectorAll('#hits li:first-child .bar').length") >= 2
    browser.screenshot(ARTIFACTS / "search-results.png")
    browser.evaluate("document.getElementById('trace-link').click(); true")
    browser.wait_for("document.getElementById('stage-arms')")
    for stage in ("arms", "fusion", "scoring", "gate", "order", "coverage", "timing"):
        assert browser.evaluate(f"Boolean(document.getElementById('stage-{stage}'))"), stage
    # The words of the query that memories cover link to those memories.
    covered = browser.evaluate("[...document.querySelectorAll('#stage-coverage td a')]"
                               ".map((a) => a.textContent)")  # fmt: skip
    assert stocked[0] in covered
    assert "http" not in browser.evaluate("document.getElementById('stage-coverage').innerText")
    browser.screenshot(ARTIFACTS / "trace.png")
    assert browser.messages == []


def test_forget_and_restore_round_trip_from_a_memorys_page(browser, logged_in, http_daemon,
                                                            stocked) -> None:  # fmt: skip
    logged_in(f"#/memory/{stocked[1]}")
    browser.wait_for("document.getElementById('act-forget')")
    browser.evaluate("document.getElementById('act-forget').click(); true")  # confirm: accepted
    browser.wait_for("document.getElementById('act-restore')")
    assert http_daemon.call("get_memory", id=stocked[1])["memory"]["deleted_at"] is not None
    browser.evaluate("document.getElementById('act-restore').click(); true")
    browser.wait_for("document.getElementById('act-forget')")
    assert http_daemon.call("get_memory", id=stocked[1])["memory"]["deleted_at"] is None
    browser.evaluate("document.getElementById('edit').dataset.stale = '1';"
                     "document.getElementById('edit-tags').value = 'db, staging';"
                     "document.getElementById('edit').requestSubmit(); true")  # fmt: skip
    # The page is drawn again from the stored memory: a new form, with the stored tags.
    browser.wait_for("document.getElementById('edit') && !document.getElementById('edit')"
                     ".dataset.stale && document.getElementById('edit-tags').value === "
                     "'db, staging'")  # fmt: skip
    assert http_daemon.call("get_memory", id=stocked[1])["memory"]["tags"] == ["db", "staging"]
    assert browser.messages == []


def test_hostile_memory_text_is_shown_as_text(browser, logged_in, stocked) -> None:
    logged_in("#/search")
    search(browser, "how the XSS report began")
    assert browser.evaluate("document.querySelectorAll('#main img').length") == 0
    assert browser.evaluate("document.title") == "chitta"
    assert "<img src=x" in browser.evaluate("document.getElementById('hits').textContent")


def test_the_keyboard_reaches_the_navigation_and_the_search(browser, logged_in, stocked) -> None:
    logged_in("#/search")
    # From the page's first stop (the skip link), Tab walks the navigation, then the search.
    browser.evaluate("document.querySelector('.skip').focus(); true")
    reached = [browser.evaluate("document.activeElement.textContent.trim()")]
    for _ in range(11):
        browser.key("Tab", 9)
        reached.append(
            browser.evaluate(
                "(document.activeElement.id || document.activeElement.textContent || '').trim()"
            )
        )
    assert reached[0] == "Skip to the content"
    assert {"Search", "Status", "Calibration", "Relations", "Code", "logout", "q"} <= set(reached)
    # The focused element shows where it is.
    assert browser.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    browser.evaluate("const q = document.getElementById('q'); q.focus();"
                     "q.value = 'staging database port'; true")  # fmt: skip
    browser.key("Enter", 13)
    browser.wait_for("document.getElementById('hits')")
    assert browser.evaluate("document.querySelector('#hits li').dataset.id") == stocked[1]


def test_text_has_readable_contrast_on_every_page(browser, logged_in, stocked) -> None:
    logged_in("#/search")
    search(browser, "deploys")
    assert browser.evaluate(CONTRAST) == []
    for route in PAGES[1:]:
        logged_in(route)
        browser.wait_for("document.querySelector('#main h1')")
        assert browser.evaluate(CONTRAST) == [], route


def test_a_wrong_token_on_the_login_page_is_said_and_logout_ends_the_session(
    browser, http_daemon, logged_in
) -> None:
    browser.goto(http_daemon.url + "/login")
    browser.evaluate("document.getElementById('token').value = 'not-it';"
                     "document.querySelector('form').submit(); true")  # fmt: skip
    browser.wait_for("document.querySelector('.error')")
    said = browser.evaluate("document.querySelector('.error').textContent")
    assert "not this server's token" in said
    browser.messages.clear()  # the 401 of that answer is the point
    logged_in("#/search")
    browser.evaluate("document.getElementById('logout').click(); true")
    browser.wait_for("location.pathname === '/login'")
    browser.goto(http_daemon.url + "/")
    browser.wait_for("location.pathname === '/login'")


def test_a_search_takes_a_time_cue_and_says_when_it_is_not_json(browser, logged_in, stocked):
    logged_in("#/search")
    browser.evaluate("document.getElementById('time_cue').value = '{not json';"
                     "document.getElementById('q').value = 'deploys';"
                     "document.querySelector('form.search').requestSubmit(); true")  # fmt: skip
    browser.wait_for("document.querySelector('#results .error')")
    assert "not JSON" in browser.evaluate("document.querySelector('#results .error').textContent")
    browser.evaluate("document.getElementById('time_cue').value = "
                     "'{\"after\": \"2020-01-01\", \"confidence\": \"sure\"}';"
                     "document.querySelector('form.search').requestSubmit(); true")  # fmt: skip
    browser.wait_for("document.getElementById('hits')")
    assert browser.evaluate("lastRecall.time_cue !== undefined")
    assert browser.messages == []
