/// The web view's style and script, served from the binary: the Content-Security-Policy admits
/// nothing from another origin and no inline script or style.
enum Assets {
    /// Light and dark by `prefers-color-scheme`, readable on a phone-width window.
    static let style = """
        :root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfd; --muted: #555; --accent: #0b5cad; --warn: #8a4b00; }
        @media (prefers-color-scheme: dark) { :root { --fg: #ececec; --bg: #161616; --muted: #b5b5b5; --accent: #7db7ff; --warn: #ffb45c; } }
        body { font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 52rem; padding: 0 1rem; }
        header { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
        a { color: var(--accent); }
        nav { display: flex; flex-wrap: wrap; column-gap: 1rem; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
        button[aria-pressed=true] { background: var(--accent); color: var(--bg); border-color: var(--accent); }
        #live { color: var(--muted); min-height: 1.5em; margin: 0.5rem 0; }
        .banner, .problem { border-left: 4px solid var(--warn); padding: 0.25rem 0.75rem; }
        .problem { white-space: pre-line; }
        ul.goals { list-style: none; padding: 0; }
        .goal { margin-bottom: 1.25rem; }
        .goal h3 { margin: 0; }
        progress { width: min(20rem, 60vw); height: 1rem; accent-color: var(--accent); }
        a:focus, button:focus, input:focus, select:focus, [tabindex]:focus { outline: 3px solid var(--accent); outline-offset: 2px; }
        .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
        .warn { color: var(--warn); font-weight: bold; }
        .muted, small { color: var(--muted); }
        ul.plans { list-style: none; padding: 0; }
        .plan { margin-bottom: 1.5rem; }
        .plan h2, .plan h3 { margin: 0; font-size: 1.15rem; }
        form.row { display: inline-flex; flex-wrap: wrap; gap: 0.5rem; align-items: baseline; margin: 0.25rem 1rem 0.25rem 0; }
        form.inline { display: inline; margin-left: 0.5rem; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; overflow-wrap: anywhere; }
        dl.facts dd { margin: 0; }
        figure.picture { margin: 0.5rem 0; max-width: 30rem; }
        svg.chart { width: 100%; height: auto; }
        svg .label { fill: currentColor; font-size: 13px; }
        svg .planned { fill: var(--muted, #767676); }
        svg .came-in { fill: var(--accent); }
        figure.picture img { max-width: 100%; height: auto; }
        figure.months { max-width: none; }
        button { font: inherit; padding: 0.3rem 0.8rem; }
        input, select { font: inherit; max-width: 100%; }
        input[type=range] { width: min(20rem, 70vw); vertical-align: middle; }
        table { border-collapse: collapse; width: 100%; }
        /* A table wider than a phone scrolls inside its box; the page never scrolls sideways. */
        .scroll { overflow-x: auto; max-width: 100%; }
        main { overflow-wrap: anywhere; }
        th, td { text-align: left; padding: 0.2rem 0.5rem; border-bottom: 1px solid color-mix(in srgb, var(--fg) 15%, transparent); }
        .num { text-align: right; font-variant-numeric: tabular-nums; }
        figure.chart { margin: 0; }
        figure.chart svg { width: 100%; height: auto; }
        svg text { fill: var(--fg); font-size: 12px; }
        svg .muted { fill: var(--muted); }
        .key { display: inline-block; width: 0.7rem; height: 0.7rem; margin: 0 0.3rem 0 0.8rem; }
        .key.planned { background: #b8c2d6; }
        .key.contributed { background: #2b9348; }
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
          let pending = false, deferred = false;
          // Something typed and not yet sent is never thrown away: while a field has the focus,
          // the refresh waits until it loses it.
          function typing() {
            const active = document.activeElement;
            return active && main.contains(active) && (active.matches("input:not([type=hidden]):not([type=range]), select, textarea"));
          }
          async function refresh() {
            if (typing()) { deferred = true; return; }
            if (pending) { return; }
            pending = true;
            try {
              const answer = await fetch(location.pathname + location.search, { credentials: "same-origin" });
              const page = new DOMParser().parseFromString(await answer.text(), "text/html");
              const fresh = page.querySelector("main");
              if (fresh) {
                // The keyboard's place survives the refresh: the element with the same id, or
                // else at the same place among the focusable ones.
                const focusable = "a[href], button, input, select, textarea, [tabindex]";
                const active = document.activeElement && main.contains(document.activeElement) ? document.activeElement : null;
                const place = active ? Array.prototype.indexOf.call(main.querySelectorAll(focusable), active) : -1;
                main.replaceChildren(...fresh.childNodes);
                const again = active && ((active.id && document.getElementById(active.id)) || main.querySelectorAll(focusable)[place]);
                if (again) { again.focus({ preventScroll: true }); }
              }
            } catch (e) {
              status.textContent = "Could not refresh: " + e;
            } finally {
              pending = false;
            }
          }
          main.addEventListener("focusout", function () { if (deferred) { deferred = false; setTimeout(refresh, 0); } });
          // The flex slider says its value as it moves.
          main.addEventListener("input", function (event) {
            if (event.target.id === "factor") {
              const shown = document.getElementById("factor-shown");
              if (shown) { shown.textContent = "×" + event.target.value; }
            }
            if (event.target.id === "amount") { freeAfter(); }
          });
          main.addEventListener("change", function (event) { if (event.target.id === "goal") { freeAfter(); } });
          // What of an asset stays free once the share typed is set: balance − (allocated − the
          // goal's share now) − the share typed, in exact decimals (integers of the finest scale).
          function parse(text, sign) {
            text = text.trim();
            if (sign && sign !== ".") { text = text.split(sign).join("."); }
            if (!/^-?[0-9]+([.][0-9]+)?$/.test(text)) { return null; }
            const negative = text.startsWith("-");
            const parts = (negative ? text.slice(1) : text).split(".");
            const fraction = parts[1] || "";
            return { units: BigInt(parts[0] + fraction) * (negative ? -1n : 1n), scale: fraction.length };
          }
          function freeAfter() {
            const form = document.getElementById("share-form"), shown = document.getElementById("free-after");
            const goal = document.getElementById("goal"), amount = document.getElementById("amount");
            if (!form || !shown || !goal || !amount) { return; }
            const option = goal.options[goal.selectedIndex];
            const typed = amount.value.trim() === "" ? parse(option.dataset.share, ".") : parse(amount.value, form.dataset.decimal);
            const figures = [parse(form.dataset.balance, "."), parse(form.dataset.allocated, "."), parse(option.dataset.share, "."), typed];
            if (figures.some(function (figure) { return figure === null; })) { shown.textContent = "—"; return; }
            const scale = Math.max.apply(null, figures.map(function (figure) { return figure.scale; }));
            const at = figures.map(function (figure) { return figure.units * 10n ** BigInt(scale - figure.scale); });
            const free = at[0] - at[1] + at[2] - at[3];
            const negative = free < 0n;
            let digits = (negative ? -free : free).toString().padStart(scale + 1, "0");
            const integer = digits.slice(0, digits.length - scale), fraction = digits.slice(digits.length - scale);
            const size = Number(form.dataset.groupSize) || 3;
            let grouped = "";
            for (let index = 0; index < integer.length; index++) {
              if (index > 0 && (integer.length - index) % size === 0) { grouped += form.dataset.grouping; }
              grouped += integer[index];
            }
            shown.textContent = (negative ? "-" : "") + grouped + (scale > 0 ? form.dataset.decimal + fraction : "")
              + (negative ? " (more than the balance: it would be refused)" : "");
          }
          const root = document.documentElement;
          // What the stream says, as this page shows it.
          function show(kind) {
            switch (kind) {
              case "live": root.dataset.live = "yes"; break;
              case "change": refresh(); break;
              case "down": delete root.dataset.live; status.textContent = "savingsd is out of reach: reconnecting…"; break;
              case "up": root.dataset.live = "yes"; status.textContent = ""; refresh(); break;
              case "reconnecting": delete root.dataset.live; status.textContent = "Reconnecting…"; break;
              case "open": root.dataset.live = "yes"; if (status.textContent === "Reconnecting…") { status.textContent = ""; refresh(); } break;
              case "closed":
                delete root.dataset.live;
                status.textContent = "Live updates stopped: more pages follow savingsd than the server keeps. Reload to follow again.";
                break;
            }
          }
          // A browser opens at most six connections to one server: one page of it holds the event
          // stream and passes what it says on to the others (the Web Locks API picks that page,
          // and the next when it closes), so any number of tabs stay live.
          const channel = "BroadcastChannel" in window ? new BroadcastChannel("savings-events") : null;
          let state = null;
          function follow(done) {
            const events = new EventSource("/events");
            function relay(kind) {
              if (kind !== "change") { state = kind; }
              show(kind);
              if (channel) { channel.postMessage(kind); }
            }
            ["live", "change", "down", "up"].forEach(function (kind) { events.addEventListener(kind, function () { relay(kind); }); });
            events.onerror = function () { relay("reconnecting"); };
            events.onopen = function () { relay("open"); };
            // Too many pages of this session follow savingsd: the oldest stops (and does not reconnect).
            events.addEventListener("closed", function () { events.close(); relay("closed"); done(); });
          }
          if (channel && navigator.locks) {
            channel.onmessage = function (message) {
              // A page that has just opened asks where things stand; the stream's page says.
              if (message.data === "hello") { if (state) { channel.postMessage(state); } return; }
              show(message.data);
            };
            navigator.locks.request("savings-events", function () { return new Promise(follow); });
            channel.postMessage("hello");
          } else {
            follow(function () {});
          }
        })();
        """
}
