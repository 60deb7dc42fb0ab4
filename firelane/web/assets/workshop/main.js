// The GM's workshop pages (`/workshop/...`, served by web/workshop_pages.py):
//   /workshop                                  the campaigns this browser is the GM of
//   /workshop/<campaign>                       the campaign home (home.js)
//   /workshop/<campaign>/build/<draft>         the encounter builder (builder.js)
//   /workshop/<campaign>/lobby/<encounter>     the lobby (lobby.js)
// A sign-in link (`firelane campaign token` prints it) carries the GM token in
// the fragment (`#gm=TOKEN`): the page trades it for the sign-in cookie at
// once and takes it out of the address bar.
import { render } from "../vendor/preact.module.js";
import { useEffect, useState } from "../vendor/preact-hooks.module.js";
import { html } from "../util.js";
import { session, signIn } from "./api.js";
import { Home } from "./home.js";
import { Builder } from "./builder.js";
import { Lobby } from "./lobby.js";

function parseLocation() {
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  return { campaign: parts[1] || null, page: parts[2] || "home", id: parts[3] || null };
}

function SignedOut({ campaign, error }) {
  return html`<div class="ws-page ws-signed-out">
    <h1>firelane: the game master's workshop</h1>
    ${error && html`<p class="bad one-line">${error}</p>`}
    <p>Open the sign-in link that <code>firelane campaign token${campaign ? ` --campaign ${campaign}` : ""}</code> prints.
      It signs this browser in as the campaign's game master.</p>
    <p>Players need no sign-in: the invite link their GM gives them is all they use.</p>
  </div>`;
}

function Campaigns({ campaigns }) {
  return html`<div class="ws-page"><h1>Your campaigns</h1>
    <ul class="ws-list">${campaigns.map((c) => html`<li key=${c}><a href=${`/workshop/${encodeURIComponent(c)}`}>${c}</a></li>`)}</ul></div>`;
}

function Workshop() {
  const where = parseLocation();
  const [signed, setSigned] = useState(null); // {signed_in, campaigns}
  const [error, setError] = useState(null);
  useEffect(() => {
    (async () => {
      const token = new URLSearchParams(location.hash.replace(/^#/, "")).get("gm");
      if (token) {
        history.replaceState(null, "", location.pathname + location.search);
        try {
          await signIn(where.campaign, token);
        } catch (e) {
          setError(e.message);
        }
      }
      try {
        setSigned(await session());
      } catch (e) {
        setError(e.message);
        setSigned({ signed_in: false, campaigns: [] });
      }
    })();
  }, []);
  useEffect(() => {
    const names = { home: "campaign", build: "builder", lobby: "lobby" };
    document.title = `${where.campaign ? `${where.id || where.campaign} · ${names[where.page] || ""} · ` : ""}firelane workshop`;
  }, []);
  if (!signed) return html`<p class="booting">Signing in…</p>`;
  if (!signed.signed_in || (where.campaign && !signed.campaigns.includes(where.campaign))) {
    return html`<${SignedOut} campaign=${where.campaign} error=${error || (signed.signed_in ? `this browser is not signed in as the GM of “${where.campaign}”` : null)} />`;
  }
  if (!where.campaign) return html`<${Campaigns} campaigns=${signed.campaigns} />`;
  if (where.page === "build" && where.id) return html`<${Builder} campaign=${where.campaign} draftId=${where.id} />`;
  if (where.page === "lobby" && where.id) return html`<${Lobby} campaign=${where.campaign} encounter=${where.id} />`;
  return html`<${Home} campaign=${where.campaign} campaigns=${signed.campaigns} />`;
}

const root = document.getElementById("app");
root.replaceChildren();
render(html`<${Workshop} />`, root);
