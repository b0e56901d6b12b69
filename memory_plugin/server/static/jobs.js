// The Jobs tab: the last consolidation runs with their results, "Run now" per scope, and the
// caller's conversations with "Summarize now" for each.

import { api, seg } from "./api.js";
import { alertBox, busy, empty, failure, h, replace, skeleton, timeEl, toast } from "./ui.js";

export function renderJobs(root, me) {
  const runs = h("section", { class: "card wide", "aria-labelledby": "runs-title" }, skeleton(8, "tall"));
  const status = h("div", { class: "status-line", "aria-live": "polite" });
  const list = h("div", {}, skeleton(6));
  const load = async () => {
    try {
      const data = await api("/api/jobs/consolidation", { query: { limit: 20 } });
      replace(list, data.runs.length
        ? h("ol", { class: "runs" }, data.runs.map(run))
        : empty("No consolidation runs yet", "Nightly consolidation runs appear here; use Run now to fold a scope's older notes today."));
    } catch (error) {
      replace(list, failure(error));
    }
  };
  replace(runs,
    h("div", { class: "card-head" }, h("h2", { id: "runs-title" }, "Nightly consolidation"),
      h("p", { class: "sub" }, "Folds notes older than a week into the curated document, scope by scope.")),
    h("div", { class: "run-now" }, h("span", { class: "muted" }, "Run now for:"),
      me.scopes.map((scope) => h("button", { class: "button", type: "button",
        onclick: async (event) => busy(event.currentTarget, "Running…", async () => {
          try {
            const result = await api(`${scope.path.split("?")[0]}/consolidate${scope.path.includes("?") ? `?${scope.path.split("?")[1]}` : ""}`, { method: "POST" });
            replace(status, alertBox(`${scopeName(scope)}: ${result.status}. ${result.summary || ""}`, result.status === "failed" ? "error" : "info"));
            await load();
          } catch (error) {
            replace(status, failure(error));
          }
        }) }, scopeName(scope)))),
    status, list);
  replace(root,
    h("header", { class: "page-head" }, h("div", {}, h("h1", {}, "Jobs"),
      h("p", { class: "sub" }, "Background work on your memory: what ran, what it changed, and how to run it now."))),
    runs, threadsCard());
  load();
}

function scopeName(scope) {
  return scope.kind === "team" ? `${scope.label} (${scope.workspace})`
    : scope.workspace ? `${scope.label} in ${scope.workspace}` : scope.label;
}

const STATUS = { succeeded: "ok", partial: "warn", failed: "error", running: "info" };

function run(record) {
  return h("li", { class: "run", "data-run": record.id },
    h("div", { class: "version-head" },
      h("strong", {}, timeEl(record.started_at)),
      h("span", { class: `badge ${STATUS[record.status] || ""}` }, record.status),
      h("span", { class: "badge" }, record.trigger === "manual" ? `run now${record.by ? ` by ${record.by}` : ""}` : "nightly"),
      h("span", { class: "muted" }, `${record.folded} ${record.folded === 1 ? "note" : "notes"} folded`)),
    record.summary ? h("p", {}, record.summary) : null,
    record.scopes.length
      ? h("details", { class: "why" }, h("summary", {}, `${record.scopes.length} ${record.scopes.length === 1 ? "scope" : "scopes"}`),
          h("table", { class: "mini" },
            h("thead", {}, h("tr", {}, ["Scope", "Status", "Folded", "Error"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, record.scopes.map((s) => h("tr", {},
              h("td", {}, s.kind === "team" ? `team ${s.workspace_id}` : `personal${s.workspace_id ? ` in ${s.workspace_id}` : ""}`),
              h("td", {}, s.status), h("td", {}, String(s.folded)), h("td", {}, s.error || "—"))))))
      : null);
}

// The caller's conversations, newest first, each with "Summarize now" (disabled, with the
// reason, while the platform has it off).
function threadsCard() {
  const status = h("div", { class: "status-line", "aria-live": "polite" });
  const notice = h("div", {});
  const list = h("ol", { class: "threads", "aria-label": "Your conversations" });
  const more = h("button", { class: "button", type: "button", hidden: true }, "Load older");
  let older = null;
  const summarize = (thread) => async (event) => busy(event.currentTarget, "Summarizing…", async () => {
    try {
      const answer = await api(`/api/threads/${seg(thread.thread_id)}/summarize`, { method: "POST" });
      replace(status, alertBox(`${thread.thread_id}: ${answer.message}`, answer.status === "failed" ? "error" : "info"));
      toast(answer.message);
    } catch (error) {
      replace(status, failure(error));
    }
  });
  const load = async () => {
    const page = await api("/api/threads", { query: { before: older, limit: 20 } });
    const off = page.summarize.enabled ? null : page.summarize.disabled_reason;
    replace(notice, off ? alertBox(off, "info") : null);
    if (!older && !page.threads.length) {
      list.replaceWith(empty("No conversations of yours yet",
        "Conversations you have with the agent (the chatbot's threads, or runs that record you as their owner) appear here."));
    }
    list.append(...page.threads.map((thread) => h("li", { class: "thread", "data-thread": thread.thread_id },
      h("div", { class: "version-head" },
        h("code", {}, thread.thread_id),
        h("span", { class: "muted" }, "updated ", timeEl(thread.updated_at)),
        h("button", { class: "button small", type: "button", disabled: Boolean(off),
          "aria-label": `Summarize now: ${thread.thread_id}`, onclick: summarize(thread) }, "Summarize now")),
      thread.last_message ? h("p", { class: "muted thread-last" }, `You: ${thread.last_message}`) : null)));
    older = page.older;
    more.hidden = !older;
  };
  more.addEventListener("click", () => busy(more, "Loading…", () => load().catch((error) => replace(status, failure(error)))));
  load().catch((error) => list.replaceWith(failure(error)));
  return h("section", { class: "card wide", "aria-labelledby": "threads-title" },
    h("div", { class: "card-head" }, h("h2", { id: "threads-title" }, "Your conversations"),
      h("p", { class: "sub" }, "Summarize now compacts a conversation at once instead of waiting for the trigger. No message is sent.")),
    notice, list, h("div", { class: "notes-footer" }, more), status);
}
