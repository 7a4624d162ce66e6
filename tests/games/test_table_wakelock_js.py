"""static/games/table/wakelock.js under Node, with a fake document and a fake
navigator.wakeLock: the lock is asked for when wanted and let go when not, given up when the
page is hidden and asked for again when it is shown, never kept when the round ended while the
browser was being asked, and a refusal is silent. Skipped where Node is not installed.
(The table page calling it through a round: tests/browser/test_app_browser.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")

WAKELOCK_JS = Path(__file__).resolve().parents[2] / "static" / "games" / "table" / "wakelock.js"

RUNNER = """
const { createWakeLock } = await import(process.argv[2]);
const log = [];
const listeners = {};
const doc = {
  visibilityState: "visible",
  addEventListener(type, fn) { (listeners[type] ||= []).push(fn); },
};
function setVisible(visible) {
  doc.visibilityState = visible ? "visible" : "hidden";
  for (const fn of listeners.visibilitychange || []) fn();
}
let refuse = false;
let gate = null; // when set, request() waits for it
let next = 0;
const nav = {
  wakeLock: {
    async request(type) {
      const id = ++next;
      log.push(`request ${type} ${id}`);
      if (gate) await gate;
      if (refuse) throw new DOMException("not allowed", "NotAllowedError");
      const handlers = [];
      return {
        addEventListener(name, fn) { if (name === "release") handlers.push(fn); },
        async release() { log.push(`release ${id}`); handlers.forEach((fn) => fn()); },
      };
    },
  },
};
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const lock = createWakeLock(doc, nav);
const out = {};

lock.set(false); await tick();
out.idle = [...log];

lock.set(true); lock.set(true); await tick();
out.started = [...log]; out.heldAfterStart = lock.held();

setVisible(false); await tick();
out.hidden = [...log]; out.heldWhenHidden = lock.held();
setVisible(true); await tick();
out.shown = [...log]; out.heldWhenShown = lock.held();

lock.set(false); await tick();
out.ended = [...log]; out.heldAfterEnd = lock.held();

// The round ends while the browser is still being asked: the lock it gives is let go.
let open; gate = new Promise((resolve) => (open = resolve));
lock.set(true); lock.set(false); open(); await tick(); await tick();
gate = null;
out.raced = [...log]; out.heldAfterRace = lock.held();

// Refused: nothing held, nothing thrown; hidden while not wanted: nothing asked.
refuse = true;
lock.set(true); await tick();
out.heldWhenRefused = lock.held();
lock.set(false); setVisible(false); setVisible(true); await tick();
out.final = [...log];

// Without the API the page works the same.
const bare = createWakeLock(doc, {});
bare.set(true); await tick(); bare.set(false);
out.bare = bare.held();
process.stdout.write(JSON.stringify(out));
"""


def test_the_wake_lock_follows_the_round_and_the_page_s_visibility(tmp_path: Path) -> None:
    runner = tmp_path / "runner.mjs"
    runner.write_text(RUNNER)
    done = subprocess.run(
        ["node", str(runner), WAKELOCK_JS.as_uri()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["idle"] == []
    assert out["started"] == ["request screen 1"] and out["heldAfterStart"] is True
    assert out["hidden"][-1] == "release 1" and out["heldWhenHidden"] is False
    assert out["shown"][-1] == "request screen 2" and out["heldWhenShown"] is True
    assert out["ended"][-1] == "release 2" and out["heldAfterEnd"] is False
    assert out["raced"][-2:] == ["request screen 3", "release 3"]
    assert out["heldAfterRace"] is False
    assert out["heldWhenRefused"] is False
    assert out["final"][-1] == "request screen 4"  # nothing asked while not wanted
    assert out["bare"] is False
