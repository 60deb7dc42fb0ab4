// Talking to an encounter directly on Redis, as the README's "Directly on Redis"
// describes: log in as a seat's ACL user (CAMPAIGN/ENCOUNTER/SEAT, password =
// the seat's token), read the log, XADD one command to the seat's inbox, follow
// the log with XREAD until its answer (the entry whose `k` is
// inbox:SEAT:<the XADD's ID>), and check that the seed and another seat's inbox
// answer NOPERM.
//
//   firelane seats night-raid --json > seats.json
//   node redis.js --seats seats.json --seat alice [--command '{"type":"EndTurn","actor":"kell"}']
//
// Prints what it did and a JSON summary last; exits 0 when every check held.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';

const { values: args } = parseArgs({
  options: {
    seats: { type: 'string' },   // the output of `firelane seats ENCOUNTER --json` ('-': stdin)
    seat: { type: 'string' },    // the seat to log in as (default: the first player seat)
    command: { type: 'string' }, // the command to send (default: EndTurn for the seat's first combatant)
    redis: { type: 'string' },   // unix:///path/redis.sock or redis://127.0.0.1:6390 (default: the seats' "redis")
  },
});
if (!args.seats) {
  console.error('redis.js: --seats FILE is required (the output of `firelane seats ENCOUNTER --json`, or - for stdin)');
  process.exit(2);
}
const seatsDoc = JSON.parse(readFileSync(args.seats === '-' ? 0 : args.seats, 'utf8'));
const seat = args.seat
  ? seatsDoc.seats.find((s) => s.seat === args.seat)
  : seatsDoc.seats.find((s) => s.role === 'player');
if (!seat) {
  console.error(`redis.js: no seat '${args.seat}' in ${args.seats}`);
  process.exit(2);
}
const others = seatsDoc.seats.filter((s) => s.inbox && s.seat !== seat.seat);
const other = others.find((s) => s.role === 'player') ?? others[0]; // another player's inbox, if there is one

function connectionOptions(address) {
  const url = new URL(address);
  const login = { username: seat.redis_user, password: seat.token, lazyConnect: true, maxRetriesPerRequest: 0,
    // the seat's user may run the stream commands only: ioredis's ready check (INFO) would answer NOPERM
    enableReadyCheck: false };
  if (url.protocol === 'unix:') return { ...login, path: url.pathname };
  return { ...login, host: url.hostname, port: Number(url.port || 6379) };
}

// A stream entry is [id, [field, value, field, value, ...]].
const fieldsOf = ([id, flat]) => {
  const fields = { id };
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return fields;
};

async function expectNoPerm(redis, what, call) {
  try {
    await call();
    return `${what}: allowed (expected NOPERM)`;
  } catch (error) {
    const noperm = String(error.message).startsWith('NOPERM');
    console.log(`${what} -> ${error.message}`);
    return noperm ? null : `${what}: ${error.message} (expected NOPERM)`;
  }
}

async function main() {
  const redis = new Redis(connectionOptions(args.redis ?? seatsDoc.redis));
  await redis.connect();
  const problems = [];
  console.log(`logged in to ${args.redis ?? seatsDoc.redis} as ${await redis.call('ACL', 'WHOAMI').catch(() => seat.redis_user)}`);

  // The history: the first entries and the newest one.
  const first = (await redis.xrange(seat.log, '-', '+', 'COUNT', 3)).map(fieldsOf);
  for (const entry of first) console.log(`log ${entry.id}: n=${entry.n} ${entry.t} c=${entry.c} k=${entry.k}`);
  const [newest] = (await redis.xrevrange(seat.log, '+', '-', 'COUNT', 1)).map(fieldsOf);
  console.log(`the log holds ${await redis.xlen(seat.log)} entries; the newest: n=${newest.n} ${newest.t}`);

  // Act: XADD to our inbox, then follow the log from the newest entry until the answer.
  const command = args.command
    ? JSON.parse(args.command)
    : { type: 'EndTurn', actor: seat.combatants[0] };
  command.command_id ??= `${seat.seat}-redis-${Date.now().toString(36)}`;
  const inboxId = await redis.xadd(seat.inbox, '*', 'p', JSON.stringify(command));
  const cause = `inbox:${seat.seat}:${inboxId}`;
  console.log(`XADD ${seat.inbox} -> ${inboxId}; waiting for k=${cause}`);
  const answer = [];
  let cursor = newest.id;
  const deadline = Date.now() + 10_000;
  following: while (Date.now() < deadline) {
    // The answer's events are appended together: once it began, a quiet log or
    // another command's entry means it is complete.
    const reply = await redis.xread('BLOCK', answer.length ? 300 : 1000, 'STREAMS', seat.log, cursor);
    if (!reply) {
      if (answer.length) break;
      continue;
    }
    for (const raw of reply[0][1]) {
      const entry = fieldsOf(raw);
      cursor = entry.id;
      if (entry.k === cause) answer.push(entry);
      else if (answer.length) break following;
    }
  }
  if (!answer.length) problems.push(`no answer to ${cause} within 10 s`);
  for (const entry of answer) {
    const data = JSON.parse(entry.d);
    const reason = entry.t === 'CommandRejected' ? `: ${data.reason}` : '';
    console.log(`answer n=${entry.n} ${entry.t} c=${entry.c}${reason}`);
  }

  // What the seat may not touch.
  const encounterKey = seat.log.replace(/:log$/, '');
  const checks = [
    [`GET ${encounterKey}:seed`, () => redis.get(`${encounterKey}:seed`)],
    [`XADD ${seat.log} (the log itself)`, () => redis.xadd(seat.log, '*', 'p', '{}')],
  ];
  if (other) {
    checks.push([`XADD ${other.inbox} (seat ${other.seat}'s inbox)`,
      () => redis.xadd(other.inbox, '*', 'p', JSON.stringify({ type: 'EndTurn', command_id: 'x', actor: other.combatants[0] ?? 'gm' }))]);
    checks.push([`XRANGE ${other.inbox}`, () => redis.xrange(other.inbox, '-', '+')]);
  }
  for (const [what, call] of checks) {
    const problem = await expectNoPerm(redis, what, call);
    if (problem) problems.push(problem);
  }
  redis.disconnect();
  const summary = {
    ok: problems.length === 0,
    seat: seat.seat,
    inbox_id: inboxId,
    answer: answer.map((e) => e.t),
    problems,
  };
  console.log(JSON.stringify(summary));
  process.exit(summary.ok ? 0 : 1);
}

main().catch((error) => {
  console.error(`redis.js: ${error.message}`);
  process.exit(1);
});
