// The table page: one seat at one encounter (`/table/<campaign>/<encounter>#token=...`),
// or a campaign's pages (`/`, `/characters/<campaign>/<id>`: campaign.js). Everything a seat may do
// comes from its options in the view; the page never invents a command.
import { render } from "./vendor/preact.module.js";
import { useEffect, useMemo, useRef, useState } from "./vendor/preact-hooks.module.js";
import { Connection } from "./connection.js";
import { GameMap } from "./map.js";
import { ActionPanel, Initiative, Narration, Prompt, ReplayBar, Toasts } from "./panels.js";
import { GMPanel } from "./gm.js";
import { OrdersPanel } from "./orders.js";
import { Digest } from "./digest.js";
import { KINDS_FOR, WebhooksPanel, seatRequest } from "./webhooks.js";
import { AttackGroups } from "./attacks.js";
import { CharacterPage, Landing, rememberSeat } from "./campaign.js";
import { html, combatantName, pct, signed, sideClass } from "./util.js";
import { rewindPoint, stepOn } from "./branches.js";
import { FairnessPanel, LobbySeedPanel } from "./verify.js";

function parseLocation() {
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const hash = new URLSearchParams(location.hash.replace(/^#/, ""));
  const query = new URLSearchParams(location.search);
  if (parts[0] === "table" && parts.length >= 3) {
    return { campaign: parts[1], encounter: parts[2], token: hash.get("token") || query.get("token") || "",
             replay: hash.has("replay") || hash.has("at"), at: hash.has("at") ? Number(hash.get("at")) : null };
  }
  if (parts[0] === "characters" && parts.length >= 3) return { campaign: parts[1], character: parts[2] };
  return { campaign: query.get("campaign") || "default" };
}

const ROLE_LABEL = { gm: "Game master", player: "Player", spectator: "Spectator" };

// Three layouts: wide (the panels beside the map), medium (the map and one
// column of tabbed panels), narrow (a phone or a portrait tablet: the map on
// top, the tabbed panels below it, a prompt as a sheet under the map).
const LAYOUTS = [["wide", "(min-width: 1280px)"], ["medium", "(min-width: 900px)"]];

function currentLayout() {
  return (LAYOUTS.find(([, query]) => matchMedia(query).matches) || ["narrow"])[0];
}

function useLayout() {
  const [layout, setLayout] = useState(currentLayout);
  useEffect(() => {
    const queries = LAYOUTS.map(([, query]) => matchMedia(query));
    const changed = () => setLayout(currentLayout());
    queries.forEach((q) => q.addEventListener("change", changed));
    return () => queries.forEach((q) => q.removeEventListener("change", changed));
  }, []);
  return layout;
}

function useConnection(where) {
  const [, setTick] = useState(0);
  const conn = useMemo(() => new Connection({ ...where, onChange: () => setTick((t) => t + 1) }), []);
  useEffect(() => {
    conn.start();
    window.__table = { conn, firstPaint: null };
    return () => conn.close();
  }, []);
  return conn;
}

function Table({ where }) {
  const conn = useConnection(where);
  const [selected, setSelected] = useState(null);
  const [focus, setFocus] = useState(null);
  const [moveMode, setMoveMode] = useState(null);
  const [pick, setPick] = useState(null);
  const [promptPicks, setPromptPicks] = useState(null);
  const [previewing, setPreviewing] = useState(null); // a hovered choice without a square, its area previewed
  const [attackOn, setAttackOn] = useState(null);
  const [busy, setBusy] = useState(false);
  const [toasts, setToasts] = useState([]);
  const [replay, setReplay] = useState(where.replay ? { at: where.at, view: null } : null);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(4); // replay events per second
  const layout = useLayout();
  const [tabChoice, setTab] = useState(undefined); // undefined: the role's first tab; null: folded away (narrow)
  const [promptFolded, setPromptFolded] = useState(false);
  const [rewindTo, setRewindTo] = useState(null);
  // Windows this page answered ("combatant:window"): the engine holds answers
  // until every reactor has answered, so the options still list them.
  const [answered, setAnswered] = useState(() => new Set());
  const toastId = useRef(0);
  const painted = useRef(false);

  const live = conn.view;
  const options = live?.options;
  const seat = conn.seat;
  const mineIds = useMemo(() => new Set(seat?.combatants || []), [seat]);
  useEffect(() => { if (seat) rememberSeat(where.campaign, where.encounter, where.token); }, [seat]);  // for the campaign's links

  const toast = (text, kind = "info") => {
    const id = ++toastId.current;
    setToasts((list) => [...list, { id, text, kind }]);
    setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), kind === "error" ? 8000 : 3000);
  };

  const send = async (command, what) => {
    setBusy(true);
    setPick(null);
    setAttackOn(null);
    // A window answer the engine accepts is held (and answered) only once every
    // reactor has answered: waiting for that would keep the page busy while this
    // seat's other combatants in the same window still have to answer. A refusal
    // comes at once, so a second is enough to tell.
    const windowAnswer = command.type === "ClaimReaction" || command.type === "PassReaction";
    try {
      const answer = await conn.send(command, windowAnswer ? 1 : 10);
      if (!answer.rejected && windowAnswer) {
        setAnswered((done) => new Set(done).add(`${command.actor}:${command.window}`));
      }
      if (answer.rejected) toast(`Refused (${what}): ${answer.reason || "rejected"}`, "error");
      else if (answer.pending) toast(`${what}: sent, waiting for the others`, "info");
    } catch (error) {
      toast(`Could not send ${what}: ${error.message}`, "error");
    } finally {
      setBusy(false);
    }
  };

  // Select my combatant when its turn comes.
  const turnOf = options?.combatants?.find((c) => c.its_turn)?.combatant;
  useEffect(() => {
    if (turnOf) setSelected(turnOf);
  }, [turnOf, live?.state?.round]);

  // A new window's prompt opens unfolded.
  const windowsAsked = (options?.combatants || []).filter((c) => c.window).map((c) => `${c.combatant}:${c.window.window}`).join(" ");
  useEffect(() => { if (windowsAsked) setPromptFolded(false); }, [windowsAsked]);

  const mineOptions = options?.combatants?.find((c) => c.combatant === selected);
  const modes = mineOptions ? [...new Set(mineOptions.moves.map((m) => m.mode))] : [];
  const mode = modes.includes(moveMode) ? moveMode : modes[0];

  // Replay: fetch the state at the chosen version.
  useEffect(() => {
    if (!replay || replay.at === null || !live) return;
    let gone = false;
    conn.stateAt(replay.at).then((view) => { if (!gone) setReplay((r) => (r && r.at === view.at ? { ...r, view } : r)); })
      .catch((error) => toast(`Replay: ${error.message}`, "error"));
    return () => { gone = true; };
  }, [replay?.at, live?.version]);
  useEffect(() => {
    if (replay && replay.at === null && live) setReplay({ at: live.version, view: null });
  }, [replay, live]);
  useEffect(() => {
    if (!playing || !replay || !live) return;
    const timer = setInterval(() => setReplay((r) => {
      if (!r || r.at >= live.version) { setPlaying(false); return r; }
      return { ...r, at: stepOn(live.undone, r.at, live.version) };
    }), 1000 / speed);
    return () => clearInterval(timer);
  }, [playing, !!replay, live?.version, speed]);

  useEffect(() => {
    if (live && !painted.current) {
      painted.current = true;
      requestAnimationFrame(() => { window.__table.firstPaint = performance.now(); });
    }
  });

  if (conn.status === "error" && !live) {
    return html`<div class="fatal"><h1>Cannot join this table</h1><p>${conn.error}</p>
      <p>Ask for a fresh join link (<code>firelane seats ENCOUNTER</code>).</p></div>`;
  }
  if (!live) return html`<p class="booting">Joining ${where.encounter}…</p>`;
  if (!live.state) {
    const here = (conn.present || []).map((s) => (s.id === seat?.id ? `${s.name} (you)` : s.name));
    return html`<div class="lobby-wait">${conn.lobby
      ? html`<p class="booting lobby-line">${where.encounter} waits in the lobby: the GM starts the fight.</p>
        <p class="lobby-present" data-present=${here.length}>${here.length ? `Here now: ${here.join(", ")}.` : "No one else is here yet."}</p>`
      : html`<p class="booting">${where.encounter} has not started yet; waiting for the engine…</p>`}
      ${conn.lobby && html`<${LobbySeedPanel} conn=${conn} seat=${seat} />`}</div>`;
  }

  const inReplay = !!replay;
  const shown = inReplay ? replay.view || null : live;
  const state = (shown || live).state;
  const acting = !inReplay && mineOptions?.its_turn;
  // The action being aimed (its squares on the map), found again in each new view's options.
  const pickedAction = pick && options?.combatants?.find((c) => c.combatant === pick.combatant)?.actions
    .find((a) => a.action + ":" + a.label === pick.key);
  const moves = acting && !pickedAction ? mineOptions.moves.filter((m) => m.mode === mode) : [];
  const targets = new Map();
  if (acting && !pickedAction) for (const a of mineOptions.attacks) targets.set(a.target, [...(targets.get(a.target) || []), a]);
  const prompted = options?.combatants?.some((c) => c.window); // a prompt's hovered square stays only while it is open
  const picks = inReplay ? null : (prompted && promptPicks) || (pickedAction ? pickedAction.choices.filter((c) => c.square).map((c) => ({
    ...c, allies: (c.notes || []).some((n) => /ally|allies|friendly/i.test(n)) })) : null);
  const role = seat?.role || "spectator";
  // A hovered choice is previewed while the options still list it (a turn that ended under the pointer drops it).
  const previewKey = previewing ? JSON.stringify(previewing.command) : null;
  const stillPreviewing = previewKey && options?.combatants?.some((c) => c.actions.some((a) => a.choices.some(
    (ch) => JSON.stringify(ch.command) === previewKey))) ? previewing : null;

  const onToken = (id) => {
    if (inReplay) { setFocus(id); return; }
    if (targets.has(id)) { setAttackOn(id); return; }
    if (mineIds.has(id)) { setSelected(id); setPick(null); }
    setFocus(id);
  };
  const onSquare = (square, pickChoice, background) => {
    if (inReplay) return;
    if (pickChoice) { send(pickChoice.command, pickChoice.label); return; }
    if (background) { setAttackOn(null); return; }
    const move = moves.find((m) => m.to[0] === square[0] && m.to[1] === square[1]);
    if (move) send(move.command, `move to (${square[0]},${square[1]})`);
  };

  const attackOptions = attackOn ? targets.get(attackOn) || [] : [];
  const title = live.title || where.encounter;
  const mover = selected && state.combatants[selected];
  const attackAlly = attackOn && mover && state.combatants[attackOn]?.side === mover.side;
  const prompting = !inReplay && mineWaiting(options, answered);

  const actPanel = !inReplay && html`<${ActionPanel} view=${live} options=${options} selected=${selected} select=${(id) => { setSelected(id); setFocus(id); setPick(null); }}
      moveMode=${mode} setMoveMode=${setMoveMode} send=${send} busy=${busy} pick=${pick} setPick=${setPick} now=${() => conn.serverNow()}
      onPreview=${setPreviewing} />`;
  const gmPanel = !inReplay && role === "gm" && html`<${GMPanel} view=${live} gm=${options?.gm} send=${send} busy=${busy} rewindTo=${rewindTo} setRewindTo=${setRewindTo} lines=${conn.lines} />`;
  const ordersPanel = role === "player" && !inReplay && html`<${OrdersPanel} conn=${conn} />`;  // standing orders (orders.js)
  const webhooksPanel = KINDS_FOR[role] && !inReplay && html`<${WebhooksPanel} request=${seatRequest(conn)} kinds=${KINDS_FOR[role]} />`;  // webhooks.js
  const spectating = role === "spectator" && !inReplay && html`<section class="panel spectating"><h2>Spectating</h2><p>You watch the fight as it happens; the players and the GM act.</p></section>`;
  const fairness = !inReplay && html`<${FairnessPanel} where=${where} view=${live} seat=${seat} send=${send} busy=${busy} />`;
  const initiative = html`<${Initiative} view=${shown || live} />`;
  const narration = html`<${Narration} lines=${conn.lines} upto=${inReplay ? replay.at : null} branches=${live} gm=${role === "gm"}
      canRewind=${role === "gm" && !inReplay && options?.gm?.commands?.includes("RewindEncounter") ? (n) => rewindPoint(conn.lines, live, n) : null}
      onRewind=${(n) => setRewindTo(n)} hasEarlier=${conn.hasEarlier} loadEarlier=${(count) => conn.loadEarlier(count)} />`;

  // The tabs of the medium and narrow layouts: every panel stays drawn (a form keeps what was typed, the
  // narration its place), only the chosen one shows.
  const hasAct = !inReplay && (options?.combatants || []).length > 0;
  const tabs = [
    role === "gm" && !inReplay && ["gm", "GM"],
    hasAct && ["act", "Act"],
    ["order", "Order"],
    ["story", "Narration"],
  ].filter(Boolean);
  const defaultTab = tabs[0][0];
  const tab = tabChoice === undefined || !tabs.some(([key]) => key === tabChoice) && tabChoice !== null ? defaultTab : tabChoice;
  // On a phone an open prompt takes the panels' place under the map, until it is folded or a tab is tapped.
  const sheet = layout === "narrow" && prompting && !promptFolded;
  const chooseTab = (key) => {
    if (sheet) { setPromptFolded(true); setTab(key); return; }
    setTab(layout === "narrow" && key === tab ? null : key);
  };
  const alert = { act: !!(mineOptions?.its_turn || options?.combatants?.some((c) => c.its_turn)), gm: (options?.gm?.calls || []).length > 0 };
  const tabbed = html`<aside class="side">
    <nav class="tabs" role="tablist">${tabs.map(([key, label]) => html`<button key=${key} role="tab" data-tab=${key}
        aria-selected=${tab === key && !sheet} class=${"tab" + (tab === key && !sheet ? " on" : "")} onClick=${() => chooseTab(key)}>
        ${label}${alert[key] ? html`<span class="tab-alert" title="waiting for you">●</span>` : ""}</button>`)}</nav>
    <div class=${"tab-panels" + (tab === null || sheet ? " closed" : "")}>
      ${role === "gm" && !inReplay && html`<div class="tab-panel" data-panel="gm" hidden=${tab !== "gm"}>${gmPanel}</div>`}
      ${hasAct && html`<div class="tab-panel" data-panel="act" hidden=${tab !== "act"}>${actPanel}${ordersPanel}</div>`}
      <div class="tab-panel" data-panel="order" hidden=${tab !== "order"}>${initiative}${spectating}${fairness}${webhooksPanel}</div>
      <div class="tab-panel story" data-panel="story" hidden=${tab !== "story"}>${narration}</div>
    </div>
  </aside>`;

  return html`<div class=${`app role-${role} layout-${layout}` + (inReplay ? " replaying" : "") + (sheet ? " sheet-open" : "")}>
    <header>
      <div class="brand">firelane</div>
      <div class="title"><b>${title}</b> <span class="system">${live.system_title || conn.system}</span></div>
      ${live.reproducible_dice && html`<div class="dice-warning" title="this fight was created with --seed TEXT --reproducible-dice">⚠ ${live.dice_warning}</div>`}
      <div class="meta">
        <div class="round">round ${state.round || "—"}${state.active ? html` · <span class=${sideClass(state, state.combatants[state.active]?.side)}>${combatantName(state, state.active)}</span>'s turn` : ""}</div>
        <div class="seat" data-seat=${seat?.id} data-role=${role}>${ROLE_LABEL[role] || role}${role === "spectator" ? "" : seat?.name && seat.name !== ROLE_LABEL[role] ? `: ${seat.name}` : role === "gm" ? "" : `: ${seat?.id}`}</div>
        <div class=${"status " + conn.status} title=${conn.status}>${conn.status === "live" ? "● live" : conn.status === "error" ? "● " + conn.error : "● " + conn.status}</div>
      </div>
      ${!inReplay && html`<button class="to-replay" onClick=${() => setReplay({ at: live.version, view: null })}>Replay</button>`}
    </header>
    <main>
      ${layout === "wide" && html`<aside class="left">${initiative}${actPanel}${gmPanel}${ordersPanel}${spectating}${fairness}${webhooksPanel}</aside>`}
      <div class="center">
        ${!inReplay && html`<${Prompt} view=${live} options=${options} answered=${answered} now=${() => conn.serverNow()} send=${send} busy=${busy}
          onPickSquares=${setPromptPicks} folded=${promptFolded} setFolded=${setPromptFolded} />`}
        ${shown ? html`<${GameMap} view=${shown} background=${conn.background} mine=${mineIds} selected=${selected} moves=${moves} targets=${targets} picks=${picks}
          onSquare=${onSquare} onToken=${onToken} focus=${focus || selected || state.active} previewArea=${(c) => conn.preview(c)}
          previewing=${inReplay ? null : stillPreviewing} mover=${acting ? selected : null} untargetable=${acting ? mineOptions.untargetable || [] : []} />`
          : html`<div class="map-wrap loading">…</div>`}
        ${attackOn && attackOptions.length > 0 && html`<div class=${"attack-pop" + (attackAlly ? " ally" : "")} data-attack-on=${attackOn}>
          <div class="pop-head">Attack <b>${combatantName(state, attackOn)}</b>?</div>
          <${AttackGroups} state=${state} attacks=${attackOptions} send=${send} busy=${busy} showTarget=${false} mainClass="confirm-attack" attacker=${selected} />
          <button class="cancel" onClick=${() => setAttackOn(null)}>cancel</button>
        </div>`}
        ${inReplay && html`<${ReplayBar} version=${live.version} at=${replay.at ?? live.version}
          setAt=${(at) => setReplay((r) => ({ ...r, at }))} close=${() => { setReplay(null); setPlaying(false); }}
          playing=${playing} setPlaying=${setPlaying} speed=${speed} setSpeed=${setSpeed} undone=${live.undone} rewinds=${live.rewinds} />`}
      </div>
      ${layout === "wide" ? html`<aside class="right">${narration}</aside>` : tabbed}
    </main>
    <${Toasts} toasts=${toasts} />
    ${!inReplay && role !== "spectator" && html`<${Digest} conn=${conn} where=${where} seat=${seat?.id} version=${live.version} />`}
  </div>`;
}

// Whether a prompt waits for one of this seat's combatants (one it has not answered yet).
function mineWaiting(options, answered) {
  return (options?.combatants || []).some((c) => c.window && !answered.has(`${c.combatant}:${c.window.window}`));
}

// A fight this browser holds no seat at (a campaign page's link, a link without its token): one line, and where to paste one.
function NoSeat({ where }) {
  const [link, setLink] = useState("");
  return html`<div class="landing no-seat">
    <h1>${where.encounter}</h1>
    <p class="one-line" data-no-seat=${where.encounter}>This browser holds no seat at this fight: open the join link your GM gave you
      (<code>firelane seats ${where.encounter}</code> prints every seat's, the spectator's too).</p>
    <form onSubmit=${(e) => { e.preventDefault(); if (link.trim()) location.href = link.trim(); }}>
      <input placeholder="paste a join link" value=${link} onInput=${(e) => setLink(e.currentTarget.value)} /><button>Join</button></form>
    <p><a href=${`/?campaign=${encodeURIComponent(where.campaign)}`}>← campaign “${where.campaign}”</a></p>
  </div>`;
}

// The page follows its link: a join link opened in this tab where only the fragment changes
// (another seat's token, &replay) joins at once, as a fresh page would.
function Root() {
  const [where, setWhere] = useState(parseLocation);
  useEffect(() => {
    const follow = () => setWhere(parseLocation());
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  if (where.encounter) {
    if (!where.token) return html`<${NoSeat} where=${where} />`;
    return html`<${Table} key=${`${where.encounter}#${where.token}#${where.replay}#${where.at}`} where=${where} />`;
  }
  return where.character ? html`<${CharacterPage} where=${where} />` : html`<${Landing} where=${where} />`;
}

const root = document.getElementById("app");
root.replaceChildren(); // Preact would keep the "Loading" line beside a page that does not begin with one
render(html`<${Root} />`, root);
