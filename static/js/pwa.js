// The installable app: registers the service worker (its URL is this script's data-worker:
// /sw.js, served by shisanshui/pwa.py), whose scope is the whole site. Browsers without
// service workers, or pages that are not a secure context, simply go without.
(function () {
  const script = document.currentScript;
  const worker = script && script.dataset.worker;
  if (!worker || !("serviceWorker" in navigator)) return;
  function register() {
    navigator.serviceWorker.register(worker, { scope: "/" }).catch(() => {
      // No worker (private mode, a policy): the site works as before, only not offline.
    });
  }
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register);
})();
