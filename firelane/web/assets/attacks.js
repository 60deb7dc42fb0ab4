// Attacks grouped for a person: one row per target and weapon, its plain
// attack as a button, and every other way to make it (a called shot, an
// All-Out attack, rapid fire, an off-hand strike, a coordinated attack...) in
// a menu beside it. The options list each way as an attack of its own (a
// RonD6 target can have ten): the first listed for a weapon is the plain one.
import { useState } from "./vendor/preact-hooks.module.js";
import { html, combatantName, pct, signed } from "./util.js";

export function groupAttacks(attacks) {
  const groups = [];
  for (const attack of attacks) {
    let group = groups.find((g) => g.target === attack.target && g.weapon === attack.weapon);
    if (!group) groups.push(group = { target: attack.target, weapon: attack.weapon, main: attack, variants: [] });
    else group.variants.push(attack);
  }
  return groups;
}

function modeText(attack) {
  return attack.mode && attack.mode !== "normal" ? attack.mode : "";
}

function Terms({ attack }) {
  return html`<div class="why-box">
    ${attack.modifiers.map((m) => html`<div>${signed(m.value)} ${m.source} <span class="rule">${m.rule}</span></div>`)}
    ${attack.target_number != null && html`<div>needs ${attack.target_number}</div>`}
    ${attack.notes.map((n) => html`<div class="note">${n}</div>`)}
  </div>`;
}

// One target and weapon: the plain attack, the others in a menu.
function AttackGroup({ state, group, send, busy, showTarget, mainClass }) {
  const [open, setOpen] = useState(false);
  const [picked, setPicked] = useState(0);
  const { main, variants } = group;
  const who = combatantName(state, group.target);
  const variant = variants[Math.min(picked, variants.length - 1)];
  return html`<div class="attack attack-group" data-attack=${group.target} data-weapon=${group.weapon}>
    <button class=${"do " + (mainClass || "")} disabled=${busy} onClick=${() => send(main.command, `attack ${who}`)}>
      ${showTarget ? `${who} · ` : ""}${main.weapon}${modeText(main) ? ` (${modeText(main)})` : ""}
      <span class="odds">${pct(main.hit_chance)}</span>
    </button>
    <button class="why" title="modifiers" onClick=${() => setOpen(!open)}>${open ? "▾" : "±"}</button>
    ${variants.length > 0 && html`<div class="variant-row">
      <select class="variants" data-variants=${variants.length} title="other ways to attack with it"
          onChange=${(e) => setPicked(Number(e.currentTarget.value))}>
        ${variants.map((v, i) => html`<option value=${i} selected=${i === picked}>${modeText(v) || v.weapon} · ${pct(v.hit_chance)}</option>`)}
      </select>
      <button class="do-variant" disabled=${busy} onClick=${() => send(variant.command, `attack ${who} (${modeText(variant)})`)}>attack</button>
    </div>`}
    ${open && html`<${Terms} attack=${main} />`}
  </div>`;
}

export function AttackGroups({ state, attacks, send, busy, showTarget = true, mainClass = "" }) {
  return groupAttacks(attacks).map((group) => html`<${AttackGroup} key=${group.target + "|" + group.weapon} state=${state} group=${group}
    send=${send} busy=${busy} showTarget=${showTarget} mainClass=${mainClass} />`);
}
