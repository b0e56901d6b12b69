// The console's entry: sign-in (a sign-in link asks first), the header and tabs, and the hash
// routes of each tab.

import { TOKEN_LINK, api, clearToken, seg, setToken, takeTokenFromUrl, token } from "./api.js";
import { renderData } from "./data.js";
import { renderEntries } from "./entries.js";
import { renderForget } from "./forget.js";
import { renderJobs } from "./jobs.js";
import { renderProfile } from "./profile.js";
import { renderScope } from "./scope.js";
import { renderSettings } from "./settings.js";
import { alertBox, empty, h, notFound, replace } from "./ui.js";

const TABS = [
  ["personal", "Personal memory"],
  ["team", "Team memory"],
  ["agent", "Agent notes"],
  ["profile", "What I know about you"],
  ["settings", "Settings"],
  ["jobs", "Jobs"],
  ["forget", "Forget everywhere"],
  ["data", "Your data"],
];

const main = document.getElementById("main");
const nav = document.getElementById("tabs");
const who = document.getElementById("who");
let me = null;
let held = {};

function route() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const [tab = "personal", ...rest] = path.split("/").map(decodeURIComponent);
  return { tab: tab || "personal", arg: rest.join("/"), params: new URLSearchParams(query || "") };
}

function signIn(problem) {
  nav.hidden = true;
  replace(who);
  const input = h("input", { id: "token", type: "password", required: true, autocomplete: "off",
    spellcheck: "false" });
  replace(main, h("section", { class: "card signin", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in"),
    h("p", { class: "sub" }, "Paste the access token you were given. memory-plugin serve prints a development token, and a link that signs you in."),
    problem ? alertBox(problem) : null,
    h("form", { onsubmit: (event) => {
      event.preventDefault();
      setToken(input.value.trim());
      start();
    } },
    h("label", { for: "token" }, "Access token"), input,
    h("div", { class: "actions" }, h("button", { class: "button primary", type: "submit" }, "Sign in")))));
  input.focus();
}

// A #token= link signs in only once the user has seen whose token it is and said yes: a link
// made by someone else would otherwise sign the visitor in as that person, unseen.
async function signInFromLink(linked) {
  let user;
  try {
    user = await api("/api/me", { bearer: linked });
  } catch (error) {
    if (error.status === 401) return signIn("The sign-in link's token was not accepted. Paste a token instead.");
    replace(main, alertBox(error.message));
    return;
  }
  me = null;
  nav.hidden = true;
  replace(who);
  const cancel = h("button", { class: "button", type: "button", onclick: () => start() }, "Cancel");
  replace(main, h("section", { class: "card signin", "aria-labelledby": "link-title" },
    h("h1", { id: "link-title" }, `Sign in as ${user.user_id}?`),
    h("p", {}, "This sign-in link is for ", h("strong", {}, user.user_id),
      user.org_id ? ` (${user.org_id})` : "", ". Sign in only if you asked for it and you are this user: ",
      "whatever you write here is saved as theirs."),
    token() ? h("p", { class: "sub" }, "Signing in replaces the session open in this tab.") : null,
    h("div", { class: "actions" }, cancel,
      h("button", { class: "button primary", type: "button", onclick: async () => {
        setToken(linked);
        me = user;
        held = await workspacesHeld();
        header();
        show();
        main.focus({ preventScroll: true });
      } }, "Sign in"))));
  cancel.focus();
}

function header() {
  replace(who,
    h("span", { class: "workspace", "aria-live": "polite", hidden: true }),
    h("span", { class: "user" }, me.user_id, me.org_id ? h("span", { class: "muted" }, ` · ${me.org_id}`) : null),
    h("button", { class: "button small", type: "button", onclick: () => {
      clearToken();
      me = null;
      signIn();
    } }, "Sign out"));
  nav.hidden = false;
  replace(nav, h("ul", {}, TABS.map(([id, label]) =>
    h("li", {}, h("a", { href: `#/${id}`, "data-tab": id }, label)))));
}

// The workspace picker of the Personal and Team memory tabs: every workspace of the caller
// (the Personal tab also offers memory outside workspaces), each marked with the memory the
// store holds there.
function workspacePicker(kind, current) {
  const scopes = me.scopes.filter((s) => s.kind === kind);
  if (!scopes.length) return null;
  const hrefOf = (workspace) => kind === "team" ? `#/team/${seg(workspace)}`
    : workspace ? `#/personal/${seg(workspace)}` : "#/personal?outside";
  const select = h("select", { id: "workspace-picker", onchange: () => { location.hash = select.value; } },
    scopes.map((s) => {
      const memory = held[s.workspace]?.[kind];
      const label = (s.workspace || "No workspace") + (memory ? " · has memory" : "");
      return h("option", { value: hrefOf(s.workspace), selected: (s.workspace || "") === current }, label);
    }));
  return h("div", { class: "picker" }, h("label", { for: "workspace-picker" }, "Workspace"), select);
}

// The header names the workspace a memory tab shows (none on the other tabs).
function showWorkspace(workspace) {
  const shown = who.querySelector(".workspace");
  if (!shown) return;
  shown.hidden = workspace === undefined;
  replace(shown, "Workspace: ", workspace ? h("strong", {}, workspace) : "none");
}

function show() {
  if (!me) return;
  const { tab, arg, params } = route();
  for (const link of nav.querySelectorAll("a[data-tab]")) {
    if (link.dataset.tab === tab) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const label = TABS.find(([id]) => id === tab);
  document.title = label ? `${label[1]} · Memory console` : "Memory console";
  showWorkspace(undefined);
  switch (tab) {
    case "personal": {
      const personal = me.scopes.filter((s) => s.kind === "personal");
      const outside = params.has("outside") ? personal.find((s) => !s.workspace) : null;
      const scope = outside || (arg ? personal.find((s) => s.workspace === arg) : personal[0]) || {
        kind: "personal",
        workspace: arg || null,
        label: "MEMORY.md",
        path: arg ? `/api/personal?workspace=${seg(arg)}` : "/api/personal",
      };
      renderScope(main, scope, {
        title: "Personal memory",
        intro: `${scope.label}: your private memory${scope.workspace ? ` in ${scope.workspace}` : ""}. Only you can see it.`,
        switcher: workspacePicker("personal", scope.workspace || ""),
      });
      showWorkspace(scope.workspace);
      break;
    }
    case "team": {
      if (!arg) {
        const first = me.scopes.find((s) => s.kind === "team");
        if (first) {
          location.replace(`#/team/${seg(first.workspace)}`);
          return;
        }
        replace(main, h("header", { class: "page-head" }, h("div", {}, h("h1", {}, "Team memory"))),
          h("div", { class: "card wide" }, empty("You are not in any workspace",
            "Team memory (TEAM_MEMORY.md) belongs to a workspace. Once you are a member of one, its memory appears here.")));
        break;
      }
      renderScope(main, { kind: "team", workspace: arg, label: "TEAM_MEMORY.md", path: `/api/team/${seg(arg)}` }, {
        title: "Team memory",
        intro: `TEAM_MEMORY.md of workspace ${arg}: every member can read and edit it.`,
        switcher: workspacePicker("team", arg),
      });
      showWorkspace(arg);
      break;
    }
    case "agent":
      renderEntries(main);
      break;
    case "profile":
      renderProfile(main);
      break;
    case "settings":
      renderSettings(main, me, params);
      break;
    case "jobs":
      renderJobs(main, me);
      break;
    case "forget":
      renderForget(main, params);
      break;
    case "data":
      renderData(main, me);
      break;
    default:
      replace(main, h("div", { class: "card wide" }, notFound()));
  }
}

// What memory each workspace holds, by workspace (only a hint: none when it cannot be read).
async function workspacesHeld() {
  try {
    const { workspaces } = await api("/api/workspaces");
    return Object.fromEntries(workspaces.map((w) => [w.workspace, w]));
  } catch {
    return {};
  }
}

async function start() {
  if (!token()) return signIn();
  try {
    [me, held] = await Promise.all([api("/api/me"), workspacesHeld()]);
  } catch (error) {
    if (error.status === 401) {
      clearToken();
      return signIn("That token was not accepted. Check it and try again.");
    }
    replace(main, alertBox(error.message));
    return;
  }
  header();
  show();
}

function boot() {
  const linked = takeTokenFromUrl();
  if (linked === null) return start();
  if (!linked) return signIn("The sign-in link holds no token. Paste a token instead.");
  return signInFromLink(linked);
}

window.addEventListener("hashchange", () => {
  if (TOKEN_LINK.test(location.hash)) return boot();
  show();
  main.focus({ preventScroll: true });
});
document.querySelector(".skip").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});
boot();
