// The service worker of the installable app, served at /sw.js by shisanshui/pwa.py (scope: the
// whole site). It keeps only public things:
//   - the shell (the offline page, the site's CSS and scripts, the icons), cached on install;
//   - static files (/static/...): from the cache first when their names are content-hashed
//     (production), else from the network first, the cache only when it cannot be reached;
//   - a page (a navigation) always comes from the network and is never stored; when the
//     server cannot be reached, the offline page is shown instead.
// Nothing else is touched: the API, the admin, the sockets and the pages' own requests go to
// the network as if there were no worker. The caches are named after the static files'
// version, and a new version's worker deletes the older caches when it takes over.
"use strict";

const CONFIG = {{ config|safe }};
const PREFIX = "shisanshui-";
const SHELL_CACHE = `${PREFIX}shell-${CONFIG.version}`;
const STATIC_CACHE = `${PREFIX}static-${CONFIG.version}`;
const CURRENT = new Set([SHELL_CACHE, STATIC_CACHE]);

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(SHELL_CACHE);
      // Without cookies: the shell is the same for everybody, and so is what is kept.
      await cache.addAll(CONFIG.shell.map((url) => new Request(url, { cache: "reload", credentials: "omit" })));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      const names = await caches.keys();
      await Promise.all(
        names.filter((name) => name.startsWith(PREFIX) && !CURRENT.has(name)).map((name) => caches.delete(name)),
      );
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith(navigate(request));
  } else if (url.pathname.startsWith(CONFIG.static_url) && !url.search && !request.headers.has("range")) {
    event.respondWith(CONFIG.hashed ? cacheFirst(request) : networkFirst(request));
  }
  // Anything else: not answered here, so the browser asks the network itself.
});

async function navigate(request) {
  try {
    return await fetch(request);
  } catch (error) {
    const offline = await caches.match(CONFIG.offline_url, { cacheName: SHELL_CACHE });
    if (offline) return offline;
    throw error;
  }
}

function storable(response) {
  return response.status === 200 && response.type === "basic";
}

async function cached(request) {
  return (
    (await caches.match(request, { cacheName: STATIC_CACHE })) ||
    (await caches.match(request, { cacheName: SHELL_CACHE }))
  );
}

async function cacheFirst(request) {
  const hit = await cached(request);
  if (hit) return hit;
  const response = await fetch(request);
  if (storable(response)) {
    const cache = await caches.open(STATIC_CACHE);
    await cache.put(request, response.clone());
  }
  return response;
}

async function networkFirst(request) {
  try {
    const response = await fetch(request);
    if (storable(response)) {
      const cache = await caches.open(STATIC_CACHE);
      await cache.put(request, response.clone());
    }
    return response;
  } catch (error) {
    const hit = await cached(request);
    if (hit) return hit;
    throw error;
  }
}
