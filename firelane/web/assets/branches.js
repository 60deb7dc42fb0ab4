// What the GM's rewinds undid, as the view tells it (`undone`: [first, last,
// the rewind's version] spans, sorted; `rewinds`: each rewind's target, time
// and reason): which narration lines are undone, where a rewind may still go,
// and the replay's steps along the branch that stands.

export function undoneBy(spans, n) {
  let lo = 0, hi = (spans?.length || 0) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [first, last, by] = spans[mid];
    if (n < first) hi = mid - 1;
    else if (n > last) lo = mid + 1;
    else return by;
  }
  return null;
}

// The next version after `at` to show when stepping on: the next one that
// stands, or, inside an undone branch, the next of that branch (then its rewind).
export function stepOn(spans, at, newest) {
  if (at >= newest) return newest;
  if (undoneBy(spans, at) !== null) return at + 1;
  let next = at + 1;
  for (;;) {
    const by = undoneBy(spans, next);
    if (by === null || next >= newest) return Math.min(next, newest);
    next = spans.find(([first, last]) => first <= next && next <= last)[1] + 1;
  }
}

// The version before `at` to show when stepping back, the same way.
export function stepBack(spans, at) {
  if (at <= 0) return 0;
  if (undoneBy(spans, at) !== null) return at - 1;
  let previous = at - 1;
  while (previous > 0 && undoneBy(spans, previous) !== null) {
    previous = spans.find(([first, last]) => first <= previous && previous <= last)[0] - 1;
  }
  return previous;
}

export function clockTime(ms) {
  if (!ms) return "";
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// "undone by the GM's rewind at event 93 (14:32): Bo was behind the crates"
export function undoneNote(rewinds, by) {
  const rewind = rewinds?.[by];
  const when = rewind?.at ? ` (${clockTime(rewind.at)})` : "";
  return `undone by the GM's rewind at event ${by}${when}${rewind?.reason ? `: ${rewind.reason}` : ""}`;
}

export function spanText([first, last]) {
  return first === last ? `event ${first}` : `events ${first}–${last}`;
}

// Whether the GM may rewind to just after line `n` now: a version before the
// newest that stands, and lies between two commands (the line after it begins
// a command's events: `batch_start`), while the fight runs. The engine checks
// the same (`check_rewind`); ⟲ is offered only there.
export function rewindPoint(lines, view, n) {
  if (!view?.state?.started || view.state.ended || n < 1 || n >= view.version) return false;
  if (undoneBy(view.undone, n) !== null) return false;
  let lo = 0, hi = lines.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (lines[mid].n < n + 1) lo = mid + 1;
    else if (lines[mid].n > n + 1) hi = mid - 1;
    else return !!lines[mid].batch_start;
  }
  return false;
}
