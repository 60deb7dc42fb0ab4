// The lobby (`/workshop/<campaign>/lobby/<encounter>`): each seat's invite
// link (copy it, or show its QR code to a phone), which seats are present
// (live: the API's presence, polled), and Start. Nothing is rolled and no AI
// acts before the GM presses Start.
import { useEffect, useState } from "../vendor/preact-hooks.module.js";
import { html } from "../util.js";
import { api } from "./api.js";
import { QRCode } from "./qr.js";

const enc = encodeURIComponent;
const POLL_MS = 1500;
const ROLE = { gm: "Game master", player: "Player", spectator: "Spectators" };

function hereWords(role, connected) {
  if (role === "gm") return connected ? "the table is open" : "the table is not open";
  if (role === "spectator") return connected ? `${connected} watching` : "nobody watching";
  return connected > 1 ? `present (${connected} windows)` : connected ? "present" : "not here yet";
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard (an insecure origin, a refusal): select the text for the GM to copy.
    return false;
  }
}

export function Lobby({ campaign, encounter }) {
  const [seats, setSeats] = useState(null);
  const [presence, setPresence] = useState({});
  const [state, setState] = useState(null);
  const [error, setError] = useState(null);
  const [shown, setShown] = useState(null); // the seat whose QR code is open
  const [copied, setCopied] = useState(null);
  const [starting, setStarting] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [title, setTitle] = useState(encounter);
  useEffect(() => {
    api.seats(campaign, encounter).then((body) => { setSeats(body.seats); setState(body.state); }).catch((e) => setError(e.message));
    api.encounters(campaign).then((lists) => {
      const row = Object.values(lists).flat().find((r) => r.id === encounter);
      if (row?.name) setTitle(row.name);
    }).catch(() => {});
  }, []);
  useEffect(() => {
    let gone = false;
    const poll = async () => {
      try {
        const body = await api.presence(campaign, encounter);
        if (gone) return;
        setPresence(Object.fromEntries(body.seats.map((s) => [s.id, s.connected])));
        setState(body.state);
      } catch (e) {
        if (!gone) setError(e.message);
      }
    };
    poll();
    const timer = setInterval(poll, POLL_MS);
    return () => { gone = true; clearInterval(timer); };
  }, []);
  const start = async () => {
    setStarting(true);
    setError(null);
    try {
      const answer = await api.start(campaign, encounter);
      setState(answer.state);
      setConfirming(false);
    } catch (e) {
      setError(e.message);
    } finally {
      setStarting(false);
    }
  };
  const home = `/workshop/${enc(campaign)}`;
  if (!seats) return html`<div class="ws-page"><p><a class="back" href=${home}>← ${campaign}</a></p>${error ? html`<p class="bad one-line">${error}</p>` : html`<p>…</p>`}</div>`;
  const players = seats.filter((s) => s.role === "player");
  const present = players.filter((s) => (presence[s.id] || 0) > 0).length;
  const gmSeat = seats.find((s) => s.role === "gm");
  return html`<div class="ws-page ws-lobby" data-state=${state}>
    <p><a class="back" href=${home}>← ${campaign}</a></p>
    <h1>Lobby: ${title}</h1>
    <p class="ws-lobby-state">${state === "lobby" ? html`Waiting to start: <b data-present=${present}>${present} of ${players.length}</b> player seat${players.length === 1 ? "" : "s"} present.
      Nothing is rolled and no AI acts until you press Start.` : state === "running" ? html`<b class="ok">The fight is on.</b>` : `The encounter is ${state}.`}</p>
    ${error && html`<p class="bad one-line">${error}</p>`}
    <ul class="ws-list ws-seat-links">${seats.map((seat) => {
      const link = location.origin + seat.link;
      const here = (presence[seat.id] || 0) > 0;
      return html`<li key=${seat.id} data-seat=${seat.name || seat.id} data-present=${here ? 1 : 0} class=${here ? "present" : ""}>
        <div class="ws-seat-head"><span class=${"ws-presence" + (here ? " on" : "")} title=${here ? "present" : "not here yet"}>●</span>
          <b>${seat.name || ROLE[seat.role]}</b> <span class="hint">${ROLE[seat.role] || seat.role}${seat.combatants?.length ? ` · plays ${seat.combatants.join(", ")}` : ""}</span>
          <span class="ws-here">${hereWords(seat.role, presence[seat.id] || 0)}</span></div>
        <div class="ws-row ws-link-row">
          <input class="ws-link" readonly value=${link} aria-label=${`invite link of ${seat.name || seat.role}`} onFocus=${(e) => e.currentTarget.select()} />
          <button data-copy=${seat.name || seat.id} onClick=${async () => { setCopied((await copy(link)) ? seat.id : null); setTimeout(() => setCopied(null), 2000); }}>${copied === seat.id ? "Copied" : "Copy"}</button>
          <button data-qr-of=${seat.name || seat.id} aria-expanded=${shown === seat.id} onClick=${() => setShown(shown === seat.id ? null : seat.id)}>QR code</button>
          ${seat.role === "gm" && html`<a class="button" href=${seat.link} target="_blank" rel="noopener">Open the table</a>`}
        </div>
        ${shown === seat.id && html`<div class="ws-qr-box"><${QRCode} text=${link} label=${`QR code of ${seat.name || seat.role}'s invite link`} /></div>`}
      </li>`;
    })}</ul>
    <div class="ws-start">
      ${state === "lobby" && !confirming && html`<button class="go big" data-do="start" onClick=${() => setConfirming(true)}>Start the fight…</button>`}
      ${state === "lobby" && confirming && html`<div class="confirm" data-confirm="Start"><div>Start now${present < players.length ? `, with ${players.length - present} player seat${players.length - present === 1 ? "" : "s"} not here yet` : ""}? Initiative is rolled and the first turn begins.</div>
        <div class="ws-row"><button onClick=${() => setConfirming(false)}>Cancel</button><button class="go" data-confirm-yes="Start" disabled=${starting} onClick=${start}>Start</button></div></div>`}
      ${state === "running" && gmSeat && html`<a class="button go big" data-do="table" href=${gmSeat.link}>Go to the table ▸</a>`}
    </div>
  </div>`;
}
