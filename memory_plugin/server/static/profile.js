// The "What I know about you" tab: the user's memory profile, its change log, and the opt-out.

import { api } from "./api.js";
import {
  alertBox, confirmDialog, empty, failure, forgetLink, h, replace, skeleton, timeEl, toast, why,
} from "./ui.js";

export const WEB_SEARCH_REASON =
  "Context memory is unavailable while web search is enabled, to keep user data out of external search queries.";

// The opt-out, behind its dialog: the answer of DELETE /api/profile, or null when cancelled.
export async function disableMemory() {
  const ok = await confirmDialog({
    title: "Turn off context memory?",
    body: [
      "Disabling context memory permanently deletes the memory: everything the agent has learned about you is erased and cannot be restored.",
      "The agent will stop loading and updating it in every space. You can turn it on again later; it starts empty.",
      h("p", { "data-remains": "elsewhere" }, "Your notes and documents, and the agent's notes and entries, are kept: ",
        h("a", { href: "#/forget" }, "Forget everywhere"), " removes a fact from all of them, and ",
        h("a", { href: "#/data" }, "Your data"), " downloads everything."),
    ],
    confirm: "Disable and delete",
  });
  if (!ok) return null;
  return api("/api/profile", { method: "DELETE" });
}

export function renderProfile(root) {
  const main = h("section", { class: "card", "aria-labelledby": "profile-title" }, skeleton(10, "tall"));
  const log = h("section", { class: "card", "aria-labelledby": "changes-title" }, skeleton(8, "tall"));
  replace(root,
    h("header", { class: "page-head" }, h("div", {},
      h("h1", {}, "What I know about you"),
      h("p", { class: "sub" }, "The profile the agent keeps about you across conversations, and every change to it."))),
    h("div", { class: "columns" }, main, log));
  load(root, main, log);
}

async function load(root, main, log) {
  let data;
  try {
    data = await api("/api/profile");
  } catch (error) {
    replace(main, failure(error));
    log.remove();
    return;
  }
  const remove = h("button", { class: "button danger", type: "button", onclick: async () => {
    try {
      const answer = await disableMemory();
      if (!answer) return;
      toast(answer.message);
      renderProfile(root);
    } catch (error) {
      toast(error.message, "error");
    }
  } }, "Turn off and delete my memory");
  const state = data.blocked_by_web_search
    ? alertBox(WEB_SEARCH_REASON, "info")
    : data.enabled ? null : alertBox(data.reason || "Context memory is off for your account.", "info");
  replace(main,
    h("div", { class: "card-head" }, h("h2", { id: "profile-title" }, "Your memory profile"),
      data.profile
        ? h("p", { class: "sub" }, "Updated ", timeEl(data.profile.last_updated), ` · after ${data.profile.turn_count} ${data.profile.turn_count === 1 ? "turn" : "turns"}`)
        : h("p", { class: "sub" }, data.enabled ? "Context memory is on" : "Context memory is off")),
    state,
    data.profile ? markdown(data.profile.markdown) : empty("Nothing is known about you yet",
      data.enabled ? "As you talk with the agent, durable facts about you (your role, preferences, projects) collect here."
        : "Context memory is off, so nothing is kept."),
    h("div", { class: "actions" }, data.enabled || data.profile ? remove : null));
  replace(log,
    h("div", { class: "card-head" }, h("h2", { id: "changes-title" }, "Change log"),
      h("p", { class: "sub" }, "Each update to your profile, newest first.")),
    data.changes.length
      ? h("ol", { class: "changes" }, data.changes.map(change))
      : empty("No changes recorded", null));
}

const OPS = { ADD: "Added", UPDATE: "Changed", DELETE: "Removed", NOOP: "No change" };

function change(record) {
  return h("li", { class: "change" },
    h("div", { class: "version-head" }, h("strong", {}, timeEl(record.at)),
      h("span", { class: "muted" }, `${record.operations.length} ${record.operations.length === 1 ? "change" : "changes"}`)),
    h("ul", { class: "ops" }, record.operations.map((op) => h("li", { class: `op ${op.op.toLowerCase()}` },
      h("span", { class: "op-name" }, OPS[op.op] || op.op),
      op.section ? h("span", { class: "muted" }, ` in ${op.section}`) : null,
      op.before ? h("div", { class: "before" }, h("del", {}, op.before)) : null,
      op.after ? h("div", { class: "after" }, h("ins", {}, op.after)) : null))),
    why(record.provenance));
}

// The profile's markdown as headings, bullets and paragraphs (text only, never HTML).
function markdown(text) {
  const out = h("div", { class: "profile-doc" });
  let list = null;
  const body = text.replace(/^---\n[\s\S]*?\n---\n?/, "");
  for (const line of body.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed) { list = null; continue; }
    const heading = /^(#{1,4})\s+(.*)$/.exec(trimmed);
    const bullet = /^[-*]\s+(.*)$/.exec(trimmed);
    if (heading) {
      list = null;
      out.append(h(heading[1].length === 1 ? "h3" : "h4", {}, heading[2]));
    } else if (bullet) {
      if (!list) out.append((list = h("ul", {})));
      list.append(h("li", { class: "bullet" }, h("span", { class: "bullet-text" }, bullet[1]), forgetLink(bullet[1])));
    } else if (trimmed === "_(empty)_") {
      list = null;
      out.append(h("p", { class: "muted" }, "Nothing yet"));
    } else {
      list = null;
      out.append(h("p", {}, trimmed));
    }
  }
  return out;
}
