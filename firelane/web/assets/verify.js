// The page's "Fair dice" panel (docs/fairness.md): a player seat adds its
// client seed (a random one, or its own words), everyone sees the seeds added,
// and "Verify this fight" checks every die and every signature in this
// browser with fairness.js, naming the entries that fail, roll by roll.

import { useEffect, useState } from "./vendor/preact-hooks.module.js";
import { fetchAndVerify } from "./fairness.js";
import { html } from "./util.js";

function randomClientSeed() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function ClientSeedForm({ seat, send, busy, lobby = false }) {
  const [text, setText] = useState("");
  const valid = text.length >= 1 && text.length <= 64;
  const add = () => valid && send({ type: "AddClientSeed", command_id: `client-seed-${Date.now()}`, actor: seat.id, client_seed: text },
    "your client seed");
  return html`<div class="client-seed-form">
    <p>${lobby ? "Add your own seed before the GM starts: the opening initiative and every die after mix it in, "
      : "Add your own seed: every die from then on mixes it in, "}so neither the server nor anyone else could have chosen them.</p>
    <input class="client-seed" maxlength="64" placeholder="type anything, or take a random one" value=${text}
      onInput=${(e) => setText(e.target.value)} aria-label="your client seed" />
    <button class="random-seed" onClick=${() => setText(randomClientSeed())}>Random</button>
    <button class="add-seed" disabled=${busy || !valid} onClick=${add}>Add my seed</button>
  </div>`;
}

// "AttackResolved" -> "Attack resolved": what happened, in words.
function words(type) {
  const spaced = type.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

function dieLine(die, ok) {
  return html`<span class=${ok ? "die ok" : "die bad"}>d${die.sides}: ${die.face}</span>`;
}

function Report({ report }) {
  if (report.error) return html`<p class="verify-result bad">Could not verify: ${report.error}</p>`;
  const failing = [...report.entries].filter(([, e]) => e.problems.length);
  const withDice = [...report.entries].filter(([, e]) => e.dice.length);
  const summary = report.ok
    ? `Verified: the seed matches its commitment; all ${report.dice} dice in ${report.rolls} rolls recomputed and match`
    : report.seedRevealed ? `Verification failed: ${report.problems.length} problem${report.problems.length === 1 ? "" : "s"}`
      : "The dice can be checked once the fight has ended and its seed is revealed";
  const signed = report.publicKey
    ? `${report.signatures} signature${report.signatures === 1 ? "" : "s"} valid` +
      (report.signedThrough ? ` (entries 1 to ${report.signedThrough})` : "") +
      (report.fingerprint ? `, key ${report.fingerprint}` : "") + (report.unsigned ? `; ${report.unsigned}` : "")
    : report.unsigned;
  return html`<div class=${"verify-result " + (report.ok ? "ok" : "bad")}>
    <p class="verify-summary">${summary}.</p>
    <p class="verify-signatures">Signatures: ${signed}.</p>
    ${failing.length > 0 && html`<ul class="verify-failing">
      ${failing.map(([version, entry]) => html`<li data-version=${version}>entry ${version} (${words(entry.type)}): ${entry.problems.join("; ")}</li>`)}
    </ul>`}
    ${report.problems.filter((p) => !p.versions.length).map((p) => html`<p class="verify-note">${p.reason}</p>`)}
    ${withDice.length > 0 && html`<details class="verify-rolls"><summary>Roll by roll (${withDice.length} ${withDice.length === 1 ? "entry" : "entries"} with dice)</summary>
      <ul>${withDice.map(([version, entry]) => html`<li data-version=${version}>entry ${version}, ${words(entry.type).toLowerCase()}:
        ${entry.dice.map((die) => dieLine(die, !entry.problems.length))} ${entry.problems.length ? "✗" : "✓"}</li>`)}</ul>
    </details>`}
  </div>`;
}

function seatName(state, id) {
  const seat = (state.seats || []).find((s) => s.id === id);
  return (seat && seat.name) || id;
}

export function FairnessPanel({ where, view, seat, send, busy }) {
  const [report, setReport] = useState(null);
  const [checking, setChecking] = useState(false);
  const state = view?.state;
  if (!state) return null;
  const seeds = state.client_seeds || [];
  const mayAdd = seat?.role === "player" && !state.ended && !seeds.some(([who]) => who === seat.id);
  const verifyNow = async () => {
    setChecking(true);
    try {
      const result = await fetchAndVerify({ campaign: where.campaign, encounter: where.encounter, token: where.token });
      setReport(result);
    } catch (error) {
      setReport({ error: error.message });
    } finally {
      setChecking(false);
    }
  };
  return html`<section class="panel fairness">
    <h2>Fair dice</h2>
    ${seeds.length > 0 ? html`<ul class="client-seeds">${seeds.map(([who, text]) => html`<li data-seat=${who}>${seatName(state, who)}'s seed: <code>${text}</code></li>`)}</ul>`
      : html`<p class="no-client-seeds">No player has added a client seed yet.</p>`}
    ${mayAdd && html`<${ClientSeedForm} seat=${seat} send=${send} busy=${busy} />`}
    <button class="verify-fight" disabled=${checking} onClick=${verifyNow}>${checking ? "Verifying…" : "Verify this fight"}</button>
    ${report && html`<${Report} report=${report} />`}
  </section>`;
}

// While the fight waits in its lobby: the seed's commitment, published before
// any seat contributes, and, for a player seat that has added none, the form
// (a random seed or its own words). The GM's Start records every lobby seed
// before the opening initiative, whose dice mix them in (docs/fairness.md).
export function LobbySeedPanel({ conn, seat }) {
  const [offered, setOffered] = useState(null);  // null: not asked yet; false: none to add
  const [added, setAdded] = useState("");
  const [problem, setProblem] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let gone = false;
    conn.get("options").then((answer) => { if (!gone) setOffered(!!answer.client_seed); })
      .catch(() => { if (!gone) setOffered(false); });
    return () => { gone = true; };
  }, [seat?.id]);
  const send = async (command) => {
    setBusy(true);
    setProblem("");
    try {
      await conn.send(command);
      setAdded(command.client_seed);
    } catch (error) {
      setProblem(error.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<section class="panel fairness lobby-seed">
    <h2>Fair dice</h2>
    ${conn.seedCommitment && html`<p class="seed-commitment">The server has committed to its dice seed:
      <code>${conn.seedCommitment}</code>. The fight's first entry must show the same.</p>`}
    ${added ? html`<p class="lobby-seed-added">Your seed is in: <code>${added}</code>. The opening dice will mix it in.</p>`
      : offered ? html`<${ClientSeedForm} seat=${seat} send=${send} busy=${busy} lobby=${true} />`
      : offered === false && seat?.role === "player" ? html`<p class="lobby-seed-added">This seat has added its seed.</p>` : null}
    ${problem && html`<p class="lobby-seed-problem">Not added: ${problem}</p>`}
  </section>`;
}
