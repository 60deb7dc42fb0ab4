// The map: an SVG square grid with walls, directional cover, difficult
// ground, persistent zones, area templates, range bands and the tokens; and,
// while a seat acts, the squares it may move to (coloured by danger), the
// targets it may attack (with the chance to hit) and the squares a choice
// needs. It draws what it is given and reports clicks; the App decides.
import { useEffect, useState } from "./vendor/preact-hooks.module.js";
import { html, sideClass, initials, pct, sq, danger, combatantName, humanize } from "./util.js";

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

function Token({ state, combatant, extras, mine, selected, active, target, caught, caughtAlly, onClick, onHover }) {
  const [x, y] = combatant.position;
  const cx = x * S + S / 2, cy = y * S + S / 2;
  const health = extras?.health;
  const conditions = Object.keys(combatant.conditions || {});
  const classes = ["token", sideClass(state, combatant.side)];
  if (combatant.out_of_fight) classes.push("down");
  if (mine) classes.push("mine");
  if (selected) classes.push("selected");
  if (active) classes.push("active");
  if (target) classes.push("targetable");
  if (caught) classes.push("caught");
  if (caughtAlly) classes.push("caught-ally");
  const ratio = health ? Math.max(0, Math.min(1, health.value / health.max)) : null;
  const best = target ? Math.max(...target.map((a) => a.hit_chance)) : null;
  const title = `${combatant.name} (${combatant.side})` +
    (health ? ` — ${health.label} ${health.wounds !== undefined ? `(${health.wounds} wounds)` : `${health.value}/${health.max}`}` : "") +
    (conditions.length ? ` — ${conditions.join(", ")}` : "") + (combatant.out_of_fight ? " — out of the fight" : "");
  return html`<g class=${classes.join(" ")} data-token=${combatant.id} data-side=${combatant.side} data-pos=${`${x},${y}`}
      onClick=${(e) => { e.stopPropagation(); onClick(combatant.id); }}
      onMouseEnter=${() => onHover({ token: combatant.id })} onMouseLeave=${() => onHover(null)}>
    <title>${title}</title>
    ${active && html`<circle class="active-ring" cx=${cx} cy=${cy} r=${S * 0.47} />`}
    ${target && html`<circle class="target-ring" cx=${cx} cy=${cy} r=${S * 0.49} />`}
    ${caughtAlly && html`<g class="ally-warning"><circle cx=${cx} cy=${cy} r=${S * 0.49} /><text x=${cx + S * 0.3} y=${cy - S * 0.25}>⚠</text></g>`}
    <circle class="body" cx=${cx} cy=${cy} r=${S * 0.36} />
    <text class="initials" x=${cx} y=${cy + 4.5} text-anchor="middle">${initials(combatant.name)}</text>
    ${ratio !== null && html`<g class="health">
      <rect class="track" x=${x * S + 5} y=${y * S + S - 6} width=${S - 10} height="4" rx="2" />
      <rect class=${"fill" + (ratio <= 0.34 ? " low" : ratio <= 0.67 ? " mid" : "")} x=${x * S + 5} y=${y * S + S - 6}
        width=${(S - 10) * ratio} height="4" rx="2" />
    </g>`}
    ${conditions.slice(0, 3).map((name, i) => html`<circle key=${name} class=${"condition c-" + name.replace(/[^a-z]/g, "")}
        cx=${x * S + 6 + i * 7} cy=${y * S + 6} r="3"><title>${name}</title></circle>`)}
    ${combatant.out_of_fight && html`<text class="down-mark" x=${cx} y=${cy + 6} text-anchor="middle">✖</text>`}
    ${target && html`<g class="chance-badge"><rect x=${x * S + S - 22} y=${y * S - 8} width="30" height="15" rx="7" />
      <text x=${x * S + S - 7} y=${y * S + 3} text-anchor="middle">${pct(best)}</text></g>`}
  </g>`;
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

// `previewing`: a choice without a square whose area is previewed while its
// button is hovered (a cone's direction, a zone); a hovered square choice is
// previewed too. The server computes every preview (`view.previewable` lists
// the command types it can); the map only draws the answer.
export function GameMap({ view, mine, selected, moves, targets, picks, onSquare, onToken, focus, previewArea, previewing }) {
  const [hover, setHover] = useState(null);
  const [areaPreview, setAreaPreview] = useState(null); // {key, squares, caught, allies_caught, notes, refused}
  const state = view.state;
  const terrain = state.terrain;
  const width = terrain.width * S, height = terrain.height * S;
  const movesBySquare = new Map((moves || []).map((m) => [sq(m.to), m]));
  // The first choice at a square is its square's (an action may list several at one square: each RoF, each box).
  const picksBySquare = new Map();
  for (const p of picks || []) if (p.square && !picksBySquare.has(sq(p.square))) picksBySquare.set(sq(p.square), p);
  const hoveredMove = hover?.square ? movesBySquare.get(hover.square) : null;
  const hoveredPick = hover?.square ? picksBySquare.get(hover.square) : null;
  const previewable = new Set(view.previewable || []);
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
    overlays.push(html`<rect key=${"m" + sq(move.to)} class=${"reach " + cls} data-square=${sq(move.to)}
      data-threats=${move.threats.length} x=${move.to[0] * S + 2} y=${move.to[1] * S + 2} width=${S - 4} height=${S - 4} rx="5"
      onClick=${(e) => { e.stopPropagation(); onSquare(move.to); }}
      onMouseEnter=${() => setHover({ square: sq(move.to) })} onMouseLeave=${() => setHover(null)} />`);
  }
  for (const pick of picksBySquare.values()) {
    overlays.push(html`<rect key=${"p" + sq(pick.square)} class=${"pick" + (pick.allies ? " hits-allies" : "")}
      data-pick=${sq(pick.square)} x=${pick.square[0] * S + 3} y=${pick.square[1] * S + 3} width=${S - 6} height=${S - 6} rx="5"
      onClick=${(e) => { e.stopPropagation(); onSquare(pick.square, pick); }}
      onMouseEnter=${() => setHover({ square: sq(pick.square) })} onMouseLeave=${() => setHover(null)} />`);
  }

  const preview = previewKey && areaPreview?.key === previewKey ? areaPreview : null;
  const alliesCaught = new Set(preview?.allies_caught || []);
  const caught = new Set((preview?.caught || []).map((c) => c.combatant));
  const area = view.area;
  const tooltip = hoveredMove || previewChoice;

  return html`<div class="map-wrap">
    <svg class=${"map" + (picksBySquare.size ? " picking" : "")} viewBox=${`-10 -10 ${width + 20} ${height + 20}`} preserveAspectRatio="xMidYMid meet"
        onClick=${(e) => onSquare(squareAt(e), null, true)}>
      <defs>
        <pattern id="grid" width=${S} height=${S} patternUnits="userSpaceOnUse">
          <path d=${`M ${S} 0 L 0 0 0 ${S}`} class="gridline" />
        </pattern>
        <pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <line x1="0" y1="0" x2="0" y2="8" class="hatchline" />
        </pattern>
      </defs>
      <rect class="ground" x="0" y="0" width=${width} height=${height} />
      ${(terrain.difficult || []).map(([x, y]) => html`<rect key=${"d" + x + "," + y} class="difficult" x=${x * S} y=${y * S} width=${S} height=${S}><title>difficult ground</title></rect>`)}
      <rect x="0" y="0" width=${width} height=${height} fill="url(#grid)" pointer-events="none" />
      ${(view.zones || []).map((zone, i) => html`<g key=${"z" + i} class=${"zone zone-" + zone.kind}>
        ${zone.squares.map(([x, y]) => html`<rect x=${x * S} y=${y * S} width=${S} height=${S} fill=${ZONE_COLOURS[zone.kind] || "#c9a0ff"} />`)}
        <title>${zone.kind}${zone.source ? ` (${zone.source})` : ""}: ${zone.rounds_left} round${zone.rounds_left === 1 ? "" : "s"} left</title>
      </g>`)}
      ${Object.values(state.combatants).filter((c) => c.overwatch_area && c.overwatch_area.length && !c.out_of_fight).map((c) =>
        html`<g key=${"ow" + c.id} class=${"overwatch " + sideClass(state, c.side)}>${c.overwatch_area.map(([x, y]) =>
          html`<rect x=${x * S + 1} y=${y * S + 1} width=${S - 2} height=${S - 2} />`)}<title>${c.name}'s overwatch</title></g>`)}
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
      ${combatants.map((c) => html`<${Token} key=${c.id} state=${state} combatant=${c} extras=${view.extras?.[c.id]}
        mine=${mine.has(c.id)} selected=${selected === c.id} active=${state.active === c.id} caught=${caught.has(c.id)} caughtAlly=${alliesCaught.has(c.id)}
        target=${targets?.get(c.id)} onClick=${onToken} onHover=${setHover} />`)}
    </svg>
    ${tooltip && html`<div class="map-tip">${hoveredMove ? html`
        <b>${humanize(hoveredMove.mode)} to (${hoveredMove.to[0]},${hoveredMove.to[1]})</b> · cost ${hoveredMove.cost}
        ${hoveredMove.threats.length === 0 ? html`<div class="ok">no one can react</div>` : hoveredMove.threats.map((t) => html`
          <div class="threat">${combatantName(state, t.reactor)}: ${humanize(t.reaction)}${t.at ? ` at (${t.at[0]},${t.at[1]})` : ""}${t.hit_chance != null ? ` — ${pct(t.hit_chance)} to hit` : ""}${t.rule ? html` <span class="rule">${t.rule}</span>` : ""}</div>`)}`
      : html`<b>${previewChoice.label}</b>${previewChoice.hit_chance != null ? html` — <span class="odds">${pct(previewChoice.hit_chance)}</span>` : ""}
        ${preview && preview.caught.length > 0 && html`<div class="caught-list">catches: ${preview.caught.map((c) => combatantName(state, c.combatant)).join(", ")}</div>`}
        ${preview && preview.allies_caught.length > 0 && html`<div class="threat allies-caught">⚠ catches your side: ${preview.allies_caught.map((id) => combatantName(state, id)).join(", ")}</div>`}
        ${preview?.refused && html`<div class="threat">${preview.refused}</div>`}
        ${(preview?.notes || []).map((n) => html`<div>${n}</div>`)}
        ${(previewChoice.notes || []).map((n) => html`<div class=${/ally|allies|friendly/i.test(n) ? "threat" : ""}>${n}</div>`)}`}
    </div>`}
  </div>`;
}
