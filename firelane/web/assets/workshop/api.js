// The workshop API (docs/workshop-api.md), as the page calls it: the GM's
// sign-in cookie goes with every request, and every unsafe one carries the
// CSRF header from the session. A refusal throws an Error whose message is
// the API's one line (and whose `status` and `body` say more).
const enc = encodeURIComponent;
let csrf = null;

export class ApiRefusal extends Error {
  constructor(status, body) {
    super(body?.error || `the server answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function call(method, path, body = undefined, { raw = null, contentType = "application/json" } = {}) {
  const headers = {};
  if (body !== undefined || raw) headers["Content-Type"] = raw ? contentType : "application/json";
  if (method !== "GET" && csrf) headers["X-Firelane-CSRF"] = csrf;
  let response;
  try {
    response = await fetch(path, { method, headers, body: raw || (body !== undefined ? JSON.stringify(body) : undefined), cache: "no-store", credentials: "same-origin" });
  } catch (error) {
    throw new ApiRefusal(0, { error: `the server cannot be reached (${error.message})` });
  }
  const answer = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
  if (!response.ok) throw new ApiRefusal(response.status, answer);
  return answer;
}

export async function session() {
  const answer = await call("GET", "/api/workshop/session");
  csrf = answer.csrf || null;
  return answer;
}

export async function signIn(campaign, token) {
  const answer = await call("POST", "/api/workshop/session", { campaign, token });
  csrf = answer.csrf || null;
  return answer;
}

export async function signOut(campaign = null) {
  const answer = await call("DELETE", `/api/workshop/session${campaign ? `?campaign=${enc(campaign)}` : ""}`);
  if (!answer.signed_in) csrf = null;
  return answer;
}

async function either(path, otherPath) {
  try {
    return await call("GET", path);
  } catch (error) {
    if (error.status === 404 || error.status === 405) return call("GET", otherPath);
    throw error;
  }
}

const camp = (c) => `/api/workshop/campaigns/${enc(c)}`;

export const api = {
  campaigns: () => call("GET", "/api/workshop/campaigns"),
  createCampaign: (name) => call("POST", "/api/workshop/campaigns", { name }),
  encounters: (c) => call("GET", `${camp(c)}/encounters`),
  createDraft: (c, body) => call("POST", `${camp(c)}/drafts`, body),
  draft: (c, d) => call("GET", `${camp(c)}/drafts/${enc(d)}`),
  saveDraft: (c, d, body) => call("PUT", `${camp(c)}/drafts/${enc(d)}`, body),
  deleteDraft: (c, d) => call("DELETE", `${camp(c)}/drafts/${enc(d)}`),
  duplicate: (c, e, body = {}) => call("POST", `${camp(c)}/encounters/${enc(e)}/duplicate`, body),
  archive: (c, e) => call("POST", `${camp(c)}/encounters/${enc(e)}/archive`),
  unarchive: (c, e) => call("POST", `${camp(c)}/encounters/${enc(e)}/unarchive`),
  checks: (c, setup) => call("POST", `${camp(c)}/checks`, setup),
  uploadImage: (c, file) => call("POST", `${camp(c)}/images`, undefined, { raw: file, contentType: file.type || "application/octet-stream" }),
  imageUrl: (c, id) => `${camp(c)}/images/${enc(id)}`,
  openLobby: (c, d, version) => call("POST", `${camp(c)}/drafts/${enc(d)}/lobby`, { version }),
  seats: (c, e) => call("GET", `${camp(c)}/encounters/${enc(e)}/seats`),
  presence: (c, e) => call("GET", `${camp(c)}/encounters/${enc(e)}/presence`),
  start: (c, e) => call("POST", `${camp(c)}/encounters/${enc(e)}/start`),
  move: (c, e, body) => call("POST", `${camp(c)}/encounters/${enc(e)}/move`, body),
  // The systems and their forms, under the campaign (as served) or at the top (as the API document first had them).
  systems: (c) => either(`${camp(c)}/systems`, "/api/workshop/systems"),
  form: (c, s) => either(`${camp(c)}/systems/${enc(s)}/form`, `/api/workshop/systems/${enc(s)}/form`),
  characters: (c) => call("GET", `/api/campaigns/${enc(c)}/characters`),
  createCharacter: (c, body) => call("POST", `${camp(c)}/characters`, body),
  editCharacter: (c, id, body) => call("POST", `${camp(c)}/characters/${enc(id)}/edit`, body),
  retire: (c, id, reason) => call("POST", `${camp(c)}/characters/${enc(id)}/retire`, { reason }),
  revive: (c, id, reason) => call("POST", `${camp(c)}/characters/${enc(id)}/revive`, { reason }),
  archetypes: (c, system) => call("GET", `${camp(c)}/archetypes${system ? `?system=${enc(system)}` : ""}`),
  saveArchetype: (c, body) => call("POST", `${camp(c)}/archetypes`, body),
  rest: (c, body) => call("POST", `${camp(c)}/rest`, body),
  exportUrl: (c) => `${camp(c)}/export`,
  importCampaign: (name, file) => call("POST", `/api/workshop/campaigns/import?as=${enc(name)}`, undefined, { raw: file, contentType: "application/octet-stream" }),
};

let commands = 0;
export function commandId() {
  return `ws-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${++commands}`;
}
