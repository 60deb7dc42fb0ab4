// The builder's map: the draft's grid drawn in squares (the SVG's units are
// squares, so a 100×100 map is as cheap to draw as a 10×10 one: the grid,
// the walls and the difficult ground are one path each), with its optional
// background image under it, aligned by the GM.
//
// Pointer events throughout, so a mouse, a pen and a finger all work: with a
// painting tool a press paints a square and a drag paints every square it
// crosses (one undo step per stroke); with the tokens tool a token is dragged
// to its square and dropped (refused onto a wall or another token), and a tap
// selects it. `mapRef.current.squareAt(clientX, clientY)` tells the builder
// which square a token carried in from its lists is dropped on.
import { useEffect, useRef, useState } from "../vendor/preact-hooks.module.js";
import { html, initials } from "../util.js";
import { combatantAt, isWall, moveCombatant, paint, terrainOf, wallXY } from "./model.js";

// Facings are unit grid vectors pointing from the cover towards the threat (schemas.CoverFeature).
export const FACINGS = [
  { vector: [0, -1], label: "north", arrow: "↑" }, { vector: [1, -1], label: "north-east", arrow: "↗" },
  { vector: [1, 0], label: "east", arrow: "→" }, { vector: [1, 1], label: "south-east", arrow: "↘" },
  { vector: [0, 1], label: "south", arrow: "↓" }, { vector: [-1, 1], label: "south-west", arrow: "↙" },
  { vector: [-1, 0], label: "west", arrow: "←" }, { vector: [-1, -1], label: "north-west", arrow: "↖" },
];

export function facingWords(facing) {
  if (!facing || !facing.length) return "every direction";
  return facing.map(([dx, dy]) => FACINGS.find((f) => f.vector[0] === dx && f.vector[1] === dy)?.label || `${dx},${dy}`).join(", ");
}

function squaresPath(squares) {
  let d = "";
  for (const [x, y] of squares) d += `M${x} ${y}h1v1h-1z`;
  return d;
}

function gridPath(width, height) {
  let d = "";
  for (let x = 0; x <= width; x += 1) d += `M${x} 0V${height}`;
  for (let y = 0; y <= height; y += 1) d += `M0 ${y}H${width}`;
  return d;
}

// Cover drawn as a bar on each edge it faces (a corner for a diagonal), or a
// ring round the square when it covers from every direction.
function coverMarks(feature) {
  const { x, y } = feature;
  const facing = feature.facing && feature.facing.length ? feature.facing : null;
  if (!facing) return html`<rect class="cover-all" x=${x + 0.14} y=${y + 0.14} width="0.72" height="0.72" rx="0.12" />`;
  return facing.map(([dx, dy], i) => {
    const cx = x + 0.5 + dx * 0.4, cy = y + 0.5 + dy * 0.4;
    if (dx && dy) return html`<path key=${i} d=${`M${cx - dx * 0.35} ${cy}L${cx} ${cy}L${cx} ${cy - dy * 0.35}`} />`;
    return dy ? html`<line key=${i} x1=${x + 0.1} y1=${cy} x2=${x + 0.9} y2=${cy} />` : html`<line key=${i} x1=${cx} y1=${y + 0.1} x2=${cx} y2=${y + 0.9} />`;
  });
}

export function sideIndex(setup, side) {
  const sides = [...new Set((setup.combatants || []).map((c) => c.side))].sort();
  return Math.max(0, sides.indexOf(side)) % 6;
}

let strokes = 0;

export function MapEditor({ setup, change, endStep, tool, cover, zoom, background, selected, onSelect, mapRef, say, coverLabel, onEmptySquare, bands }) {
  const svgRef = useRef(null);
  const [drag, setDrag] = useState(null); // {id, square, moved}
  const [hover, setHover] = useState(null);
  const stroke = useRef(null); // {id, last}
  const pan = useRef(null); // {x, y, left, top, moved, square}: a press on the empty map
  const t = terrainOf(setup);
  const width = Math.max(1, t.width | 0), height = Math.max(1, t.height | 0);

  const squareAt = (clientX, clientY) => {
    const svg = svgRef.current;
    if (!svg) return null;
    const box = svg.getBoundingClientRect();
    if (clientX < box.left || clientY < box.top || clientX >= box.right || clientY >= box.bottom) return null;
    const x = Math.floor(((clientX - box.left) / box.width) * width), y = Math.floor(((clientY - box.top) / box.height) * height);
    return x >= 0 && y >= 0 && x < width && y < height ? [x, y] : null;
  };
  useEffect(() => { if (mapRef) mapRef.current = { squareAt }; });

  const painting = tool !== "tokens";
  const onPointerDown = (e) => {
    if (e.button !== undefined && e.button !== 0) return;
    const square = squareAt(e.clientX, e.clientY);
    if (!square) return;
    const tokenId = e.target.closest?.("[data-token]")?.getAttribute("data-token");
    if (!painting) {
      if (!tokenId) {
        // The map takes every touch itself (a browser's own panning would cancel a drag), so a press on the
        // empty map pans it, and a press that stays put is a tap on that square.
        const box = svgRef.current.parentElement;
        svgRef.current.setPointerCapture?.(e.pointerId);
        pan.current = { x: e.clientX, y: e.clientY, left: box.scrollLeft, top: box.scrollTop, moved: false, square };
        return;
      }
      e.preventDefault();
      svgRef.current.setPointerCapture?.(e.pointerId);
      setDrag({ id: tokenId, square, moved: false, from: square });
      return;
    }
    e.preventDefault();
    svgRef.current.setPointerCapture?.(e.pointerId);
    stroke.current = { id: `stroke-${++strokes}`, last: square.join(",") };
    change((s) => paint(s, square, tool, cover), stroke.current.id);
  };
  const onPointerMove = (e) => {
    if (pan.current) {
      const p = pan.current, box = svgRef.current.parentElement;
      if (Math.abs(e.clientX - p.x) + Math.abs(e.clientY - p.y) > 6) p.moved = true;
      if (p.moved) { box.scrollLeft = p.left - (e.clientX - p.x); box.scrollTop = p.top - (e.clientY - p.y); }
      return;
    }
    const square = squareAt(e.clientX, e.clientY);
    setHover(square);
    if (!square) return;
    if (drag) {
      if (square[0] !== drag.square[0] || square[1] !== drag.square[1]) setDrag({ ...drag, square, moved: true });
      return;
    }
    if (stroke.current && stroke.current.last !== square.join(",")) {
      stroke.current.last = square.join(",");
      change((s) => paint(s, square, tool, cover), stroke.current.id);
    }
  };
  const onPointerUp = (e) => {
    if (pan.current) {
      const { moved, square } = pan.current;
      pan.current = null;
      if (!moved && e.type !== "pointercancel") { onSelect(null); onEmptySquare?.(square); }
      return;
    }
    if (stroke.current) { stroke.current = null; endStep(); }
    if (!drag) return;
    const { id, square, moved } = drag;
    setDrag(null);
    if (!moved) { onSelect(id); return; }
    const other = combatantAt(setup, square, id);
    if (isWall(setup, square)) say(`(${square[0]}, ${square[1]}) is a wall`);
    else if (other) say(`(${square[0]}, ${square[1]}) is taken by ${other.name || other.id}`);
    else { change((s) => moveCombatant(s, id, square)); endStep(); onSelect(id); }
  };

  const tokens = (setup.combatants || []).filter((c) => Array.isArray(c.position));
  const cellPx = zoom;
  const bg = background?.url ? background : null;
  const hoverCover = hover && t.cover.find((c) => c.x === hover[0] && c.y === hover[1]);
  return html`<div class="ws-map-scroll">
    <svg ref=${svgRef} class=${"ws-map tool-" + tool} data-width=${width} data-height=${height}
        width=${width * cellPx} height=${height * cellPx} viewBox=${`0 0 ${width} ${height}`}
        onPointerDown=${onPointerDown} onPointerMove=${onPointerMove} onPointerUp=${onPointerUp} onPointerCancel=${onPointerUp}
        onPointerLeave=${() => setHover(null)}>
      <rect class="ground" x="0" y="0" width=${width} height=${height} />
      ${bg && html`<image class="background" href=${bg.url} x=${bg.offset_x || 0} y=${bg.offset_y || 0}
        width=${bg.width_squares || width} height=${(bg.width_squares || width) * (bg.aspect || 1)} preserveAspectRatio="none" opacity=${bg.opacity ?? 0.85} />`}
      <path class="difficult" d=${squaresPath(t.difficult)} />
      <path class="gridline" d=${gridPath(width, height)} />
      <path class="wall" d=${squaresPath(t.walls.map(wallXY))} />
      ${t.cover.map((c) => html`<g key=${`c${c.x},${c.y}`} class=${"cover cover-" + c.level} data-cover=${`${c.x},${c.y}`} data-level=${c.level}
        data-facing=${(c.facing || []).map((f) => f.join(",")).join(" ")}>${coverMarks(c)}</g>`)}
      ${bands && bands.at && bands.list.map((band) => {
        const r = band.squares, [ax, ay] = bands.at;
        const x0 = Math.max(0, ax - r), y0 = Math.max(0, ay - r), x1 = Math.min(width, ax + r + 1), y1 = Math.min(height, ay + r + 1);
        return html`<g key=${band.name} class=${"band band-" + band.name} data-band=${band.name}><rect x=${x0} y=${y0} width=${x1 - x0} height=${y1 - y0} rx="0.2" />
          <text x=${x0 + 0.1} y=${y0 + 0.4}>${band.name} ≤ ${band.metres} m</text></g>`;
      })}
      ${hover && html`<rect class="hover" x=${hover[0]} y=${hover[1]} width="1" height="1" />`}
      ${tokens.map((c) => {
        const at = drag && drag.id === c.id ? drag.square : c.position;
        const [x, y] = at;
        return html`<g key=${c.id} class=${`token side${sideIndex(setup, c.side)}` + (selected === c.id ? " selected" : "") + (drag?.id === c.id ? " dragging" : "")
            + (c.policy === "human" ? " human" : "")} data-token=${c.id} data-pos=${`${c.position[0]},${c.position[1]}`}>
          <title>${c.name || c.id} (${c.side}${c.policy === "human" ? ", a player's" : ", AI"})</title>
          <circle cx=${x + 0.5} cy=${y + 0.5} r="0.38" />
          <text x=${x + 0.5} y=${y + 0.63} text-anchor="middle">${initials(c.name || c.id)}</text>
        </g>`;
      })}
    </svg>
    ${hover && html`<div class="ws-map-tip">(${hover[0]}, ${hover[1]})${isWall(setup, hover) ? " · wall" : ""}${hoverCover ? ` · ${coverLabel(hoverCover.level)} cover facing ${facingWords(hoverCover.facing)}` : ""}${
      t.difficult.some((d) => d[0] === hover[0] && d[1] === hover[1]) ? " · difficult ground" : ""}${
      (() => { const c = combatantAt(setup, hover); return c ? ` · ${c.name || c.id}` : ""; })()}</div>`}
  </div>`;
}
