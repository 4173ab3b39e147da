// The page's router: #/ is the start screen, #/game/ID a game's turn screen and scorepad.

import { api } from "./api.js";
import { esc } from "./dom.js";
import { renderHome } from "./home.js";
import { renderGame } from "./turn.js";

const root = document.getElementById("app");
let info = null;
let cleanup = null;

async function route() {
  if (cleanup) cleanup();
  cleanup = null;
  try {
    info = info || (await api.info());
  } catch (err) {
    root.innerHTML = `<section class="card"><p class="error">${esc(err.message)}</p></section>`;
    return;
  }
  const match = /^#\/game\/([\w-]+)$/.exec(location.hash);
  if (match) cleanup = renderGame(root, match[1], info);
  else await renderHome(root, info);
  window.scrollTo(0, 0);
}

window.addEventListener("hashchange", route);
route();
