// Keeps the screen awake while the player's round is in play (the Screen Wake Lock API, where
// the browser has it and allows it): a phone must not dim and lock while its player thinks
// over the rows. `set(true)` asks for the lock, `set(false)` lets it go; the browser drops it
// whenever the page is hidden, so it is asked for again when the page is shown while still
// wanted. Refusals (battery saver, a policy) are silent: the page works the same without it.

export function createWakeLock(doc = document, nav = navigator) {
  let wanted = false;
  let sentinel = null; // the lock held, if any
  let asking = false;

  function supported() {
    return Boolean(nav.wakeLock && typeof nav.wakeLock.request === "function");
  }

  async function acquire() {
    if (!wanted || sentinel || asking || !supported() || doc.visibilityState !== "visible") return;
    asking = true;
    let lock = null;
    try {
      lock = await nav.wakeLock.request("screen");
    } catch (error) {
      lock = null;
    } finally {
      asking = false;
    }
    if (!lock) return;
    if (!wanted || doc.visibilityState !== "visible") {
      // The round ended, or the page was hidden, while the browser was asked.
      free(lock);
      return;
    }
    sentinel = lock;
    if (typeof lock.addEventListener === "function") {
      lock.addEventListener("release", () => {
        if (sentinel === lock) sentinel = null;
      });
    }
  }

  function free(lock) {
    try {
      Promise.resolve(lock.release()).catch(() => {});
    } catch (error) {
      // Already released by the browser.
    }
  }

  function release() {
    const lock = sentinel;
    sentinel = null;
    if (lock) free(lock);
  }

  function set(on) {
    on = Boolean(on);
    if (on === wanted) return;
    wanted = on;
    if (on) acquire();
    else release();
  }

  doc.addEventListener("visibilitychange", () => {
    if (doc.visibilityState === "visible") acquire();
    else release();
  });

  return { set, held: () => Boolean(sentinel) };
}
