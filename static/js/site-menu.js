// The site header's menu on a phone (static/css/site.css): one line with the brand and a menu
// button; the button opens the links and the language switch below it. Escape, a tap outside
// or following a link closes it. On a wide screen the button is hidden and the links are shown.
(function () {
  const header = document.getElementById("site-header");
  const toggle = document.getElementById("menu-toggle");
  if (!header || !toggle) return;
  function set(open) {
    header.dataset.menu = open ? "open" : "closed";
    toggle.setAttribute("aria-expanded", String(open));
  }
  toggle.addEventListener("click", () => set(header.dataset.menu !== "open"));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && header.dataset.menu === "open") {
      set(false);
      toggle.focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (header.dataset.menu === "open" && !header.contains(event.target)) set(false);
  });
})();
