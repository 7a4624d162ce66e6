// The offline page (templates/pwa/offline.html, kept by the service worker): it holds one
// section per language; show only the visitor's — the site's language cookie, else the
// browser's language — and load the page again as soon as the browser is back online.
(function () {
  const script = document.currentScript;
  const cookieName = (script && script.dataset.cookie) || "django_language";

  function chosen(codes) {
    const cookie = document.cookie
      .split("; ")
      .map((pair) => pair.split("="))
      .find(([name]) => name === cookieName);
    const wanted = [cookie ? decodeURIComponent(cookie[1] || "") : "", ...(navigator.languages || [navigator.language])];
    for (const raw of wanted) {
      const tag = (raw || "").toLowerCase();
      if (!tag) continue;
      // zh, zh-CN, zh-Hans-CN... → zh-hans: the site has one Chinese.
      const base = tag.startsWith("zh") ? "zh-hans" : tag.split("-")[0];
      const hit = codes.find((code) => code === tag) || codes.find((code) => code === base);
      if (hit) return hit;
    }
    return codes[0];
  }

  function show() {
    const sections = Array.from(document.querySelectorAll("section[data-lang]"));
    if (!sections.length) return;
    const lang = chosen(sections.map((section) => section.dataset.lang));
    for (const section of sections) section.hidden = section.dataset.lang !== lang;
    document.documentElement.lang = lang;
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", show);
  else show();
  window.addEventListener("online", () => window.location.reload());
})();
