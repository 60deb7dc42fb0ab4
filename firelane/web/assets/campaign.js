// The campaign's pages: the landing (`/?campaign=NAME`), with the campaign's
// characters as they stand and its encounters a page at a time, and one
// character (`/characters/<campaign>/<id>`): where it stands, its sheet and
// its history, each campaign event in the words of the CLI's history, with a
// link to the replay of every encounter it names.
//
// Everything here reads the API's campaign routes, which need no token. With
// the campaign's GM token in the fragment (`#gm=TOKEN`: browsers never send a
// fragment to a server) the character's page also offers the GM's hand
// (adjust a field, retire, revive, release) through the API's POST routes;
// the campaign's rules decide, and a refusal is shown as the API's one line.
//
// An encounter's page needs a seat's token. The table remembers, in this
// browser's localStorage, the token of each encounter it has opened, so the
// links here open a fight this browser has sat at; any other fight's link
// opens the table, which asks for a join link.
import { useEffect, useState } from "./vendor/preact-hooks.module.js";
import { html, signed, detailWords } from "./util.js";

const SEATS_KEY = "firelane.seats";
const SEATS_KEPT = 200; // the newest; older ones are forgotten
const PER_PAGE = 50; // encounters fetched at a time (`?per_page=N` for another)

const enc = encodeURIComponent;

function rememberedSeats() {
  try {
    const known = JSON.parse(localStorage.getItem(SEATS_KEY) || "{}");
    return known && typeof known === "object" ? known : {};
  } catch {
    return {};
  }
}

// Called by the table once a seat's token has opened its seat.
export function rememberSeat(campaign, encounter, token) {
  if (!token) return;
  const key = `${campaign}/${encounter}`;
  const known = rememberedSeats();
  if (known[key] === token) return;
  delete known[key];
  known[key] = token; // last in, so the oldest are the first keys
  const keys = Object.keys(known);
  for (const old of keys.slice(0, Math.max(0, keys.length - SEATS_KEPT))) delete known[old];
  try {
    localStorage.setItem(SEATS_KEY, JSON.stringify(known));
  } catch {
    // Storage refused (a private window, a full quota): the links carry no token.
  }
}

// The table at an encounter: its replay view, or the live table; with the
// token this browser last opened it with, if any.
export function tableLink(campaign, encounter, { replay = true } = {}) {
  const token = rememberedSeats()[`${campaign}/${encounter}`];
  const hash = [token ? `token=${enc(token)}` : "", replay ? "replay" : ""].filter(Boolean).join("&");
  return `/table/${enc(campaign)}/${enc(encounter)}${hash ? "#" + hash : ""}`;
}

function gmToken() {
  return new URLSearchParams(location.hash.replace(/^#/, "")).get("gm") || "";
}

function gmHash(gm) {
  return gm ? `#gm=${enc(gm)}` : "";
}

export function characterLink(campaign, character, gm = "") {
  return `/characters/${enc(campaign)}/${enc(character)}${gmHash(gm)}`;
}

function landingLink(campaign, gm = "") {
  return `/?campaign=${enc(campaign)}${gmHash(gm)}`;
}

async function getJSON(url) {
  const response = await fetch(url, { cache: "no-store" });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

// ------------------------------------------------------------ the landing

export function Landing({ where }) {
  const [link, setLink] = useState("");
  const gm = gmToken();
  const join = (e) => {
    e.preventDefault();
    if (link.trim()) location.href = link.trim();
  };
  return html`<div class="landing">
    <h1>firelane</h1>
    <p>Join a fight with the link your GM gave you (<code>firelane seats ENCOUNTER</code> prints each seat's).</p>
    <form onSubmit=${join}><input placeholder="paste a join link" value=${link} onInput=${(e) => setLink(e.currentTarget.value)} /><button>Join</button></form>
    <${CharacterList} campaign=${where.campaign} gm=${gm} />
    <${EncounterList} campaign=${where.campaign} />
  </div>`;
}

function Status({ character, campaign }) {
  return html`<span class=${`status-word status-${character.status}`} data-status=${character.status}>${character.status}</span>${
    character.engaged_in ? html` <span class="engaged" data-engaged=${character.engaged_in}>in <a href=${tableLink(campaign, character.engaged_in, { replay: false })}>${character.engaged_in}</a></span>` : ""}`;
}

function CharacterList({ campaign, gm }) {
  const [listing, setListing] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    getJSON(`/api/campaigns/${enc(campaign)}/characters`).then(setListing).catch((e) => setError(e.message));
  }, []);
  const characters = listing?.characters;
  return html`<section class="campaign-characters">
    <h2>Characters in campaign “${campaign}”</h2>
    ${error && html`<p class="bad one-line">${error}</p>`}
    ${!characters ? !error && html`<p>…</p>` : characters.length === 0
      ? html`<p>None yet: <code>firelane characters --create-demo rond6 --campaign ${campaign}</code>.</p>`
      : html`<table class="roster character-list">
        <thead><tr><th>character</th><th>system</th><th>status</th><th>as it stands</th><th>fights</th><th>rests</th></tr></thead>
        <tbody>${characters.map((c) => html`<tr key=${c.id} data-character=${c.id}>
          <td><a class="open-character" href=${characterLink(campaign, c.id, gm)}>${c.name}</a> <span class="id">${c.id}</span></td>
          <td>${c.system}</td>
          <td><${Status} character=${c} campaign=${campaign} /></td>
          <td class="summary">${c.summary}</td>
          <td class="fights">${c.encounters.length}</td>
          <td class="rests">${c.downtimes.length}</td>
        </tr>`)}</tbody></table>`}
    ${listing && listing.open_downtime !== null && listing.open_downtime !== undefined && html`<p class="hint">Rest ${listing.open_downtime}
      has not finished (<code>firelane rest --finish --campaign ${campaign}</code>).</p>`}
    ${listing?.problems?.length > 0 && html`<ul class="problems">${listing.problems.map((p) => html`<li>${p}</li>`)}</ul>`}
  </section>`;
}

function EncounterList({ campaign }) {
  const wanted = Number(new URLSearchParams(location.search).get("per_page"));
  const perPage = Number.isInteger(wanted) && wanted >= 1 && wanted <= 1000 ? wanted : PER_PAGE;
  const [rows, setRows] = useState(null);
  const [paging, setPaging] = useState(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState(null);
  const load = (page) => {
    setLoading(true);
    getJSON(`/api/campaigns/${enc(campaign)}/encounters?page=${page}&per_page=${perPage}`)
      .then((body) => {
        // Pages are in creation order, so a newer encounter only ever adds to the last page.
        setRows((shown) => {
          const seen = new Set((page === 1 ? [] : shown || []).map((r) => r.encounter));
          return [...(page === 1 ? [] : shown || []), ...body.encounters.filter((r) => !seen.has(r.encounter))];
        });
        setPaging(body);
        setError(null);
      })
      .catch((e) => setError(e.message))
      .finally(() => setLoading(false));
  };
  useEffect(() => load(1), []);
  return html`<section class="campaign-encounters">
    <h2>Encounters in campaign “${campaign}”${paging && paging.total > 0 ? html` <span class="hint" data-shown=${rows.length} data-total=${paging.total}>${rows.length} of ${paging.total}</span>` : ""}</h2>
    ${error && html`<p class="bad one-line">${error}</p>`}
    ${rows === null ? !error && html`<p>…</p>` : rows.length === 0 ? html`<p>None yet: <code>firelane create ENCOUNTER --demo-setup bolt-and-blade</code>.</p>` : html`
      <table class="roster encounter-list"><thead><tr><th>encounter</th><th>system</th><th>status</th><th>round</th><th>winner</th></tr></thead>
      <tbody>${rows.map((r) => html`<tr key=${r.encounter} data-encounter=${r.encounter}>
        <td><a class="replay-link" href=${tableLink(campaign, r.encounter)} title="its replay">${r.encounter}</a>${r.name && r.name !== r.encounter ? html` <span class="id">${r.name}</span>` : ""}</td>
        <td>${r.system}</td><td>${r.status}${r.reproducible_dice ? html` <span class="dice-warning" title="reproducible dice: anyone who knows the seed text can predict every roll">(reproducible dice)</span>` : ""}</td><td>${r.round ?? ""}</td><td>${r.winner ?? ""}</td></tr>`)}</tbody></table>`}
    ${paging && paging.page < paging.pages && html`<button class="more" disabled=${loading} onClick=${() => load(paging.page + 1)}>
      More encounters (${paging.total - rows.length} not shown)</button>`}
  </section>`;
}

// ------------------------------------------------------------ one character

// A word for each kind of campaign event; the projection's own sentence follows it.
const KIND = {
  CharacterCreated: "created",
  CharactersEnlisted: "joined a fight",
  AftermathRecorded: "aftermath",
  DowntimeStarted: "downtime",
  CharacterRested: "rest",
  CharacterAdjusted: "GM adjustment",
  CharactersReleased: "released",
};

export function CharacterPage({ where }) {
  const { campaign, character } = where;
  const gm = gmToken();
  const [found, setFound] = useState(null);
  const [error, setError] = useState(null);
  const [reloads, setReloads] = useState(0);
  useEffect(() => {
    getJSON(`/api/campaigns/${enc(campaign)}/characters/${enc(character)}`)
      .then((body) => { setFound(body); setError(null); })
      .catch((e) => setError(e.message));
  }, [reloads]);
  useEffect(() => {
    document.title = `${found?.character?.name || character} · firelane`;
  }, [found]);
  const back = html`<p><a class="back" href=${landingLink(campaign, gm)}>← campaign “${campaign}”</a></p>`;
  if (!found) {
    return html`<div class="landing character-page">${back}
      ${error ? html`<p class="bad one-line" data-error="1">${error}</p>` : html`<p>…</p>`}</div>`;
  }
  const c = found.character;
  return html`<div class="landing character-page" data-character=${c.id}>
    ${back}
    <h1 class="name">${c.name}</h1>
    <div class="standing"><span class="id">${c.id}</span>${" · "}${c.system}${" · "}<${Status} character=${c} campaign=${campaign} />${" · "}<span class="summary">${c.summary}</span></div>
    <div class="hint counts">${c.encounters.length} fight(s), ${c.downtimes.length} rest(s)${c.rested_days ? `; ${c.rested_days} day(s) rested towards the next healing test` : ""}</div>
    ${error && html`<p class="bad one-line">${error}</p>`}
    ${gm && html`<${GMHand} campaign=${campaign} character=${c} gm=${gm} changed=${() => setReloads((n) => n + 1)} />`}
    <details class="sheet"><summary>Sheet</summary>
      <table class="roster">${Object.entries(c.sheet).map(([field, value]) => html`<tr key=${field}><th>${field}</th>
        <td>${typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)}</td></tr>`)}</table></details>
    <h2>History <span class="hint">oldest first</span></h2>
    <ol class="history">${found.history.map((entry) => html`<${HistoryEntry} key=${entry.version} entry=${entry} campaign=${campaign} />`)}</ol>
  </div>`;
}

function HistoryEntry({ entry, campaign }) {
  const event = entry.event || {};
  const rolls = entry.type === "CharacterRested" ? event.rolls || [] : [];
  return html`<li class="entry" data-type=${entry.type} data-version=${entry.version}>
    <div class="head"><span class="v">v${entry.version}</span> <b class="kind">${KIND[entry.type] || entry.type}</b>
      ${event.encounter && html`<a class="replay-link" data-encounter=${event.encounter} href=${tableLink(campaign, event.encounter)}>replay ${event.encounter} ▸</a>`}</div>
    <div class="text">${entry.text}</div>
    ${rolls.length > 0 && html`<div class="rolls">${rolls.map((roll, i) => html`<${RollView} key=${i} roll=${roll} />`)}</div>`}
  </li>`;
}

// A roll as the events carry it (a die is [sides, face, at, k]), drawn like the narration's.
function RollView({ roll }) {
  const counted = new Set(roll.none_kept ? [] : roll.kept?.length ? roll.kept : roll.dice.map((_, i) => i));
  const dice = roll.dice.map(([sides, face], i) => html`<span class=${"die" + (counted.has(i) ? "" : " dropped")} title=${`d${sides}`}>${face}</span>`);
  const details = Object.entries(roll.details || {});
  return html`<div class="roll" data-rule=${roll.rule}>
    <div class="roll-head"><b>${roll.purpose}</b> <span class="rule">${roll.rule}</span> ${dice.length ? dice : html`<i>no dice</i>`}</div>
    ${roll.modifiers?.length > 0 && html`<table class="mods">${roll.modifiers.map((m) => html`<tr>
      <td class="v">${signed(m.value)}</td><td>${m.source}</td><td class="rule">${m.rule}</td></tr>`)}</table>`}
    <div class="roll-total">= <b>${roll.total}</b>${roll.target !== null && roll.target !== undefined ? ` vs ${roll.target} (${roll.compare})` : ""}
      ${roll.success === true ? html` <span class="ok">success</span>` : roll.success === false ? html` <span class="bad">failure</span>` : ""}</div>
    ${roll.notes?.length > 0 && html`<div class="notes">${roll.notes.join("; ")}</div>`}
    ${details.length > 0 && detailWords(roll.details) && html`<div class="notes">${detailWords(roll.details)}</div>`}
  </div>`;
}

// ------------------------------------------------------------ the GM's hand

function parseValue(text) {
  // As `firelane character adjust --set`: JSON when it is JSON, else the text itself.
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

let commandCount = 0;
function commandId() {
  // One per click, so a retried request is applied once (campaign_web.py).
  return `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${++commandCount}`;
}

const NEEDS_FIELD = { set: true, add: true, unset: true };

function GMHand({ campaign, character, gm, changed }) {
  const [mode, setMode] = useState("set");
  const [field, setField] = useState("");
  const [value, setValue] = useState("");
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState(null); // {ok, text}
  const post = async (what, body, said) => {
    setBusy(true);
    setAnswer(null);
    try {
      const response = await fetch(`/api/campaigns/${enc(campaign)}/characters/${enc(character.id)}/${what}`, {
        method: "POST", headers: { Authorization: `Bearer ${gm}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const reply = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
      if (!response.ok) {
        setAnswer({ ok: false, text: reply.error || `HTTP ${response.status}` });
      } else {
        setAnswer({ ok: true, text: said });
        setField("");
        setValue("");
        changed();
      }
    } catch (error) {
      setAnswer({ ok: false, text: String(error.message || error) });
    } finally {
      setBusy(false);
    }
  };
  const why = reason.trim();
  const name = field.trim();
  const adjust = () => {
    const body = { reason: why, command_id: commandId() };
    if (mode === "set") body.set = { [name]: parseValue(value.trim()) };
    else if (mode === "add") body.add = { [name]: Number(value.trim()) };
    else if (mode === "unset") body.unset = [name];
    else body[mode] = true;
    post("adjust", body, mode === "retire" ? "retired" : mode === "revive" ? "revived" : `${mode} ${name}: done`);
  };
  const ready = why && !busy && (!NEEDS_FIELD[mode] || (name && (mode === "unset" || value.trim())));
  return html`<section class="panel gm-hand">
    <h2>The GM's hand</h2>
    <label class="reason">reason <input name="reason" value=${reason} placeholder="it goes into the history" onInput=${(e) => setReason(e.currentTarget.value)} /></label>
    <div class="row adjust">
      <select name="mode" value=${mode} onChange=${(e) => setMode(e.currentTarget.value)}>
        <option value="set">set</option><option value="add">add</option><option value="unset">remove</option>
        <option value="retire">retire</option><option value="revive">revive</option></select>
      ${NEEDS_FIELD[mode] && html`<input name="field" list="sheet-fields" placeholder="field (e.g. hp, ammo.rifle, name)" value=${field} onInput=${(e) => setField(e.currentTarget.value)} />
        <datalist id="sheet-fields">${["name", ...Object.keys(character.sheet)].map((f) => html`<option value=${f} />`)}</datalist>`}
      ${(mode === "set" || mode === "add") && html`<input name="value" placeholder=${mode === "add" ? "amount (negative takes away)" : "value"} value=${value} onInput=${(e) => setValue(e.currentTarget.value)} />`}
      <button class="adjust-button" disabled=${!ready} onClick=${adjust}>Adjust</button>
    </div>
    ${character.engaged_in && html`<div class="row release"><button class="release-button danger" disabled=${!why || busy}
      onClick=${() => post("release", { reason: why }, `released from ${character.engaged_in}`)}>Release from ${character.engaged_in}</button>
      <span class="hint">an encounter that never started, or ended without its aftermath</span></div>`}
    ${!why && html`<div class="hint">Every change needs a reason.</div>`}
    ${answer && html`<div class=${"one-line answer " + (answer.ok ? "ok" : "bad")} data-ok=${answer.ok ? "1" : "0"}>${answer.ok ? answer.text : `Refused: ${answer.text}`}</div>`}
  </section>`;
}
