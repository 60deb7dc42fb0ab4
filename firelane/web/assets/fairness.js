// The fight's verifier, in the page's own JavaScript (docs/fairness.md): it
// recomputes every die from the revealed seed and the players' client seeds,
// checks the seed against its commitment, and checks every signature of the
// log with the public key published when the encounter was created. It names
// the entries that fail.
//
// No DOM here: the page (verify.js) and node (tests/test_verifier_node.py) run
// this same file. SHA-256 and Ed25519 come from WebCrypto (crypto.subtle);
// BLAKE2b, which WebCrypto lacks, from the vendored @noble/hashes.

import { blake2b } from "./vendor/noble-hashes/blake2.js";

const encoder = new TextEncoder();
const SPAN = 1n << 64n;

export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 || /[^0-9a-fA-F]/.test(hex)) throw new Error("not hex");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  return out;
}

// A value as the specification's byte strings hold it: 4-byte big-endian length, then its bytes.
export function lengthPrefixed(value) {
  const bytes = typeof value === "string" ? encoder.encode(value) : value;
  const out = new Uint8Array(4 + bytes.length);
  new DataView(out.buffer).setUint32(0, bytes.length);
  out.set(bytes, 4);
  return out;
}

// ------------------------------------------------------------------ dice

// The commitment published at the start: BLAKE2b-256 of the seed, personalised "firelane-seed".
export function commitSeed(seed) {
  const personalization = new Uint8Array(16);
  personalization.set(encoder.encode("firelane-seed"));
  return bytesToHex(blake2b(seed, { dkLen: 32, personalization }));
}

// The key the dice are drawn with: the seed itself without client seeds, else
// BLAKE2b-256 keyed by the seed over "firelane-client-seeds:1" and each (seat, client seed).
export function diceKey(seed, clientSeeds) {
  if (!clientSeeds.length) return seed;
  const message = concat([encoder.encode("firelane-client-seeds:1"),
    ...clientSeeds.flatMap(([seat, text]) => [lengthPrefixed(seat), lengthPrefixed(text)])]);
  return blake2b(message, { key: seed, dkLen: 32 });
}

// One die's face: keyed BLAKE2b (8 bytes, big-endian) of "at:k:attempt", rejecting the uneven top stretch.
export function deriveFace(key, at, k, sides) {
  if (sides < 1) throw new Error(`a die needs at least one side, not ${sides}`);
  const n = BigInt(sides);
  const limit = SPAN - (SPAN % n);
  for (let attempt = 0; ; attempt++) {
    const digest = blake2b(encoder.encode(`${at}:${k}:${attempt}`), { key, dkLen: 8 });
    let value = 0n;
    for (const byte of digest) value = (value << 8n) | BigInt(byte);
    if (value < limit) return Number(value % n) + 1;
  }
}

// Every roll in an event body (an object with a purpose, a rule and its dice), as [path, roll].
export function findRolls(value, path = "", out = []) {
  if (Array.isArray(value)) {
    value.forEach((item, i) => findRolls(item, `${path}[${i}]`, out));
  } else if (value && typeof value === "object") {
    if (typeof value.purpose === "string" && typeof value.rule === "string" && Array.isArray(value.dice)) {
      out.push([path, value]);
      return out;
    }
    for (const [name, item] of Object.entries(value)) {
      if (path === "" && name === "state" && value.type === "EncounterRewound") continue;  // a state, not events
      findRolls(item, path ? `${path}.${name}` : name, out);
    }
  }
  return out;
}

// ------------------------------------------------------------------ signatures

const GROUP_CONTEXT = "firelane-log-group:1";
const SIGNATURE_CONTEXT = encoder.encode("firelane-log-signature:1:");

export function entryBytes(entry) {
  return concat([String(entry.n), entry.t, String(entry.s), entry.c, entry.k, entry.q, entry.d].map(lengthPrefixed));
}

export function groupHeader(campaign, encounter, firstVersion) {
  return concat([GROUP_CONTEXT, campaign, encounter, String(firstVersion)].map(lengthPrefixed));
}

function subtle() {
  const api = globalThis.crypto && globalThis.crypto.subtle;
  if (!api) throw new Error("this browser has no WebCrypto (crypto.subtle): open the page over https or localhost");
  return api;
}

export async function sha256(bytes) {
  return new Uint8Array(await subtle().digest("SHA-256", bytes));
}

export async function ed25519Verify(publicKey, message, signature) {
  const key = await subtle().importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
  return subtle().verify({ name: "Ed25519" }, key, signature, message);
}

// ------------------------------------------------------------------ the whole log

function problemAt(report, versions, reason) {
  report.problems.push({ versions, reason });
  for (const v of versions) {
    const mine = report.entries.get(v);
    if (mine) mine.problems.push(reason);
  }
}

function range(low, high) {
  const out = [];
  for (let v = low; v <= high; v++) out.push(v);
  return out;
}

// Verify a log: `entries` are the log's entries as stored, oldest first
// ({n, t, s, d, c, k, q, g}: GET …/log), `campaign` and `encounter` name it,
// `publishedKey` (hex, optional) is the key published when it was created.
// Returns {ok, problems: [{versions, reason}], entries: Map version ->
// {type, dice, problems}, dice, rolls, seedRevealed, commitmentOk,
// signatures, signedThrough, unsigned, clientSeeds, publicKey}.
export async function verifyLog({ campaign, encounter, entries, publishedKey = "" }) {
  const report = {
    ok: false, problems: [], entries: new Map(), dice: 0, rolls: 0, seedRevealed: false, commitmentOk: false,
    signatures: 0, signedThrough: 0, unsigned: "", clientSeeds: [], publicKey: "",
  };
  const bodies = [];
  for (const entry of entries) {
    report.entries.set(entry.n, { type: entry.t, dice: [], problems: [] });
    let body = null;
    try { body = JSON.parse(entry.d); } catch { problemAt(report, [entry.n], "its body is not JSON"); }
    bodies.push(body);
  }
  const start = bodies[0];
  if (!start || start.type !== "EncounterStarted") {
    problemAt(report, [], "the log does not begin with the encounter's start");
    return finish(report);
  }

  // The signatures: groups of entries, each closed by an entry carrying g.
  report.publicKey = start.log_public_key || "";
  if (publishedKey && report.publicKey && publishedKey !== report.publicKey) {
    problemAt(report, [1], "the log's public key is not the one published for this encounter");
  }
  if (!report.publicKey) {
    report.unsigned = "the log carries no public key (written before firelane signed its logs): not signed";
  } else {
    const publicKey = hexToBytes(report.publicKey);
    let first = 1, expected = 1, broken = "", parts = [groupHeader(campaign, encounter, 1)];
    for (const entry of entries) {
      if (entry.n !== expected && !broken) broken = `v${entry.n} comes where v${expected} should`;
      expected = entry.n + 1;
      parts.push(entryBytes(entry));
      if (!entry.g) continue;
      let valid = false;
      try {
        const digest = await sha256(concat(parts));
        valid = await ed25519Verify(publicKey, concat([SIGNATURE_CONTEXT, digest]), hexToBytes(entry.g));
      } catch { valid = false; }
      if (valid && !broken) {
        report.signatures += 1;
        report.signedThrough = entry.n;
      } else {
        problemAt(report, range(first, entry.n),
          `${first === entry.n ? `v${first}` : `v${first}-v${entry.n}`}: ${broken ||
            "its signature does not match (an entry in it was altered, added or removed)"}`);
      }
      first = expected;
      broken = "";
      parts = [groupHeader(campaign, encounter, first)];
    }
    const last = entries.length ? entries[entries.length - 1].n : 0;
    if (first <= last) {
      report.unsigned = first === last ? `v${last} is not signed yet` : `v${first}-v${last} are not signed yet`;
      if (broken) problemAt(report, range(first, last), `v${first}-v${last}: not signed, and ${broken}`);
    }
  }

  // The dice: the seed from the reveal at the end, checked against the commitment.
  const revealIndex = bodies.map((b) => b && b.type).lastIndexOf("SeedRevealed");
  if (revealIndex < 0) {
    problemAt(report, [], "the seed has not been revealed yet (the encounter is still running?)");
    return finish(report);
  }
  const seed = hexToBytes(bodies[revealIndex].seed);
  report.seedRevealed = true;
  report.commitmentOk = commitSeed(seed) === start.seed_commitment;
  if (!report.commitmentOk) problemAt(report, [1], "the revealed seed does not match the commitment published at the start");

  let clientSeeds = [], key = seed;
  let branch = 0, base = 0, previousCommand = null;
  let used = new Map();  // "at,k" -> [face, version first seen]
  entries.forEach((entry, index) => {
    const body = bodies[index];
    if (!body) return;
    // A batch is a run of entries answering one command: its dice sit at the branch position before it.
    if (entry.c !== previousCommand || !entry.c) {
      base = branch;
      previousCommand = entry.c;
    }
    if (body.type === "EncounterRewound") {
      branch = body.branch_version;
      used = new Map([...used].filter(([position]) => Number(position.split(",")[0]) < branch));
      clientSeeds = ((body.state && body.state.client_seeds) || []).map(([seat, text]) => [seat, text]);
      key = diceKey(seed, clientSeeds);
      return;
    }
    branch += 1;
    if (body.type === "ClientSeedAdded") {
      clientSeeds = [...clientSeeds, [body.seat, body.client_seed]];
      report.clientSeeds.push({ version: entry.n, seat: body.seat, clientSeed: body.client_seed });
      key = diceKey(seed, clientSeeds);
    }
    if (body.type === "SeedRevealed" && body.seed !== bodies[revealIndex].seed) {
      problemAt(report, [entry.n], `v${entry.n} reveals another seed than the log's last reveal`);
    }
    for (const [path, roll] of findRolls(body)) {
      report.rolls += 1;
      for (const die of roll.dice) {
        const [sides, face, at = -1, k = 0] = die;
        report.dice += 1;
        const where = `v${entry.n} ${entry.t}.${path} d${sides}`;
        report.entries.get(entry.n).dice.push({ sides, face, at, k });
        if (at < 0) { problemAt(report, [entry.n], `${where}: die has no seed position`); continue; }
        const position = `${at},${k}`;
        if (used.has(position)) {
          const [seen, firstSeen] = used.get(position);
          if (seen !== face) problemAt(report, [entry.n], `${where}: quotes dice position (${at}, ${k}) from v${firstSeen} with another face`);
          continue;
        }
        used.set(position, [face, entry.n]);
        if (at !== base) {
          problemAt(report, [entry.n], `${where}: rolled at position ${at} but its command's events start after position ${base}`);
        }
        const expected = deriveFace(key, at, k, sides);
        if (expected !== face) problemAt(report, [entry.n], `${where}: face ${face} but the seed gives ${expected}`);
      }
    }
  });
  return finish(report);
}

function finish(report) {
  report.ok = report.seedRevealed && report.commitmentOk && report.problems.length === 0;
  return report;
}

// Fetch a fight's log and key over the API (any seat's token) and verify it.
export async function fetchAndVerify({ campaign, encounter, token, fetchImpl = globalThis.fetch }) {
  const base = `/api/campaigns/${encodeURIComponent(campaign)}/encounters/${encodeURIComponent(encounter)}`;
  const headers = { Authorization: `Bearer ${token}` };
  const read = async (path) => {
    const answer = await fetchImpl(base + path, { headers });
    if (!answer.ok) throw new Error(`${path}: ${answer.status}`);
    return answer.json();
  };
  const published = await read("/signing-key");
  const entries = [];
  let after = "0-0";
  for (;;) {
    const page = await read(`/log?after=${after}&limit=10000`);
    entries.push(...page.entries);
    if (page.entries.length < 10000) break;
    after = page.entries[page.entries.length - 1].id;
  }
  const report = await verifyLog({ campaign, encounter, entries, publishedKey: published.public_key });
  report.fingerprint = published.fingerprint;
  return report;
}
