// Undo and redo for the builder: a value (the draft's setup and its layout)
// with its past and its future. A stroke of painting, or one drag, is one
// step: changes made with the same `step` key one after another merge into
// the step they continue.
import { useRef, useState } from "../vendor/preact-hooks.module.js";

const KEPT = 200; // steps of undo kept

export function useHistory(initial) {
  const [, redraw] = useState(0);
  const store = useRef(null);
  if (store.current === null) store.current = { past: [], value: initial, future: [], lastStep: null };
  const s = store.current;
  const bump = () => redraw((n) => n + 1);
  return {
    value: s.value,
    canUndo: s.past.length > 0,
    canRedo: s.future.length > 0,
    // `next` is the new value or a function of the current one.
    change(next, step = null) {
      const value = typeof next === "function" ? next(s.value) : next;
      if (value === s.value) return;
      if (!(step && step === s.lastStep)) {
        s.past.push(s.value);
        if (s.past.length > KEPT) s.past.shift();
      }
      s.value = value;
      s.future = [];
      s.lastStep = step;
      bump();
    },
    undo() {
      if (!s.past.length) return;
      s.future.push(s.value);
      s.value = s.past.pop();
      s.lastStep = null;
      bump();
    },
    redo() {
      if (!s.future.length) return;
      s.past.push(s.value);
      s.value = s.future.pop();
      s.lastStep = null;
      bump();
    },
    // A value that is not an edit (the draft as saved, or loaded afresh): no undo across it.
    reset(value) {
      s.past = [];
      s.future = [];
      s.value = value;
      s.lastStep = null;
      bump();
    },
    // Ends the current step, so the next change starts a new one.
    endStep() {
      s.lastStep = null;
    },
  };
}
