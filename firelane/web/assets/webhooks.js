// Notifications by webhook (docs/async-play.md, web/hooks.py): a seat's own
// hooks on the table page, the campaign's on the workshop's campaign home.
// One panel for both: it is given where the hooks live (`base`), how to call
// the API (`request`: a seat's token, or the GM's cookie and CSRF header) and
// which notifications make sense for whoever registers them.
import { useEffect, useState } from "./vendor/preact-hooks.module.js";
import { html } from "./util.js";

export const KIND_LABEL = {
  your_turn: "your turn",
  window: "a reaction awaits you",
  gm_ruling: "a GM ruling is needed",
  ended: "the fight ended",
};
const FORMAT_LABEL = { json: "JSON (signed)", discord: "Discord", slack: "Slack" };
const OUTCOME_LABEL = { delivered: "delivered", failed: "failed", "given up": "given up", refused: "refused" };

// What each owner of hooks is told (actors/hooks.py: notices_for).
export const KINDS_FOR = {
  player: ["your_turn", "window", "ended"],
  gm: ["gm_ruling", "ended"],
  campaign: ["gm_ruling", "ended"],
};

function localTime(ms) {
  return new Date(ms).toLocaleString([], { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

// A table page's calls, with the seat's token.
export function seatRequest(conn) {
  return async (method, path, body) => {
    const headers = { ...conn.headers() };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(`${conn.base}/hooks${path}`, {
      method, headers, body: body !== undefined ? JSON.stringify(body) : undefined, cache: "no-store",
    });
    const answer = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
    if (!response.ok) throw new Error(answer.error || `the server answered ${response.status}`);
    return answer;
  };
}

function Deliveries({ request, hook }) {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState("");
  useEffect(() => {
    request("GET", `/${encodeURIComponent(hook.id)}/deliveries`).then((a) => setRows(a.deliveries), (e) => setError(e.message));
  }, [hook.id]);
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!rows) return html`<p class="hint">…</p>`;
  if (rows.length === 0) return html`<p class="hint delivery-none">Nothing sent yet.</p>`;
  return html`<ol class="delivery-log">${rows.map((r, i) => html`<li key=${i} data-outcome=${r.outcome}>
    <span class="when" title=${new Date(r.at_ms).toString()}>${localTime(r.at_ms)}</span>
    · ${KIND_LABEL[r.kind] || r.kind} · attempt ${r.attempt}: <b>${OUTCOME_LABEL[r.outcome] || r.outcome}</b>${r.status ? ` (HTTP ${r.status})` : ""}${r.detail ? ` — ${r.detail}` : ""}
  </li>`)}</ol>`;
}

export function WebhooksPanel({ request, kinds, title = "Notifications", hint }) {
  const [hooks, setHooks] = useState(null);
  const [error, setError] = useState("");
  const [url, setUrl] = useState("");
  const [format, setFormat] = useState("json");
  const [chosen, setChosen] = useState(kinds);
  const [secret, setSecret] = useState(null);
  const [showing, setShowing] = useState(null);  // the hook whose delivery log is open
  const [busy, setBusy] = useState(false);

  const load = () => request("GET", "").then((a) => { setHooks(a.hooks); setError(""); }, (e) => setError(e.message));
  useEffect(() => { load(); }, []);

  const add = async () => {
    setBusy(true);
    try {
      const made = await request("POST", "", { url: url.trim(), format, kinds: kinds.filter((k) => chosen.includes(k)) });
      setSecret({ id: made.id, secret: made.secret });
      setUrl("");
      setError("");
      await load();
    } catch (e) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };
  const remove = async (hook) => {
    try {
      await request("DELETE", `/${encodeURIComponent(hook.id)}`);
      if (showing === hook.id) setShowing(null);
      if (secret?.id === hook.id) setSecret(null);
      await load();
    } catch (e) {
      setError(e.message);
    }
  };
  const toggle = (kind) => setChosen(chosen.includes(kind) ? chosen.filter((k) => k !== kind) : [...chosen, kind]);

  return html`<section class="panel webhooks" data-hooks=${hooks ? hooks.length : ""}>
    <details>
      <summary><h2>${title}</h2>${hooks && hooks.length > 0 ? html` <span class="hook-count">(${hooks.length})</span>` : ""}</summary>
      <p class="hint">${hint || "Be told by webhook while the page is closed: paste a Discord or Slack incoming-webhook URL, or your own receiver's (JSON, signed)."}</p>
      <ul class="hook-list">${(hooks || []).map((h) => html`<li key=${h.id} data-hook=${h.id}>
        <div class="hook-line"><span class="hook-url">${h.url}</span> <span class="hook-format">${FORMAT_LABEL[h.format] || h.format}</span>
          <button class="hook-deliveries" aria-expanded=${showing === h.id} onClick=${() => setShowing(showing === h.id ? null : h.id)}>${showing === h.id ? "Hide deliveries" : "Deliveries"}</button>
          <button class="remove-hook" title="remove this webhook" onClick=${() => remove(h)}>✕</button></div>
        <div class="hook-kinds">${(h.kinds || []).map((k) => KIND_LABEL[k] || k).join(", ")}</div>
        ${showing === h.id && html`<${Deliveries} request=${request} hook=${h} />`}
      </li>`)}</ul>
      ${secret && html`<p class="hook-secret" role="status">Its secret, shown once (to check the Firelane-Signature header): <code>${secret.secret}</code></p>`}
      <div class="hook-form">
        <label class="hook-url-field">URL <input class="hook-url-input" type="url" placeholder="https://discord.com/api/webhooks/…" value=${url}
          onInput=${(e) => setUrl(e.currentTarget.value)} /></label>
        <label>as <select class="hook-format-input" value=${format} onChange=${(e) => setFormat(e.currentTarget.value)}>
          ${Object.entries(FORMAT_LABEL).map(([key, label]) => html`<option value=${key}>${label}</option>`)}</select></label>
        <fieldset class="hook-kind-choice"><legend>tell me when</legend>${kinds.map((k) => html`<label key=${k}><input type="checkbox" data-kind=${k}
          checked=${chosen.includes(k)} onChange=${() => toggle(k)} />${KIND_LABEL[k]}</label>`)}</fieldset>
        <button class="add-hook" disabled=${busy || !url.trim() || chosen.length === 0} onClick=${add}>Add webhook</button>
      </div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
    </details>
  </section>`;
}
