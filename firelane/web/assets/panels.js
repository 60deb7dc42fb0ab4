// The panels around the map: initiative, narration, the acting seat's
// actions, reaction and decision prompts with their countdown, the replay bar.
import { useEffect, useLayoutEffect, useRef, useState } from "./vendor/preact-hooks.module.js";
import { html, sideClass, combatantName, pct, signed, humanize, detailWords } from "./util.js";
import { spanText, stepBack, stepOn, undoneBy, undoneNote } from "./branches.js";
import { AttackGroups } from "./attacks.js";

// ------------------------------------------------------------ initiative

export function Initiative({ view }) {
  const state = view.state;
  // A new round's order leaves the fallen out: they stay listed, after it, struck through.
  const ordered = state.turn_order.length ? state.turn_order : Object.keys(state.combatants);
  const order = [...ordered, ...Object.keys(state.combatants).filter((id) => !ordered.includes(id) && state.combatants[id].out_of_fight)];
  return html`<section class="panel initiative">
    <h2>Round ${state.round || "—"}${state.ended ? html` <span class="ended">· ended</span>` : ""}</h2>
    <ol>
      ${order.map((id) => {
        const c = state.combatants[id];
        if (!c) return null;
        const health = view.extras?.[id]?.health;
        const classes = ["entry", sideClass(state, c.side)];
        if (state.active === id) classes.push("active");
        if (state.acted_this_round.includes(id)) classes.push("acted");
        if (c.out_of_fight) classes.push("down");
        return html`<li key=${id} class=${classes.join(" ")} data-initiative=${id}>
          <span class="marker">${state.active === id ? "▶" : ""}</span>
          <span class="chip"></span>
          <span class="who">${combatantName(state, id)}</span>
          <span class="init" title="initiative">${c.initiative}</span>
          ${health && html`<span class="hp" title=${health.label}>${health.wounds !== undefined ? health.label : `${health.value}/${health.max}`}</span>`}
          ${Object.keys(c.conditions || {}).length > 0 && html`<div class="conds">${Object.keys(c.conditions).map((k) => html`<span class="cond">${view.labels?.conditions?.[k] || humanize(k)}</span>`)}</div>`}
        </li>`;
      })}
    </ol>
    ${state.ended && html`<p class="result">${state.winner ? `won by ${state.winner}` : "no winner"} — ${state.end_reason}</p>`}
  </section>`;
}

// ------------------------------------------------------------ narration

function RollTable({ roll }) {
  const dice = roll.dice.map((d) => html`<span class=${"die" + (d.counted ? "" : " dropped")} title=${`d${d.sides}`}>${d.face}</span>`);
  return html`<div class="roll">
    <div class="roll-head"><b>${roll.purpose}</b> <span class="rule">${roll.rule}</span> ${dice.length ? dice : html`<i>no dice</i>`}</div>
    ${roll.modifiers.length > 0 && html`<table class="mods">${roll.modifiers.map((m) => html`<tr>
      <td class="v">${signed(m.value)}</td><td>${m.source}</td><td class="rule">${m.rule}</td></tr>`)}</table>`}
    <div class="roll-total">= <b>${roll.total}</b>${roll.target !== null && roll.target !== undefined ? ` vs ${roll.target} (${roll.compare})` : ""}
      ${roll.success === true ? html` <span class="ok">success</span>` : roll.success === false ? html` <span class="bad">failure</span>` : ""}</div>
    ${roll.notes.length > 0 && html`<div class="notes">${roll.notes.join("; ")}</div>`}
    ${(roll.said ?? detailWords(roll.details)) && html`<div class="notes said">${roll.said ?? detailWords(roll.details)}</div>`}
  </div>`;
}

function Line({ line, open, toggle, future, current, rewindable, onRewind, undone }) {
  const empty = line.segs.every(([text, cls]) => !text.trim() || cls.includes("detail"));
  const expandable = line.rolls.length > 0 || line.segs.some(([, cls]) => cls.includes("detail"));
  const classes = ["line"];
  if (open) classes.push("open");
  if (future) classes.push("future");
  if (current) classes.push("current");
  if (empty && !expandable) classes.push("quiet");
  if (line.type === "RoundStarted") classes.push("round");
  if (undone) classes.push("undone");
  return html`<div class=${classes.join(" ")} data-n=${line.n} data-type=${line.type} title=${undone || undefined}>
    <span class="n" title="log version">${line.n}</span>
    <span class="text" onClick=${expandable ? toggle : undefined}>
      ${undone && html`<span class="undone-tag">undone</span> `}
      ${empty && !expandable ? html`<span class="dim quiet-what">${humanize(line.type)}</span>` : line.segs.map(([text, cls], i) => html`<span key=${i} class=${cls}>${text}</span>`)
        // a roll's explanation is the roll table's when the line has one: said once, as the table
        .filter((_, i) => !(line.rolls.length > 0 && line.segs[i][1].includes("detail")))}
      ${expandable && html`<span class="more" title="show the rolls">${open ? "▾" : line.rolls.length ? `⚄${line.rolls.length > 1 ? " " + line.rolls.length : ""}` : "…"}</span>`}
    </span>
    ${rewindable && html`<button class="rewind-here" title=${`rewind the fight to just after event ${line.n}`} onClick=${() => onRewind(line.n)}>⟲</button>`}
    ${open && line.rolls.length > 0 && html`<div class="rolls">${line.rolls.map((roll, i) => html`<${RollTable} key=${i} roll=${roll} />`)}</div>`}
  </div>`;
}

// The narration draws a window of lines, never a whole long fight: the newest
// WINDOW (or, in the replay, those up to just after `upto`), and WINDOW more
// for each click on "show earlier", fetched from the server when the page
// does not hold them yet (`loadEarlier`). A replay scrubbed to a line the page
// does not hold fetches it first.
export const WINDOW = 300;
const AFTER_UPTO = 40; // lines drawn after the replay's current one

function indexAtOrBefore(lines, n) {
  let lo = 0, hi = lines.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (lines[mid].n <= n) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}

// `canRewind(n)`: whether the GM may rewind to just after line n now (null: not the GM);
// `branches`: the view's `undone` spans and `rewinds`, to mark the undone lines.
export function Narration({ lines, upto, canRewind, onRewind, hasEarlier, loadEarlier, branches, gm = false }) {
  const [open, setOpen] = useState(() => new Set());
  const [size, setSize] = useState(WINDOW);
  const box = useRef(null);
  const stick = useRef(true);
  const keepBottom = useRef(null); // {distance from the bottom to keep while older lines are added above, until: lines.length awaited}
  const firstShown = useRef(null); // the version of the first line drawn last time
  const last = lines.length ? lines[lines.length - 1].n : 0;
  const replaying = upto !== null && upto !== undefined;
  const held = replaying && lines.length > 0 && upto < lines[0].n && hasEarlier;
  useEffect(() => {
    if (held) loadEarlier(lines[0].n - upto + AFTER_UPTO + WINDOW / 2);
  }, [held, upto]);
  const hi = replaying ? Math.min(lines.length - 1, Math.max(indexAtOrBefore(lines, upto), 0) + AFTER_UPTO) : lines.length - 1;
  let lo = Math.max(0, hi - size + 1);
  if (!replaying && !stick.current && firstShown.current !== null) {
    // A reader scrolled up in a live fight keeps what they read: new lines add to the window, none leaves it.
    lo = Math.min(lo, Math.max(0, indexAtOrBefore(lines, firstShown.current)));
  }
  const shown = lines.slice(lo, hi + 1);
  firstShown.current = shown.length ? shown[0].n : null;
  const earlier = lo > 0 || hasEarlier;
  const showEarlier = () => {
    const el = box.current;
    const older = lo < WINDOW && hasEarlier; // the page does not hold them all yet
    // Keep the reader's place: the lines added above must not push the view.
    keepBottom.current = el ? { distance: el.scrollHeight - el.scrollTop, until: older ? lines.length : null } : null;
    setSize(size + WINDOW);
    if (older) loadEarlier(WINDOW - lo).then((added) => { if (!added) keepBottom.current = null; }, () => { keepBottom.current = null; });
  };
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const keep = keepBottom.current;
    if (keep !== null) {
      el.scrollTop = el.scrollHeight - keep.distance;
      if (keep.until === null || lines.length !== keep.until) keepBottom.current = null; // the older lines are in
    } else if (replaying) {
      el.querySelector(`[data-n="${upto}"]`)?.scrollIntoView({ block: "nearest" });
    } else if (stick.current) {
      el.scrollTop = el.scrollHeight;
    }
  }, [lines.length, upto, lo, hi]);
  // A narration shown again (its tab opened on a phone, the window resized) keeps to its newest line.
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === "undefined") return undefined;
    const seen = new ResizeObserver(() => {
      if (stick.current && keepBottom.current === null && el.clientHeight > 0 && !el.dataset.replaying) el.scrollTop = el.scrollHeight;
    });
    seen.observe(el);
    return () => seen.disconnect();
  }, []);
  const onScroll = () => {
    const el = box.current;
    if (el.clientHeight === 0) return; // hidden (another tab): no reader scrolled it
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };
  const toggle = (n) => {
    const next = new Set(open);
    if (next.has(n)) next.delete(n); else next.add(n);
    setOpen(next);
  };
  return html`<section class="panel narration">
    <h2>Narration <span class="count" data-events=${last}>${last} events${shown.length < last ? ` · ${shown.length} shown` : ""}</span></h2>
    <div class="lines" ref=${box} onScroll=${onScroll} data-replaying=${replaying ? "1" : undefined}>
      ${earlier && html`<button class="show-earlier" onClick=${showEarlier}>show earlier events</button>`}
      ${shown.map((line, i) => {
        const by = undoneBy(branches?.undone, line.n);
        // Versions the seat is not shown (the GM's own refused commands) leave a gap in the numbers: say so.
        const before = i > 0 ? shown[i - 1].n : lo === 0 && !hasEarlier ? 0 : line.n - 1;
        const gap = line.n - before - 1;
        return html`${gap > 0 && html`<div class="line gap" key=${"gap" + line.n} data-gap=${gap}><span class="n"></span>
            <span class="text dim">${gap === 1 ? `entry ${before + 1} not shown` : `${gap} entries (${before + 1}–${line.n - 1}) not shown`}: ${gm ? "not readable" : "the GM's own"}</span></div>`}<${Line} key=${line.n} line=${line} open=${open.has(line.n)} toggle=${() => toggle(line.n)}
          future=${replaying && line.n > upto} current=${replaying && line.n === upto} rewindable=${!!canRewind?.(line.n)}
          onRewind=${onRewind} undone=${by !== null ? undoneNote(branches.rewinds, by) : null} />`;
      })}
    </div>
  </section>`;
}

// ------------------------------------------------------------ countdown

export function Countdown({ until, total, now }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((x) => x + 1), 200);
    return () => clearInterval(timer);
  }, []);
  if (!until) return null;
  const left = Math.max(0, until - now());
  const share = total ? Math.max(0, Math.min(1, left / total)) : 0;
  // A long deadline (play by post) says what is left and when it falls, in the viewer's own time.
  const due = new Date(until);
  return html`<div class=${"countdown" + (left < 5000 ? " urgent" : "")} data-left-ms=${Math.round(left)}
      data-due=${due.toISOString()} title=${"due " + due.toLocaleString()}>
    <div class="bar" style=${`width: ${share * 100}%`}></div>
    <span>${left < 60000 ? `${(left / 1000).toFixed(left < 10000 ? 1 : 0)} s`
      : `${longLeft(left)} left · due ${due.toLocaleString([], { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" })}`}</span>
  </div>`;
}

function longLeft(ms) {
  const units = [["d", 86400000], ["h", 3600000], ["min", 60000]];
  const parts = [];
  for (const [name, size] of units) {
    const count = Math.floor(ms / size);
    if (count) parts.push(`${count} ${name}`);
    ms -= count * size;
  }
  return parts.slice(0, 2).join(" ");
}

// ------------------------------------------------------------ prompts (reaction windows, decisions)

export function Prompt({ view, options, answered, now, send, busy, onPickSquares, folded, setFolded }) {
  const state = view.state;
  const asked = (options?.combatants || []).filter((c) => c.window);
  const mine = asked.filter((c) => !answered.has(`${c.combatant}:${c.window.window}`));
  const held = asked.filter((c) => answered.has(`${c.combatant}:${c.window.window}`));
  if (!asked.length) return null;
  const awaiting = view.awaiting || {};
  return html`<div class=${"prompts" + (folded && mine.length ? " folded" : "")}>${held.map((c) => html`<div class="prompt held" key=${"held" + c.combatant} data-held=${c.combatant}>
      ${combatantName(state, c.combatant)} has answered; waiting for ${c.window.awaited.filter((id) => id !== c.combatant).map((id) => combatantName(state, id)).join(", ") || "the others"}
      <${Countdown} until=${awaiting.deadline_at_ms} total=${c.window.deadline_ms} now=${now} /></div>`)}
    ${mine.map((c) => {
    const w = c.window;
    const who = combatantName(state, c.combatant);
    return html`<div class="prompt" key=${c.combatant + w.window} data-prompt=${c.combatant} data-window=${w.window}>
      <div class="prompt-head">
        <span class="bolt">⚡</span>
        <div><b>${who}</b> may react to ${w.prompt || `${humanize(w.trigger)} by ${combatantName(state, w.actor)}`}
          <div class="sub">window ${w.window} · waiting for ${w.awaited.map((id) => combatantName(state, id)).join(", ")}</div></div>
        ${setFolded && html`<button class="fold" title=${folded ? "show the choices" : "fold the prompt away to see the map"}
          aria-expanded=${!folded} onClick=${() => setFolded(!folded)}>${folded ? "show ▴" : "fold ▾"}</button>`}
      </div>
      <${Countdown} until=${awaiting.deadline_at_ms} total=${w.deadline_ms} now=${now} />
      <div class="choices" hidden=${!!folded}>
        ${w.reactions.map((r) => html`<div class="reaction" data-reaction=${r.reaction}>
          <div class="reaction-label">${r.label}${r.rule && html` <span class="rule">${r.rule}</span>`}</div>
          ${r.choices.map((choice, i) => html`<button key=${i} class="choice" disabled=${busy}
              data-choice=${choice.label} onClick=${() => { onPickSquares(null); send(choice.command, `${r.label}: ${choice.label}`); }}
              onMouseEnter=${() => choice.square && onPickSquares([{ ...choice, allies: false }])} onMouseLeave=${() => onPickSquares(null)}>
            ${choice.label}${choice.hit_chance != null ? html` <span class="chance-of">${choice.chance_of || "it works"}:</span> <span class="odds">${pct(choice.hit_chance)}</span>` : ""}
            ${choice.notes?.length ? html`<small>${choice.notes.join("; ")}</small>` : ""}
          </button>`)}
        </div>`)}
        <button class="pass" disabled=${busy} onClick=${() => send(w.pass_command, "pass")}>Pass</button>
      </div>
    </div>`;
  })}</div>`;
}

// ------------------------------------------------------------ the acting seat

// Notes every choice of an action carries (what the action costs, its rule): said once, above them.
function commonNotes(choices) {
  if (!choices.length) return [];
  return (choices[0].notes || []).filter((note) => choices.every((ch) => (ch.notes || []).includes(note)));
}

export function ActionPanel({ view, options, selected, select, moveMode, setMoveMode, send, busy, pick, setPick, now, onPreview }) {
  const state = view.state;
  const mine = options?.combatants || [];
  if (!mine.length) return null;
  return html`<section class="panel actions">
    <h2>Your combatants</h2>
    ${mine.map((c) => {
      const combatant = state.combatants[c.combatant];
      const isSelected = selected === c.combatant;
      const modes = [...new Set(c.moves.map((m) => m.mode))];
      return html`<div key=${c.combatant} class=${"mine-card " + sideClass(state, combatant.side) + (isSelected ? " selected" : "") + (c.its_turn ? " its-turn" : "")}
          data-mine=${c.combatant}>
        <div class="mine-head" onClick=${() => select(c.combatant)}>
          <span class="chip"></span><b>${combatantName(state, c.combatant)}</b>
          ${c.its_turn ? html`<span class="turn-tag">your turn</span>` : c.window ? html`<span class="turn-tag react">react!</span>` : ""}
        </div>
        ${c.why_not && html`<div class="why-not">${c.why_not}</div>`}
        ${c.its_turn && html`<div class="turn">
          ${c.turn_deadline_ms && html`<${Countdown} until=${view.awaiting?.turn_deadline_at_ms} total=${c.turn_deadline_ms} now=${now} />`}
          ${c.moves.length > 0 && html`<div class="group"><h3>Move</h3>
            ${!isSelected ? html`<button onClick=${() => select(c.combatant)}>show where ${combatantName(state, c.combatant)} can go</button>` : html`
              <div class="modes">${modes.map((mode) => html`<button class=${"mode" + (mode === moveMode ? " on" : "")}
                data-mode=${mode} onClick=${() => setMoveMode(mode)}>${humanize(mode)}</button>`)}</div>
              <div class="hint">click a highlighted square: green is safe, the others could draw fire, coloured by the chance to be hit there, from yellow (low) to purple (high); hover for who and the odds</div>`}
          </div>`}
          ${(c.attacks.length > 0 || c.untargetable?.length > 0) && html`<div class="group"><h3>Attack${c.attacks.length > 0 ? html` <span class="hint">or click a target on the map</span>` : ""}</h3>
            <${AttackGroups} state=${state} attacks=${c.attacks} send=${send} busy=${busy} attacker=${c.combatant} />
            ${c.untargetable?.length > 0 && html`<ul class="untargetable-list">${c.untargetable.map((u) => html`<li key=${u.combatant} data-untargetable=${u.combatant}>
              ⊘ ${u.words}</li>`)}</ul>`}</div>`}
          ${c.actions.length > 0 && html`<div class="group"><h3>Actions</h3>
            ${c.actions.map((action) => {
              const squares = action.choices.filter((ch) => ch.square);
              if (action.choices.length === 1 && !squares.length) {
                const choice = action.choices[0];
                return html`<button key=${action.action + action.label} class="action" data-action=${action.action} disabled=${busy}
                  title=${action.rule} onMouseEnter=${() => onPreview?.(choice)} onMouseLeave=${() => onPreview?.(null)}
                  onClick=${() => { onPreview?.(null); send(choice.command, action.label); }}>${action.label}</button>`;
              }
              const key = action.action + ":" + action.label;
              const picking = pick?.combatant === c.combatant && pick?.key === key;
              return html`<div key=${action.action + action.label} class="action-group" data-action=${action.action}>
                <button class=${"action" + (picking ? " on" : "")} disabled=${busy} title=${action.rule}
                  onClick=${() => setPick(picking ? null : { key, combatant: c.combatant })}>${action.label} ▸</button>
                ${picking && html`<div class="sub-choices">
                  ${commonNotes(action.choices).map((note) => html`<div class="hint explain">${note}</div>`)}
                  ${squares.length > 0 && html`<div class="hint">pick a square on the map${squares.some((s) => (s.notes || []).some((n) => /ally|allies|friendly/i.test(n))) ? " (⚠ marks squares that catch allies)" : ""}</div>`}
                  ${action.choices.filter((ch) => !ch.square).map((ch, i) => html`<button key=${i} class="choice" disabled=${busy}
                    data-choice=${ch.label} onMouseEnter=${() => onPreview?.(ch)} onMouseLeave=${() => onPreview?.(null)}
                    onClick=${() => { setPick(null); onPreview?.(null); send(ch.command, `${action.label}: ${ch.label}`); }}>${ch.label}${ch.hit_chance != null ? html` <span class="chance-of">${ch.chance_of || "it works"}:</span> <span class="odds">${pct(ch.hit_chance)}</span>` : ""}</button>`)}
                </div>`}
              </div>`;
            })}</div>`}
          ${c.end_turn && html`<button class="end-turn" disabled=${busy} onClick=${() => send(c.end_turn, "end turn")}>End turn</button>`}
        </div>`}
      </div>`;
    })}
  </section>`;
}

// ------------------------------------------------------------ replay

// The steps follow the branch that stands (what the GM's rewinds undid is
// stepped over); an undone branch is reached from its chip, or the slider, and
// stepped through on its own, with a banner saying whose rewind undid it.
// The step glyphs are drawn, not typed: a font without ⏮ ⏭ (Debian's chromium has none) shows empty boxes.
const ICONS = {
  start: "M3 2h2v12H3zM14 2v12L6 8z",
  back: "M12 2v12L4 8z",
  play: "M4 2v12l9-6z",
  pause: "M3 2h4v12H3zM9 2h4v12H9z",
  on: "M4 2v12l8-6zM12 2h2v12h-2z",
  end: "M11 2h2v12h-2zM2 2v12l8-6z",
};

function Icon({ name }) {
  return html`<svg class="icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path d=${ICONS[name]} /></svg>`;
}

export const REPLAY_SPEEDS = [1, 4, 16, 64]; // events per second

export function ReplayBar({ version, at, setAt, close, playing, setPlaying, speed = 4, setSpeed, undone = [], rewinds = {} }) {
  const by = undoneBy(undone, at);
  return html`<div class="replay-bar" data-replay-at=${at}>
    <span class="label">Replay</span>
    <button title="start" aria-label="start" data-step="start" onClick=${() => setAt(0)}><${Icon} name="start" /></button>
    <button title="one back" aria-label="one back" data-step="back" onClick=${() => setAt(stepBack(undone, at))}><${Icon} name="back" /></button>
    <button title=${playing ? "pause" : "play"} aria-label=${playing ? "pause" : "play"} data-step="play" class="play"
      onClick=${() => setPlaying(!playing)}><${Icon} name=${playing ? "pause" : "play"} /></button>
    <button title="one on" aria-label="one on" data-step="on" onClick=${() => setAt(stepOn(undone, at, version))}><${Icon} name="on" /></button>
    <button title="end" aria-label="end" data-step="end" onClick=${() => setAt(version)}><${Icon} name="end" /></button>
    ${setSpeed && html`<span class="speeds" role="group" aria-label="speed">${REPLAY_SPEEDS.map((s) => html`<button key=${s}
      class=${"speed" + (s === speed ? " on" : "")} data-speed=${s} title=${`${s} event${s === 1 ? "" : "s"} a second`}
      aria-pressed=${s === speed} onClick=${() => setSpeed(s)}>${s}×</button>`)}</span>`}
    <input type="range" min="0" max=${version} value=${at} onInput=${(e) => setAt(Number(e.currentTarget.value))} />
    <span class="at">version <b>${at}</b> / ${version}</span>
    ${close && html`<button class="close" onClick=${close}>back to live</button>`}
    ${undone.length > 0 && html`<div class="undone-branches">${by !== null
      ? html`<span class="undone-banner" data-undone-by=${by}>⟲ This is an undone branch: ${undoneNote(rewinds, by)}.</span>
          <button class="to-standing" onClick=${() => setAt(by)}>go to the rewind</button>`
      : html`<span class="hint">undone branches (stepped over):</span>${undone.map(([first, last, rewind]) => html`
          <button class="undone-chip" key=${first} data-undone=${`${first}-${last}`} title=${undoneNote(rewinds, rewind)}
            onClick=${() => setAt(first)}>${spanText([first, last])}</button>`)}`}</div>`}
  </div>`;
}

// ------------------------------------------------------------ toasts

export function Toasts({ toasts }) {
  return html`<div class="toasts">${toasts.map((t) => html`<div key=${t.id} class=${"toast " + t.kind} data-toast=${t.kind}>${t.text}</div>`)}</div>`;
}
