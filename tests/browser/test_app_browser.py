"""The installable app in Chromium: the browser finds the site installable (its manifest valid,
its service worker active and controlling the page); with the server's web process really
stopped, a page asked for shows the offline page (in the visitor's language); the worker's
caches hold only static files and the offline page after a player's private pages were
visited; a worker of a new version drops the older caches; and the table page keeps the
screen awake (a fake ``navigator.wakeLock``) from the deal to the end of the round, letting go
while the page is hidden.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.table import machine
from lobby.services import room_create
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, DESKTOP, NewPage, Shot, module_platform
from tests.browser.mock_table import MockTable
from tests.browser.table_flow import PAGE, SERVER, Player, sign_up
from tests.games.table.helpers import arr
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

live_platform = module_platform()

# Until the service worker is active and controls the page (it claims the open pages).
WORKER_READY = """async () => {
  const registration = await navigator.serviceWorker.ready;
  if (!navigator.serviceWorker.controller) {
    await new Promise((resolve) =>
      navigator.serviceWorker.addEventListener("controllerchange", resolve, { once: true }));
  }
  const worker = registration.active;
  if (worker.state !== "activated") {
    await new Promise((resolve) => worker.addEventListener("statechange", () => {
      if (worker.state === "activated") resolve();
    }));
  }
  return {
    scope: registration.scope,
    active: registration.active && registration.active.state,
    script: registration.active && registration.active.scriptURL,
    controller: navigator.serviceWorker.controller.scriptURL,
  };
}"""

# Every URL in every cache of the site's origin.
CACHED = """async () => {
  const out = {};
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    out[name] = (await cache.keys()).map((request) => new URL(request.url).pathname);
  }
  return out;
}"""


def worker_ready(page: Page) -> dict[str, Any]:
    info: dict[str, Any] = page.evaluate(WORKER_READY)
    return info


def test_chromium_finds_the_site_installable_with_its_worker_in_control(
    live_platform: LivePlatform, browser: Any, tmp_path: Path, shot: Shot
) -> None:
    # A profile on disk: Chromium never offers to install from an off-the-record context.
    context = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"),
        executable_path=CHROMIUM,
        args=CHROMIUM_ARGS,
        headless=True,
        viewport=DESKTOP,
    )
    try:
        page = context.pages[0] if context.pages else context.new_page()
        base = live_platform.url
        page.goto(f"{base}/")
        info = worker_ready(page)
        assert info["scope"] == f"{base}/"
        assert info["active"] == "activated"
        assert info["script"] == info["controller"] == f"{base}/sw.js"

        cdp = context.new_cdp_session(page)
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["url"] == f"{base}/manifest.webmanifest"
        assert manifest["errors"] == [], manifest["errors"]
        parsed = cdp.send("Page.getAppManifest").get("data", "")
        assert "十三水" in parsed
        errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
        assert errors == [], errors
        shot(page, "installable-home")

        # The check is real: the admin's pages link no manifest, and Chromium says so.
        page.goto(f"{base}/admin/login/")
        errors = cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]
        assert "no-manifest" in [error["errorId"] for error in errors], errors
    finally:
        context.close()


@pytest.fixture
def restart_web(live_platform: LivePlatform) -> Iterator[LivePlatform]:
    """The module's platform, its web process running again after the test."""
    yield live_platform
    if not live_platform.web.running:
        live_platform.web.start()


@pytest.mark.parametrize(
    ("locale", "cookie", "heading"),
    [
        ("en", None, "You are offline"),
        ("zh-CN", None, "网络已断开"),
        ("en", "zh-hans", "网络已断开"),
    ],
)
def test_with_the_server_stopped_a_page_shows_the_offline_page(
    restart_web: LivePlatform,
    new_page: NewPage,
    shot: Shot,
    locale: str,
    cookie: str | None,
    heading: str,
) -> None:
    platform = restart_web
    base = platform.url
    page = new_page(locale=locale)
    if cookie:
        page.context.add_cookies([{"name": "django_language", "value": cookie, "url": base}])
    page.goto(f"{base}/")
    worker_ready(page)
    # The shell is kept before the worker took over (it is installed first).
    assert "/offline/" in [url for urls in page.evaluate(CACHED).values() for url in urls]

    platform.web.stop()
    assert not platform.web.running
    page.goto(f"{base}/lobby/")
    offline = page.get_by_test_id("offline")
    expect(offline).to_be_visible(timeout=PAGE)
    expect(offline.locator("section:visible h1")).to_have_text(heading)
    expect(offline.locator("section:visible")).to_have_count(1)
    # Its look is the site's: the stylesheet came from the worker's cache.
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(250, 248, 243)"
    assert page.url == f"{base}/lobby/"
    shot(page, f"offline-{locale}-{cookie or 'browser'}")

    # Back online: the page asked for is served again.
    platform.web.start()
    page.goto(f"{base}/lobby/")
    expect(page.get_by_test_id("offline")).to_have_count(0)


def test_the_worker_keeps_no_private_page(live_platform: LivePlatform, new_page: NewPage) -> None:
    default_rules()
    base = live_platform.url
    player = Player("pwa_private", new_page())
    sign_up(player, base)  # lands on the profile page
    page = player.page
    worker_ready(page)
    for path in ["/games/history/", "/lobby/", "/games/standings/", "/accounts/profile/"]:
        page.goto(f"{base}{path}")
        page.wait_for_load_state("networkidle")
    # A request of the page's own to the API, through the controlled page.
    status = page.evaluate("async () => (await fetch('/api/wallet/')).status")
    assert status == 200
    cached = page.evaluate(CACHED)
    assert cached, "the worker keeps the shell"
    assert all(name.startswith("shisanshui-") for name in cached), cached
    urls = [url for urls in cached.values() for url in urls]
    assert "/offline/" in urls and "/static/css/site.css" in urls
    private = [url for url in urls if url != "/offline/" and not url.startswith("/static/")]
    assert private == [], private
    # Static files the pages used are kept too (network first here: names are not hashed).
    assert "/static/lobby/lobby.js" in urls


# -- the table page keeps the screen awake ------------------------------------------------------

# A fake Screen Wake Lock that records what the page asks, and a visibility the test sets.
FAKE_WAKE_LOCK = """
(() => {
  window.__wake = [];
  let next = 0;
  Object.defineProperty(navigator, "wakeLock", {
    configurable: true,
    value: {
      async request(type) {
        const id = ++next;
        window.__wake.push("request " + type + " " + id);
        const handlers = [];
        return {
          type,
          released: false,
          addEventListener(name, fn) { if (name === "release") handlers.push(fn); },
          async release() {
            window.__wake.push("release " + id);
            handlers.forEach((fn) => fn());
          },
        };
      },
    },
  });
  let hidden = false;
  Object.defineProperty(document, "visibilityState", {
    configurable: true, get: () => (hidden ? "hidden" : "visible"),
  });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  window.__setHidden = (value) => {
    hidden = value;
    document.dispatchEvent(new Event("visibilitychange"));
  };
})();
"""

NO_SPECIALS = {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}}
A = arr("AS AH 3S", "KS KH KD 4C 4D", "9C TC JC QC KC")
B = arr("AD AC 3H", "8S 8H 8D 2H 2S", "JS JH JD 5C 5D")


def wake_log(page: Page) -> list[str]:
    log: list[str] = page.evaluate("() => window.__wake")
    return log


def test_the_table_keeps_the_screen_awake_while_the_round_is_in_play(
    live_platform: LivePlatform, new_page: NewPage
) -> None:
    default_rules()
    player = Player("pwa_awake", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url)
    assert player.user is not None
    page = player.page
    page.context.add_init_script(FAKE_WAKE_LOCK)
    room = room_create(owner=player.user, base_score=100, seats=4, name="Awake table")
    pace = {"reveal_interval_ms": 200, "deal_interval_ms": 10, "arrange_seconds": 90}
    config = RuleConfig.from_dict({**NO_SPECIALS, **pace}, base=DEFAULT_CONFIG)
    table = MockTable(page, [str(player.user.pk), "guest-1"], config)
    page.goto(f"{live_platform.url}/games/table/{room.pk}/")
    expect(page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    # Between rounds the screen may sleep.
    page.wait_for_timeout(500)
    assert wake_log(page) == []

    table.deal({0: A.cards, 1: B.cards})
    table.fire()
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(13, timeout=PAGE)
    assert wake_log(page) == ["request screen 1"]

    # Hidden: let go; shown again mid-round: asked for again.
    page.evaluate("() => window.__setHidden(true)")
    page.wait_for_function("() => window.__wake.length === 2")
    page.evaluate("() => window.__setHidden(false)")
    page.wait_for_function("() => window.__wake.length === 3")
    assert wake_log(page) == ["request screen 1", "release 1", "request screen 2"]

    # Still held through the comparison; let go once the round is settled.
    table.do(machine.submit, position=1, front=B.front, middle=B.middle, back=B.back)
    table.do(machine.submit, position=0, front=A.front, middle=A.middle, back=A.back)
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "comparing")
    assert wake_log(page)[-1] == "request screen 2"
    ends = table.game.state.deadline
    assert ends is not None
    page.wait_for_function(f"() => Date.now() / 1000 > {ends}", timeout=SERVER)
    table.fire()
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "settled", timeout=PAGE)
    page.wait_for_function("() => window.__wake.length === 4")
    assert wake_log(page) == ["request screen 1", "release 1", "request screen 2", "release 2"]
    # Hidden and shown again after the round: nothing asked.
    page.evaluate("() => { window.__setHidden(true); window.__setHidden(false); }")
    page.wait_for_timeout(300)
    assert len(wake_log(page)) == 4


def test_a_new_worker_deletes_the_older_versions_caches(
    live_platform: LivePlatform, new_page: NewPage
) -> None:
    """What a deploy does: a worker of another version takes over and drops the site's older
    caches (another origin's or another app's caches are not its own: kept)."""
    base = live_platform.url
    page = new_page()
    page.goto(f"{base}/")
    worker_ready(page)
    page.evaluate(
        """async () => {
          await (await caches.open("shisanshui-static-0123456789abcdef")).put(
            "/static/old.js", new Response("old"));
          await caches.open("shisanshui-shell-0123456789abcdef");
          await caches.open("someone-else");
          const registration = await navigator.serviceWorker.getRegistration();
          await registration.unregister();
        }"""
    )
    page.reload()
    worker_ready(page)
    names = sorted(page.evaluate(CACHED))
    assert "someone-else" in names
    ours = [name for name in names if name.startswith("shisanshui-")]
    assert not any(name.endswith("0123456789abcdef") for name in ours), names
    assert any(name.startswith("shisanshui-shell-") for name in ours), names
