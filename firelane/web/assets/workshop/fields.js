// Inputs for the system's described fields (GET /api/workshop/systems/{s}/form):
// a number with its range, text, yes or no, a choice, and weapons or armour
// picked by name from the system's catalogue. Values live at a dotted path of
// an object (a sheet, the settings).
import { html } from "../util.js";

export function getPath(object, path) {
  let at = object;
  for (const part of path.split(".")) {
    if (at === null || at === undefined || typeof at !== "object") return undefined;
    at = at[part];
  }
  return at;
}

// A copy of `object` with `value` at `path` (undefined removes it); the other keys keep their order.
export function setPath(object, path, value) {
  const [head, ...rest] = path.split(".");
  const base = object && typeof object === "object" ? object : {};
  if (!rest.length) {
    const next = { ...base };
    if (value === undefined) delete next[head];
    else next[head] = value;
    return next;
  }
  return { ...base, [head]: setPath(base[head], rest.join("."), value) };
}

const plain = (n) => (Number.isInteger(n) ? String(n) : String(Number(Number(n).toPrecision(6))));

export function rangeHint(field) {
  if (field.kind !== "number") return "";
  const has = (v) => v !== null && v !== undefined;
  const unit = field.unit ? ` ${field.unit}` : "";
  if (has(field.low) && has(field.high)) return `${plain(field.low)}–${plain(field.high)}${unit}`;
  if (has(field.low)) return `at least ${plain(field.low)}${unit}`;
  if (has(field.high)) return `at most ${plain(field.high)}${unit}`;
  return unit.trim();
}

// What is wrong with a value before the server's checks say it (a quick first line; the server has the last word).
const DIE_CODE = /^\d+D(\+[12])?$/i; // RonD6: dice and pips (3D, 4D+2)

export function localProblem(field, value) {
  if (value === undefined || value === null || value === "") return null;
  if (field.kind === "die_code" && !DIE_CODE.test(String(value))) return `${field.label} must be a die code such as 3D or 4D+2`;
  if (field.kind === "die_codes") {
    const wrong = Object.entries(value || {}).find(([, code]) => !DIE_CODE.test(String(code)));
    if (wrong) return `${field.label}: ${wrong[0]} must be a die code such as 3D or 4D+2`;
  }
  if (field.kind === "number") {
    if (typeof value !== "number" || !Number.isFinite(value)) return `${field.label} must be a number`;
    if (field.whole && !Number.isInteger(value)) return `${field.label} must be a whole number`;
    if ((field.low !== null && field.low !== undefined && value < field.low) || (field.high !== null && field.high !== undefined && value > field.high)) {
      return `${field.label} must be ${rangeHint(field)}, not ${plain(value)}`;
    }
  }
  return null;
}

function catalogueLabel(catalogue, id) {
  return catalogue.find((entry) => entry.id === id)?.label || String(id);
}

export function FieldInput({ field, value, set, catalogues, id }) {
  const catalogue = catalogues?.[field.catalogue] || [];
  switch (field.kind) {
    case "number":
      return html`<input id=${id} type="number" inputmode="decimal" min=${field.low ?? undefined} max=${field.high ?? undefined}
        step=${field.whole ? 1 : "any"} value=${value ?? ""} placeholder=${field.default !== undefined && field.default !== null ? String(field.default) : ""}
        onInput=${(e) => set(e.currentTarget.value === "" ? undefined : Number(e.currentTarget.value))} />`;
    case "yes_no":
      return html`<input id=${id} type="checkbox" checked=${value === undefined ? !!field.default : !!value} onChange=${(e) => set(e.currentTarget.checked)} />`;
    case "choice":
      return html`<select id=${id} value=${value ?? ""} onChange=${(e) => set(e.currentTarget.value === "" ? undefined : field.choices.find((c) => String(c.value) === e.currentTarget.value)?.value)}>
        <option value="">${field.default !== undefined && field.default !== null ? `default (${field.choices.find((c) => c.value === field.default)?.label ?? field.default})` : "—"}</option>
        ${(field.choices || []).map((c) => html`<option value=${String(c.value)}>${c.label}</option>`)}</select>`;
    case "catalogue":
      return html`<select id=${id} value=${value ?? ""} onChange=${(e) => set(e.currentTarget.value === "" ? undefined : e.currentTarget.value)}>
        <option value="">none</option>
        ${value && !catalogue.some((c) => c.id === value) ? html`<option value=${value}>${value} (not in the catalogue)</option>` : ""}
        ${catalogue.map((c) => html`<option value=${c.id} title=${c.summary || ""}>${c.label}</option>`)}</select>`;
    case "catalogue_list": {
      const chosen = Array.isArray(value) ? value : [];
      const addable = catalogue.filter((c) => !chosen.includes(c.id));
      return html`<div class="ws-picks" id=${id}>
        ${chosen.map((item, i) => html`<span class="ws-chip" key=${item + i}>${catalogueLabel(catalogue, item)}
          <button type="button" class="ws-chip-x" aria-label=${`remove ${catalogueLabel(catalogue, item)}`} onClick=${() => set(chosen.filter((_, j) => j !== i))}>×</button></span>`)}
        ${addable.length > 0 && html`<select class="ws-add" value="" aria-label=${`add to ${field.label}`}
          onChange=${(e) => { if (e.currentTarget.value) set([...chosen, e.currentTarget.value]); e.currentTarget.value = ""; }}>
          <option value="">add…</option>${addable.map((c) => html`<option value=${c.id} title=${c.summary || ""}>${c.label}</option>`)}</select>`}
      </div>`;
    }
    case "die_code":
      return html`<input id=${id} type="text" class="ws-die" placeholder=${field.default ?? "3D+1"} value=${value ?? ""}
        onInput=${(e) => set(e.currentTarget.value.trim() === "" ? undefined : e.currentTarget.value.trim())} />`;
    case "die_codes": {
      // A skill (or any name) to its die code: one row each, and a row to add one.
      const codes = value && typeof value === "object" ? value : {};
      return html`<div class="ws-codes" id=${id}>
        ${Object.entries(codes).map(([name, code]) => html`<div class="ws-row" key=${name}><span class="ws-code-name">${name}</span>
          <input class="ws-die" aria-label=${`${name} die code`} value=${code} onInput=${(e) => set({ ...codes, [name]: e.currentTarget.value.trim() })} />
          <button type="button" class="ws-chip-x" aria-label=${`remove ${name}`} onClick=${() => { const next = { ...codes }; delete next[name]; set(next); }}>×</button></div>`)}
        <div class="ws-row"><input name="name" placeholder="skill" aria-label="new skill" /><input name="code" class="ws-die" placeholder="4D" aria-label="its die code" />
          <button type="button" onClick=${(e) => { const row = e.currentTarget.parentElement; const name = row.querySelector("[name=name]").value.trim();
            const code = row.querySelector("[name=code]").value.trim(); if (name && code) set({ ...codes, [name]: code }); }}>add</button></div>
      </div>`;
    }
    default:
      return html`<input id=${id} type="text" value=${typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value)}
        onInput=${(e) => set(e.currentTarget.value === "" ? undefined : e.currentTarget.value)} />`;
  }
}

// One labelled field with its problems (the server's, and a local first line), one line each.
export function Field({ field, value, set, catalogues, problems = [], idPrefix = "f" }) {
  const id = `${idPrefix}-${field.path.replace(/[^A-Za-z0-9_-]/g, "-")}`;
  const local = localProblem(field, value);
  const lines = [...new Set([...(local ? [local] : []), ...problems])];
  return html`<div class=${"ws-field" + (lines.length ? " bad" : "")} data-field=${field.path}>
    <label for=${id}>${field.label}${rangeHint(field) && html`<span class="range">${rangeHint(field)}</span>`}</label>
    <${FieldInput} field=${field} value=${value} set=${set} catalogues=${catalogues} id=${id} />
    ${lines.map((line) => html`<div class="problem">${line}</div>`)}
    ${field.note && html`<div class="note">${field.note}</div>`}
  </div>`;
}
