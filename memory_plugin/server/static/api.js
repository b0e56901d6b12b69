// The REST client: the bearer token (kept in sessionStorage once the user signs in) and JSON calls.

const KEY = "memory-console-token";

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

export const TOKEN_LINK = /(?:^#|&)token=([^&]*)/;

// The token of a #token=... sign-in link, removed from the address bar (so it stays out of
// the history and bookmarks); it is only kept once the user confirms who it signs in as.
export function takeTokenFromUrl() {
  const match = TOKEN_LINK.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search + "#/personal");
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return "";
  }
}

export const token = () => sessionStorage.getItem(KEY);
export const setToken = (value) => sessionStorage.setItem(KEY, value);
export const clearToken = () => sessionStorage.removeItem(KEY);

function message(status, body) {
  const detail = body && body.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => `${(d.loc || []).slice(1).join(".") || "request"}: ${d.msg}`).join("; ");
  }
  return `request failed (HTTP ${status})`;
}

// `bearer`: a token to call with instead of the signed-in one (a sign-in link's, to ask who it is).
export async function api(path, { method = "GET", body, query, bearer } = {}) {
  let url = path;
  if (query) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== "") params.set(name, value);
    }
    const text = params.toString();
    if (text) url += (url.includes("?") ? "&" : "?") + text;
  }
  const headers = { Authorization: `Bearer ${bearer ?? token() ?? ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "The console cannot reach its server. Check that it is running.");
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, message(response.status, data));
  return data;
}

// A path segment, encoded: ids come from the URL or from the server, never trusted raw.
export const seg = (value) => encodeURIComponent(value);
