// The start screen: new game (players, mode, house rules, who starts) and the saved games.

import { api, PHOTO_TYPES } from "./api.js";
import { esc, toast } from "./dom.js";
import { mountDiceSets, mountSetPicker } from "./profile.js";

// `info` is /api/info: the values a high die shows come from the dice set and the longest
// name from the game, not from here.
export async function renderHome(root, info) {
  const high = info.high_values;
  root.innerHTML = `<div class="home">
    <section class="card new-game">
      <div class="new-game-head"><h1>New game</h1>
        <button type="button" class="btn to-games" id="to-games" hidden>Games ↓</button></div>
      <form id="new-game" autocomplete="off">
        <fieldset class="mode fieldset-row">
          <legend>Mode</legend>
          <label class="radio"><input type="radio" name="mode" value="standard" checked> Standard</label>
          <label class="radio"><input type="radio" name="mode" value="solitaire"> Solitaire (1 player)</label>
        </fieldset>
        <fieldset>
          <legend>Players, in seating order</legend>
          <ol class="players" id="players"></ol>
          <button type="button" class="btn" id="add-player">+ Add player</button>
        </fieldset>
        <label class="check"><input type="checkbox" name="natural"> House rule: every group needs a natural number (no all-wild group)</label>
        <fieldset class="starter" id="starter">
          <legend>Who starts?</legend>
          <label class="radio"><input type="radio" name="start" value="order" checked> The first in the list</label>
          <label class="radio"><input type="radio" name="start" value="roll"> Each rolls one high die: highest starts</label>
          <div class="roll" id="roll" hidden>
            <p class="hint">Enter each player's high die (${high[0]}–${high[high.length - 1]}), or take one photo of all the dice, laid out left to right in seating order.</p>
            <div id="rolls"></div>
            <label class="btn"><input type="file" accept="${PHOTO_TYPES}" capture="environment" id="roll-photo" hidden> Photo of the dice</label>
            <p class="roll-result" id="roll-result" role="status"></p>
          </div>
        </fieldset>
        <p class="error" id="new-error" role="alert"></p>
        <button type="submit" class="btn primary big" id="start-game">Start game</button>
      </form>
    </section>
    <section class="card saved">
      <h2>Games</h2>
      <ul class="games" id="games"><li class="muted">Loading…</li></ul>
    </section></div>`;

  const form = root.querySelector("#new-game");
  root.querySelector("#to-games").addEventListener("click", () => root.querySelector(".saved").scrollIntoView({ behavior: "smooth" }));
  const chosenSet = mountSetPicker(form, root.querySelector("#new-error")); // profile.js
  mountDiceSets(root.querySelector(".home"), info);
  const list = root.querySelector("#players");
  const names = ["", ""];
  let order = null; // decided by rolls

  const modeValue = () => form.querySelector('input[name="mode"]:checked').value;
  const startValue = () => form.querySelector('input[name="start"]:checked').value;
  const currentNames = () => [...list.querySelectorAll("input")].map((i) => i.value.trim());

  function drawPlayers() {
    list.innerHTML = names.map((name, i) => `
      <li>
        <input type="text" maxlength="${info.max_name_length}" value="${esc(name)}" aria-label="Player ${i + 1} name" placeholder="Player ${i + 1}" data-i="${i}">
        <button type="button" class="icon" data-move="-1" data-i="${i}" aria-label="Move player ${i + 1} up" ${i === 0 ? "disabled" : ""}>↑</button>
        <button type="button" class="icon" data-remove data-i="${i}" aria-label="Remove player ${i + 1}" ${names.length === 1 ? "disabled" : ""}>✕</button>
      </li>`).join("");
    root.querySelector("#add-player").hidden = modeValue() === "solitaire";
    drawRolls();
  }

  function drawRolls() {
    const roll = root.querySelector("#roll");
    roll.hidden = startValue() !== "roll" || modeValue() === "solitaire";
    root.querySelector("#starter").hidden = modeValue() === "solitaire";
    const old = new Map([...root.querySelectorAll("#rolls select")].map((s) => [s.dataset.name, s.value]));
    root.querySelector("#rolls").innerHTML = currentNames().map((name, i) => {
      const label = name || `Player ${i + 1}`;
      const was = old.get(label) || "";
      return `<label class="roll-row">${esc(label)}
        <select data-name="${esc(label)}" aria-label="${esc(label)}'s high die">
          <option value="">–</option>${high.map((v) => `<option ${String(v) === was ? "selected" : ""}>${v}</option>`).join("")}
        </select></label>`;
    }).join("");
    order = null;
    root.querySelector("#roll-result").textContent = "";
  }

  async function decide(note = "") {
    const players = currentNames().map((n, i) => n || `Player ${i + 1}`);
    const selects = [...root.querySelectorAll("#rolls select")];
    if (selects.some((s) => !s.value)) return;
    try {
      const result = await api.firstPlayer(players, selects.map((s) => Number(s.value)));
      const out = root.querySelector("#roll-result");
      if (!out) return;  // the start screen was left while the server answered
      if (result.order) {
        order = result.order;
        out.textContent = `${note}${order[0]} starts. Order: ${order.join(" → ")}`;
      } else {
        order = null;
        out.textContent = `${note}Tie between ${result.tied.join(" and ")}: they roll again.`;
        selects.filter((s) => result.tied.includes(s.dataset.name)).forEach((s) => { s.value = ""; });
      }
    } catch (err) {
      const out = root.querySelector("#roll-result");
      if (out) out.textContent = err.message;
    }
  }

  list.addEventListener("input", (event) => {
    names[Number(event.target.dataset.i)] = event.target.value;
    drawRolls();
  });
  list.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    const i = Number(button.dataset.i);
    names.splice(0, names.length, ...currentNames());
    if (button.dataset.move) {
      const j = i + Number(button.dataset.move);
      [names[i], names[j]] = [names[j], names[i]];
    } else if ("remove" in button.dataset) names.splice(i, 1);
    drawPlayers();
  });
  root.querySelector("#add-player").addEventListener("click", () => {
    names.splice(0, names.length, ...currentNames(), "");
    drawPlayers();
    list.querySelector("li:last-child input").focus();
  });
  form.addEventListener("change", (event) => {
    if (event.target.name === "mode") {
      if (modeValue() === "solitaire") names.splice(1);
      drawPlayers();
    } else if (event.target.name === "start") drawRolls();
    else if (event.target.matches("#rolls select")) decide();
  });
  root.querySelector("#roll-photo").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    event.target.value = "";
    if (!file) return;
    const out = root.querySelector("#roll-result");
    out.textContent = "Reading the dice…";
    try {
      const { reading } = await api.readOnly(file);
      // Left to right, as the players laid their dice out; only high dice count.
      const highs = reading.dice.filter((d) => high.includes(d.value))
        .sort((a, b) => (a.box[0] + a.box[2]) - (b.box[0] + b.box[2]));
      const selects = [...root.querySelectorAll("#rolls select")];
      highs.slice(0, selects.length).forEach((d, i) => { selects[i].value = String(d.value); });
      const note = `Read ${highs.length} high ${highs.length === 1 ? "die" : "dice"} from the photo (check them above). `;
      out.textContent = note;
      decide(note);
    } catch (err) {
      out.textContent = err.message;
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const error = root.querySelector("#new-error");
    error.textContent = "";
    // A blank name is the placeholder the field shows.
    const typed = currentNames();
    const named = typed.filter((n) => n);
    let players = typed.map((n, i) => n || `Player ${i + 1}`);
    let mode = modeValue();
    if (mode === "standard" && named.length === 1
      && confirm(`Only ${named[0]} has a name. Play solitaire (one player) with ${named[0]}?`)) {
      mode = "solitaire";
      players = named;
    }
    if (mode === "standard" && startValue() === "roll") {
      if (!order) { error.textContent = "Enter every player's high die first (or choose “The first in the list”)."; return; }
      players = order;
    }
    try {
      const game = await api.createGame({
        players,
        mode,
        rules: { natural_in_every_group: form.querySelector('input[name="natural"]').checked },
        dice_set: chosenSet(),
      });
      location.hash = `#/game/${game.id}`;
    } catch (err) {
      error.textContent = err.message;
    }
  });

  drawPlayers();
  await drawGames(root);
}

async function drawGames(root) {
  const box = root.querySelector("#games");
  let games;
  try {
    ({ games } = await api.games());
  } catch (err) {
    box.innerHTML = `<li class="error">${esc(err.message)}</li>`;
    return;
  }
  // the player may have left the start screen while its list loaded: nothing left to draw
  const home = root.querySelector(".home");
  if (!home || !box.isConnected) return;
  home.classList.toggle("has-games", games.length > 0);
  const toGames = root.querySelector("#to-games");
  toGames.hidden = games.length === 0;
  toGames.textContent = `Games (${games.length}) ↓`;
  if (!games.length) {
    box.innerHTML = `<li class="muted">No games yet.</li>`;
    return;
  }
  box.innerHTML = games.map((g) => {
    const when = new Date(g.updated_at * 1000).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
    const status = g.over ? `Over · won by ${g.winners.map(esc).join(" & ")}` : `${esc(g.next)} to play · ${g.attempts} attempts`;
    const totals = g.players.map((p) => `${esc(p)} ${g.totals[p]}`).join(" · ");
    return `<li class="game-row">
      <a class="game-link" href="#/game/${esc(g.id)}">
        <strong>${g.players.map(esc).join(", ")}</strong>
        <span>${g.mode === "solitaire" ? "Solitaire · " : ""}${status}</span>
        <span class="muted">${totals} · ${esc(when)}</span>
      </a>
      <button type="button" class="icon danger" data-delete="${esc(g.id)}" aria-label="Delete the game of ${g.players.map(esc).join(", ")}">🗑</button>
    </li>`;
  }).join("");
  box.onclick = async (event) => {
    const button = event.target.closest("[data-delete]");
    if (!button) return;
    if (!confirm("Delete this game and its scorepad? This cannot be undone.")) return;
    try {
      await api.deleteGame(button.dataset.delete);
      toast("Game deleted.");
      await drawGames(root);
    } catch (err) {
      toast(err.message, "error");
    }
  };
}
