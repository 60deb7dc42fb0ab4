// Small helpers shared by the table's modules: the htm binding, names and
// colours of combatants, number formatting.
import { h } from "./vendor/preact.module.js";
import htm from "./vendor/htm.module.js";

export const html = htm.bind(h);

// Sides are coloured by their place in the sorted list of sides, as the
// server's narration does (side0, side1, ...), so a name in the log and its
// token on the map share one colour.
export function sidesOf(state) {
  if (!state) return [];
  return [...new Set(Object.values(state.combatants).map((c) => c.side))].sort();
}

export function sideClass(state, side) {
  const index = sidesOf(state).indexOf(side);
  return `side${Math.max(0, index) % 6}`;
}

// A combatant's name as the page shows it: where two share a name ("Cultist",
// "Cultist"), each gets its number in the order of their ids ("Cultist 1",
// "Cultist 2"), on its token, in the tracker and in every prompt alike.
const shownNames = new WeakMap();

function namesOf(state) {
  let names = shownNames.get(state.combatants);
  if (!names) {
    names = new Map();
    const byName = new Map();
    for (const id of Object.keys(state.combatants).sort()) {
      const name = state.combatants[id].name ?? id;
      byName.set(name, [...(byName.get(name) || []), id]);
    }
    for (const [name, ids] of byName) ids.forEach((id, i) => names.set(id, ids.length === 1 ? name : `${name} ${i + 1}`));
    shownNames.set(state.combatants, names);
  }
  return names;
}

export function combatantName(state, id) {
  if (!state?.combatants?.[id]) return id;
  return namesOf(state).get(id) ?? id;
}

// The map's short label of a combatant, unique on the map: its initials, with
// a number where two would read alike.
export function shortLabel(state, id) {
  const label = (cid) => initials(combatantName(state, cid));
  const mine = label(id);
  const alike = Object.keys(state?.combatants || {}).filter((cid) => label(cid) === mine);
  return alike.length > 1 ? `${mine.slice(0, 2)}${alike.indexOf(id) + 1}` : mine;
}

// A roll's details in words, when the server has not said them (`said`):
// a flag that is off or a missing value says nothing; names, not field ids.
export function detailWords(details) {
  const value = (v) => v === null || v === false || v === "" || (Array.isArray(v) && v.length === 0) ? null
    : v === true ? "" : Array.isArray(v) ? v.map(value).filter(Boolean).join(", ")
    : typeof v === "object" ? (v.source ? `${v.source}${v.rule ? ` (${v.rule})` : ""}` : Object.entries(v).map(([k, x]) => `${k.replace(/_/g, " ")} ${value(x) ?? ""}`.trim()).join(", "))
    : String(v).replace(/_/g, " ");
  return Object.entries(details || {}).map(([k, v]) => [k.replace(/_/g, " "), value(v)])
    .filter(([, v]) => v !== null).map(([k, v]) => (v ? `${k} ${v}` : k)).join("; ");
}

export function initials(name) {
  const words = name.replace(/[^\p{L}\p{N} ]/gu, "").split(/\s+/).filter(Boolean);
  if (words.length === 0) return "?";
  if (words.length === 1) return words[0].slice(0, 2);
  return (words[words.length - 2][0] + words[words.length - 1][0]).toUpperCase();
}

export function pct(chance) {
  if (chance === null || chance === undefined) return "";
  return `${Math.round(chance * 100)}%`;
}

export function sq(square) {
  return `${square[0]},${square[1]}`;
}

export function signed(value) {
  return value >= 0 ? `+${value}` : `${value}`;
}

export function humanize(text) {
  return (text || "").replace(/^BB|^R6|^D100[DZ]/, "").replace(/_/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().trim();
}

// Danger of a square for a mover: the highest chance any reactor has to hit there.
export function danger(move) {
  if (!move.threats || move.threats.length === 0) return 0;
  return Math.max(...move.threats.map((t) => (t.hit_chance ?? 0.5)));
}
