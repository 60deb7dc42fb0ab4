// The encounter builder (`/workshop/<campaign>/build/<draft>`): the draft's
// map, its tokens, sides and seats, its settings and each combatant's sheet,
// checked as it is edited with the same checks as `firelane create`
// (POST …/checks), every problem one line next to its field. Undo and redo
// cover every edit; Save keeps the draft whole (a second tab's older copy is
// refused as "changed elsewhere"); the setup JSON can be exported and
// imported as `firelane create --setup` takes it.
import { useEffect, useMemo, useRef, useState } from "../vendor/preact-hooks.module.js";
import { html, initials } from "../util.js";
import { api, ApiRefusal } from "./api.js";
import { useHistory } from "./history.js";
import { FACINGS, MapEditor, facingWords, sideIndex } from "./mapeditor.js";
import { Field, getPath, setPath } from "./fields.js";
import {
  MAX_MAP_SIDE, addCombatant, addSeat, combatantAt, freshId, isWall, moveCombatant, removeCombatant, removeSeat, renameSeat,
  resize, seatCombatant, seatsOf, setTerrainField, setupText, terrainOf, updateCombatant,
} from "./model.js";

const enc = encodeURIComponent;

// The cover levels each system's rules read (engine/grid.py COVER_ORDER for
// Bolt & Blade and RonD6, d100_zones/rules.py COVER_RANK); d100-degrees has no cover rules.
export const COVER_LEVELS = {
  "bolt-and-blade": [["light", "light"], ["heavy", "heavy"], ["heavy_tall", "heavy, blocks sight"], ["total", "total"]],
  rond6: [["light", "light"], ["heavy", "heavy"]],
  "d100-zones": [["soft", "soft"], ["hard", "hard"], ["heavy", "heavy (cannot be shot through)"]],
  "d100-degrees": [],
};

export function coverLabelOf(system) {
  const levels = COVER_LEVELS[system] || [];
  return (level) => levels.find(([value]) => value === level)?.[1] || level.replace(/_/g, " ");
}

const TOOLS = [
  ["tokens", "Tokens", "drag a token to move it; tap one to edit it"],
  ["wall", "Walls", "press and drag to paint walls"],
  ["cover", "Cover", "paint cover of the chosen level, facing the chosen directions"],
  ["difficult", "Difficult ground", "paint difficult ground"],
  ["erase", "Erase", "remove walls, cover and difficult ground"],
];

// A problem's path (relative to the setup) → where the page shows it.
function problemsUnder(problems, prefix) {
  return problems.filter((p) => p.path === prefix || p.path.startsWith(prefix + ".") || p.path.startsWith(prefix + "[")).map((p) => p.message);
}

// A problem in words: where it is (a combatant by its name, the map, a setting) and what is wrong.
function problemWords(problem, setup) {
  if (!problem.path) return problem.message;
  const where = problem.path
    .replace(/^combatants\[(\d+)\]/, (_, i) => setup.combatants?.[Number(i)]?.name || `combatant ${Number(i) + 1}`)
    .replace(/^terrain\.?/, "the map ").replace(/^settings\./, "setting ").replace(/^seats\[(\d+)\]/, (_, i) => `seat ${Number(i) + 1}`)
    .replace(/\.sheet\./, "'s ").replace(/\./g, " ").replace(/_/g, " ").trim();
  return `${where}: ${problem.message}`;
}

function useDebounced(value, ms) {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value]);
  return settled;
}

function download(name, text, type = "application/json") {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type }));
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// ------------------------------------------------------------ the page

export function Builder({ campaign, draftId }) {
  const [loaded, setLoaded] = useState(null); // the draft as the server last had it
  const [error, setError] = useState(null);
  useEffect(() => {
    api.draft(campaign, draftId).then(setLoaded).catch((e) => setError(e.message));
  }, []);
  if (error) return html`<div class="ws-page"><p><a href=${`/workshop/${enc(campaign)}`}>← campaign “${campaign}”</a></p><p class="bad one-line">${error}</p></div>`;
  if (!loaded) return html`<p class="booting">Opening the draft…</p>`;
  return html`<${Editor} campaign=${campaign} draft=${loaded} />`;
}

function Editor({ campaign, draft }) {
  const history = useHistory({ setup: draft.setup, background: draft.background || null });
  const { setup, background } = history.value;
  const [version, setVersion] = useState(draft.version);
  const [savedValue, setSavedValue] = useState(history.value);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState(null);
  const [tool, setTool] = useState("tokens");
  const system = setup.system;
  const coverLevels = COVER_LEVELS[system] || [];
  const [coverLevel, setCoverLevel] = useState(coverLevels[0]?.[0] || "light");
  const [facing, setFacing] = useState([[1, 0]]);
  // The map fits the width it has (a phone's whole width; between the side panels on a wide screen) until the GM zooms.
  const fit = (width) => Math.max(6, Math.min(40, Math.floor((window.innerWidth < 900 ? window.innerWidth - 16 : window.innerWidth - 660) / Math.max(width, 1))));
  const [zoomed, setZoomed] = useState(null);
  const zoom = zoomed ?? fit(terrainOf(setup).width);
  const setZoom = (value) => setZoomed(value);
  const [, setWindowWidth] = useState(window.innerWidth);
  useEffect(() => {
    const resized = () => setWindowWidth(window.innerWidth);
    window.addEventListener("resize", resized);
    return () => window.removeEventListener("resize", resized);
  }, []);
  const [selected, setSelected] = useState(null);
  const [tab, setTab] = useState("tokens");
  const [notice, setNotice] = useState(null);
  const [form, setForm] = useState(null);
  const [characters, setCharacters] = useState([]);
  const [archetypes, setArchetypes] = useState([]);
  const [problems, setProblems] = useState([]);
  const [checking, setChecking] = useState(false);
  const [placing, setPlacing] = useState(null); // a token picked from a list, waiting for a square
  const mapRef = useRef(null);
  const coverLabel = coverLabelOf(system);
  // The background's size in pixels (the draft keeps only its id, offset and scale): from the upload's answer, or read off the image.
  const [imageSizes, setImageSizes] = useState({});
  useEffect(() => {
    const id = background?.image;
    if (!id || imageSizes[id]) return;
    const probe = new Image();
    probe.onload = () => setImageSizes((sizes) => ({ ...sizes, [id]: { width: probe.naturalWidth, height: probe.naturalHeight } }));
    probe.src = api.imageUrl(campaign, id);
  }, [background?.image]);
  const imageSize = background ? imageSizes[background.image] : null;

  const change = (next, step) => history.change((value) => ({ ...value, setup: typeof next === "function" ? next(value.setup) : next }), step);
  const setBackground = (next, step) => history.change((value) => ({ ...value, background: next }), step);
  const say = (text, kind = "info") => { setNotice({ text, kind }); setTimeout(() => setNotice((n) => (n && n.text === text ? null : n)), 5000); };

  const loadArchetypes = () => api.archetypes(campaign, system).then((body) => setArchetypes(body.archetypes || [])).catch(() => {});
  useEffect(() => {
    api.form(campaign, system).then(setForm).catch((e) => say(`The ${system} form: ${e.message}`, "bad"));
    api.characters(campaign).then((body) => setCharacters(body.characters || [])).catch(() => {});
    loadArchetypes();
  }, [system]);

  // Checked as it is edited: the same checks as `firelane create`, a moment after the last change.
  const settled = useDebounced(setup, 350);
  useEffect(() => {
    let gone = false;
    setChecking(true);
    api.checks(campaign, settled).then((answer) => { if (!gone) setProblems(answer.problems || []); })
      .catch((e) => { if (!gone) setProblems([{ path: "", message: e.message, line: e.message }]); })
      .finally(() => { if (!gone) setChecking(false); });
    return () => { gone = true; };
  }, [settled]);

  useEffect(() => {
    const keys = (e) => {
      if (!(e.ctrlKey || e.metaKey) || e.target.closest?.("input, textarea, select")) return;
      if (e.key.toLowerCase() === "z" && !e.shiftKey) { e.preventDefault(); history.undo(); }
      else if (e.key.toLowerCase() === "y" || (e.key.toLowerCase() === "z" && e.shiftKey)) { e.preventDefault(); history.redo(); }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  });

  useEffect(() => {
    // When the map was first drawn, in ms from the navigation's start (scripts/bench_web.py reads it).
    requestAnimationFrame(() => { window.__workshop = { ...(window.__workshop || {}), mapDrawn: performance.now() }; });
  }, []);

  const unsaved = history.value !== savedValue && JSON.stringify(history.value) !== JSON.stringify(savedValue);
  useEffect(() => {
    const warn = (e) => { if (unsaved) { e.preventDefault(); e.returnValue = ""; } };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [unsaved]);

  const save = async () => {
    setSaving(true);
    setSaveError(null);
    const value = history.value;
    try {
      const saved = await api.saveDraft(campaign, draft.id, { version, setup: value.setup, background: value.background });
      setVersion(saved.version);
      setSavedValue(value);
      return saved.version;
    } catch (e) {
      setSaveError(e.status === 409 ? `${e.message}` : e.message);
      return null;
    } finally {
      setSaving(false);
    }
  };
  const openLobby = async () => {
    const at = unsaved ? await save() : version;
    if (at === null) return;
    try {
      await api.openLobby(campaign, draft.id, at);
      location.href = `/workshop/${enc(campaign)}/lobby/${enc(draft.id)}`;
    } catch (e) {
      const first = e.body?.problems?.[0];
      setSaveError(first ? `The lobby cannot open yet: ${problemWords(first, history.value.setup)}` : e.message);
      if (e.body?.problems) setProblems(e.body.problems);
    }
  };

  const place = (item, square) => {
    if (isWall(setup, square)) { say(`(${square[0]}, ${square[1]}) is a wall`, "bad"); return; }
    const other = combatantAt(setup, square);
    if (other) { say(`(${square[0]}, ${square[1]}) is taken by ${other.name || other.id}`, "bad"); return; }
    if (item.kind === "placed") { change(moveCombatant(setup, item.id, square)); history.endStep(); setSelected(item.id); return; }
    const sides = [...new Set((setup.combatants || []).map((c) => c.side))];
    let combatant;
    if (item.kind === "character") {
      const c = item.character;
      if ((setup.combatants || []).some((x) => x.character === c.id)) { say(`${c.name} is already on the map`, "bad"); return; }
      combatant = { id: freshId(setup, c.id), name: c.name, side: sides.find((s) => /party|players|heroes/i.test(s)) || "party", position: square, policy: "human", character: c.id };
    } else {
      const a = item.archetype;
      combatant = { id: freshId(setup, a.name), name: nextName(setup, a.name), side: sides.find((s) => /enem|foe|hostile/i.test(s)) || "enemies", position: square, policy: "ai", sheet: JSON.parse(JSON.stringify(a.sheet || {})) };
    }
    change(addCombatant(setup, combatant));
    history.endStep();
    setSelected(combatant.id);
    setTab("tokens");
  };

  const dropAt = (item, clientX, clientY) => {
    const square = mapRef.current?.squareAt(clientX, clientY);
    if (square) place(item, square);
    return !!square;
  };

  const onEmptySquare = (square) => {
    if (placing) { place(placing, square); setPlacing(null); }
  };

  const t = terrainOf(setup);
  const selectedCombatantForBands = (setup.combatants || []).find((c) => c.id === selected);
  const bands = system === "d100-zones" && Array.isArray(selectedCombatantForBands?.position) ? zoneBands(setup, selectedCombatantForBands.position) : null;
  const selectedCombatant = (setup.combatants || []).find((c) => c.id === selected);
  const general = problems.filter((p) => !/^(combatants\[|terrain|settings|seats)/.test(p.path));

  return html`<div class="ws-builder" data-draft=${draft.id} data-version=${version}>
    <header class="ws-head">
      <a class="back" href=${`/workshop/${enc(campaign)}`}>← ${campaign}</a>
      <input class="ws-name" aria-label="encounter name" value=${setup.name || ""} placeholder="encounter name"
        onInput=${(e) => change((s) => ({ ...s, name: e.currentTarget.value }), "name")} onBlur=${() => history.endStep()} />
      <span class="ws-system">${form?.title || system}</span>
      <span class="ws-spacer"></span>
      <button data-do="undo" title="undo (Ctrl+Z)" disabled=${!history.canUndo} onClick=${() => history.undo()}>↶ Undo</button>
      <button data-do="redo" title="redo (Ctrl+Y)" disabled=${!history.canRedo} onClick=${() => history.redo()}>↷ Redo</button>
      <button data-do="save" class=${unsaved ? "primary" : ""} disabled=${saving || !unsaved} onClick=${save}>${saving ? "Saving…" : unsaved ? "Save" : "Saved"}</button>
      <button data-do="lobby" class="go" disabled=${saving} onClick=${openLobby}>Open the lobby…</button>
    </header>
    ${saveError && html`<div class="ws-banner bad one-line" data-save-error="1">${saveError}</div>`}
    ${notice && html`<div class=${"ws-banner ws-toast " + notice.kind} role="status">${notice.text}</div>`}
    <div class="ws-body">
      <aside class="ws-tools">
        <section><h3>Tools</h3>
          <div class="ws-toolbar" role="radiogroup">${TOOLS.filter(([id]) => id !== "cover" || coverLevels.length).map(([id, label, hint]) => html`
            <button key=${id} role="radio" aria-checked=${tool === id} class=${tool === id ? "on" : ""} data-tool=${id} title=${hint} onClick=${() => setTool(id)}>${label}</button>`)}</div>
          ${tool === "cover" && html`<div class="ws-cover">
            <label>Level <select data-cover-level value=${coverLevel} onChange=${(e) => setCoverLevel(e.currentTarget.value)}>
              ${coverLevels.map(([value, label]) => html`<option value=${value}>${label}</option>`)}</select></label>
            <div class="ws-facing-label">Protects against attacks from</div>
            <div class="ws-facing">${[[-1, -1], [0, -1], [1, -1], [-1, 0], null, [1, 0], [-1, 1], [0, 1], [1, 1]].map((v) => {
              if (!v) return html`<button class=${"all" + (facing.length === 0 ? " on" : "")} data-facing="all" title="every direction" onClick=${() => setFacing([])}>all</button>`;
              const f = FACINGS.find((x) => x.vector[0] === v[0] && x.vector[1] === v[1]);
              const on = facing.some((x) => x[0] === v[0] && x[1] === v[1]);
              return html`<button class=${on ? "on" : ""} data-facing=${f.label} title=${f.label} aria-pressed=${on}
                onClick=${() => setFacing(on ? facing.filter((x) => !(x[0] === v[0] && x[1] === v[1])) : [...facing, v])}>${f.arrow}</button>`;
            })}</div>
            <div class="hint">${facingWords(facing)}</div>
          </div>`}
        </section>
        <${MapSettings} setup=${setup} change=${change} endStep=${() => history.endStep()} problems=${problems} zoom=${zoom} setZoom=${setZoom} />
        <${BackgroundPanel} campaign=${campaign} background=${background} setBackground=${setBackground} endStep=${() => history.endStep()} terrain=${t} say=${say}
          sized=${(id, size) => setImageSizes((sizes) => ({ ...sizes, [id]: size }))} />
      </aside>
      <div class="ws-center">
        ${placing && html`<div class="ws-banner info">Tap a square to place ${placing.label} <button onClick=${() => setPlacing(null)}>cancel</button></div>`}
        <${MapEditor} setup=${setup} change=${change} endStep=${() => history.endStep()} tool=${tool} cover=${{ level: coverLevel, facing }}
          zoom=${zoom} background=${background && imageSize && { url: api.imageUrl(campaign, background.image),
            offset_x: background.offset?.[0] || 0, offset_y: background.offset?.[1] || 0,
            width_squares: imageSize.width / (background.scale || 1), aspect: imageSize.height / imageSize.width }}
          selected=${selected} onSelect=${setSelected} mapRef=${mapRef} say=${(text) => say(text, "bad")} coverLabel=${coverLabel} onEmptySquare=${onEmptySquare} bands=${bands} />
        <${Palette} setup=${setup} characters=${characters} archetypes=${archetypes} system=${system} dropAt=${dropAt} pick=${setPlacing} />
      </div>
      <aside class="ws-panels">
        <nav class="ws-tabs">${[["tokens", "Combatants"], ["seats", "Seats"], ["settings", "Settings"], ["json", "Setup JSON"]].map(([id, label]) => html`
          <button key=${id} class=${tab === id ? "on" : ""} data-tab=${id} onClick=${() => setTab(id)}>${label}${
            id === "tokens" && problems.some((p) => p.path.startsWith("combatants")) ? html` <span class="dot bad">●</span>` : ""}</button>`)}</nav>
        <div class="ws-checks" data-problems=${problems.length} data-checking=${checking ? 1 : 0}>${checking ? "checking…" : problems.length ? `${problems.length} problem${problems.length > 1 ? "s" : ""} to fix before the lobby` : html`<span class="ok">ready for the lobby</span>`}</div>
        ${general.length > 0 && html`<ul class="ws-problems">${general.map((p) => html`<li>${problemWords(p, setup)}</li>`)}</ul>`}
        ${tab === "tokens" && html`<${CombatantsPanel} setup=${setup} change=${change} endStep=${() => history.endStep()} form=${form}
          selected=${selectedCombatant} select=${setSelected} problems=${problems} characters=${characters} campaign=${campaign} say=${say}
          savedArchetype=${loadArchetypes} />`}
        ${tab === "seats" && html`<${SeatsPanel} setup=${setup} change=${change} endStep=${() => history.endStep()} problems=${problems} />`}
        ${tab === "settings" && html`<${SettingsPanel} setup=${setup} change=${change} form=${form} problems=${problems} />`}
        ${tab === "json" && html`<${JsonPanel} setup=${setup} change=${change} draftId=${draft.id} say=${say} />`}
      </aside>
    </div>
  </div>`;
}

// d100-zones measures range in zones (D100Z-02: Engaged up to 2 m, Close up to
// 15 m, Far up to 50 m), counted in squares of `square_metres` (the setting; a
// map measured in metres gives its square size; else the house default, 2 m).
// Drawn round the selected token, so the GM sees who starts in whose zone.
const ZONES = [["engaged", 2], ["close", 15], ["far", 50]];

function zoneBands(setup, at) {
  const t = terrainOf(setup);
  const metres = Number(setup.settings?.square_metres ?? (t.unit === "m" ? t.square_size : 2)) || 2;
  return { at, list: [...ZONES].reverse().map(([name, limit]) => ({ name, metres: limit, squares: Math.floor(limit / metres + 1e-9) })) };
}

function nextName(setup, name) {
  const names = new Set((setup.combatants || []).map((c) => c.name));
  if (!names.has(name)) return name;
  for (let n = 2; ; n += 1) if (!names.has(`${name} ${n}`)) return `${name} ${n}`;
}

// ------------------------------------------------------------ the map's size and the background

function NumberBox({ label, value, set, min, max, step = 1, unit, field, problems = [] }) {
  const [text, setText] = useState(String(value));
  useEffect(() => setText(String(value)), [value]);
  const number = Number(text);
  const local = text.trim() === "" || !Number.isFinite(number) ? `${label} must be a number`
    : (min !== undefined && number < min) || (max !== undefined && number > max) ? `${label} must be from ${min} to ${max}` : null;
  return html`<div class=${"ws-field" + (local || problems.length ? " bad" : "")} data-field=${field}>
    <label for=${`nb-${field}`}>${label}${unit ? html`<span class="range">${unit}</span>` : ""}</label>
    <input id=${`nb-${field}`} type="number" inputmode="decimal" min=${min} max=${max} step=${step} value=${text}
      onInput=${(e) => { setText(e.currentTarget.value); const n = Number(e.currentTarget.value);
        if (e.currentTarget.value.trim() !== "" && Number.isFinite(n) && (min === undefined || n >= min) && (max === undefined || n <= max)) set(n); }} />
    ${[...(local ? [local] : []), ...problems].map((line) => html`<div class="problem">${line}</div>`)}
  </div>`;
}

function MapSettings({ setup, change, endStep, problems, zoom, setZoom }) {
  const t = terrainOf(setup);
  return html`<section class="ws-mapsize"><h3>Map</h3>
    <div class="ws-row">
      <${NumberBox} label="Width" unit="squares" field="terrain.width" value=${t.width} min=${1} max=${MAX_MAP_SIDE}
        set=${(width) => { change((s) => resize(s, { width, height: terrainOf(s).height }), "width"); }} problems=${problemsUnder(problems, "terrain.width")} />
      <${NumberBox} label="Height" unit="squares" field="terrain.height" value=${t.height} min=${1} max=${MAX_MAP_SIDE}
        set=${(height) => { change((s) => resize(s, { width: terrainOf(s).width, height }), "height"); }} problems=${problemsUnder(problems, "terrain.height")} />
    </div>
    <div class="ws-row">
      <${NumberBox} label="Square size" field="terrain.square_size" value=${t.square_size} min=${0.1} max=${1000} step="any"
        set=${(v) => change((s) => setTerrainField(s, "square_size", v), "square_size")} problems=${problemsUnder(problems, "terrain.square_size")} />
      <div class="ws-field" data-field="terrain.unit"><label>Unit <select value=${t.unit} onChange=${(e) => { change((s) => setTerrainField(s, "unit", e.currentTarget.value)); endStep(); }}>
        ${[...new Set(["ft", "m", "yd", t.unit])].map((u) => html`<option value=${u}>${{ ft: "feet", m: "metres", yd: "yards" }[u] || u}</option>`)}</select></label></div>
    </div>
    ${problemsUnder(problems, "terrain").filter((p) => !/^terrain\.(width|height|square_size)/.test(p)).map((line) => html`<div class="problem">${line}</div>`)}
    <label class="ws-zoom">Zoom <input type="range" min="6" max="64" value=${zoom} onInput=${(e) => setZoom(Number(e.currentTarget.value))} /> <span>${zoom} px</span></label>
  </section>`;
}

function BackgroundPanel({ campaign, background, setBackground, endStep, terrain, say, sized }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const upload = async (e) => {
    const file = e.currentTarget.files?.[0];
    e.currentTarget.value = "";
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      const image = await api.uploadImage(campaign, file);
      // A first guess: the image spans the map's width.
      const scale = Math.max(1, Math.round((image.width / Math.max(1, terrain.width)) * 100) / 100);
      sized(image.image, { width: image.width, height: image.height });
      setBackground({ image: image.image, offset: [0, 0], scale });
      endStep();
      say(`The background (${image.width}×${image.height} pixels) is on the map: align it below`);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };
  const set = (changes, step) => setBackground({ ...background, ...changes }, step);
  return html`<section class="ws-background"><h3>Background image</h3>
    <label class="ws-upload"><span class="button">${busy ? "Uploading…" : background ? "Replace the image…" : "Upload an image…"}</span>
      <input type="file" accept="image/png,image/jpeg,image/webp" data-upload="background" disabled=${busy} onChange=${upload} /></label>
    <div class="hint">PNG, JPEG or WebP, up to 10 MB</div>
    ${error && html`<div class="problem" data-upload-error="1">${error}</div>`}
    ${background && html`<div class="ws-align">
      <${NumberBox} label="Pixels a square" field="background.scale" value=${background.scale} min=${1} max=${10000} step="any"
        set=${(scale) => set({ scale }, "bg-scale")} />
      <div class="ws-row">
        <${NumberBox} label="Shift right" unit="squares" field="background.offset.x" value=${background.offset?.[0] || 0} min=${-500} max=${500} step="0.05"
          set=${(x) => set({ offset: [x, background.offset?.[1] || 0] }, "bg-x")} />
        <${NumberBox} label="Shift down" unit="squares" field="background.offset.y" value=${background.offset?.[1] || 0} min=${-500} max=${500} step="0.05"
          set=${(y) => set({ offset: [background.offset?.[0] || 0, y] }, "bg-y")} />
      </div>
      <button onClick=${() => { setBackground(null); endStep(); }}>Remove the background</button>
    </div>`}
  </section>`;
}

// ------------------------------------------------------------ tokens to drag onto the map

// Carried by pointer events (mouse, pen or finger) from a list onto the map;
// a tap without a drag picks the token and the next tap on the map places it.
function Carryable({ item, dropAt, pick, children, disabled }) {
  const [ghost, setGhost] = useState(null);
  const start = (e) => {
    if (disabled || (e.button !== undefined && e.button !== 0)) return;
    e.preventDefault();
    const from = { x: e.clientX, y: e.clientY };
    let moved = false;
    const move = (ev) => {
      if (Math.abs(ev.clientX - from.x) + Math.abs(ev.clientY - from.y) > 6) moved = true;
      if (moved) setGhost({ x: ev.clientX, y: ev.clientY });
    };
    const up = (ev) => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", up);
      setGhost(null);
      if (ev.type === "pointercancel") return;
      if (moved) dropAt(item, ev.clientX, ev.clientY);
      else pick(item);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", up);
  };
  return html`<div class=${"ws-carry" + (disabled ? " used" : "")} data-carry=${item.label} onPointerDown=${start}>
    ${children}
    ${ghost && html`<div class="ws-ghost" style=${{ left: `${ghost.x}px`, top: `${ghost.y}px` }}>${initials(item.label)}</div>`}
  </div>`;
}

function Palette({ setup, characters, archetypes, system, dropAt, pick }) {
  const mine = characters.filter((c) => c.system === system && c.status !== "retired");
  const unplaced = (setup.combatants || []).filter((c) => !Array.isArray(c.position));
  const onMap = new Set((setup.combatants || []).map((c) => c.character).filter(Boolean));
  return html`<section class="ws-palette">
    <div class="ws-palette-group"><h4>Characters</h4>${mine.length === 0 ? html`<span class="hint">none in this system yet</span>` : mine.map((c) => html`
      <${Carryable} key=${c.id} item=${{ kind: "character", character: c, label: c.name }} dropAt=${dropAt} pick=${pick} disabled=${onMap.has(c.id) || c.status === "dead" || !!c.engaged_in}>
        <span class="ws-token-chip">${initials(c.name)}</span><span>${c.name}</span>${c.status && c.status !== "ready" && c.status !== "active" ? html` <span class="hint">${c.status}</span>` : ""}
      </${Carryable}>`)}</div>
    <div class="ws-palette-group"><h4>Archetypes</h4>${archetypes.length === 0 ? html`<span class="hint">none</span>` : archetypes.map((a) => html`
      <${Carryable} key=${a.id} item=${{ kind: "archetype", archetype: a, label: a.name }} dropAt=${dropAt} pick=${pick}>
        <span class="ws-token-chip">${initials(a.name)}</span><span>${a.name}</span>${a.source === "campaign" ? html` <span class="hint">yours</span>` : ""}
      </${Carryable}>`)}</div>
    ${unplaced.length > 0 && html`<div class="ws-palette-group"><h4>Not on the map</h4>${unplaced.map((c) => html`
      <${Carryable} key=${c.id} item=${{ kind: "placed", id: c.id, label: c.name || c.id }} dropAt=${dropAt} pick=${pick}>
        <span class="ws-token-chip">${initials(c.name || c.id)}</span><span>${c.name || c.id}</span></${Carryable}>`)}</div>`}
  </section>`;
}

// ------------------------------------------------------------ combatants, their sides, seats and sheets

function CombatantsPanel({ setup, change, endStep, form, selected, select, problems, characters, campaign, say, savedArchetype }) {
  const combatants = setup.combatants || [];
  const sides = [...new Set(combatants.map((c) => c.side))];
  return html`<section class="ws-combatants">
    <ul class="ws-list">${combatants.map((c, i) => {
      const count = problemsUnder(problems, `combatants[${i}]`).length;
      return html`<li key=${c.id} class=${(selected?.id === c.id ? "on " : "") + `side${sideIndex(setup, c.side)}`} data-combatant=${c.name || c.id}>
        <button class="ws-pick" onClick=${() => select(c.id)}><span class="ws-token-chip">${initials(c.name || c.id)}</span>
          <b>${c.name || c.id}</b> <span class="hint">${c.side} · ${c.policy === "human" ? "player" : "AI"}${Array.isArray(c.position) ? "" : " · not placed"}</span>
          ${count > 0 && html`<span class="bad"> ${count} problem${count > 1 ? "s" : ""}</span>`}</button></li>`;
    })}</ul>
    ${combatants.length === 0 && html`<p class="hint">Drag characters and archetypes from under the map onto it.</p>`}
    ${selected && html`<${CombatantForm} key=${selected.id} setup=${setup} combatant=${selected} index=${combatants.indexOf(selected)} change=${change}
      endStep=${endStep} form=${form} sides=${sides} problems=${problems} select=${select} character=${characters.find((x) => x.id === selected.character)}
      campaign=${campaign} say=${say} savedArchetype=${savedArchetype} />`}
  </section>`;
}

function CombatantForm({ setup, combatant, index, change, endStep, form, sides, problems, select, character, campaign, say, savedArchetype }) {
  const prefix = `combatants[${index}]`;
  const seats = seatsOf(setup).filter((s) => s.role === "player");
  const seatOf = seats.find((s) => (s.combatants || []).includes(combatant.id));
  const edit = (changes, step) => change((s) => updateCombatant(s, combatant.id, changes), step ? `${combatant.id}:${step}` : null);
  const sheet = combatant.sheet || {};
  const setSheet = (path, value) => change((s) => updateCombatant(s, combatant.id, { sheet: setPath(s.combatants.find((c) => c.id === combatant.id).sheet || {}, path, value) }), `${combatant.id}:sheet:${path}`);
  const sheetProblems = (path) => problemsUnder(problems, `${prefix}.sheet.${path}`);
  const known = new Set((form?.fields || []).map((f) => f.path));
  const otherSheet = problems.filter((p) => p.path.startsWith(`${prefix}.sheet`) && ![...known].some((k) => p.path === `${prefix}.sheet.${k}` || p.path.startsWith(`${prefix}.sheet.${k}.`) || p.path.startsWith(`${prefix}.sheet.${k}[`)));
  const rest = problems.filter((p) => (p.path === prefix || p.path.startsWith(prefix + ".")) && !/\.(name|side|position|policy|sheet)\b/.test(p.path.slice(prefix.length)));
  const saveArchetype = async () => {
    try {
      await api.saveArchetype(campaign, { id: `own-${combatant.id}`.slice(0, 64), name: combatant.name || combatant.id, system: setup.system, sheet });
      say(`${combatant.name || combatant.id} is saved as an archetype of this campaign`);
      savedArchetype();
    } catch (e) {
      say(e.message, "bad");
    }
  };
  return html`<div class="ws-combatant" data-editing=${combatant.id}>
    <h3>${combatant.name || combatant.id}</h3>
    <div class=${"ws-field" + (problemsUnder(problems, `${prefix}.name`).length ? " bad" : "")} data-field="name"><label>Name
      <input value=${combatant.name || ""} placeholder=${character?.name || ""} onInput=${(e) => edit({ name: e.currentTarget.value }, "name")} onBlur=${endStep} /></label>
      ${problemsUnder(problems, `${prefix}.name`).map((l) => html`<div class="problem">${l}</div>`)}</div>
    <div class="ws-field" data-field="side"><label>Side
      <input list="ws-sides" value=${combatant.side} onInput=${(e) => edit({ side: e.currentTarget.value }, "side")} onBlur=${endStep} /></label>
      <datalist id="ws-sides">${sides.map((s) => html`<option value=${s} />`)}</datalist>
      ${problemsUnder(problems, `${prefix}.side`).map((l) => html`<div class="problem">${l}</div>`)}</div>
    <div class="ws-field" data-field="seat"><label>Played by
      <select data-seat-of=${combatant.id} value=${seatOf?.id || ""} onChange=${(e) => { change((s) => seatCombatant(s, combatant.id, e.currentTarget.value)); endStep(); }}>
        <option value="">the AI</option>
        ${seats.map((s) => html`<option value=${s.id}>${s.name || s.id}</option>`)}</select></label>
      ${seats.length === 0 && html`<div class="note">Add a player seat under Seats to give this combatant to a player.</div>`}
      ${problemsUnder(problems, `${prefix}.policy`).map((l) => html`<div class="problem">${l}</div>`)}</div>
    <div class="ws-field" data-field="position"><span class="label">Square</span> ${Array.isArray(combatant.position) ? `(${combatant.position[0]}, ${combatant.position[1]})` : "not on the map"}
      ${Array.isArray(combatant.position) && html` <button onClick=${() => { change((s) => moveCombatant(s, combatant.id, null)); endStep(); }}>take off the map</button>`}
      ${problemsUnder(problems, `${prefix}.position`).map((l) => html`<div class="problem">${l}</div>`)}</div>
    ${rest.map((p) => html`<div class="problem">${p.message}</div>`)}
    ${combatant.character ? html`<p class="hint">The campaign's character ${character?.name || ""}: it brings its own sheet as it stands when the lobby opens (edit it from the campaign home).</p>
      ${otherSheet.map((p) => html`<div class="problem">${p.message}</div>`)}`
      : html`<details open class="ws-sheet"><summary>Sheet</summary>
        ${!form ? html`<p>…</p>` : form.fields.map((field) => html`<${Field} key=${field.path} field=${field} value=${getPath(sheet, field.path)}
          set=${(v) => setSheet(field.path, v)} catalogues=${form.catalogues} problems=${sheetProblems(field.path)} idPrefix=${`sheet-${combatant.id}`} />`)}
        ${otherSheet.map((p) => html`<div class="problem">${p.message}</div>`)}
        <button onClick=${saveArchetype}>Save as an archetype</button>
      </details>`}
    <div class="ws-row"><button class="danger" onClick=${() => { change((s) => removeCombatant(s, combatant.id)); endStep(); select(null); }}>Remove ${combatant.name || combatant.id}</button></div>
  </div>`;
}

function SeatsPanel({ setup, change, endStep, problems }) {
  const [name, setName] = useState("");
  const seats = seatsOf(setup);
  const names = (ids) => ids.map((id) => setup.combatants.find((c) => c.id === id)?.name || id).join(", ") || "nobody yet";
  return html`<section class="ws-seats">
    <p class="hint">Each player seat gets its own invite link in the lobby. The game master and the spectators have theirs too.</p>
    <ul class="ws-list">${seats.map((s, i) => html`<li key=${s.id} data-seat=${s.name || s.id}>
      <div class="ws-row"><input aria-label="seat name" value=${s.name || ""} placeholder=${s.id} onInput=${(e) => change((x) => renameSeat(x, s.id, e.currentTarget.value), `seat-name-${s.id}`)} onBlur=${endStep} />
        ${s.role === "player" && html`<button class="danger" onClick=${() => { change((x) => removeSeat(x, s.id)); endStep(); }}>remove</button>`}</div>
      <div class="hint">${s.role === "player" ? `plays ${names(s.combatants || [])}` : s.role === "gm" ? "the game master" : "watches"}</div>
      ${problemsUnder(problems, `seats[${i}]`).map((l) => html`<div class="problem">${l}</div>`)}
    </li>`)}</ul>
    <form class="ws-row" onSubmit=${(e) => { e.preventDefault(); change((x) => addSeat(x, name.trim() || `Player ${seats.length + 1}`)); endStep(); setName(""); }}>
      <input aria-label="new seat's name" placeholder="a player's name" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
      <button data-do="add-seat">Add a player seat</button></form>
    <p class="hint">Give a combatant to a seat with “Played by” in its card under Combatants.</p>
  </section>`;
}

// The settings most encounters touch come first; the rest (the system's house rules) below them.
const FIRST_SETTINGS = ["max_rounds", "reaction_deadline_ms", "turn_timer_ms", "on_turn_timeout"];

function tidyLabel(field) {
  let label = field.label.replace(/^(bb|r6|d100[dz]) /i, "");
  if (field.unit) label = label.replace(/ (ft|ms|m|s)$/i, "");
  return label.charAt(0).toUpperCase() + label.slice(1);
}

// A duration the engine keeps in milliseconds, shown and typed in seconds.
function inSeconds(field) {
  const s = (v) => (v === null || v === undefined ? v : v / 1000);
  return { ...field, unit: "seconds", low: s(field.low), high: s(field.high), default: s(field.default), whole: false };
}

// Deadlines in human units: a number and its unit (seconds, minutes, hours, days). The setup keeps
// milliseconds (`turn_timer_ms`); a setup written with a duration ("24h", as `turn_timer`) is read
// as the same, and rewritten in milliseconds once the GM changes it.
const DURATION_UNITS = [["s", 1000, "seconds"], ["m", 60000, "minutes"], ["h", 3600000, "hours"], ["d", 86400000, "days"]];
const DURATION_FIELDS = { reaction_deadline_ms: "s", turn_timer_ms: "h" };  // each with the unit it starts in

function parseDuration(value) {
  if (typeof value === "number") return value;
  if (typeof value !== "string") return undefined;
  const text = value.trim().toLowerCase().replace(/ /g, "");
  if (!/^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/.test(text)) return undefined;
  const size = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };
  return [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)].reduce((sum, [, n, u]) => sum + Number(n) * size[u], 0);
}

function sayDuration(ms) {
  if (ms === 0) return "0";
  if (ms < 1000) return `${ms} ms`;
  const [unit, size] = [...DURATION_UNITS].reverse().find(([, size]) => ms >= size);
  return `${Number((ms / size).toPrecision(4))} ${unit === "m" ? "min" : unit}`;
}

const unitSize = (unit) => DURATION_UNITS.find(([u]) => u === unit)[1];

function DurationField({ field, settings, change, problems }) {
  const name = field.path.replace(/_ms$/, "");
  const ms = settings[field.path] ?? parseDuration(settings[name]);
  const [unit, setUnit] = useState(() => (ms ? [...DURATION_UNITS].reverse().find(([, size]) => ms % size === 0)?.[0] : null) || DURATION_FIELDS[field.path]);
  const size = unitSize(unit);
  const shown = ms === undefined || ms === null ? "" : Number((ms / size).toPrecision(8));
  const put = (value) => change((x) => {
    const next = { ...(x.settings || {}) };
    delete next[name];
    if (value === undefined) delete next[field.path];
    else next[field.path] = value;
    return { ...x, settings: next };
  }, `setting-${field.path}`);
  const typed = (text) => put(text.trim() === "" ? undefined : Math.round(Number(text) * size));
  // A new unit keeps the number typed: "2", then hours, is two hours.
  const chosen = (next) => { setUnit(next); if (shown !== "") put(Math.round(Number(shown) * unitSize(next))); };
  const id = `setting-${field.path}`;
  const low = field.low ?? 0;
  const high = field.high;
  const local = shown !== "" && (!Number.isFinite(ms) || ms < low || (high !== null && high !== undefined && ms > high))
    ? `${tidyLabel(field)} must be from ${sayDuration(low)} to ${sayDuration(high)}, not ${Number.isFinite(ms) ? sayDuration(ms) : "that"}` : null;
  const lines = [...new Set([...(local ? [local] : []), ...problemsUnder(problems, `settings.${field.path}`), ...problemsUnder(problems, `settings.${name}`)])];
  const fallback = field.default;
  return html`<div class=${"ws-field ws-duration" + (lines.length ? " bad" : "")} data-field=${field.path}>
    <label for=${id}>${tidyLabel(field)}<span class="range">${sayDuration(low)} to ${sayDuration(high)}</span></label>
    <div class="ws-row"><input id=${id} type="number" inputmode="decimal" min="0" step="any" value=${shown}
        placeholder=${fallback !== undefined && fallback !== null ? String(Number((fallback / size).toPrecision(8))) : ""}
        onInput=${(e) => typed(e.currentTarget.value)} />
      <select class="ws-unit" aria-label=${`${tidyLabel(field)}: unit`} value=${unit} onChange=${(e) => chosen(e.currentTarget.value)}>
        ${DURATION_UNITS.map(([u, , words]) => html`<option value=${u}>${words}</option>`)}</select></div>
    ${lines.map((line) => html`<div class="problem">${line}</div>`)}
    ${field.note && html`<div class="note">${field.note}</div>`}
  </div>`;
}

// What the end of a deadline does, per player seat (settings.on_timeout): as the table says, pass, the AI plays, or the GM is asked.
const ON_TIMEOUT = [["", "as for the whole table"], ["pass", "pass (end the turn, no reaction)"], ["ai", "the AI plays for them"], ["gm", "ask the GM"]];

function SeatTimeouts({ setup, change, problems }) {
  const players = seatsOf(setup).filter((s) => s.role === "player");
  const chosen = setup.settings?.on_timeout;
  const forSeat = (id) => (typeof chosen === "string" ? chosen : chosen?.[id]) || "";
  const set = (id, value) => change((x) => {
    const before = x.settings?.on_timeout;
    const each = typeof before === "string" ? Object.fromEntries(players.map((p) => [p.id, before])) : { ...(before || {}) };
    if (value) each[id] = value;
    else delete each[id];
    const next = { ...(x.settings || {}) };
    if (Object.keys(each).length) next.on_timeout = each;
    else delete next.on_timeout;
    return { ...x, settings: next };
  }, `setting-on_timeout-${id}`);
  const lines = problemsUnder(problems, "settings.on_timeout");
  return html`<div class=${"ws-field ws-seat-timeouts" + (lines.length ? " bad" : "")} data-field="on_timeout">
    <label>When a player's time runs out (their turn or a reaction)</label>
    ${players.length === 0 && html`<div class="note">Add a player seat under Seats to choose for it.</div>`}
    ${players.map((p) => html`<div class="ws-row" key=${p.id} data-seat-timeout=${p.id}><span class="ws-seat-name">${p.name || p.id}</span>
      <select aria-label=${`when ${p.name || p.id}'s time runs out`} value=${forSeat(p.id)} onChange=${(e) => set(p.id, e.currentTarget.value)}>
        ${ON_TIMEOUT.map(([value, words]) => html`<option value=${value}>${words}</option>`)}</select></div>`)}
    ${lines.map((line) => html`<div class="problem">${line}</div>`)}
  </div>`;
}

function SettingField({ field, settings, change, problems }) {
  if (DURATION_FIELDS[field.path]) return html`<${DurationField} field=${field} settings=${settings} change=${change} problems=${problems} />`;
  const seconds = field.unit === "milliseconds";
  const shown = { ...(seconds ? inSeconds(field) : field), label: tidyLabel(field) };
  const raw = getPath(settings, field.path);
  const value = seconds && typeof raw === "number" ? raw / 1000 : raw;
  const set = (v) => change((s) => ({ ...s, settings: setPath(s.settings || {}, field.path, seconds && typeof v === "number" ? Math.round(v * 1000) : v) }), `setting-${field.path}`);
  return html`<${Field} field=${shown} value=${value} set=${set} problems=${problemsUnder(problems, `settings.${field.path}`)} idPrefix="setting" />`;
}

function SettingsPanel({ setup, change, form, problems }) {
  if (!form) return html`<p>…</p>`;
  const settings = setup.settings || {};
  const plain = form.settings.filter((f) => !f.path.includes("*"));
  const first = FIRST_SETTINGS.map((path) => plain.find((f) => f.path === path)).filter(Boolean);
  const rest = plain.filter((f) => !FIRST_SETTINGS.includes(f.path));
  const tables = form.settings.filter((f) => f.path.includes("*"));
  const known = (path) => path.startsWith("settings.on_timeout") || plain.some((f) => path === `settings.${f.path}` || path.startsWith(`settings.${f.path}.`)
    || (DURATION_FIELDS[f.path] && path === `settings.${f.path.replace(/_ms$/, "")}`));
  return html`<section class="ws-settings">
    ${first.map((field) => html`<${SettingField} key=${field.path} field=${field} settings=${settings} change=${change} problems=${problems} />`)}
    <${SeatTimeouts} setup=${setup} change=${change} problems=${problems} />
    ${rest.length > 0 && html`<details class="ws-more-settings"><summary>The system's other settings (${rest.length})</summary>
      ${rest.map((field) => html`<${SettingField} key=${field.path} field=${field} settings=${settings} change=${change} problems=${problems} />`)}
      ${tables.length > 0 && html`<p class="hint">Tables of values (${[...new Set(tables.map((f) => tidyLabel({ ...f, label: f.label.split(".")[0] })))].join(", ")}) are set in the setup JSON.</p>`}
    </details>`}
    ${problems.filter((p) => p.path.startsWith("settings") && !known(p.path)).map((p) => html`<div class="problem">${problemWords(p, setup)}</div>`)}
  </section>`;
}

function JsonPanel({ setup, change, draftId, say }) {
  const [text, setText] = useState("");
  const [error, setError] = useState(null);
  const exported = setupText(setup);
  const take = (raw) => {
    let parsed;
    try {
      parsed = JSON.parse(raw);
    } catch (e) {
      setError(`the file is not JSON: ${e.message}`);
      return;
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) { setError("setup JSON is an object with system, combatants and terrain"); return; }
    if (parsed.system !== setup.system) { setError(`this draft is ${setup.system}; the file is ${parsed.system || "of no system"}`); return; }
    setError(null);
    change(parsed);
    say("Imported: undo brings the draft back as it was");
  };
  const fromFile = async (e) => {
    const file = e.currentTarget.files?.[0];
    e.currentTarget.value = "";
    if (file) take(await file.text());
  };
  return html`<section class="ws-json">
    <p class="hint">The setup as <code>firelane create --setup FILE</code> takes it.</p>
    <div class="ws-row">
      <button data-do="export" onClick=${() => download(`${draftId}.json`, exported)}>Export the setup JSON</button>
      <label class="ws-upload"><span class="button">Import a file…</span><input type="file" accept="application/json,.json" data-import="setup" onChange=${fromFile} /></label>
    </div>
    <textarea class="ws-json-text" data-json="export" readonly value=${exported}></textarea>
    <details><summary>Paste setup JSON</summary>
      <textarea class="ws-json-text" data-json="import" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
      <button data-do="import-text" onClick=${() => take(text)}>Import the pasted JSON</button></details>
    ${error && html`<div class="problem" data-import-error="1">${error}</div>`}
  </section>`;
}
