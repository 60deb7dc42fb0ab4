// The page's link to `firelane serve`: the seat's view over HTTP, every event
// over the WebSocket, and commands through the seat's own POST. The token is
// the seat's only authority; nothing here decides what a seat may do.
//
// Resuming: the page remembers the last event version it has (`lastEvent`)
// and the last narrated one (`lastLine`). A reconnecting socket asks for
// `after=lastEvent`, the view for `after=lastLine`, and lines are kept by
// version, so after a reload or a dropped connection nothing is lost or
// shown twice.
//
// Long fights: the first view brings only the newest FIRST_LINES narration
// lines (`tail`); `lines` holds a contiguous run of versions ending at the
// newest, and `loadEarlier` prepends older ones (GET …/lines) when the
// narration needs them. Nothing else on the page needs the old events.

const REFRESH_MS = 100;
export const FIRST_LINES = 300; // narration lines the first view brings; older ones come on demand (loadEarlier)

export class Connection {
  constructor({ campaign, encounter, token, onChange }) {
    this.campaign = campaign;
    this.encounter = encounter;
    this.token = token;
    this.onChange = onChange;
    this.base = `/api/campaigns/${encodeURIComponent(campaign)}/encounters/${encodeURIComponent(encounter)}`;
    this.seat = null;
    this.system = null;
    this.view = null;          // the newest live view
    this.lines = [];           // one narration line per event, by version: the newest, and as many older as were asked for
    this.firstLine = null;     // the oldest line the server has
    this._earlier = null;      // the loadEarlier request in flight
    this.lastEvent = 0;        // newest event version seen on the socket
    this.status = "connecting";
    this.error = null;
    this.clockSkew = 0;        // server clock minus ours, in ms
    this.arrivals = [];        // [version, ms since epoch] of each event received (bench and tests)
    this._refreshing = null;
    this._again = false;
    this._timer = null;
    this._lastRefresh = -Infinity;
    this._socket = null;
    this._retry = 250;
    this._commands = 0;
    this._closed = false;
  }

  headers() {
    return { Authorization: `Bearer ${this.token}` };
  }

  async get(path) {
    const response = await fetch(`${this.base}/${path}`, { headers: this.headers(), cache: "no-store" });
    const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) throw new ApiError(response.status, body.error || `HTTP ${response.status}`);
    return body;
  }

  get lastLine() {
    return this.lines.length ? this.lines[this.lines.length - 1].n : 0;
  }

  // Are there lines older than the ones this page holds?
  get hasEarlier() {
    return this.lines.length > 0 && this.firstLine !== null && this.lines[0].n > this.firstLine;
  }

  // Fetch up to `count` lines older than the oldest held, and prepend them.
  loadEarlier(count) {
    if (this._earlier) return this._earlier;
    if (!this.hasEarlier) return Promise.resolve(0);
    const before = this.lines[0].n;
    this._earlier = this.get(`lines?before=${before}&limit=${Math.max(1, Math.ceil(count))}`)
      .then((body) => {
        this.firstLine = body.first_line;
        const older = body.lines.filter((line) => line.n < (this.lines.length ? this.lines[0].n : Infinity));
        if (older.length) this.lines = older.concat(this.lines);
        this.changed();
        return older.length;
      })
      .finally(() => { this._earlier = null; });
    return this._earlier;
  }

  async start() {
    try {
      const seat = await this.get("seat");
      this.seat = seat.seat;
      this.system = seat.system;
      this.lobby = !!seat.lobby;  // waiting for the GM's Start
      this.present = seat.present || [];  // in the lobby: the seats with the table open
      // The map's background image, where the GM set it (docs/workshop-api.md), fetched with this seat's token.
      this.background = seat.background && seat.background.width && seat.background.height
        ? { ...seat.background, href: `${seat.background.url}?token=${encodeURIComponent(this.token)}` } : null;
      this.seedCommitment = seat.seed_commitment || "";  // published before any client seed (docs/fairness.md)
      await this.refresh();
      this.lastEvent = this.view.version; // the socket sends what comes after the first view
      this.openSocket();
      if (this.lobby) this.followLobby();
    } catch (error) {
      this.fail(error);
    }
  }

  // Who else has the table open changes without an event: asked every 2 s until the fight starts
  // (its first event comes by the socket, as every later one).
  followLobby() {
    const again = async () => {
      if (this._closed || (this.view && this.view.state)) return;
      try {
        const seat = await this.get("seat");
        this.lobby = !!seat.lobby;
        this.present = seat.present || [];
        this.changed();
      } catch {
        // the next ask tries again; the socket reports a lost server
      }
      setTimeout(again, 2000);
    };
    setTimeout(again, 2000);
  }

  close() {
    this._closed = true;
    if (this._socket) this._socket.close();
  }

  fail(error) {
    this.error = error instanceof ApiError ? error.message : String(error.message || error);
    this.status = "error";
    this.changed();
  }

  changed() {
    this.onChange?.(this);
  }

  openSocket() {
    if (this._closed) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const url = `${scheme}://${location.host}${this.base}/ws?token=${encodeURIComponent(this.token)}&after=${this.lastEvent}`;
    const socket = new WebSocket(url);
    this._socket = socket;
    socket.onopen = () => {
      this._retry = 250;
      this.status = "live";
      this.changed();
    };
    socket.onmessage = (message) => {
      const event = JSON.parse(message.data);
      if (event.n <= this.lastEvent) return; // already have it (a resend after a reconnect)
      this.lastEvent = event.n;
      this.arrivals.push([event.n, performance.timeOrigin + performance.now()]);
      if (this.arrivals.length > 5000) this.arrivals.splice(0, 1000);
      this.scheduleRefresh();
    };
    socket.onclose = (close) => {
      if (this._socket !== socket || this._closed) return;
      if (close.code === 4401 || close.code === 4403 || close.code === 4404 || close.code === 4400) {
        this.fail(new ApiError(close.code - 4000, close.reason || "this link opens no seat"));
        return;
      }
      if (close.code === 4409) {
        // This seat opened more pages than it may keep (another tab, another device): this,
        // its oldest, gave way. Reconnecting would only push out the newest: reload to take it back.
        this.fail(new ApiError(409, `${close.reason || "replaced by a newer connection of this seat"}; reload to take this page back`));
        return;
      }
      this.status = "reconnecting";
      this.changed();
      setTimeout(() => this.openSocket(), this._retry);
      this._retry = Math.min(this._retry * 2, 5000);
    };
  }

  // One view request at a time, at most one per REFRESH_MS: events arriving
  // meanwhile ask for one more. A burst of events is drawn at once, and the
  // server answers a few views a second however fast the fight goes.
  scheduleRefresh() {
    if (this._refreshing || this._timer) {
      this._again = true;
      return;
    }
    const wait = this._lastRefresh + REFRESH_MS - performance.now();
    if (wait > 0) {
      this._timer = setTimeout(() => { this._timer = null; this.scheduleRefresh(); }, wait);
      return;
    }
    this._lastRefresh = performance.now();
    this._refreshing = this.refresh()
      .catch((error) => {
        this.status = "reconnecting";
        this.changed();
        return new Promise((resolve) => setTimeout(resolve, 500)).then(() => { this._again = true; });
      })
      .finally(() => {
        this._refreshing = null;
        if (this._again) {
          this._again = false;
          this.scheduleRefresh();
        }
      });
  }

  async refresh() {
    const sent = Date.now();
    const first = this.lines.length === 0;
    const view = await this.get(`view?after=${this.lastLine}${first ? `&tail=${FIRST_LINES}` : ""}`);
    this.clockSkew = view.now_ms - (sent + Date.now()) / 2;
    const known = this.lastLine;
    const fresh = view.lines.filter((line) => line.n > known);
    if (fresh.length) this.lines = this.lines.concat(fresh);
    if (view.first_line !== undefined) this.firstLine = view.first_line;
    delete view.lines;
    if (!this.view || view.version >= this.view.version) this.view = view;
    this.changed();
  }

  serverNow() {
    return Date.now() + this.clockSkew;
  }

  async stateAt(version) {
    const view = await this.get(`view?at=${version}&lines=0`);
    delete view.lines;
    return view;
  }

  // Who an area choice would catch (GET …/preview), kept per command.
  async preview(command) {
    const key = JSON.stringify(command);
    this._previews = this._previews || new Map();
    if (!this._previews.has(key)) {
      this._previews.set(key, this.get(`preview?command=${encodeURIComponent(key)}`).catch(() => null));
      if (this._previews.size > 200) this._previews.delete(this._previews.keys().next().value);
    }
    return this._previews.get(key);
  }

  // Send a command as this seat; resolves to {rejected, reason, events}
  // (pending: no answer within `wait` seconds).
  async send(command, wait = 10) {
    this._commands += 1;
    const id = `${this.seat.id}-${Date.now().toString(36)}-${this._commands}`;
    const body = JSON.stringify({ ...command, command_id: id });
    const response = await fetch(`${this.base}/commands?wait=${wait}`, {
      method: "POST", headers: { ...this.headers(), "Content-Type": "application/json" }, body,
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new ApiError(response.status, answer.error || `HTTP ${response.status}`);
    if (answer.answered === false) return { rejected: false, pending: true, events: [] };
    const rejection = (answer.events || []).find((e) => e.type === "CommandRejected");
    return { rejected: answer.rejected, reason: rejection?.data?.reason, events: answer.events || [] };
  }
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}
