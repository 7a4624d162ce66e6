"""Attack: mint coins by abuse (4), against the live platform.

Real daphne, Celery worker (with beat) and Redis (``tests.live_server``). Before the fix, 20
sign-ups from one address in 28 s each got 100,000 coins. Now:

- a burst of concurrent sign-ups from one address creates exactly the economy settings'
  allowance of accounts; every other one is answered 429 and creates no user and no coin;
- a burst of concurrent claims of the daily bonus (and of relief) pays exactly once;
- the collusion scan is a task the worker runs;
- afterwards the money reconciles: ``manage.py ledger_audit`` against the platform's database.
"""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from celery import Celery
from django.test import override_settings
from rest_framework.authtoken.models import Token

from accounts.models import AccountKind, EconomySettings, Transaction, TransactionKind, User
from accounts.services import user_signup
from tests.accounts.helpers import balance_of, system_balance
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform, wait_until

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "correct-horse-battery-9"
ALLOWED = 3
BURST = 8
TIMEOUT = 30


def _no_redirects() -> urllib.request.OpenerDirector:
    class Keep(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    jar = http.cookiejar.CookieJar()
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), Keep)


def _sign_up(platform: LivePlatform, username: str) -> tuple[int, str]:
    """GET the form (CSRF cookie and token), POST it; (status, body) of the answer."""
    browser = _no_redirects()
    page = browser.open(f"{platform.url}/accounts/signup/", timeout=TIMEOUT).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    form = urllib.parse.urlencode(
        {
            "csrfmiddlewaretoken": token.group(1),
            "username": username,
            "password1": PASSWORD,
            "password2": PASSWORD,
        }
    ).encode()
    request = urllib.request.Request(
        f"{platform.url}/accounts/signup/",
        data=form,
        headers={"Accept-Language": "en", "Referer": f"{platform.url}/accounts/signup/"},
    )
    try:
        with browser.open(request, timeout=TIMEOUT) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as answer:
        return answer.code, answer.read().decode()


def _post(platform: LivePlatform, path: str, token: str) -> int:
    request = urllib.request.Request(
        f"{platform.url}{path}", data=b"", headers={"Authorization": f"Token {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return int(response.status)
    except urllib.error.HTTPError as answer:
        return int(answer.code)


def test_a_sign_up_burst_from_one_address_gets_429_after_the_limit(
    live_platform: LivePlatform,
) -> None:
    default_rules()
    EconomySettings.objects.create(pk=1, signups_per_address_per_day=ALLOWED)

    with ThreadPoolExecutor(BURST) as pool:
        answers = list(pool.map(lambda i: _sign_up(live_platform, f"sybil{i}"), range(BURST)))

    statuses = sorted(status for status, _body in answers)
    assert statuses == [302] * ALLOWED + [429] * (BURST - ALLOWED), statuses
    refused = next(body for status, body in answers if status == 429)
    assert "accounts have already been created from your network address today" in refused
    created = User.objects.filter(username__startswith="sybil")
    assert created.count() == ALLOWED
    grant = 100_000
    assert all(balance_of(user) == grant for user in created)
    assert system_balance(AccountKind.MINT) == -ALLOWED * grant
    _ledger_reconciles(live_platform)


def test_concurrent_claims_pay_the_daily_bonus_and_relief_once(
    live_platform: LivePlatform,
) -> None:
    default_rules()
    with override_settings(SIGNUP_GRANT=0):
        player = user_signup(username="claimer", password=PASSWORD)
    token = Token.objects.create(user=player).key

    for path, kind in (
        ("/api/wallet/daily-bonus/", TransactionKind.DAILY_BONUS),
        ("/api/wallet/relief/", TransactionKind.RELIEF),
    ):
        with ThreadPoolExecutor(BURST) as pool:
            statuses = list(
                pool.map(lambda _i, p=path: _post(live_platform, p, token), range(BURST))
            )
        assert statuses.count(201) == 1, statuses
        assert set(statuses) <= {201, 409, 429}, statuses
        assert Transaction.objects.filter(kind=kind).count() == 1

    # 2,000 (bonus) + 10,000 (relief: the balance was below 5,000 once).
    assert balance_of(player) == 12_000
    assert _post(live_platform, "/api/wallet/daily-bonus/", token) in (409, 429)
    _ledger_reconciles(live_platform)


def test_the_worker_runs_the_collusion_scan(live_platform: LivePlatform) -> None:
    # Not the process's current app: the shared tasks of later tests must keep the test broker.
    app = Celery(broker=live_platform.redis_url, set_as_current=False)
    app.send_task("accounts.tasks.collusion_scan")

    wait_until(
        "the collusion scan to run",
        lambda: re.search(
            r"accounts\.tasks\.collusion_scan\[[^\]]+\] succeeded", live_platform.worker.output()
        ),
        seconds=TIMEOUT,
    )


def _ledger_reconciles(platform: LivePlatform) -> None:
    """`manage.py ledger_audit` with the platform's own environment: exit status 0."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "ledger_audit"],
        env=platform.web.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The ledger reconciles." in done.stdout
