// The page's verifier (fairness.js) on the test vectors of docs/fairness.md,
// given as a JSON file: prints, per vector, what fairness.js computes.
import { readFileSync } from "node:fs";
import { webcrypto } from "node:crypto";

if (!globalThis.crypto) globalThis.crypto = webcrypto;

const f = await import(new URL("../../firelane/web/assets/fairness.js", import.meta.url));
const vectors = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = [];
for (const v of vectors) {
  if (v.kind === "commitment") out.push({ commitment: f.commitSeed(f.hexToBytes(v.seed)) });
  else if (v.kind === "dice" || v.kind === "die-detail") {
    const dice = v.kind === "dice" ? v.dice : [[v.at, v.k, v.sides, v.face]];
    out.push({ dice: dice.map(([at, k, sides]) => [at, k, sides, f.deriveFace(f.hexToBytes(v.key), at, k, sides)]) });
  } else if (v.kind === "client-seeds") {
    const key = f.diceKey(f.hexToBytes(v.seed), v.client_seeds);
    out.push({ dice_key: f.bytesToHex(key), dice: v.dice.map(([at, k, sides]) => [at, k, sides, f.deriveFace(key, at, k, sides)]) });
  } else if (v.kind === "signed-group") {
    const parts = [f.groupHeader(v.campaign, v.encounter, v.first_version), ...v.entries.map(f.entryBytes)];
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { all.set(p, at); at += p.length; }
    const digest = await f.sha256(all);
    const message = new Uint8Array([...new TextEncoder().encode("firelane-log-signature:1:"), ...digest]);
    const valid = await f.ed25519Verify(f.hexToBytes(v.public_key), message, f.hexToBytes(v.signature));
    out.push({ first_entry_bytes: f.bytesToHex(f.entryBytes(v.entries[0])), group_digest: f.bytesToHex(digest), valid });
  } else if (v.kind === "lobby-fight") {
    const report = await f.verifyLog({ campaign: v.campaign, encounter: v.encounter, entries: v.entries,
                                       publishedKey: v.public_key });
    const key = f.diceKey(f.hexToBytes(v.seed), report.clientSeeds.map((c) => [c.seat, c.clientSeed]));
    const opening = [...report.entries.values()].flatMap((e) => e.dice)
      .map(({ at, k, sides }) => [at, k, sides, f.deriveFace(key, at, k, sides)]);
    out.push({ ok: report.ok, problems: report.problems.map((p) => p.reason), dice: report.dice,
               client_seeds: report.clientSeeds.map((c) => [c.seat, c.clientSeed]), dice_key: f.bytesToHex(key),
               opening_dice: opening });
  } else out.push({ unknown: v.kind });
}
process.stdout.write(JSON.stringify(out) + "\n");
