// The map: an SVG square grid with walls, directional cover, difficult
// ground, persistent zones, area templates, range bands and the tokens; and,
// while a seat acts, the squares it may move to (coloured by danger), the
// targets it may attack (with the chance to hit) and the squares a choice
// needs. It draws what it is given and reports clicks; the App decides.
import { useEffect, useRef, useState } from "./vendor/preact-hooks.module.js";
import { html, sideClass, shortLabel, pct, sq, danger, combatantName, humanize } from "./util.js";

const S = 40; // user units per square; the SVG scales to its box

const ZONE_COLOURS = { smoke: "#9aa3b5", fire: "#ff7a2f", gas: "#7fdc6a" };

function coverBars(feature) {
  // A cover feature protects against threats from each of its facings (unit
  // vectors from the cover towards the threat): draw a bar on that edge.
  const x = feature.x * S, y = feature.y * S;
  const facings = feature.facing && feature.facing.length ? feature.facing : null;
  const cls = `cover cover-${feature.level}`;
  if (!facings) {
    return [html`<rect class=${cls + " all"} x=${x + 5} y=${y + 5} width=${S - 10} height=${S - 10} rx="4" />`];
  }
  return facings.map(([dx, dy], i) => {
    const cx = x + S / 2 + (dx * S) / 2 - (dx * 4), cy = y + S / 2 + (dy * S) / 2 - (dy * 4);
    if (dx && dy) {
      return html`<path key=${i} class=${cls} d=${`M ${cx - dx * 14} ${cy} L ${cx} ${cy} L ${cx} ${cy - dy * 14}`} />`;
    }
    const horizontal = dy !== 0;
    const half = S / 2 - 4;
    return html`<line key=${i} class=${cls} x1=${horizontal ? cx - half : cx} y1=${horizontal ? cy : cy - half}
      x2=${horizontal ? cx + half : cx} y2=${horizontal ? cy : cy + half} />`;
  });
}

// `stack`: [index, count] of the combatants on this square (two may share one
// where a rule allows it): each is drawn smaller and shifted, with a badge saying how many.
function Token({ state, combatant, label, extras, mine, selected, active, target, allyTarget, blocked, caught, caughtAlly, stack, onClick, onHover }) {
  const [x, y] = combatant.position;
  const [index, count] = stack || [0, 1];
  const shift = count > 1 ? (index - (count - 1) / 2) * (S * 0.36 / (count - 1)) : 0;
  const scale = count > 1 ? 0.72 : 1;
  const cx = x * S + S / 2 + shift, cy = y * S + S / 2 + shift;
  const health = extras?.health;
  const conditions = Object.keys(combatant.conditions || {});
  const classes = ["token", sideClass(state, combatant.side)];
  if (combatant.out_of_fight) classes.push("down");
  if (mine) classes.push("mine");
  if (selected) classes.push("selected");
  if (active) classes.push("active");
  if (target) classes.push(allyTarget ? "targetable ally-target" : "targetable");
  if (blocked) classes.push("untargetable");
  if (caught) classes.push("caught");
  if (caughtAlly) classes.push("caught-ally");
  if (count > 1) classes.push("stacked");
  const ratio = health ? Math.max(0, Math.min(1, health.value / health.max)) : null;
  const best = target ? Math.max(...target.map((a) => a.hit_chance)) : null;
  const title = `${combatantName(state, combatant.id)} (${combatant.side})` +
    (health ? ` — ${health.label} ${health.wounds !== undefined ? `(${health.wounds} wounds)` : `${health.value}/${health.max}`}` : "") +
    (conditions.length ? ` — ${conditions.map(humanize).join(", ")}` : "") + (combatant.out_of_fight ? " — out of the fight" : "") +
    (allyTarget ? " — on your side: friendly fire" : "") + (blocked ? ` — cannot be targeted: ${blocked.words}` : "") +
    (count > 1 ? ` — ${count} on this square` : "");
  const r = S * scale;
  const left = cx - S / 2 * scale, top = cy - S / 2 * scale;
  return html`<g class=${classes.join(" ")} data-token=${combatant.id} data-side=${combatant.side} data-pos=${`${x},${y}`}
      data-stack=${count > 1 ? count : undefined}
      onClick=${(e) => { e.stopPropagation(); onClick(combatant.id); }}
      onMouseEnter=${() => onHover({ token: combatant.id })} onMouseLeave=${() => onHover(null)}>
    <title>${title}</title>
    ${active && html`<circle class="active-ring" cx=${cx} cy=${cy} r=${r * 0.47} />`}
    ${target && html`<circle class=${allyTarget ? "target-ring ally" : "target-ring"} cx=${cx} cy=${cy} r=${r * 0.49} />`}
    ${caughtAlly && html`<g class="ally-warning"><circle cx=${cx} cy=${cy} r=${r * 0.49} /><text x=${cx + r * 0.3} y=${cy - r * 0.25}>⚠</text></g>`}
    <circle class="body" cx=${cx} cy=${cy} r=${r * 0.36} />
    <text class="initials" x=${cx} y=${cy + 4.5 * scale} text-anchor="middle" font-size=${13 * scale}>${label}</text>
    ${ratio !== null && html`<g class="health">
      <rect class="track" x=${left + 5 * scale} y=${top + r - 6} width=${r - 10 * scale} height="4" rx="2" />
      <rect class=${"fill" + (ratio <= 0.34 ? " low" : ratio <= 0.67 ? " mid" : "")} x=${left + 5 * scale} y=${top + r - 6}
        width=${(r - 10 * scale) * ratio} height="4" rx="2" />
    </g>`}
    ${conditions.slice(0, 3).map((name, i) => html`<circle key=${name} class=${"condition c-" + name.replace(/[^a-z]/g, "")}
        cx=${left + 6 + i * 7} cy=${top + 6} r="3"><title>${humanize(name)}</title></circle>`)}
    ${combatant.out_of_fight && html`<text class="down-mark" x=${cx} y=${cy + 6 * scale} text-anchor="middle" font-size=${20 * scale}>✖</text>`}
    ${target && html`<g class=${"chance-badge" + (allyTarget ? " ally" : "")}><rect x=${left + r - 22} y=${top - 8} width=${allyTarget ? 40 : 30} height="15" rx="7" />
      <text x=${left + r - (allyTarget ? 2 : 7)} y=${top + 3} text-anchor="middle">${allyTarget ? "⚠ " : ""}${pct(best)}</text></g>`}
    ${blocked && html`<g class="no-line-badge"><circle cx=${left + r - 6} cy=${top + 4} r="7" /><text x=${left + r - 6} y=${top + 8} text-anchor="middle">⊘</text></g>`}
    ${count > 1 && index === count - 1 && html`<g class="stack-badge"><rect x=${x * S + 1} y=${y * S + S - 14} width="15" height="13" rx="4" />
      <text x=${x * S + 8.5} y=${y * S + S - 4} text-anchor="middle">${count}</text></g>`}
  </g>`;
}

// The colour of a square by the worst chance someone has to hit its mover there, on a
// scale that tells 10 % from 65 % at a glance: yellow, orange, red, magenta, purple.
const HEAT = [[0, [255, 224, 102]], [0.25, [255, 169, 77]], [0.5, [255, 90, 90]], [0.75, [224, 62, 154]], [1, [156, 54, 181]]];

export function heatColour(chance) {
  const c = Math.max(0, Math.min(1, chance));
  let i = 1;
  while (i < HEAT.length - 1 && HEAT[i][0] < c) i += 1;
  const [a, from] = HEAT[i - 1], [b, to] = HEAT[i];
  const t = (c - a) / (b - a);
  return `rgb(${from.map((v, k) => Math.round(v + (to[k] - v) * t)).join(", ")})`;
}

function Bands({ bands, at, terrain }) {
  // d100-zones: the Chebyshev distance bands around the focused combatant
  // (D100Z-02), cut to the map's edges.
  return bands.map((band) => {
    const r = band.squares;
    const x0 = Math.max(0, at[0] - r), y0 = Math.max(0, at[1] - r);
    const x1 = Math.min(terrain.width, at[0] + r + 1), y1 = Math.min(terrain.height, at[1] + r + 1);
    return html`<g key=${band.name} class=${"band band-" + band.name} data-band=${band.name}>
      <rect x=${x0 * S} y=${y0 * S} width=${(x1 - x0) * S} height=${(y1 - y0) * S} rx="6" />
      <text x=${x0 * S + 4} y=${y0 * S + 12}>${band.name} ≤ ${band.metres} m</text>
    </g>`;
  });
}

// Pan and zoom: the SVG's viewBox follows a drag (one finger or the mouse),
// a pinch (two fingers), the wheel and the +, −, fit buttons. A drag that
// moved is no click: a tap selects, a swipe pans.
const DRAG_PX = 8;
const MOST_ZOOM = 6;

function clampBox(box, full) {
  const w = Math.min(full.w, Math.max(full.w / MOST_ZOOM, box.w));
  const h = w * (full.h / full.w);
  const x = Math.min(full.x + full.w - w, Math.max(full.x, box.x));
  const y = Math.min(full.y + full.h - h, Math.max(full.y, box.y));
  return { x, y, w, h };
}

function usePanZoom(full) {
  const [box, setBox] = useState(null); // null: the whole map
  const svg = useRef(null);
  const pointers = useRef(new Map());
  const gesture = useRef(null);
  const swallowClick = useRef(false);
  const shown = box ? clampBox(box, full) : full;
  const current = useRef(shown);
  current.current = shown;
  const unitsPerPx = () => {
    const el = svg.current;
    if (!el) return 1;
    const rect = el.getBoundingClientRect();
    return Math.max(current.current.w / rect.width, current.current.h / rect.height);
  };
  const toUnits = (clientX, clientY) => {
    const rect = svg.current.getBoundingClientRect();
    const k = unitsPerPx(), b = current.current;
    // preserveAspectRatio meet: the box is centred in the element.
    const offX = (rect.width * k - b.w) / 2, offY = (rect.height * k - b.h) / 2;
    return [b.x - offX + (clientX - rect.left) * k, b.y - offY + (clientY - rect.top) * k];
  };
  const zoomAt = (factor, clientX, clientY, from = current.current) => {
    const [ux, uy] = clientX === undefined ? [from.x + from.w / 2, from.y + from.h / 2] : toUnits(clientX, clientY);
    const w = from.w / factor, h = from.h / factor;
    const next = clampBox({ x: ux - (ux - from.x) / factor, y: uy - (uy - from.y) / factor, w, h }, full);
    setBox(next.w >= full.w - 0.5 ? null : next);
  };
  const down = (e) => {
    // The GM drags tokens to move them (gmdrag.js): a press on one is no pan.
    if (e.target.closest?.(".role-gm svg.map g.token")) return;
    pointers.current.set(e.pointerId, [e.clientX, e.clientY]);
    const points = [...pointers.current.values()];
    if (points.length === 1) {
      gesture.current = { kind: "tap", start: points[0], box: current.current, k: unitsPerPx() };
      swallowClick.current = false;
    } else if (points.length === 2) {
      const [a, b] = points;
      const mid = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
      gesture.current = { kind: "pinch", spread: Math.hypot(a[0] - b[0], a[1] - b[1]) || 1, mid, at: toUnits(...mid), box: current.current };
      swallowClick.current = true;
    }
  };
  const move = (e) => {
    if (!pointers.current.has(e.pointerId)) return;
    pointers.current.set(e.pointerId, [e.clientX, e.clientY]);
    const g = gesture.current;
    if (!g) return;
    const points = [...pointers.current.values()];
    if (g.kind === "pinch" && points.length >= 2) {
      const [a, b] = points;
      const factor = Math.hypot(a[0] - b[0], a[1] - b[1]) / g.spread;
      const w = g.box.w / factor, h = g.box.h / factor;
      const [ux, uy] = g.at;
      const next = clampBox({ x: ux - (ux - g.box.x) / factor, y: uy - (uy - g.box.y) / factor, w, h }, full);
      setBox(next.w >= full.w - 0.5 ? null : next);
      return;
    }
    const [sx, sy] = g.start;
    const dx = e.clientX - sx, dy = e.clientY - sy;
    if (g.kind === "tap" && Math.hypot(dx, dy) > DRAG_PX) {
      g.kind = "pan";
      swallowClick.current = true;
      svg.current?.setPointerCapture?.(e.pointerId);
    }
    if (g.kind === "pan" && g.box.w < full.w) {
      setBox(clampBox({ ...g.box, x: g.box.x - dx * g.k, y: g.box.y - dy * g.k }, full));
    }
  };
  const forget = () => { pointers.current.clear(); gesture.current = null; };
  const up = (e) => {
    pointers.current.delete(e.pointerId);
    if (pointers.current.size === 0) gesture.current = null;
    else if (gesture.current?.kind === "pinch") gesture.current = { kind: "pan", start: [...pointers.current.values()][0], box: current.current, k: unitsPerPx() };
  };
  useEffect(() => {
    const el = svg.current;
    if (!el) return undefined;
    const wheel = (e) => { e.preventDefault(); zoomAt(e.deltaY < 0 ? 1.2 : 1 / 1.2, e.clientX, e.clientY); };
    // A pan or pinch ends in no click on what lay under the finger.
    const click = (e) => { if (swallowClick.current) { swallowClick.current = false; e.stopPropagation(); e.preventDefault(); } };
    el.addEventListener("wheel", wheel, { passive: false });
    el.addEventListener("click", click, true);
    return () => { el.removeEventListener("wheel", wheel); el.removeEventListener("click", click, true); };
  });
  return {
    svg, box: shown, zoomed: !!box,
    handlers: { onPointerDown: down, onPointerMove: move, onPointerUp: up, onPointerCancel: up },
    // A button ends any gesture a lost pointerup left open (a drag whose finger left the page).
    zoomIn: () => { forget(); zoomAt(1.5); }, zoomOut: () => { forget(); zoomAt(1 / 1.5); }, fit: () => { forget(); setBox(null); },
  };
}

// A map button that acts on a finger's lift as well as on a click: Chromium
// sends no click for a tap that stops a swipe's fling, and a tap right after
// panning the map is just that.
function ZoomButton({ cls, title, disabled, act, children }) {
  const lifted = useRef(false);
  return html`<button class=${cls} title=${title} aria-label=${title} disabled=${disabled}
    onPointerUp=${(e) => { if (e.pointerType === "touch") { lifted.current = true; act(); } }}
    onClick=${() => { if (lifted.current) lifted.current = false; else act(); }}>${children}</button>`;
}

// `previewing`: a choice without a square whose area is previewed while its
// button is hovered (a cone's direction, a zone); a hovered square choice is
// previewed too. The server computes every preview (`view.previewable` lists
// the command types it can); the map only draws the answer.
// `mover`: the combatant acting (its allies among the targets are marked as
// friendly fire); `untargetable`: the enemies it cannot target, each with why.
export function GameMap({ view, background, mine, selected, moves, targets, picks, onSquare, onToken, focus, previewArea, previewing, mover, untargetable }) {
  const [hover, setHover] = useState(null);
  const [explained, setExplained] = useState(null); // a tapped token that cannot be targeted: its reason stays shown
  const [areaPreview, setAreaPreview] = useState(null); // {key, squares, caught, allies_caught, notes, refused}
  // A finger has no hover: its first tap on an area choice's square previews the area (`armed`), a second tap chooses it.
  const [armed, setArmed] = useState(null);
  const pointerType = useRef("mouse");
  const state = view.state;
  const terrain = state.terrain;
  const width = terrain.width * S, height = terrain.height * S;
  const zoom = usePanZoom({ x: -10, y: -10, w: width + 20, h: height + 20 });
  const movesBySquare = new Map((moves || []).map((m) => [sq(m.to), m]));
  // The first choice at a square is its square's (an action may list several at one square: each RoF, each box).
  const picksBySquare = new Map();
  for (const p of picks || []) if (p.square && !picksBySquare.has(sq(p.square))) picksBySquare.set(sq(p.square), p);
  const hoveredMove = hover?.square ? movesBySquare.get(hover.square) : null;
  const previewable = new Set(view.previewable || []);
  // Armed by its command, so a choice gone from the picks (a turn ended, another action) previews nothing.
  const armedPick = armed ? [...picksBySquare.values()].find((p) => JSON.stringify(p.command) === armed) || null : null;
  const hoveredPick = (hover?.square ? picksBySquare.get(hover.square) : null) || armedPick;
  const previewChoice = hoveredPick || previewing || null;
  const previewCommand = previewChoice && previewable.has(previewChoice.command?.type) ? previewChoice.command : null;
  const previewKey = previewCommand ? JSON.stringify(previewCommand) : null;
  useEffect(() => {
    if (!previewKey || !previewArea) return undefined;
    let gone = false;
    previewArea(previewCommand).then((found) => { if (!gone && found) setAreaPreview({ key: previewKey, ...found }); });
    return () => { gone = true; };
  }, [previewKey]);
  const focusCombatant = focus ? state.combatants[focus] : null;
  const combatants = Object.values(state.combatants).filter((c) => c.position);
  // Tokens of the fallen first, so the standing are drawn on top.
  combatants.sort((a, b) => Number(b.out_of_fight) - Number(a.out_of_fight));
  const stacks = new Map();
  for (const c of combatants) stacks.set(sq(c.position), [...(stacks.get(sq(c.position)) || []), c.id]);
  const moverSide = mover ? state.combatants[mover]?.side : null;
  const blockedBy = new Map((untargetable || []).map((u) => [u.combatant, u]));
  const hoveredToken = hover?.token || explained;
  const whyNot = hoveredToken ? blockedBy.get(hoveredToken) : null;
  const watching = hover?.token && state.combatants[hover.token]?.overwatch_area?.length ? hover.token : null;

  const squareAt = (event) => {
    const svg = event.currentTarget.ownerSVGElement || event.currentTarget;
    const point = svg.createSVGPoint();
    point.x = event.clientX; point.y = event.clientY;
    const local = point.matrixTransform(svg.getScreenCTM().inverse());
    return [Math.floor(local.x / S), Math.floor(local.y / S)];
  };

  const overlays = [];
  for (const move of moves || []) {
    const d = danger(move);
    const cls = d === 0 ? "safe" : d < 0.35 ? "risky" : "deadly";
    const colour = d === 0 ? null : heatColour(d);
    overlays.push(html`<g key=${"m" + sq(move.to)} class="reach-square"><rect class=${"reach " + cls} data-square=${sq(move.to)}
      data-threats=${move.threats.length} data-danger=${Math.round(d * 100)} x=${move.to[0] * S + 2} y=${move.to[1] * S + 2} width=${S - 4} height=${S - 4} rx="5"
      fill=${colour || undefined} stroke=${colour || undefined}
      onClick=${(e) => { e.stopPropagation(); onSquare(move.to); }}
      onMouseEnter=${() => setHover({ square: sq(move.to) })} onMouseLeave=${() => setHover(null)} />
      ${d > 0 && html`<text class="heat-pct" x=${move.to[0] * S + S - 4} y=${move.to[1] * S + S - 5} text-anchor="end">${Math.round(d * 100)}</text>`}</g>`);
  }
  for (const pick of picksBySquare.values()) {
    overlays.push(html`<rect key=${"p" + sq(pick.square)} class=${"pick" + (pick.allies ? " hits-allies" : "")}
      data-pick=${sq(pick.square)} x=${pick.square[0] * S + 3} y=${pick.square[1] * S + 3} width=${S - 6} height=${S - 6} rx="5"
      data-armed=${armedPick === pick ? "1" : undefined}
      onPointerDown=${(e) => { pointerType.current = e.pointerType; }}
      onClick=${(e) => {
        e.stopPropagation();
        const key = JSON.stringify(pick.command);
        if (pointerType.current === "touch" && previewable.has(pick.command?.type) && armed !== key) { setArmed(key); return; }
        setArmed(null);
        onSquare(pick.square, pick);
      }}
      onMouseEnter=${() => setHover({ square: sq(pick.square) })} onMouseLeave=${() => setHover(null)} />`);
  }

  const preview = previewKey && areaPreview?.key === previewKey ? areaPreview : null;
  const alliesCaught = new Set(preview?.allies_caught || []);
  const caught = new Set((preview?.caught || []).map((c) => c.combatant));
  const area = view.area;
  const tooltip = hoveredMove || previewChoice;
  const risky = (moves || []).some((m) => danger(m) > 0);
  const tokenClick = (id) => {
    setExplained(blockedBy.has(id) ? id : null);
    onToken(id);
  };
  const b = zoom.box;

  return html`<div class=${"map-wrap" + (zoom.zoomed ? " zoomed" : "")}>
    <svg class=${"map" + (picksBySquare.size ? " picking" : "")} viewBox=${`${b.x} ${b.y} ${b.w} ${b.h}`} preserveAspectRatio="xMidYMid meet"
        style=${{ aspectRatio: `${width + 20} / ${height + 20}` }} ref=${zoom.svg} ...${zoom.handlers} onClick=${(e) => { setExplained(null); onSquare(squareAt(e), null, true); }}>
      <defs>
        <pattern id="grid" width=${S} height=${S} patternUnits="userSpaceOnUse">
          <path d=${`M ${S} 0 L 0 0 0 ${S}`} class="gridline" />
        </pattern>
        <pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <line x1="0" y1="0" x2="0" y2="8" class="hatchline" />
        </pattern>
      </defs>
      <rect class="ground" x="0" y="0" width=${width} height=${height} />
      ${background && html`<clipPath id="map-bounds"><rect x="0" y="0" width=${width} height=${height} /></clipPath>
        <image class="background" href=${background.href} clip-path="url(#map-bounds)" pointer-events="none" preserveAspectRatio="none"
          x=${background.offset[0] * S} y=${background.offset[1] * S}
          width=${(background.width / background.scale) * S} height=${(background.height / background.scale) * S} />`}
      ${(terrain.difficult || []).map(([x, y]) => html`<rect key=${"d" + x + "," + y} class="difficult" x=${x * S} y=${y * S} width=${S} height=${S}><title>difficult ground</title></rect>`)}
      <rect x="0" y="0" width=${width} height=${height} fill="url(#grid)" pointer-events="none" />
      ${(view.zones || []).map((zone, i) => html`<g key=${"z" + i} class=${"zone zone-" + zone.kind}>
        ${zone.squares.map(([x, y]) => html`<rect x=${x * S} y=${y * S} width=${S} height=${S} fill=${ZONE_COLOURS[zone.kind] || "#c9a0ff"} />`)}
        <title>${zone.kind}${zone.source ? ` (${zone.source})` : ""}: ${zone.rounds_left} round${zone.rounds_left === 1 ? "" : "s"} left</title>
      </g>`)}
      ${Object.values(state.combatants).filter((c) => c.overwatch_area && c.overwatch_area.length && !c.out_of_fight).map((c) =>
        html`<g key=${"ow" + c.id} class=${"overwatch " + sideClass(state, c.side) + (watching === c.id ? " shown" : "")} data-overwatch=${c.id}>${c.overwatch_area.map(([x, y]) =>
          html`<rect x=${x * S + 1} y=${y * S + 1} width=${S - 2} height=${S - 2} />`)}<title>${combatantName(state, c.id)}'s overwatch</title></g>`)}
      ${area && html`<g class=${"template" + (area.preview ? " preview" : "")} data-area=${area.label}>
        ${area.squares.map(([x, y]) => html`<rect x=${x * S} y=${y * S} width=${S} height=${S} />`)}
        <title>${area.label} (${area.kind})</title></g>`}
      ${(terrain.walls || []).map((w) => {
        const [x, y] = Array.isArray(w) ? w : [w.x, w.y];
        return html`<rect key=${"w" + x + "," + y} class="wall" x=${x * S} y=${y * S} width=${S} height=${S} />`;
      })}
      ${(terrain.cover || []).map((c, i) => html`<g key=${"c" + i} class="cover-feature"><title>${c.level} cover</title>${coverBars(c)}</g>`)}
      ${focusCombatant?.position && (view.bands || []).length > 0 && html`<${Bands} bands=${view.bands} at=${focusCombatant.position} terrain=${terrain} />`}
      ${overlays}
      ${preview && html`<g class="template preview" data-preview=${previewChoice.square ? sq(previewChoice.square) : previewChoice.label}
          data-squares=${preview.squares.length}>${preview.squares.map(([x, y]) => html`<rect x=${x * S} y=${y * S} width=${S} height=${S} />`)}</g>`}
      ${hoveredMove && hoveredMove.path.length > 0 && html`<polyline class="path"
        points=${[selected && state.combatants[selected]?.position, ...hoveredMove.path].filter(Boolean).map(([x, y]) => `${x * S + S / 2},${y * S + S / 2}`).join(" ")} />`}
      ${hoveredMove && hoveredMove.threats.map((t, i) => t.at && html`<circle key=${"t" + i} class="threat-at" cx=${t.at[0] * S + S / 2} cy=${t.at[1] * S + S / 2} r="6" />`)}
      ${whyNot && mover && state.combatants[mover]?.position && state.combatants[whyNot.combatant]?.position && html`<g class="sight-line" data-why-not=${whyNot.combatant}>
        <line x1=${state.combatants[mover].position[0] * S + S / 2} y1=${state.combatants[mover].position[1] * S + S / 2}
          x2=${state.combatants[whyNot.combatant].position[0] * S + S / 2} y2=${state.combatants[whyNot.combatant].position[1] * S + S / 2} />
        ${whyNot.blocking_square && html`<rect class="blocking" data-blocking=${sq(whyNot.blocking_square)} x=${whyNot.blocking_square[0] * S + 2}
          y=${whyNot.blocking_square[1] * S + 2} width=${S - 4} height=${S - 4} rx="3" />`}</g>`}
      ${combatants.map((c) => {
        const here = stacks.get(sq(c.position));
        return html`<${Token} key=${c.id} state=${state} combatant=${c} label=${shortLabel(state, c.id)} extras=${view.extras?.[c.id]}
        mine=${mine.has(c.id)} selected=${selected === c.id} active=${state.active === c.id} caught=${caught.has(c.id)} caughtAlly=${alliesCaught.has(c.id)}
        target=${targets?.get(c.id)} allyTarget=${!!targets?.get(c.id) && moverSide !== null && c.side === moverSide}
        blocked=${blockedBy.get(c.id)} stack=${here.length > 1 ? [here.indexOf(c.id), here.length] : null}
        onClick=${tokenClick} onHover=${setHover} />`;
      })}
    </svg>
    <div class="zoom-buttons">
      <${ZoomButton} cls="zoom-in" title="zoom in" act=${zoom.zoomIn}>+</${ZoomButton}>
      <${ZoomButton} cls="zoom-out" title="zoom out" disabled=${!zoom.zoomed} act=${zoom.zoomOut}>−</${ZoomButton}>
      <${ZoomButton} cls="zoom-fit" title="the whole map" disabled=${!zoom.zoomed} act=${zoom.fit}>⤢</${ZoomButton}>
    </div>
    ${risky && !tooltip && !whyNot && html`<div class="heat-legend" title="the best chance anyone who could react has to hit you there">
      <span>chance to be hit</span>${[10, 25, 50, 75, 100].map((p) => html`<i key=${p} class=${"heat-" + p}>${p}%</i>`)}</div>`}
    ${whyNot && !tooltip && html`<div class="map-tip why-not-tip" data-why-not=${whyNot.combatant}>
      <b>⊘ cannot be targeted</b> ${whyNot.words}</div>`}
    ${tooltip && html`<div class="map-tip">${hoveredMove ? html`
        <b>${humanize(hoveredMove.mode)} to (${hoveredMove.to[0]},${hoveredMove.to[1]})</b> · cost ${hoveredMove.cost}
        ${hoveredMove.threats.length === 0 ? html`<div class="ok">no one can react</div>` : hoveredMove.threats.map((t) => html`
          <div class="threat">${combatantName(state, t.reactor)}: ${t.label || humanize(t.reaction)}${t.at ? ` at (${t.at[0]},${t.at[1]})` : ""}${t.hit_chance != null ? ` — ${pct(t.hit_chance)} to hit` : ""}${t.rule ? html` <span class="rule">${t.rule}</span>` : ""}</div>`)}`
      : html`<b>${previewChoice.label}</b>${previewChoice.hit_chance != null ? html` — <span class="chance-of">${previewChoice.chance_of || "it works"}:</span> <span class="odds">${pct(previewChoice.hit_chance)}</span>` : ""}
        ${preview && preview.caught.length > 0 && html`<div class="caught-list">catches: ${preview.caught.map((c) => combatantName(state, c.combatant)).join(", ")}</div>`}
        ${preview && preview.allies_caught.length > 0 && html`<div class="threat allies-caught">⚠ catches your side: ${preview.allies_caught.map((id) => combatantName(state, id)).join(", ")}</div>`}
        ${preview?.refused && html`<div class="threat">${preview.refused}</div>`}
        ${(preview?.notes || []).map((n) => html`<div>${n}</div>`)}
        ${(previewChoice.notes || []).map((n) => html`<div class=${/ally|allies|friendly/i.test(n) ? "threat" : ""}>${n}</div>`)}
        ${armedPick && armedPick === previewChoice && html`<div class="tap-again">tap the square again to choose it</div>`}`}
    </div>`}
  </div>`;
}
