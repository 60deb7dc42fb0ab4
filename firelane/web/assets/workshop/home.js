// The GM's campaign home (`/workshop/<campaign>`): encounters by state
// (drafts, lobbies, running, ended, archived) with new, duplicate, delete a
// draft and archive; the campaign's characters, made from the system's form
// starting from an archetype, edited, retired and revived; rests; export and
// import; creating and switching campaigns. Everything goes through the
// workshop API (docs/workshop-api.md) with the GM's sign-in.
import { useEffect, useState } from "../vendor/preact-hooks.module.js";
import { html } from "../util.js";
import { api, call, signOut } from "./api.js";
import { KINDS_FOR, WebhooksPanel } from "../webhooks.js";
import { Field, getPath, setPath } from "./fields.js";

const enc = encodeURIComponent;
const STATES = [["draft", "Drafts"], ["lobby", "In the lobby"], ["running", "Running"], ["ended", "Ended"], ["archived", "Archived"]];

function useSystems(campaign) {
  const [systems, setSystems] = useState([]);
  useEffect(() => { api.systems(campaign).then((b) => setSystems(b.systems)).catch(() => {}); }, []);
  return systems;
}

const titleOf = (systems, name) => systems.find((s) => s.name === name)?.title || name;

export function Home({ campaign, campaigns }) {
  const systems = useSystems(campaign);
  const [reloads, setReloads] = useState(0);
  const reload = () => setReloads((n) => n + 1);
  return html`<div class="ws-page ws-home" data-campaign=${campaign}>
    <${CampaignBar} campaign=${campaign} campaigns=${campaigns} />
    <h1>Campaign “${campaign}”</h1>
    <div class="ws-home-grid">
      <${Encounters} campaign=${campaign} systems=${systems} reloads=${reloads} />
      <${Characters} campaign=${campaign} systems=${systems} reloads=${reloads} reload=${reload} />
    </div>
    <${WebhooksPanel} key=${campaign} request=${(method, path, body) => call(method, `/api/campaigns/${enc(campaign)}/hooks${path}`, body)}
      kinds=${KINDS_FOR.campaign} title="Notifications for the campaign"
      hint="Be told of every fight of this campaign by webhook — when a GM ruling is needed, when a fight ends: paste a Discord or Slack incoming-webhook URL, or your own receiver's (JSON, signed)." />
  </div>`;
}

// ------------------------------------------------------------ campaigns: switch, create, export, import

function CampaignBar({ campaign, campaigns }) {
  const [making, setMaking] = useState(false);
  const [name, setName] = useState("");
  const [error, setError] = useState(null);
  const [importing, setImporting] = useState(false);
  const create = async (e) => {
    e.preventDefault();
    try {
      const made = await api.createCampaign(name.trim());
      location.href = `/workshop/${enc(made.name)}`;
    } catch (err) {
      setError(err.message);
    }
  };
  const importFile = async (e) => {
    const file = e.currentTarget.files?.[0];
    e.currentTarget.value = "";
    if (!file) return;
    const as = name.trim() || file.name.replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9_.-]+/g, "-").slice(0, 64);
    setImporting(true);
    try {
      const made = await api.importCampaign(as, file);
      location.href = `/workshop/${enc(made.name)}`;
    } catch (err) {
      setError(err.message);
    } finally {
      setImporting(false);
    }
  };
  return html`<nav class="ws-campaign-bar">
    <span class="brand">firelane</span>
    <label>Campaign <select data-campaigns value=${campaign} onChange=${(e) => { location.href = `/workshop/${enc(e.currentTarget.value)}`; }}>
      ${[...new Set([campaign, ...campaigns])].map((c) => html`<option value=${c}>${c}</option>`)}</select></label>
    <button data-do="new-campaign" onClick=${() => setMaking(!making)}>New campaign…</button>
    <a class="button" href=${api.exportUrl(campaign)} download=${`${campaign}.campaign`}>Export</a>
    <span class="ws-spacer"></span>
    <button onClick=${async () => { await signOut(); location.reload(); }}>Sign out</button>
    ${making && html`<form class="ws-row ws-new-campaign" onSubmit=${create}>
      <input aria-label="the new campaign's name" placeholder="name: letters, digits, - _ ." value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
      <button data-do="create-campaign" disabled=${!name.trim()}>Create</button>
      <label class="ws-upload"><span class="button">${importing ? "Importing…" : "or import a campaign file…"}</span><input type="file" onChange=${importFile} /></label>
    </form>`}
    ${error && html`<div class="problem">${error}</div>`}
  </nav>`;
}

// ------------------------------------------------------------ encounters by state

function Encounters({ campaign, systems, reloads }) {
  const [lists, setLists] = useState(null);
  const [error, setError] = useState(null);
  const [name, setName] = useState("");
  const [system, setSystem] = useState("");
  const [asking, setAsking] = useState(null);
  const [own, setOwn] = useState(0);
  const load = () => api.encounters(campaign).then((b) => { setLists(b); setError(null); }).catch((e) => setError(e.message));
  useEffect(() => { load(); }, [reloads, own]);
  useEffect(() => { const timer = setInterval(load, 5000); return () => clearInterval(timer); }, []);
  const act = async (run) => {
    try { await run(); setOwn((n) => n + 1); } catch (e) { setError(e.message); }
  };
  const create = async (e) => {
    e.preventDefault();
    try {
      const made = await api.createDraft(campaign, { name: name.trim(), system: system || systems[0]?.name });
      location.href = `/workshop/${enc(campaign)}/build/${enc(made.id)}`;
    } catch (err) {
      setError(err.message);
    }
  };
  const openTable = async (row) => {
    try {
      const seats = await api.seats(campaign, row.id);
      const gm = seats.seats.find((s) => s.role === "gm");
      if (gm) location.href = gm.link;
    } catch (e) {
      setError(e.message);
    }
  };
  return html`<section class="ws-encounters">
    <h2>Encounters</h2>
    <form class="ws-row ws-new" onSubmit=${create}>
      <input aria-label="the new encounter's name" placeholder="a new encounter's name" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
      <select aria-label="rule system" data-new-system value=${system || systems[0]?.name || ""} onChange=${(e) => setSystem(e.currentTarget.value)}>
        ${systems.map((s) => html`<option value=${s.name}>${s.title}</option>`)}</select>
      <button class="go" data-do="new-encounter" disabled=${!name.trim()}>New encounter</button>
    </form>
    ${error && html`<p class="bad one-line">${error}</p>`}
    ${asking && html`<div class="confirm"><div>${asking.text}</div><div class="ws-row"><button onClick=${() => setAsking(null)}>Cancel</button>
      <button class="danger" data-confirm-yes=${asking.yes} onClick=${() => { setAsking(null); act(asking.run); }}>${asking.yes}</button></div></div>`}
    ${!lists ? !error && html`<p>…</p>` : STATES.map(([state, label]) => {
      const rows = lists[state] || [];
      if (!rows.length && state === "archived") return null;
      return html`<div class="ws-state" key=${state} data-state=${state}>
        <h3>${label} <span class="hint">${rows.length}</span></h3>
        ${rows.length === 0 ? html`<p class="hint">none</p>` : html`<ul class="ws-list">${rows.map((row) => html`<li key=${row.id} data-encounter=${row.name || row.id}>
          <div class="ws-enc-line"><b>${row.name || row.id}</b> <span class="hint">${titleOf(systems, row.system)}${
            row.round ? ` · round ${row.round}` : ""}${row.winner ? ` · ${row.winner} won` : ""}${row.status && state !== "draft" && row.status !== state ? ` · ${row.status}` : ""}</span></div>
          <div class="ws-row ws-enc-actions">
            ${state === "draft" && html`<a class="button go" data-do="build" href=${`/workshop/${enc(campaign)}/build/${enc(row.id)}`}>Build</a>`}
            ${state === "lobby" && html`<a class="button go" data-do="lobby" href=${`/workshop/${enc(campaign)}/lobby/${enc(row.id)}`}>Lobby</a>`}
            ${state === "running" && html`<button class="go" data-do="table" onClick=${() => openTable(row)}>Table</button>`}
            ${(state === "ended" || state === "archived") && html`<a class="button" data-do="replay" href=${`/table/${enc(campaign)}/${enc(row.id)}#replay`} onClick=${async (e) => { e.preventDefault(); await openTable(row); }}>Replay</a>`}
            <button data-do="duplicate" onClick=${() => act(() => api.duplicate(campaign, row.id, { name: `${row.name || row.id} (copy)` }))}>Duplicate</button>
            ${state === "draft" && html`<button class="danger" data-do="delete" onClick=${() => setAsking({ text: `Delete the draft ${row.name || row.id}?`, yes: "Delete", run: () => api.deleteDraft(campaign, row.id) })}>Delete…</button>`}
            ${state === "ended" && html`<button data-do="archive" onClick=${() => act(() => api.archive(campaign, row.id))}>Archive</button>`}
            ${state === "archived" && html`<button data-do="unarchive" onClick=${() => act(() => api.unarchive(campaign, row.id))}>Unarchive</button>`}
          </div></li>`)}</ul>`}
      </div>`;
    })}
  </section>`;
}

// ------------------------------------------------------------ characters

function Characters({ campaign, systems, reloads, reload }) {
  const [listing, setListing] = useState(null);
  const [error, setError] = useState(null);
  const [editing, setEditing] = useState(null); // "new" or a character's id
  const [resting, setResting] = useState(false);
  const [names, setNames] = useState({}); // encounter id -> its name, to say where a character is
  useEffect(() => {
    api.characters(campaign).then(setListing).catch((e) => setError(e.message));
    api.encounters(campaign).then((lists) => setNames(Object.fromEntries(Object.values(lists).flat().map((r) => [r.id, r.name || r.id])))).catch(() => {});
  }, [reloads]);
  const characters = listing?.characters || [];
  return html`<section class="ws-characters">
    <h2>Characters</h2>
    <div class="ws-row"><button class="go" data-do="new-character" onClick=${() => setEditing(editing === "new" ? null : "new")}>New character…</button>
      <button data-do="rest" disabled=${!characters.length} onClick=${() => setResting(!resting)}>Rest and downtime…</button></div>
    ${error && html`<p class="bad one-line">${error}</p>`}
    ${editing === "new" && html`<${CharacterForm} campaign=${campaign} systems=${systems} done=${() => { setEditing(null); reload(); }} />`}
    ${resting && html`<${RestForm} campaign=${campaign} characters=${characters.filter((c) => !c.retired)} done=${() => reload()} />`}
    ${!listing ? !error && html`<p>…</p>` : characters.length === 0 ? html`<p class="hint">None yet.</p>` : html`<ul class="ws-list">${characters.map((c) => html`
      <li key=${c.id} data-character=${c.name} data-status=${c.status}>
        <div class="ws-enc-line"><a href=${`/characters/${enc(campaign)}/${enc(c.id)}`}><b>${c.name}</b></a>
          <span class="hint">${titleOf(systems, c.system)} · ${c.retired ? "retired" : c.status}${c.engaged_in ? ` · in ${names[c.engaged_in] || c.engaged_in}` : ""}</span></div>
        <div class="ws-summary">${c.summary}</div>
        <div class="ws-row">
          <button data-do="edit" onClick=${() => setEditing(editing === c.id ? null : c.id)}>Edit…</button>
          <${StandingButtons} campaign=${campaign} character=${c} done=${reload} setError=${setError} />
        </div>
        ${editing === c.id && html`<${CharacterForm} campaign=${campaign} systems=${systems} character=${c} done=${() => { setEditing(null); reload(); }} />`}
      </li>`)}</ul>`}
  </section>`;
}

function StandingButtons({ campaign, character, done, setError }) {
  const [asking, setAsking] = useState(null);
  const [reason, setReason] = useState("");
  const run = async () => {
    try {
      if (asking === "retire") await api.retire(campaign, character.id, reason.trim() || "retired by the GM");
      else await api.revive(campaign, character.id, reason.trim() || "revived by the GM");
      setAsking(null);
      done();
    } catch (e) {
      setError(e.message);
    }
  };
  return html`
    ${!character.retired && html`<button data-do="retire" onClick=${() => setAsking("retire")}>Retire…</button>`}
    ${(character.retired || character.status === "dead") && html`<button data-do="revive" onClick=${() => setAsking("revive")}>Revive…</button>`}
    ${asking && html`<div class="confirm"><div>${asking === "retire" ? `Retire ${character.name}? They leave play until revived.` : `Bring ${character.name} back into play?`}</div>
      <input placeholder="reason" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
      <div class="ws-row"><button onClick=${() => setAsking(null)}>Cancel</button>
        <button class="danger" data-confirm-yes=${asking === "retire" ? "Retire" : "Revive"} onClick=${run}>${asking === "retire" ? "Retire" : "Revive"}</button></div></div>`}`;
}

// A character made from the system's form, starting from one of its archetypes; or an existing one edited.
function CharacterForm({ campaign, systems, character = null, done }) {
  const [system, setSystem] = useState(character?.system || systems[0]?.name || "");
  const [form, setForm] = useState(null);
  const [name, setName] = useState(character?.name || "");
  const [sheet, setSheet] = useState(character ? JSON.parse(JSON.stringify(character.sheet || {})) : {});
  const [reason, setReason] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!system) return;
    api.form(campaign, system).then((f) => {
      setForm(f);
      if (!character && f.archetypes?.length) setSheet(JSON.parse(JSON.stringify(f.archetypes[0].sheet)));
    }).catch((e) => setError(e.message));
  }, [system]);
  const save = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (character) {
        const set = {};
        for (const field of form.fields) {
          const before = getPath(character.sheet || {}, field.path), after = getPath(sheet, field.path);
          if (JSON.stringify(before) !== JSON.stringify(after) && after !== undefined) set[field.path] = after;
        }
        if (name.trim() && name.trim() !== character.name) set.name = name.trim();
        await api.editCharacter(campaign, character.id, { set, reason: reason.trim() || "edited by the GM" });
      } else {
        await api.createCharacter(campaign, { name: name.trim(), system, sheet });
      }
      done();
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="ws-character-form" onSubmit=${save} data-form=${character ? "edit" : "new"}>
    <div class="ws-row">
      <label>Name <input data-field="character-name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></label>
      ${!character && html`<label>System <select data-character-system value=${system} onChange=${(e) => setSystem(e.currentTarget.value)}>
        ${systems.map((s) => html`<option value=${s.name}>${s.title}</option>`)}</select></label>`}
      ${!character && form?.archetypes?.length > 0 && html`<label>Start from <select data-archetype onChange=${(e) => {
        const a = form.archetypes.find((x) => x.id === e.currentTarget.value);
        if (a) setSheet(JSON.parse(JSON.stringify(a.sheet)));
      }}>${form.archetypes.map((a) => html`<option value=${a.id}>${a.name}</option>`)}</select></label>`}
    </div>
    ${form ? html`<div class="ws-sheet-grid">${form.fields.map((field) => html`<${Field} key=${field.path} field=${field} value=${getPath(sheet, field.path)}
      set=${(v) => setSheet((s) => setPath(s, field.path, v))} catalogues=${form.catalogues} idPrefix=${`char-${character?.id || "new"}`}
      problems=${error && error.startsWith(`sheet.${field.path}`) ? [error] : []} />`)}</div>` : html`<p>…</p>`}
    ${character && html`<label>Reason <input value=${reason} placeholder="why (kept in the character's history)" onInput=${(e) => setReason(e.currentTarget.value)} /></label>`}
    ${error && html`<div class="problem" data-error="1">${error}</div>`}
    <div class="ws-row"><button class="go" data-do="save-character" disabled=${busy || !name.trim() || !form}>${character ? "Save the changes" : "Create the character"}</button>
      <button type="button" onClick=${done}>Cancel</button></div>
  </form>`;
}

function RestForm({ campaign, characters, done }) {
  const [chosen, setChosen] = useState(() => new Set(characters.filter((c) => !c.engaged_in).map((c) => c.id)));
  const [days, setDays] = useState(1);
  const [lines, setLines] = useState(null);
  const [error, setError] = useState(null);
  const rest = async (e) => {
    e.preventDefault();
    try {
      const answer = await api.rest(campaign, { characters: [...chosen], days });
      setLines(answer.lines);
      setError(null);
      done();
    } catch (err) {
      setError(err.message);
    }
  };
  return html`<form class="ws-rest" onSubmit=${rest}>
    <div class="ws-picks">${characters.map((c) => html`<label key=${c.id}><input type="checkbox" checked=${chosen.has(c.id)} disabled=${!!c.engaged_in}
      onChange=${(e) => { const next = new Set(chosen); if (e.currentTarget.checked) next.add(c.id); else next.delete(c.id); setChosen(next); }} />${c.name}</label>`)}</div>
    <label>Days <input type="number" min="1" max="365" step="1" value=${days} onInput=${(e) => setDays(Number(e.currentTarget.value))} /></label>
    <button class="go" data-do="rest-now" disabled=${!chosen.size || !(days >= 1 && days <= 365)}>Rest</button>
    ${error && html`<div class="problem">${error}</div>`}
    ${lines && html`<ul class="ws-rest-lines">${lines.map((l) => html`<li>${l}</li>`)}</ul>`}
  </form>`;
}
