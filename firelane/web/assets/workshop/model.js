// The draft's setup, in the very format `firelane create --setup` takes
// (events/schemas.py EncounterSetup), and the edits the builder makes to it.
// Every edit returns a new setup and touches only what it changes: fields it
// does not know, and the order of those it does, are kept, so a setup
// imported and exported unedited comes back exactly as it went in.

// The engine's defaults for a terrain that leaves a field out (schemas.Terrain).
export const TERRAIN_DEFAULTS = { width: 24, height: 16, square_size: 5, unit: "ft", walls: [], cover: [], difficult: [] };
export const MAX_MAP_SIDE = 500; // engine/setup_check.py

export function terrainOf(setup) {
  return { ...TERRAIN_DEFAULTS, ...(setup.terrain || {}) };
}

// Walls are [x, y] (array-like in the engine), but an object {x, y} is read too.
export function wallXY(wall) {
  return Array.isArray(wall) ? wall : [wall.x, wall.y];
}

const key = (x, y) => `${x},${y}`;

function withTerrain(setup, changes) {
  return { ...setup, terrain: { ...(setup.terrain || {}), ...changes } };
}

export function resize(setup, { width, height }) {
  // Features left outside a smaller map are dropped (undo brings them back); tokens stay, and the checks say which are off the map.
  const inside = ([x, y]) => x < width && y < height;
  const t = terrainOf(setup);
  const changes = { width, height };
  if (setup.terrain?.walls) changes.walls = t.walls.filter((w) => inside(wallXY(w)));
  if (setup.terrain?.cover) changes.cover = t.cover.filter((c) => inside([c.x, c.y]));
  if (setup.terrain?.difficult) changes.difficult = t.difficult.filter(inside);
  return withTerrain(setup, changes);
}

export function setTerrainField(setup, field, value) {
  return withTerrain(setup, { [field]: value });
}

// One square painted with `tool` ("wall", "cover", "difficult" or "erase");
// `cover` is {level, facing} for the cover tool. The same setup comes back
// when the square already is as painted, so a stroke over it adds no step.
export function paint(setup, [x, y], tool, cover = null) {
  const t = terrainOf(setup);
  const k = key(x, y);
  const hasWall = t.walls.some((w) => key(...wallXY(w)) === k);
  const coverAt = t.cover.find((c) => key(c.x, c.y) === k);
  const hasDifficult = t.difficult.some((d) => key(...d) === k);
  const noWall = () => t.walls.filter((w) => key(...wallXY(w)) !== k);
  const noCover = () => t.cover.filter((c) => key(c.x, c.y) !== k);
  switch (tool) {
    case "wall":
      if (hasWall) return setup;
      return withTerrain(setup, { walls: [...t.walls, [x, y]], ...(coverAt ? { cover: noCover() } : {}) });
    case "cover": {
      const wanted = { x, y, level: cover.level, facing: cover.facing.map((f) => [...f]) };
      if (coverAt && JSON.stringify(coverAt) === JSON.stringify(wanted)) return setup;
      return withTerrain(setup, { cover: [...noCover(), wanted], ...(hasWall ? { walls: noWall() } : {}) });
    }
    case "difficult":
      if (hasDifficult) return setup;
      return withTerrain(setup, { difficult: [...t.difficult, [x, y]] });
    case "erase": {
      if (!hasWall && !coverAt && !hasDifficult) return setup;
      const changes = {};
      if (hasWall) changes.walls = noWall();
      if (coverAt) changes.cover = noCover();
      if (hasDifficult) changes.difficult = t.difficult.filter((d) => key(...d) !== k);
      return withTerrain(setup, changes);
    }
    default:
      return setup;
  }
}

export function combatantAt(setup, [x, y], except = null) {
  return (setup.combatants || []).find((c) => c.id !== except && c.position && c.position[0] === x && c.position[1] === y) || null;
}

export function isWall(setup, [x, y]) {
  return terrainOf(setup).walls.some((w) => key(...wallXY(w)) === key(x, y));
}

export function moveCombatant(setup, id, square) {
  return { ...setup, combatants: setup.combatants.map((c) => (c.id === id ? { ...c, position: square ? [...square] : null } : c)) };
}

export function updateCombatant(setup, id, changes) {
  return { ...setup, combatants: setup.combatants.map((c) => (c.id === id ? { ...c, ...changes } : c)) };
}

export function removeCombatant(setup, id) {
  const seats = setup.seats?.map((s) => ({ ...s, combatants: (s.combatants || []).filter((c) => c !== id) }));
  return { ...setup, combatants: setup.combatants.filter((c) => c.id !== id), ...(seats ? { seats } : {}) };
}

// An id for a new combatant made from a name: lowercase letters, digits and
// dashes, unique in the setup (the engine takes [A-Za-z0-9_.-]{1,64}).
export function freshId(setup, name) {
  const stem = (name || "combatant").toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "combatant";
  const taken = new Set((setup.combatants || []).map((c) => c.id));
  if (!taken.has(stem)) return stem;
  for (let n = 2; ; n += 1) if (!taken.has(`${stem}-${n}`)) return `${stem}-${n}`;
}

export function addCombatant(setup, combatant) {
  return { ...setup, combatants: [...(setup.combatants || []), combatant] };
}

// The player seats, as the engine would make them when the setup names none
// (engine/seats.py default_seats: one per side with human combatants, named
// after the side; the GM's and the spectators' seats are added by the
// engine). The builder writes them out once the GM edits one.
export function seatsOf(setup) {
  if (setup.seats && setup.seats.length) return setup.seats;
  const sides = [...new Set((setup.combatants || []).filter((c) => c.policy === "human").map((c) => c.side))];
  return sides.map((side) => ({ id: side, role: "player", name: side,
    combatants: setup.combatants.filter((c) => c.policy === "human" && c.side === side).map((c) => c.id) }));
}

export function addSeat(setup, name) {
  const seats = seatsOf(setup);
  const taken = new Set(seats.map((s) => s.id));
  let id = (name || "player").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40) || "player";
  for (let n = 2; taken.has(id) || id === "gm" || id === "spectator"; n += 1) id = `${id.replace(/-\d+$/, "")}-${n}`;
  return { ...setup, seats: [...seats, { id, role: "player", name: name || id, combatants: [] }] };
}

export function removeSeat(setup, seatId) {
  const gone = seatsOf(setup).find((s) => s.id === seatId);
  let next = { ...setup, seats: seatsOf(setup).filter((s) => s.id !== seatId) };
  for (const id of gone?.combatants || []) next = updateCombatant(next, id, { policy: "ai" });
  return next;
}

export function renameSeat(setup, seatId, name) {
  return { ...setup, seats: seatsOf(setup).map((s) => (s.id === seatId ? { ...s, name } : s)) };
}

export function setSeats(setup, seats) {
  return { ...setup, seats };
}

// Seat a combatant with a player seat (or with none: "" leaves it to the AI).
export function seatCombatant(setup, id, seatId) {
  const seats = seatsOf(setup).map((s) => ({ ...s, combatants: (s.combatants || []).filter((c) => c !== id) }))
    .map((s) => (s.id === seatId ? { ...s, combatants: [...s.combatants, id] } : s));
  // A seat the engine would have made for a side (named after it) goes once it plays no one: it was never the GM's.
  const sides = new Set((setup.combatants || []).map((c) => c.side));
  const kept = seats.filter((s) => !(s.role === "player" && !(s.combatants || []).length && s.id === s.name && sides.has(s.id)) || s.id === seatId);
  const policy = seatId ? "human" : "ai";
  return { ...updateCombatant(setup, id, { policy }), seats: kept };
}

export function setupText(setup) {
  return JSON.stringify(setup, null, 2) + "\n";
}
