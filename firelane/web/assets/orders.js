// Standing orders: what a player's combatants answer while the player is away
// (GET/PUT …/orders, web/orders.py). The engine applies them at a window's
// deadline, or when a turn times out, if no live answer came; a live answer wins.
import { useEffect, useState } from "./vendor/preact-hooks.module.js";
import { html } from "./util.js";

export function OrdersPanel({ conn }) {
  const [shown, setShown] = useState(null);
  const [error, setError] = useState("");
  const [draft, setDraft] = useState({ combatant: "", on: "", do: "", times: 0 });

  const load = async () => {
    const response = await fetch(`${conn.base}/orders`, { headers: conn.headers(), cache: "no-store" });
    const body = await response.json();
    if (!response.ok) { setError(body.error || `error ${response.status}`); return; }
    setError("");
    setShown(body);
  };
  useEffect(() => { load(); }, []);
  if (!shown) return error ? html`<section class="panel orders"><h2>Standing orders</h2><p class="error">${error}</p></section>` : null;

  const kinds = [...shown.catalogue.windows, shown.catalogue.turn];
  const kind = kinds.find((k) => k.on === draft.on) || kinds[1] || kinds[0];
  const combatant = draft.combatant || shown.combatants[0]?.id || "";
  const doing = kind.do.find((d) => d.do === draft.do) ? draft.do : kind.do[kind.do.length > 1 ? 1 : 0].do;
  const plain = (o) => ({ id: o.id, combatant: o.combatant, on: o.on, do: o.do, times: o.times });

  const save = async (orders) => {
    const response = await fetch(`${conn.base}/orders`, {
      method: "PUT", headers: { ...conn.headers(), "Content-Type": "application/json" },
      body: JSON.stringify({ orders }),
    });
    const body = await response.json();
    if (!response.ok) { setError(body.error || `error ${response.status}`); return; }
    setError("");
    setShown(body);
  };
  const add = () => save([...shown.orders.map(plain), { combatant, on: kind.on, do: doing, times: Number(draft.times) || 0 }]);

  return html`<section class="panel orders" data-orders=${shown.orders.length}>
    <h2>Standing orders</h2>
    <p class="hint">Answered for you when a deadline runs out and you have not answered; your own answer always wins.</p>
    <ul class="order-list">${shown.orders.map((o) => html`<li key=${o.id} data-order=${o.id}>
      <span class="order-text">${o.text}</span>${o.used ? html` <span class="used">(answered ${o.used}×)</span>` : ""}
      <button class="remove-order" title="remove this order" onClick=${() => save(shown.orders.filter((x) => x.id !== o.id).map(plain))}>✕</button>
    </li>`)}</ul>
    <div class="order-form">
      ${shown.combatants.length > 1 && html`<label>who <select class="order-combatant" value=${combatant}
        onChange=${(e) => setDraft({ ...draft, combatant: e.target.value })}>
        ${shown.combatants.map((c) => html`<option value=${c.id}>${c.name}</option>`)}</select></label>`}
      <label>when <select class="order-on" value=${kind.on} onChange=${(e) => setDraft({ ...draft, on: e.target.value, do: "" })}>
        ${kinds.map((k) => html`<option value=${k.on}>${k.label}</option>`)}</select></label>
      <label>do <select class="order-do" value=${doing} onChange=${(e) => setDraft({ ...draft, do: e.target.value })}>
        ${kind.do.map((d) => html`<option value=${d.do}>${d.label}</option>`)}</select></label>
      <label>times <input class="order-times" type="number" min="0" max="1000" value=${draft.times}
        title="0: every time" onInput=${(e) => setDraft({ ...draft, times: e.target.value })} /></label>
      <button class="add-order" onClick=${add}>Add order</button>
    </div>
    ${error && html`<p class="error" role="alert">${error}</p>`}
  </section>`;
}
