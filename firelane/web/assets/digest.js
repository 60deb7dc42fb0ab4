// "While you were away": a seat's page opens on what happened since it last
// looked (GET …/digest?since=V, projections/digest.py), then the live table.
// The last version seen is kept in localStorage, per encounter and seat.
import { useEffect, useRef, useState } from "./vendor/preact-hooks.module.js";
import { html } from "./util.js";

function seenKey(where, seat) {
  return `firelane:seen:${where.campaign}/${where.encounter}/${seat}`;
}

function localTime(ms) {
  return new Date(ms).toLocaleString([], { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

export function Digest({ conn, where, seat, version }) {
  const [digest, setDigest] = useState(null);
  const asked = useRef(false);
  useEffect(() => {
    if (!seat || asked.current) return;
    asked.current = true;
    const seen = Number(localStorage.getItem(seenKey(where, seat)) || 0);
    // A reload is not coming back: the page was looking until a moment ago,
    // and a veil over a prompt that is counting down would only be in the way.
    const navigation = performance.getEntriesByType("navigation")[0];
    const reloaded = navigation && navigation.type === "reload";
    if (seen > 0 && seen < version && !reloaded) {
      fetch(`${conn.base}/digest?since=${seen}`, { headers: conn.headers(), cache: "no-store" })
        .then((response) => (response.ok ? response.json() : null))
        .then((body) => { if (body && body.events > 0) setDigest(body); })
        .catch(() => {});
    }
  }, [seat]);
  // What this page has shown is seen (while the digest is open, only what it covers).
  useEffect(() => {
    if (seat && !digest) localStorage.setItem(seenKey(where, seat), String(version));
  }, [seat, version, !!digest]);
  if (!digest) return null;

  const close = () => { localStorage.setItem(seenKey(where, seat), String(version)); setDigest(null); };
  return html`<div class="digest-veil"><section class="digest" role="dialog" aria-label="While you were away"
      data-since=${digest.since} data-version=${digest.version}>
    <h2>While you were away</h2>
    <p class="digest-span">${digest.events} event${digest.events === 1 ? "" : "s"} since you last looked${digest.partial ? " (the most recent shown)" : ""}.</p>
    <ul class="digest-lines">${digest.summary.map((line) => html`<li>${line}</li>`)}</ul>
    ${digest.awaits.some((a) => a.deadline_at_ms) && html`<ul class="digest-due">${digest.awaits.filter((a) => a.deadline_at_ms).map((a) =>
      html`<li data-due=${a.deadline_at}>${a.kind === "turn" ? `${a.name}'s turn` : `${a.name}'s answer`} is due ${localTime(a.deadline_at_ms)}</li>`)}</ul>`}
    <button class="digest-close" onClick=${close}>To the table</button>
  </section></div>`;
}
