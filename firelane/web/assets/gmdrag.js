// During a fight the GM may drag a token to another square: a GM adjustment
// (GMAdjust of its position, through the GM's own seat like every GM
// command), asked to be confirmed with its reason, recorded for the replay and
// the audit. Self-contained: it listens for pointer presses on the map's
// tokens (map.js draws them; this module only reads their data-token and the
// SVG's geometry), draws its own marker while dragging, and shows its own
// confirmation. A press without a move is an ordinary click, left to the map.
import { useEffect, useRef, useState } from "./vendor/preact-hooks.module.js";
import { html, combatantName } from "./util.js";

const NS = "http://www.w3.org/2000/svg";
const MOVED_PX = 6; // a press that travels less is a click

function squareOf(svg, clientX, clientY, state) {
  const point = svg.createSVGPoint();
  point.x = clientX;
  point.y = clientY;
  const local = point.matrixTransform(svg.getScreenCTM().inverse());
  const size = Number(svg.dataset.square || 40);
  const [x, y] = [Math.floor(local.x / size), Math.floor(local.y / size)];
  const t = state.terrain;
  return x >= 0 && y >= 0 && x < t.width && y < t.height ? [x, y] : null;
}

// Why the engine would refuse the square, in its words (engine core `_gm_value` and
// engine/occupancy.py: a wall, a standing combatant, or a body, since no move ends on
// a body), or null. gm.js's form checks a typed position with the same function.
export function squareProblem(state, who, [x, y]) {
  if ((state.terrain.walls || []).some((w) => (Array.isArray(w) ? w[0] === x && w[1] === y : w.x === x && w.y === y))) return `position (${x}, ${y}) is inside a wall`;
  const here = Object.values(state.combatants).filter((c) => c.id !== who && c.position && c.position[0] === x && c.position[1] === y);
  const standing = here.find((c) => !c.out_of_fight);
  if (standing) return `position (${x}, ${y}) is taken by ${standing.name || standing.id}`;
  const body = here.sort((a, b) => (a.id < b.id ? -1 : 1))[0];
  return body ? `position (${x}, ${y}) is where ${body.name || body.id} lies: no move ends on a body` : null;
}

// On a touch screen the map's own panning would take a finger's drag, so there dragging tokens is switched on
// by the GM (the map then takes every touch); a mouse or a pen drags at once.
const COARSE = typeof matchMedia === "function" && matchMedia("(pointer: coarse)").matches;

export function TokenDrag({ view, send, busy, reason }) {
  const [asking, setAsking] = useState(null); // {who, to}
  const [why, setWhy] = useState("");
  const [byTouch, setByTouch] = useState(false);
  const latest = useRef(view);
  latest.current = view;
  const touchOn = useRef(false);
  touchOn.current = byTouch;
  useEffect(() => {
    const map = document.querySelector("svg.map");
    if (map) map.style.touchAction = byTouch ? "none" : "";
  });
  useEffect(() => {
    let drag = null; // {who, svg, from, to, marker, moved}
    const down = (e) => {
      if (e.button !== undefined && e.button !== 0) return;
      if (e.pointerType === "touch" && !touchOn.current) return;
      const token = e.target.closest?.("svg.map g.token[data-token]");
      if (!token) return;
      const svg = token.ownerSVGElement;
      const who = token.getAttribute("data-token");
      if (!latest.current.state.combatants[who]?.position) return;
      drag = { who, svg, start: [e.clientX, e.clientY], to: null, marker: null, moved: false };
    };
    const move = (e) => {
      if (!drag) return;
      if (!drag.moved && Math.abs(e.clientX - drag.start[0]) + Math.abs(e.clientY - drag.start[1]) < MOVED_PX) return;
      drag.moved = true;
      e.preventDefault();
      const to = squareOf(drag.svg, e.clientX, e.clientY, latest.current.state);
      drag.to = to;
      if (!drag.marker) {
        drag.marker = document.createElementNS(NS, "rect");
        drag.marker.setAttribute("class", "gm-drag-marker");
        drag.marker.setAttribute("pointer-events", "none");
        drag.marker.setAttribute("fill", "rgba(245, 196, 81, 0.35)");
        drag.marker.setAttribute("stroke", "#f5c451");
        drag.marker.setAttribute("stroke-width", "2");
        drag.svg.append(drag.marker);
      }
      const size = Number(drag.svg.dataset.square || 40);
      if (to) {
        drag.marker.setAttribute("x", to[0] * size);
        drag.marker.setAttribute("y", to[1] * size);
        drag.marker.setAttribute("width", size);
        drag.marker.setAttribute("height", size);
        const refused = !!squareProblem(latest.current.state, drag.who, to);
        drag.marker.setAttribute("fill", refused ? "rgba(255, 107, 107, 0.35)" : "rgba(245, 196, 81, 0.35)");
        drag.marker.setAttribute("stroke", refused ? "#ff6b6b" : "#f5c451");
      }
    };
    const up = () => {
      if (!drag) return;
      const { who, to, marker, moved } = drag;
      marker?.remove();
      drag = null;
      if (!moved || !to) return;
      const from = latest.current.state.combatants[who].position;
      if (from[0] === to[0] && from[1] === to[1]) return;
      // The click that follows a drag must not also act on the square it ended on.
      const swallow = (ev) => { ev.stopPropagation(); ev.preventDefault(); };
      window.addEventListener("click", swallow, { capture: true, once: true });
      setTimeout(() => window.removeEventListener("click", swallow, { capture: true }), 0);
      setAsking({ who, to });
    };
    document.addEventListener("pointerdown", down, true);
    document.addEventListener("pointermove", move, true);
    document.addEventListener("pointerup", up, true);
    document.addEventListener("pointercancel", up, true);
    return () => {
      document.removeEventListener("pointerdown", down, true);
      document.removeEventListener("pointermove", move, true);
      document.removeEventListener("pointerup", up, true);
      document.removeEventListener("pointercancel", up, true);
    };
  }, []);
  if (!asking) {
    return html`<div class="hint gm-drag-hint">Drag a token on the map to move it (a GM adjustment).
      ${COARSE || byTouch ? html`<label><input type="checkbox" data-gm="drag-by-touch" checked=${byTouch}
        onChange=${(e) => setByTouch(e.currentTarget.checked)} /> with a finger</label>` : ""}</div>`;
  }
  const state = view.state;
  const name = combatantName(state, asking.who);
  const wrong = squareProblem(state, asking.who, asking.to);
  const because = why.trim() || reason.trim();
  return html`<div class="confirm gm-move" data-confirm="Move">
    <div>Move ${name} to (${asking.to[0]}, ${asking.to[1]})? It is the GM's adjustment, kept with its reason in the log.</div>
    ${wrong && html`<div class="problem">${wrong}</div>`}
    <label class="reason">reason <input data-move-reason value=${why} placeholder=${reason || "why the token moves"} onInput=${(e) => setWhy(e.currentTarget.value)} /></label>
    <div class="row"><button class="cancel" onClick=${() => { setAsking(null); setWhy(""); }}>Cancel</button>
      <button class="danger" data-confirm-yes="Move" disabled=${busy || !!wrong || !because} onClick=${() => {
        send({ type: "GMAdjust", actor: "gm", combatant: asking.who, changes: { position: asking.to }, reason: because }, `move ${name}`);
        setAsking(null);
        setWhy("");
      }}>Move</button></div>
  </div>`;
}
