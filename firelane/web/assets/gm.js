// The GM's panel: skip the running turn, settle a pending call, adjust a
// combatant, rewind, end the encounter. Every button sends one GM command
// (actor "gm") through the GM seat; the engine checks and records it.
import { useState } from "./vendor/preact-hooks.module.js";
import { html, combatantName } from "./util.js";

function parseValue(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function GMPanel({ view, gm, send, busy, rewindTo, setRewindTo }) {
  const state = view.state;
  const [reason, setReason] = useState("");
  const [winner, setWinner] = useState("");
  const [who, setWho] = useState("");
  const [field, setField] = useState("");
  const [value, setValue] = useState("");
  const [rulings, setRulings] = useState({});
  if (!gm) return null;
  const why = reason.trim() || "the GM's call";
  const adjustable = gm.adjustable || {};
  const target = who || Object.keys(adjustable)[0] || "";
  const fields = adjustable[target] || [];
  const chosenField = fields.includes(field) ? field : fields[0] || "";
  const current = target && chosenField ? state.combatants[target]?.[chosenField] : undefined;
  const available = new Set(gm.commands);
  return html`<section class="panel gm">
    <h2>Game master</h2>
    <label class="reason">reason <input value=${reason} placeholder="the GM's call" onInput=${(e) => setReason(e.currentTarget.value)} /></label>
    ${gm.calls.length > 0 && html`<div class="group"><h3>Waiting for your ruling</h3>
      ${gm.calls.map((call) => html`<div class="call" key=${call.id} data-call=${call.id}>
        <div>${call.text}${call.rule ? html` <span class="rule">${call.rule}</span>` : ""}</div>
        <input placeholder="ruling" value=${rulings[call.id] || ""} onInput=${(e) => setRulings({ ...rulings, [call.id]: e.currentTarget.value })} />
        <button disabled=${busy || !(rulings[call.id] || "").trim()} onClick=${() => send({ type: "GMRule", actor: "gm", call: call.id, ruling: rulings[call.id].trim(), reason: why }, "ruling")}>Rule</button>
      </div>`)}</div>`}
    <div class="group row">
      ${available.has("GMSkipTurn") && html`<button data-gm="skip" disabled=${busy || !gm.can_skip} onClick=${() => send({ type: "GMSkipTurn", actor: "gm", reason: why }, "skip")}>
        Skip ${state.window ? "the window" : state.active ? `${combatantName(state, state.active)}'s turn` : "turn"}</button>`}
    </div>
    ${available.has("GMAdjust") && target && html`<div class="group"><h3>Adjust</h3>
      <div class="adjust">
        <select value=${target} onChange=${(e) => setWho(e.currentTarget.value)}>${Object.keys(adjustable).map((id) => html`<option value=${id}>${combatantName(state, id)}</option>`)}</select>
        <select value=${chosenField} onChange=${(e) => setField(e.currentTarget.value)}>${fields.map((f) => html`<option value=${f}>${f}</option>`)}</select>
        <input placeholder=${current === undefined ? "value" : JSON.stringify(current)} value=${value} onInput=${(e) => setValue(e.currentTarget.value)} />
        <button disabled=${busy || !value.trim()} onClick=${() => send({ type: "GMAdjust", actor: "gm", combatant: target, changes: { [chosenField]: parseValue(value.trim()) }, reason: why }, "adjust")}>Set</button>
      </div></div>`}
    ${available.has("RewindEncounter") && html`<div class="group"><h3>Rewind</h3>
      <div class="rewind">to version <input type="number" min="1" max=${view.version - 1} value=${rewindTo ?? ""} placeholder="⟲ in the log"
          onInput=${(e) => setRewindTo(e.currentTarget.value === "" ? null : Number(e.currentTarget.value))} />
        <button data-gm="rewind" disabled=${busy || !rewindTo || rewindTo >= view.version} onClick=${() => { send({ type: "RewindEncounter", actor: "gm", to_version: rewindTo, reason: why }, `rewind to ${rewindTo}`); setRewindTo(null); }}>Rewind</button>
      </div>
      <div class="hint">or click ⟲ beside an event in the narration</div></div>`}
    ${available.has("EndEncounter") && html`<div class="group"><h3>End the encounter</h3>
      <div class="row"><select value=${winner} onChange=${(e) => setWinner(e.currentTarget.value)}>
        <option value="">no winner</option>${gm.sides.map((s) => html`<option value=${s}>${s} wins</option>`)}</select>
        <button data-gm="end" class="danger" disabled=${busy} onClick=${() => send({ type: "EndEncounter", actor: "gm", winner: winner || null, reason: reason.trim() || "ended by the GM" }, "end")}>End</button></div></div>`}
  </section>`;
}
