"""The Content-Security-Policy holds in Chromium: every page works with no violation.

A browser context reports every ``securitypolicyviolation`` event and every console error
that mentions the Content Security Policy, on each page the platform serves to people: home,
sign-up, profile, log-in, the lobby (its WebSocket), a table page during a round (its
WebSocket, the dealt cards, a card dragged with SortableJS), the admin (log-in, index, a list,
a rule configuration's change page) and the Swagger UI of /api/docs/ (its inline init script
carries the nonce, and it fetches the schema).
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from accounts.models import User
from games.models import RuleConfiguration
from tests.browser.conftest import NewPage, Shot
from tests.browser.table_flow import (
    PACING,
    PAGE,
    PASSWORD,
    Player,
    answer_special,
    best_rows,
    join_from_list,
    open_lobby,
    open_room,
    place,
    press_ready,
    round_config,
    sign_up,
    wait_for_hand,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

RULES = "CSP fast"
ADMIN_PASSWORD = "Csp-admin-pass-31415"

# Reports violations to Python; the binding is not subject to the page's policy.
_LISTEN = """
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolation({
    page: location.pathname,
    directive: e.effectiveDirective || e.violatedDirective,
    blocked: e.blockedURI,
    source: e.sourceFile,
    line: e.lineNumber,
    sample: e.sample,
  });
});
"""


class Watch:
    """Every violation and CSP console error of the contexts it watches."""

    def __init__(self) -> None:
        self.problems: list[Any] = []
        self.visited: list[str] = []

    def context(self, context: BrowserContext) -> None:
        def report(violation: Any) -> None:
            self.problems.append(violation)

        context.expose_function("__cspViolation", report)
        context.add_init_script(_LISTEN)

    def page(self, page: Page) -> Page:
        self.context(page.context)

        def console(message: Any) -> None:
            if message.type == "error" and "content security policy" in message.text.lower():
                self.problems.append({"page": page.url, "console": message.text})

        page.on("console", console)
        page.on("framenavigated", lambda frame: self.visited.append(frame.url))
        return page

    def check(self, where: str) -> None:
        assert self.problems == [], f"CSP violations up to {where}: {self.problems}"


@pytest.fixture
def watch() -> Watch:
    return Watch()


def test_every_page_runs_under_the_policy_without_a_violation(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot, watch: Watch
) -> None:
    base = live_platform.url
    fast_rules(name=RULES, **PACING)
    a, b = Player("csp_a", watch.page(new_page())), Player("csp_b", watch.page(new_page()))

    # The policy is there (not a page that simply has none).
    response = a.page.goto(f"{base}/")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "connect-src 'self'" in policy
    shot(a.page, "home")
    watch.check("home")

    # Sign-up (the form), the profile, log-out, the log-in form, the profile again.
    sign_up(a, base)
    shot(a.page, "profile")
    a.page.locator("form[action$='/accounts/logout/'] button[type=submit]").click()
    a.page.goto(f"{base}/accounts/login/")
    a.page.locator("input[name=username]").fill(a.name)
    a.page.locator("input[name=password]").fill(PASSWORD)
    a.page.locator("form.form button[type=submit]").click()
    a.page.wait_for_url("**/accounts/profile/", timeout=PAGE)
    watch.check("sign-up, profile and log-in")

    # The lobby (its WebSocket is live) and a table during a round (a card dragged).
    sign_up(b, base)
    for player in (a, b):
        open_lobby(player, base)
    shot(a.page, "lobby")
    room = open_room(a, name="CSP table", rules=RULES, seats=2)
    join_from_list(b, room)
    for player in (a, b):
        press_ready(player)
    hand = wait_for_hand(a)
    answer_special(a)
    place(a, {"front": [], "middle": [], "back": best_rows(hand, round_config(room))["back"]})
    shot(a.page, "table-arranging")
    watch.check("lobby and table")

    # The admin: its log-in form, the index, a list and a rule configuration's change page.
    User.objects.create_superuser(username="csp_root", password=ADMIN_PASSWORD)
    staff = watch.page(new_page())
    staff.goto(f"{base}/admin/login/?next=/admin/")
    staff.locator("input[name=username]").fill("csp_root")
    staff.locator("input[name=password]").fill(ADMIN_PASSWORD)
    staff.locator("input[type=submit]").click()
    expect(staff.locator("#site-name")).to_be_visible(timeout=PAGE)
    staff.goto(f"{base}/admin/accounts/user/")
    expect(staff.locator("#result_list")).to_be_visible(timeout=PAGE)
    configuration = RuleConfiguration.objects.get(name=RULES)
    staff.goto(f"{base}/admin/games/ruleconfiguration/{configuration.pk}/change/")
    expect(staff.locator("#ruleconfiguration_form")).to_be_visible(timeout=PAGE)
    shot(staff, "admin-rule-configuration")
    watch.check("the admin")

    # Swagger UI: its scripts run and it fetched and rendered the schema.
    staff.goto(f"{base}/api/docs/")
    expect(staff.locator(".swagger-ui .info .title")).to_contain_text("Shisanshui", timeout=PAGE)
    expect(staff.locator(".opblock-tag-section").first).to_be_visible(timeout=PAGE)
    shot(staff, "api-docs")
    watch.check("/api/docs/")

    # The watch would have seen one: an inline script added now is refused and reported.
    staff.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.ran = true'; document.body.appendChild(s); }"
    )
    staff.wait_for_timeout(300)
    assert staff.evaluate("() => window.ran === undefined")
    assert any(p.get("directive") == "script-src-elem" for p in watch.problems), watch.problems

    visited = " ".join(watch.visited)
    for path in ["/accounts/signup/", "/accounts/login/", "/lobby/", "/games/table/", "/admin/"]:
        assert path in visited
