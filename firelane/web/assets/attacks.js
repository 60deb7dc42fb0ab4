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
  if (attack.mode_label !== undefined) return attack.mode_label;  // the mode in the system's words
  return attack.mode && attack.mode !== "normal" ? attack.mode.replace(/_/g, " ") : "";
}

function Terms({ attack }) {
  return html`<div class="why-box">
    ${attack.modifiers.map((m) => html`<div>${signed(m.value)} ${m.source} <span class="rule">${m.rule}</span></div>`)}
    ${attack.target_number != null && html`<div>needs ${attack.target_number}</div>`}
    ${attack.notes.map((n) => html`<div class="note">${n}</div>`)}
  </div>`;
}

// Whether `target` is on `attacker`'s side: the rules let it be attacked (friendly fire), the page asks first.
export function isAlly(state, attacker, target) {
  const a = state.combatants[attacker], t = state.combatants[target];
  return !!(a && t && a.side === t.side);
}

// One target and weapon: the plain attack, the others in a menu. An attack on an
// ally is marked as friendly fire and sent only once confirmed.
function AttackGroup({ state, group, send, busy, showTarget, mainClass, attacker }) {
  const [open, setOpen] = useState(false);
  const [picked, setPicked] = useState(0);
  const [confirming, setConfirming] = useState(null); // the attack waiting for "yes, fire on my ally"
  const { main, variants } = group;
  const who = combatantName(state, group.target);
  const ally = isAlly(state, attacker ?? main.command?.actor, group.target);
  const variant = variants[Math.min(picked, variants.length - 1)];
  const attack = (chosen, what) => (ally ? setConfirming({ chosen, what }) : send(chosen.command, what));
  return html`<div class=${"attack attack-group" + (ally ? " ally" : "")} data-attack=${group.target} data-weapon=${group.weapon} data-ally=${ally ? "yes" : undefined}>
    ${ally && html`<div class="ally-note" title="the rules allow friendly fire">⚠ ${who} is on your side: friendly fire</div>`}
    <button class=${"do " + (mainClass || "")} disabled=${busy} onClick=${() => attack(main, `attack ${who}`)}>
      ${showTarget ? `${who} · ` : ""}${main.label || main.weapon}
      <span class="odds" title=${`${main.chance_of || "the attack hits"}: ${pct(main.hit_chance)}`}>${pct(main.hit_chance)}</span>
    </button>
    <button class="why" title="modifiers" onClick=${() => setOpen(!open)}>${open ? "▾" : "±"}</button>
    ${variants.length > 0 && html`<div class="variant-row">
      <select class="variants" data-variants=${variants.length} title="other ways to attack with it"
          onChange=${(e) => setPicked(Number(e.currentTarget.value))}>
        ${variants.map((v, i) => html`<option value=${i} selected=${i === picked}>${modeText(v) || v.weapon} · ${pct(v.hit_chance)}</option>`)}
      </select>
      <button class="do-variant" disabled=${busy} onClick=${() => attack(variant, `attack ${who} (${modeText(variant)})`)}>attack</button>
    </div>`}
    ${confirming && html`<div class="confirm ally-confirm" data-confirm="friendly-fire">
      <span>Attack ${who}, on your own side?</span>
      <button class="danger" data-confirm-yes="friendly-fire" disabled=${busy}
        onClick=${() => { setConfirming(null); send(confirming.chosen.command, confirming.what); }}>Yes, attack ${who}</button>
      <button data-confirm-no="friendly-fire" onClick=${() => setConfirming(null)}>No</button>
    </div>`}
    ${open && html`<${Terms} attack=${main} />`}
  </div>`;
}

export function AttackGroups({ state, attacks, send, busy, showTarget = true, mainClass = "", attacker = null }) {
  // Enemies first: an ally is offered only where the rules allow friendly fire, and after them.
  const groups = groupAttacks(attacks);
  const of = (g) => Number(isAlly(state, attacker ?? g.main.command?.actor, g.target));
  groups.sort((a, b) => of(a) - of(b));
  return groups.map((group) => html`<${AttackGroup} key=${group.target + "|" + group.weapon} state=${state} group=${group}
    send=${send} busy=${busy} showTarget=${showTarget} mainClass=${mainClass} attacker=${attacker} />`);
}
