/// The web view's style and script, served from the binary: the Content-Security-Policy admits
/// nothing from another origin and no inline script or style.
enum Assets {
    /// Light and dark by `prefers-color-scheme`, readable on a phone-width window.
    static let style = """
        :root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfd; --muted: #555; --accent: #0b5cad; --warn: #8a4b00; }
        @media (prefers-color-scheme: dark) { :root { --fg: #ececec; --bg: #161616; --muted: #b5b5b5; --accent: #7db7ff; --warn: #ffb45c; } }
        body { font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 52rem; padding: 0 1rem; }
        header { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
        nav a { color: var(--accent); margin-right: 1rem; }
        a:focus, button:focus, input:focus { outline: 3px solid var(--accent); outline-offset: 2px; }
        #live { color: var(--muted); min-height: 1.5em; margin: 0.5rem 0; }
        .banner, .problem { border-left: 4px solid var(--warn); padding: 0.25rem 0.75rem; }
        ul.goals { list-style: none; padding: 0; }
        .goal { margin-bottom: 1.25rem; }
        .goal h3 { margin: 0; }
        progress { width: min(20rem, 60vw); height: 1rem; accent-color: var(--accent); }
        """

    /// Follows the daemon's changes: on each `change` event the page's main part is fetched
    /// again and put in place, without a reload; while the daemon is out of reach the page says
    /// so. `data-live` on the root element tells that changes reach the page (its tests wait for
    /// it). Without JavaScript the pages still work, read by reloading.
    static let live = """
        "use strict";
        (function () {
          const status = document.getElementById("live");
          const main = document.querySelector("main");
          let pending = false;
          async function refresh() {
            if (pending) { return; }
            pending = true;
            try {
              const answer = await fetch(location.pathname + location.search, { credentials: "same-origin" });
              const page = new DOMParser().parseFromString(await answer.text(), "text/html");
              const fresh = page.querySelector("main");
              if (fresh) { main.replaceChildren(...fresh.childNodes); }
            } catch (e) {
              status.textContent = "Could not refresh: " + e;
            } finally {
              pending = false;
            }
          }
          const root = document.documentElement;
          const events = new EventSource("/events");
          events.addEventListener("live", function () { root.dataset.live = "yes"; });
          events.addEventListener("change", refresh);
          events.addEventListener("down", function () { delete root.dataset.live; status.textContent = "savingsd is out of reach: reconnecting…"; });
          events.addEventListener("up", function () { root.dataset.live = "yes"; status.textContent = ""; refresh(); });
          events.onerror = function () { delete root.dataset.live; status.textContent = "Reconnecting…"; };
          events.onopen = function () { if (status.textContent === "Reconnecting…") { status.textContent = ""; refresh(); } };
        })();
        """
}
