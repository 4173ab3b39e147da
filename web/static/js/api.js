// Thin wrappers over the JSON API. Every error carries the server's own message.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function call(method, url, body, isForm = false) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    if (isForm) init.body = body;
    else {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (err) {
    throw new ApiError(0, "The scorepad server cannot be reached. Check the Wi-Fi and try again.");
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    const message = data && data.error ? data.error : `The server answered ${response.status}.`;
    throw new ApiError(response.status, message);
  }
  return data;
}

// The photo types the reader decodes. Listed rather than "image/*" so that a Mac's Safari
// converts an HEIC photo to JPEG as it uploads (an iPhone converts whatever we ask).
export const PHOTO_TYPES = "image/jpeg,image/png,image/webp";

export const api = {
  info: () => call("GET", "/api/info"),
  games: () => call("GET", "/api/games"),
  game: (id) => call("GET", `/api/games/${encodeURIComponent(id)}`),
  createGame: (body) => call("POST", "/api/games", body),
  deleteGame: (id) => call("DELETE", `/api/games/${encodeURIComponent(id)}`),
  evaluate: (phase, dice, rules, doubts = []) => call("POST", "/api/evaluate", { phase, dice, rules, doubts }),
  advise: (phase, dice, rollsLeft, rules) => call("POST", "/api/advise", { phase, dice, rolls_left: rollsLeft, rules }),
  firstPlayer: (players, rolls) => call("POST", "/api/first-player", { players, rolls }),
  record: (id, body) => call("POST", `/api/games/${encodeURIComponent(id)}/attempts`, body),
  keepTurn: (id, body) => call("PUT", `/api/games/${encodeURIComponent(id)}/turn`, body),
  undo: (id, seq) => call("DELETE", `/api/games/${encodeURIComponent(id)}/attempts/${seq}`),
  uploadPhoto: (id, file) => call("POST", `/api/games/${encodeURIComponent(id)}/photos`, form(file), true),
  readOnly: (file) => call("POST", "/api/read", form(file), true),
};

function form(file) {
  const data = new FormData();
  data.append("photo", file, file.name || "photo.jpg");
  return data;
}
