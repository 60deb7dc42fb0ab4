// A small firelane frontend in JavaScript (Node 20), written from the README's
// "Plugging in a frontend (any language)" alone: it takes the player seats of an
// encounter that `firelane serve` runs, follows each seat's events over the
// WebSocket (reconnecting with `after=` the last `n`), and plays each seat's
// combatants from the seat's own options until the fight ends.
//
//   firelane seats night-raid --json > seats.json
//   node play.js --seats seats.json [--seat alice --seat bruno] [--drop-at 25,80]
//                [--gm-skip-after 2]
//
// A human combatant whose seat no client plays holds the fight: each window
// waits for it until its deadline, its turn forever (unless the setup has a
// turn timer). With --gm-skip-after S, the GM seat sends GMSkipTurn when the
// fight has waited S seconds on a combatant none of the played seats controls.
//
// Prints one line per command and a JSON summary last; exits 0 when the fight
// ended and every follower saw every event exactly once.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values: args } = parseArgs({
  options: {
    seats: { type: 'string' },                 // the output of `firelane seats ENCOUNTER --json` ('-': stdin)
    seat: { type: 'string', multiple: true },  // the seats to play (default: every player seat)
    api: { type: 'string' },                   // http://HOST:PORT (default: the join links' origin)
    'drop-at': { type: 'string', default: '' }, // cut the first seat's socket at these versions
    timeout: { type: 'string', default: '120' }, // seconds before giving up
    'gm-skip-after': { type: 'string' },     // seconds: then the GM seat skips a turn or window no played seat answers
    quiet: { type: 'boolean', default: false },
  },
});
if (!args.seats) {
  console.error('play.js: --seats FILE is required (the output of `firelane seats ENCOUNTER --json`, or - for stdin)');
  process.exit(2);
}

const seatsDoc = JSON.parse(readFileSync(args.seats === '-' ? 0 : args.seats, 'utf8'));
const log = (...parts) => { if (!args.quiet) console.log(...parts); };
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A join link is http://HOST:PORT/table/CAMPAIGN/ENCOUNTER#token=TOKEN (docs/table.md).
function encounterOf(seat) {
  const link = new URL(seat.link);
  const [, table, campaign, encounter] = link.pathname.split('/').map(decodeURIComponent);
  if (table !== 'table' || !campaign || !encounter) throw new Error(`unexpected join link ${seat.link}`);
  const origin = args.api ? args.api.replace(/\/$/, '') : link.origin;
  return { origin, campaign, encounter };
}

// One seat's view of the HTTP API: every request carries the seat's token.
class SeatClient {
  constructor(seat) {
    this.seat = seat;
    const { origin, campaign, encounter } = encounterOf(seat);
    this.base = `${origin}/api/campaigns/${encodeURIComponent(campaign)}/encounters/${encodeURIComponent(encounter)}`;
    this.wsBase = this.base.replace(/^http/, 'ws');
    this.commandCount = 0;
    this.runId = Date.now().toString(36);
  }

  async request(method, path, body) {
    const response = await fetch(`${this.base}/${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.seat.token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json;
    try { json = JSON.parse(text); } catch { json = { text }; }
    if (!response.ok) {
      const error = new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`);
      error.status = response.status;
      throw error;
    }
    return { status: response.status, json };
  }

  get(path) { return this.request('GET', path).then((r) => r.json); }

  newCommandId() { return `${this.seat.seat}-${this.runId}-${++this.commandCount}`; }

  // Sends an option's command as it is, with a command_id of ours, and waits up
  // to 5 s for its answer: {answered, rejected, reason, events}.
  async send(command, commandId = this.newCommandId()) {
    const { status, json } = await this.request('POST', 'commands?wait=5', { ...command, command_id: commandId });
    if (status === 202) return { commandId, answered: false, rejected: false, events: [] };
    const rejection = json.events.find((e) => e.type === 'CommandRejected');
    return {
      commandId,
      answered: true,
      rejected: json.rejected,
      reason: rejection ? rejection.data.reason : '',
      events: json.events,
    };
  }
}

// Follows a seat's events over the WebSocket from after=0; on any close it
// reconnects with after= the last n it saw, and checks n goes 1, 2, 3... with
// nothing lost or doubled.
class Follower {
  constructor(client, dropAt = []) {
    this.client = client;
    this.lastN = 0;
    this.types = [];
    this.problems = [];
    this.reconnects = 0;
    this.dropAt = [...dropAt].sort((a, b) => a - b);
    this.waiters = [];
    this.stopped = false;
    this.ended = false;
    this.revealed = false; // SeedRevealed: the log's last event
    this.winner = null;
    this.turnStarts = new Map(); // combatant -> n of its latest TurnStarted
  }

  start() { this.connect(); }

  connect() {
    const { wsBase, seat } = this.client;
    const socket = new WebSocket(`${wsBase}/ws?token=${encodeURIComponent(seat.token)}&after=${this.lastN}`);
    this.socket = socket;
    socket.on('message', (data) => {
      if (socket !== this.socket) return; // a message from a socket we already cut
      const event = JSON.parse(data.toString());
      if (event.n !== this.lastN + 1) {
        this.problems.push(`${seat.seat}: got n=${event.n} after n=${this.lastN}`);
        if (event.n <= this.lastN) return; // a double: already seen
      }
      this.lastN = event.n;
      this.types.push(event.type);
      this.observe(event);
      if (this.dropAt.length && event.n >= this.dropAt[0]) {
        this.dropAt.shift();
        log(`[${seat.seat}] cutting the socket at n=${event.n} (reconnect test)`);
        socket.terminate(); // an abrupt cut, as a network failure would
      }
      this.wake();
    });
    socket.on('close', (code, reason) => {
      if (socket !== this.socket || this.stopped) return;
      if (code === 4401 || code === 4403) {
        this.problems.push(`${seat.seat}: the socket refused the token (${code} ${reason})`);
        this.stopped = true;
        this.wake();
        return;
      }
      this.reconnects += 1;
      setTimeout(() => this.connect(), 100);
    });
    socket.on('error', () => {}); // a 'close' follows every error
  }

  observe(event) {
    if (event.type === 'TurnStarted') this.turnStarts.set(event.data.combatant, event.n);
    if (event.type === 'EncounterEnded') {
      this.ended = true;
      this.winner = event.data.winner ?? null;
    }
    if (event.type === 'SeedRevealed') this.revealed = true;
  }

  // Resolves when an event after `version` arrived, or after `ms`.
  changedSince(version, ms) {
    if (this.lastN > version || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() { clearTimeout(timer); resolve(); }
      this.waiters.push(done);
    });
  }

  wake() { const waiters = this.waiters; this.waiters = []; waiters.forEach((w) => w()); }

  stop() { this.stopped = true; this.socket?.close(); this.wake(); }
}

const squareDistance = (a, b) => Math.max(Math.abs(a[0] - b[0]), Math.abs(a[1] - b[1]));

// Plays one seat: on each new event, read the options; answer an open window
// that awaits one of our combatants; on our combatant's turn, attack (the best
// chance to hit), else move towards the nearest enemy (the fewest threats
// first), else end the turn.
async function playSeat(client, follower, stats, deadline) {
  const answeredWindows = new Set();
  const turns = new Map(); // combatant -> {turn, moved, attacked, refused: Set}
  let seenVersion = -1;
  while (!follower.ended && !follower.stopped && Date.now() < deadline) {
    await follower.changedSince(seenVersion, 1000);
    if (follower.ended || follower.stopped) break;
    seenVersion = follower.lastN;
    const options = await client.get('options');
    let acted = false;
    for (const mine of options.combatants) {
      const window = mine.window;
      if (window && window.awaited.includes(mine.combatant)) {
        const key = `${window.window}:${mine.combatant}`;
        if (answeredWindows.has(key)) continue; // our answer is held until the window closes
        answeredWindows.add(key);
        const claims = window.reactions.flatMap((r) => r.choices.map((c) => ({ ...c, reaction: r.reaction })));
        claims.sort((a, b) => (b.hit_chance ?? 0) - (a.hit_chance ?? 0));
        const answer = claims.length ? claims[0].command : window.pass_command;
        await act(client, stats, mine.combatant, answer, `window ${window.window} (${window.trigger})`);
        acted = true;
        continue;
      }
      if (!mine.its_turn) continue;
      const turnKey = follower.turnStarts.get(mine.combatant) ?? options.version;
      let turn = turns.get(mine.combatant);
      if (!turn || turn.turn !== turnKey) {
        turn = { turn: turnKey, moved: false, attacked: false, refused: new Set(), steps: 0 };
        turns.set(mine.combatant, turn);
      }
      turn.steps += 1;
      const fresh = (option) => !turn.refused.has(JSON.stringify(option.command));
      let choice = null;
      let what = '';
      const attacks = turn.attacked || turn.steps > 6 ? [] : mine.attacks.filter(fresh);
      if (attacks.length) {
        attacks.sort((a, b) => b.hit_chance - a.hit_chance);
        choice = attacks[0];
        what = `attack ${choice.target} with the ${choice.weapon} (${Math.round(choice.hit_chance * 100)}%)`;
      } else if (!turn.moved && turn.steps <= 6 && mine.moves.length) {
        const state = await client.get('state');
        const me = state.state.combatants[mine.combatant];
        const enemies = Object.values(state.state.combatants).filter((c) => c.side !== me.side && !c.out_of_fight);
        const nearest = (square) => Math.min(...enemies.map((e) => squareDistance(square, e.position)));
        const closer = mine.moves.filter(fresh).filter((m) => nearest(m.to) < nearest(me.position));
        closer.sort((a, b) => a.threats.length - b.threats.length || nearest(a.to) - nearest(b.to) || a.cost - b.cost);
        if (closer.length) {
          choice = closer[0];
          what = `move to ${choice.to.join(',')} (${choice.threats.length} could react)`;
        }
      }
      if (!choice) {
        choice = { command: mine.end_turn };
        what = 'end the turn';
      }
      const result = await act(client, stats, mine.combatant, choice.command, what);
      if (result.rejected) turn.refused.add(JSON.stringify(choice.command));
      else if (choice.command.type === 'BBMove') turn.moved = true;
      else if (choice.command.type === 'BBAttack') turn.attacked = true;
      acted = true;
    }
    if (acted) seenVersion = -1; // read the options again at once: our command changed them
  }
}

// The GM's hand: skip what the fight waits for when no played seat answers it.
async function guardAsGm(gm, follower, ours, stats, skipAfterMs, deadline) {
  let version = follower.lastN;
  let since = Date.now();
  while (!follower.ended && !follower.stopped && Date.now() < deadline) {
    await follower.changedSince(version, 250);
    if (follower.lastN !== version) {
      version = follower.lastN;
      since = Date.now();
      continue;
    }
    if (Date.now() - since < skipAfterMs) continue;
    const options = await gm.get('options');
    const waitingOn = options.waiting.combatants;
    // A window may wait on ours too: our answers are held (still listed) until it closes.
    const nobodys = waitingOn.filter((c) => !ours.has(c));
    if (options.gm?.can_skip && nobodys.length) {
      const what = options.waiting.kind === 'turn' ? 'turn' : `${options.waiting.kind} (window ${options.waiting.window})`;
      const result = await act(gm, stats, 'gm', { type: 'GMSkipTurn', actor: 'gm', reason: `no one plays ${nobodys.join(', ')}` },
        `skip the ${what} of ${nobodys.join(', ')}`);
      if (result.answered && !result.rejected) stats.gmSkips += 1;
    }
    since = Date.now();
  }
}

async function act(client, stats, combatant, command, what) {
  const result = await client.send(command);
  stats.commands += 1;
  const head = `[${client.seat.seat}] ${combatant}: ${what}`;
  if (!result.answered) {
    stats.unanswered += 1;
    log(`${head} -> no answer within 5 s (a window answer waits for the window to close)`);
  } else if (result.rejected) {
    stats.rejected += 1;
    log(`${head} -> rejected: ${result.reason}`);
  } else {
    log(`${head} -> ${result.events.map((e) => e.type).join(', ')}`);
  }
  return result;
}

// The rejections a frontend must handle, shown once at the start.
async function showRejections(clients, stats) {
  const [first, second] = clients;
  if (!second) return;
  const theirs = second.seat.combatants[0];
  const foreign = await first.send({ type: 'EndTurn', actor: theirs });
  log(`[${first.seat.seat}] EndTurn for ${theirs} (not ours) -> rejected=${foreign.rejected}: ${foreign.reason}`);
  if (foreign.rejected) stats.refusedOnPurpose += 1;
  if (!foreign.rejected) stats.problems.push(`a command for another seat's combatant was not rejected`);
  // Sent again with the same id and body (a retry after a lost answer): applied once, answered with the first answer.
  const resent = await first.send({ type: 'EndTurn', actor: theirs }, foreign.commandId);
  const sameAnswer = resent.answered && JSON.stringify(resent.events) === JSON.stringify(foreign.events);
  log(`[${first.seat.seat}] the same command again -> ${sameAnswer ? 'the first answer' : JSON.stringify(resent)}`);
  if (!sameAnswer) stats.problems.push(`a command sent again did not get its first answer`);
  const reused = await first.send({ type: 'EndTurn', actor: first.seat.combatants[0] }, foreign.commandId);
  log(`[${first.seat.seat}] the same command_id with another body -> rejected=${reused.rejected}: ${reused.reason}`);
  if (reused.rejected) stats.refusedOnPurpose += 1;
  if (!reused.rejected) stats.problems.push(`a reused command_id with another body was not rejected`);
}

// Every event, read over HTTP in pages, to check the followers against.
async function allEventTypes(client) {
  const types = [];
  let version = 0;
  for (;;) {
    const page = await client.get(`events?after=${types.length}&limit=500`);
    version = page.version;
    for (const event of page.events) {
      if (event.n !== types.length + 1) throw new Error(`GET events: n=${event.n} after ${types.length}`);
      types.push(event.type);
    }
    if (types.length >= version || page.events.length === 0) return { types, version };
  }
}

async function main() {
  const wanted = args.seat ?? seatsDoc.seats.filter((s) => s.role === 'player').map((s) => s.seat);
  const seats = wanted.map((id) => {
    const seat = seatsDoc.seats.find((s) => s.seat === id);
    if (!seat) throw new Error(`no seat '${id}' in ${args.seats}`);
    return seat;
  });
  const clients = seats.map((seat) => new SeatClient(seat));
  for (const client of clients) {
    const info = await client.get('seat');
    log(`joined ${client.base} as ${info.seat.id} (${info.seat.role}, ${info.system}), playing ${info.seat.combatants.join(', ')}`);
  }
  const drops = args['drop-at'].split(',').filter(Boolean).map(Number);
  const followers = clients.map((client, i) => new Follower(client, i === 0 ? drops : []));
  const stats = { commands: 0, rejected: 0, unanswered: 0, gmSkips: 0, refusedOnPurpose: 0, problems: [] };
  await showRejections(clients, stats);
  followers.forEach((f) => f.start());
  const deadline = Date.now() + Number(args.timeout) * 1000;
  const playing = clients.map((client, i) => playSeat(client, followers[i], stats, deadline));
  if (args['gm-skip-after'] !== undefined) {
    const gmSeat = seatsDoc.seats.find((s) => s.role === 'gm');
    const ours = new Set(seats.flatMap((s) => s.combatants));
    const skipAfterMs = Number(args['gm-skip-after']) * 1000;
    playing.push(guardAsGm(new SeatClient(gmSeat), followers[0], ours, stats, skipAfterMs, deadline));
  }
  await Promise.all(playing);

  // The fight is over at EncounterEnded, and its log ends with SeedRevealed
  // (the engine answers what the inboxes still held first): wait for that,
  // then check each follower saw every event exactly once, in order.
  while (Date.now() < deadline && followers.some((f) => f.ended && !f.revealed)) await sleep(50);
  const { types, version } = await allEventTypes(clients[0]);
  while (Date.now() < deadline && followers.some((f) => f.lastN < version)) await sleep(50);
  followers.forEach((f) => f.stop());
  for (const f of followers) {
    stats.problems.push(...f.problems);
    if (f.types.length !== types.length || f.types.some((t, i) => t !== types[i])) {
      stats.problems.push(`${f.client.seat.seat}: followed ${f.types.length} events, the log has ${types.length}`);
    }
  }
  const ended = followers.every((f) => f.ended);
  if (!ended) stats.problems.push(`the fight did not end within ${args.timeout} s`);
  const summary = {
    ok: ended && stats.problems.length === 0,
    ended,
    winner: followers[0].winner,
    version,
    commands: stats.commands,
    rejected: stats.rejected,
    unanswered: stats.unanswered,
    refused_on_purpose: stats.refusedOnPurpose,
    gm_skips: stats.gmSkips,
    reconnects: Object.fromEntries(followers.map((f) => [f.client.seat.seat, f.reconnects])),
    followed: Object.fromEntries(followers.map((f) => [f.client.seat.seat, f.types.length])),
    problems: stats.problems,
  };
  console.log(JSON.stringify(summary));
  process.exit(summary.ok ? 0 : 1);
}

main().catch((error) => {
  console.error(`play.js: ${error.message}`);
  process.exit(1);
});
