// The GM's panel: rule on a pending call, skip the running turn, adjust a
// combatant, rewind, end the encounter. Every button sends one GM command
// (actor "gm") through the GM seat; the engine checks and records it.
//
// The adjustment form is built from the GM's options (`gm.fields`: each
// field's label, kind, range or choices and group, from the rule system's own
// description) and checks every value with `problem` — the same check the
// engine runs on a GMAdjust (firelane/engine/gm_fields.py, `value_problem`)
// — before anything is sent, so a refusal is rare. Skip, Rewind, Revive and
// End ask to be confirmed.
import { useState } from "./vendor/preact-hooks.module.js";
import { html, combatantName } from "./util.js";
import { rewindPoint, spanText, undoneBy } from "./branches.js";
import { TokenDrag, squareProblem } from "./gmdrag.js";

// ------------------------------------------------------------ the checks (gm_fields.value_problem)

const plain = (n) => (Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6))));
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function rangeText(field, high) {
  const kind = field.whole ? "a whole number" : "a number";
  const { low } = field;
  if (low !== null && low !== undefined && high !== null && high !== undefined) return `${kind} from ${plain(low)} to ${plain(high)}`;
  if (low !== null && low !== undefined) return `${kind} of at least ${plain(low)}`;
  if (high !== null && high !== undefined) return `${kind} of at most ${plain(high)}`;
  return kind;
}

function numberProblem(field, value, high, what) {
  if (typeof value !== "number" || !Number.isFinite(value)) return `${what} must be ${rangeText(field, high)}`;
  if (field.whole && !Number.isInteger(value)) return `${what} must be a whole number, not ${plain(value)}`;
  const low = field.low;
  if ((low !== null && low !== undefined && value < low) || (high !== null && high !== undefined && value > high)) {
    return `${what} must be ${rangeText(field, high)}, not ${plain(value)}`;
  }
  return null;
}

// Why `value` is not one the GM may set for `field` now, or null. `state`
// and `who` serve the checks of a square and of conditions.
export function problem(field, value, state, who) {
  const label = capital(field.label);
  const values = field.choices.map((c) => c.value);
  const labels = () => field.choices.map((c) => c.label).join(", ") || "none";
  if (value === null || value === undefined) return field.nullable ? null : `${label} must be set`;
  switch (field.kind) {
    case "number": return numberProblem(field, value, field.high, label);
    case "yes_no": return typeof value === "boolean" ? null : `${label} must be yes or no (true or false)`;
    case "choice": return values.includes(value) ? null : `${label} must be one of ${labels()}${field.nullable ? " (or none)" : ""}`;
    case "choices":
      if (!Array.isArray(value) || value.some((v) => !values.includes(v))) return `${label} must list some of ${labels()}`;
      if (new Set(value.map(String)).size !== value.length) return `${label} names one twice`;
      if (field.most !== null && field.most !== undefined && value.length > field.most) return `${label} lists at most ${field.most}`;
      return null;
    case "counts":
      for (const [key, count] of Object.entries(value || {})) {
        const choice = field.choices.find((c) => String(c.value) === key);
        if (!choice) return `${label}: ${key} is not one of ${labels()}`;
        const wrong = numberProblem(field, count, choice.high ?? field.high, `${label} of ${choice.label}`);
        if (wrong) return wrong;
      }
      return null;
    case "square": {
      const [x, y] = value;
      const t = state.terrain;
      if (![x, y].every(Number.isInteger)) return "position must be [x, y]";
      if (x < 0 || y < 0 || x >= t.width || y >= t.height) return `position (${x}, ${y}) is outside the ${t.width}x${t.height} map`;
      return squareProblem(state, who, [x, y]);
    }
    case "conditions": {
      const has = state.combatants[who]?.conditions || {};
      const missing = (value.remove || []).filter((name) => !(name in has));
      return missing.length ? `${combatantName(state, who)} is not ${missing.join(", ")}` : null;
    }
    case "revive": return value === true ? null : `${label} must be true`;
    default: return null;
  }
}

// ------------------------------------------------------------ one field of the form

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function FieldInput({ field, value, set, state }) {
  const id = `gm-${field.field}`;
  switch (field.kind) {
    case "number":
      return html`<input id=${id} type="number" min=${field.low ?? undefined} max=${field.high ?? undefined} step=${field.whole ? 1 : "any"}
        value=${value ?? ""} onInput=${(e) => set(e.currentTarget.value === "" ? null : Number(e.currentTarget.value))} />`;
    case "yes_no":
      return html`<input id=${id} type="checkbox" checked=${!!value} onChange=${(e) => set(e.currentTarget.checked)} />`;
    case "choice":
      return html`<select id=${id} value=${value ?? ""} onChange=${(e) => set(e.currentTarget.value === "" ? null : e.currentTarget.value)}>
        ${(field.nullable || value === null || value === undefined || value === "") && html`<option value="">none</option>`}
        ${field.choices.map((c) => html`<option value=${c.value}>${c.label}</option>`)}</select>`;
    case "choices": {
      const chosen = value || [];
      return html`<div class="picks" id=${id}>${field.choices.map((c) => html`<label key=${c.value}>
        <input type="checkbox" checked=${chosen.includes(c.value)}
          onChange=${(e) => set(e.currentTarget.checked ? [...chosen, c.value] : chosen.filter((v) => v !== c.value))} />${c.label}</label>`)}</div>`;
    }
    case "counts": {
      const counts = value || {};
      return html`<div class="counts" id=${id}>${field.choices.map((c) => html`<label key=${c.value}>${c.label}
        <input type="number" min=${field.low ?? 0} max=${c.high ?? field.high ?? undefined} step="1" value=${counts[c.value] ?? ""}
          onInput=${(e) => { const next = { ...counts }; if (e.currentTarget.value === "") delete next[c.value]; else next[c.value] = Number(e.currentTarget.value); set(next); }} />
        ${c.high !== null && c.high !== undefined ? html`<span class="range">/ ${plain(c.high)}</span>` : ""}</label>`)}</div>`;
    }
    case "square": {
      const [x, y] = value || [0, 0];
      return html`<div class="counts" id=${id}>
        <label>x <input type="number" min="0" max=${state.terrain.width - 1} step="1" value=${x} onInput=${(e) => set([Number(e.currentTarget.value), y])} /></label>
        <label>y <input type="number" min="0" max=${state.terrain.height - 1} step="1" value=${y} onInput=${(e) => set([x, Number(e.currentTarget.value)])} /></label></div>`;
    }
    case "conditions": {
      const change = value || { add: [], remove: [] };
      const has = field.value || [];
      const name = (v) => field.choices.find((c) => c.value === v)?.label || v.replace(/_/g, " ");
      const addable = field.choices.filter((c) => !has.includes(c.value) && !change.add.includes(c.value));
      return html`<div class="picks" id=${id}>
        ${has.map((c) => html`<label key=${"has" + c} title="untick to remove"><input type="checkbox" checked=${!change.remove.includes(c)}
          onChange=${(e) => set({ ...change, remove: e.currentTarget.checked ? change.remove.filter((x) => x !== c) : [...change.remove, c] })} />${name(c)}</label>`)}
        ${change.add.map((c) => html`<label key=${"add" + c}><input type="checkbox" checked onChange=${() => set({ ...change, add: change.add.filter((x) => x !== c) })} />${name(c)} (new)</label>`)}
        ${addable.length > 0 && html`<select value="" onChange=${(e) => e.currentTarget.value && set({ ...change, add: [...change.add, e.currentTarget.value] })}>
          <option value="">add…</option>${addable.map((c) => html`<option value=${c.value}>${c.label}</option>`)}</select>`}
      </div>`;
    }
    default:
      return null;
  }
}

function rangeHint(field) {
  if (field.kind !== "number") return "";
  if (field.low !== null && field.low !== undefined && field.high !== null && field.high !== undefined) return `${plain(field.low)}–${plain(field.high)}`;
  if (field.low !== null && field.low !== undefined) return `≥ ${plain(field.low)}`;
  return "";
}

// ------------------------------------------------------------ the adjustment form

function AdjustForm({ state, fields, who, send, busy, why, confirm }) {
  const [edits, setEdits] = useState({});
  const mine = edits[who] || {};
  const setField = (name, value) => setEdits({ ...edits, [who]: { ...mine, [name]: value } });
  const changed = Object.entries(mine).filter(([name, value]) => {
    const field = fields.find((f) => f.field === name);
    if (!field) return false;
    if (field.kind === "conditions") return value && (value.add.length || value.remove.length);
    return !same(value, field.value);
  });
  const problems = {};
  for (const [name, value] of changed) {
    const field = fields.find((f) => f.field === name);
    const wrong = problem(field, value, state, who);
    if (wrong) problems[name] = wrong;
  }
  const reset = () => setEdits({ ...edits, [who]: {} });
  const revive = fields.find((f) => f.kind === "revive");
  const groups = [];
  for (const field of fields) {
    if (field.kind === "revive") continue;
    let group = groups.find((g) => g.name === field.group);
    if (!group) groups.push(group = { name: field.group, fields: [] });
    group.fields.push(field);
  }
  // Checked before sending, so a refusal is rare (its reason comes as a toast): the edits are cleared at once,
  // and the form shows the values the engine keeps.
  const apply = () => {
    send({ type: "GMAdjust", actor: "gm", combatant: who, changes: Object.fromEntries(changed), reason: why }, "adjust");
    reset();
  };
  const name = combatantName(state, who);
  return html`<div class="adjust-form" data-adjust=${who}>
    ${revive && html`<button class="revive" data-gm="revive" disabled=${busy} onClick=${() => confirm({
      text: `Revive ${name}? ${capital(revive.note)}.`, yes: "Revive",
      run: () => send({ type: "GMAdjust", actor: "gm", combatant: who, changes: { revive: true }, reason: why }, `revive ${name}`) })}>
      Revive ${name}…</button>`}
    ${groups.map((group) => html`<fieldset key=${group.name} data-group=${group.name}><legend>${group.name}</legend>
      ${group.fields.map((field) => {
        const value = field.field in mine ? mine[field.field] : field.kind === "conditions" ? null : field.value;
        const classes = ["field"];
        if (changed.some(([n]) => n === field.field)) classes.push("changed");
        if (problems[field.field]) classes.push("bad");
        return html`<div class=${classes.join(" ")} key=${field.field} data-field=${field.field}>
          <label for=${`gm-${field.field}`}>${field.label}${rangeHint(field) && html`<span class="range">${rangeHint(field)}</span>`}</label>
          <${FieldInput} field=${field} value=${value} set=${(v) => setField(field.field, v)} state=${state} />
          ${problems[field.field] && html`<div class="problem">${problems[field.field]}</div>`}
          ${field.note && html`<div class="note">${field.note}</div>`}
        </div>`;
      })}</fieldset>`)}
    <div class="row">
      <button data-gm="apply" disabled=${busy || !changed.length || Object.keys(problems).length > 0} onClick=${apply}>
        Apply ${changed.length ? `${changed.length} change${changed.length > 1 ? "s" : ""}` : "changes"}</button>
      ${changed.length > 0 && html`<button onClick=${reset}>undo edits</button>`}
    </div>
  </div>`;
}

// ------------------------------------------------------------ the panel

export function GMPanel({ view, gm, send, busy, rewindTo, setRewindTo, lines }) {
  const state = view.state;
  const [reason, setReason] = useState("");
  const [winner, setWinner] = useState("");
  const [who, setWho] = useState("");
  const [rulings, setRulings] = useState({});
  const [asking, setAsking] = useState(null); // {text, yes, run}: what waits for the GM's confirmation
  if (!gm) return null;
  const why = reason.trim() || "the GM's call";
  const fields = gm.fields || {};
  const target = fields[who] ? who : Object.keys(fields)[0] || "";
  const available = new Set(gm.commands);
  const confirm = (question) => setAsking(question);
  const rewindOk = rewindTo !== null && rewindTo !== undefined && rewindPoint(lines || [], view, rewindTo);
  const rewindWhy = rewindTo === null || rewindTo === undefined ? "" : rewindOk ? "" :
    undoneBy(view.undone, rewindTo) !== null ? `event ${rewindTo} was undone by an earlier rewind` :
      rewindTo >= view.version ? `the fight is at event ${view.version}` : `event ${rewindTo} lies inside a command's events: pick one with ⟲`;
  const skipWhat = state.window ? "the open reaction window" : state.active ? `${combatantName(state, state.active)}'s turn` : "the turn";
  return html`<section class="panel gm">
    <h2>Game master</h2>
    <label class="reason">reason <input value=${reason} placeholder="the GM's call" onInput=${(e) => setReason(e.currentTarget.value)} /></label>
    ${asking && html`<div class="confirm" data-confirm=${asking.yes}>
      <div>${asking.text}</div>
      <div class="row"><button class="cancel" onClick=${() => setAsking(null)}>Cancel</button>
        <button class="danger" data-confirm-yes=${asking.yes} disabled=${busy} onClick=${() => { setAsking(null); asking.run(); }}>${asking.yes}</button></div>
    </div>`}
    <${TokenDrag} view=${view} send=${send} busy=${busy} reason=${reason} />
    ${gm.calls.length > 0 && html`<div class="group"><h3>Waiting for your ruling</h3>
      ${gm.calls.map((call) => html`<div class="call" key=${call.id} data-call=${call.id}>
        <div>${call.text}${call.rule ? html` <span class="rule">${call.rule}</span>` : ""}</div>
        ${call.rulings.length > 0 && html`<div class="rulings">${call.rulings.map((ruling) => html`<button key=${ruling} data-ruling=${ruling} disabled=${busy}
          onClick=${() => send({ type: "GMRule", actor: "gm", call: call.id, ruling, reason: why }, `ruling: ${ruling}`)}>${ruling}</button>`)}</div>`}
        ${call.free_text && html`<div class="row"><input placeholder=${call.rulings.length ? "or in your own words" : "your ruling"} value=${rulings[call.id] || ""}
            onInput=${(e) => setRulings({ ...rulings, [call.id]: e.currentTarget.value })} />
          <button disabled=${busy || !(rulings[call.id] || "").trim()} onClick=${() => send({ type: "GMRule", actor: "gm", call: call.id, ruling: rulings[call.id].trim(), reason: why }, "ruling")}>Rule</button></div>`}
      </div>`)}</div>`}
    ${available.has("GMSkipTurn") && html`<div class="group row">
      <button data-gm="skip" disabled=${busy || !gm.can_skip} onClick=${() => confirm({
        text: `Skip ${skipWhat}? ${state.window ? "Those who have not answered pass." : "The turn ends now."}`, yes: "Skip",
        run: () => send({ type: "GMSkipTurn", actor: "gm", reason: why }, "skip") })}>Skip ${skipWhat}…</button>
    </div>`}
    ${available.has("GMAdjust") && target && html`<div class="group"><h3>Adjust</h3>
      <select data-gm="who" value=${target} onChange=${(e) => setWho(e.currentTarget.value)}>${Object.keys(fields).map((id) => html`<option value=${id}>
        ${combatantName(state, id)}${state.combatants[id]?.out_of_fight ? " (out of the fight)" : ""}</option>`)}</select>
      <${AdjustForm} key=${target} state=${state} fields=${fields[target]} who=${target} send=${send} busy=${busy} why=${why} confirm=${confirm} />
    </div>`}
    ${available.has("RewindEncounter") && html`<div class="group"><h3>Rewind</h3>
      <div class="rewind">to just after event <input type="number" min="1" max=${view.version - 1} value=${rewindTo ?? ""} placeholder="⟲ in the log"
          onInput=${(e) => setRewindTo(e.currentTarget.value === "" ? null : Number(e.currentTarget.value))} />
        <button data-gm="rewind" disabled=${busy || !rewindOk} onClick=${() => confirm({
          text: `Rewind the fight to just after event ${rewindTo}? ${capital(spanText([rewindTo + 1, view.version]))} will be undone: ${
            rewindTo + 1 === view.version ? "it stays" : "they stay"} in the log, marked as undone, and the dice from there on are the same.`,
          yes: "Rewind", run: () => { send({ type: "RewindEncounter", actor: "gm", to_version: rewindTo, reason: why }, `rewind to ${rewindTo}`); setRewindTo(null); } })}>Rewind…</button>
      </div>
      ${rewindWhy ? html`<div class="hint problem">${rewindWhy}</div>` : html`<div class="hint">or click ⟲ beside an event in the narration</div>`}</div>`}
    ${available.has("EndEncounter") && html`<div class="group"><h3>End the encounter</h3>
      <div class="row"><select value=${winner} onChange=${(e) => setWinner(e.currentTarget.value)}>
        <option value="">no winner</option>${gm.sides.map((s) => html`<option value=${s}>won by ${s}</option>`)}</select>
        <button data-gm="end" class="danger" disabled=${busy} onClick=${() => confirm({
          text: `End the encounter now, ${winner ? `${winner} winning` : "with no winner"}? This cannot be rewound.`, yes: "End",
          run: () => send({ type: "EndEncounter", actor: "gm", winner: winner || null, reason: reason.trim() || "ended by the GM" }, "end") })}>End…</button></div></div>`}
  </section>`;
}
