// Runs the page's own verifier (firelane/web/assets/fairness.js, the same
// file the browser loads) on logs given as JSON files: [{campaign, encounter,
// publishedKey, entries}], and prints one JSON summary per log.
import { readFileSync } from "node:fs";
import { webcrypto } from "node:crypto";

if (!globalThis.crypto) globalThis.crypto = webcrypto;  // node 18 has WebCrypto, not yet as a global

const { verifyLog } = await import(new URL("../../firelane/web/assets/fairness.js", import.meta.url));
const logs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const summaries = [];
for (const log of logs) {
  const report = await verifyLog(log);
  const failing = [...report.entries].filter(([, e]) => e.problems.length).map(([v]) => v);
  summaries.push({
    ok: report.ok, dice: report.dice, rolls: report.rolls, signatures: report.signatures,
    signedThrough: report.signedThrough, unsigned: report.unsigned, commitmentOk: report.commitmentOk,
    clientSeeds: report.clientSeeds, failing, problems: report.problems.map((p) => p.reason),
  });
}
process.stdout.write(JSON.stringify(summaries) + "\n");
