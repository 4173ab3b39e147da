// Dice sets and what each learnt from the confirmed photos: the set picker of a new game,
// the "Dice sets" settings (name, reset, add) and the turn screen's "learnt from N dice" line.

import { call } from "./api.js";
import { esc, toast } from "./dom.js";

export const setsApi = {
  list: () => call("GET", "/api/dice-sets"),
  create: (name) => call("POST", "/api/dice-sets", { name }),
  rename: (id, name) => call("PATCH", `/api/dice-sets/${id}`, { name }),
  reset: (id) => call("DELETE", `/api/dice-sets/${id}/learnt`),
  ofGame: (gameId) => call("GET", `/api/games/${encodeURIComponent(gameId)}/dice-set`),
};

export function learntText(set) {
  const damaged = damagedText(set);
  if (!set.dice) return `${set.name}: nothing learnt yet; each confirmed photo teaches the reader this set.${damaged ? ` ${damaged}` : ""}`;
  const dice = `${set.dice} ${set.dice === 1 ? "die" : "dice"}`;
  const use = set.in_use ? "" : " (not used yet: it does not read better so far)";
  return `Learnt from ${dice} of this set (${set.name})${use}.${damaged ? ` ${damaged}` : ""}`;
}

// What the server found damaged in the set's stored learning (it is not counted, nor used).
function damagedText(set) {
  if (!set.damaged) return "";
  const photos = `${set.damaged} ${set.damaged === 1 ? "photo" : "photos"}`;
  return `What ${photos} taught is damaged and not used: Reset clears it.`;
}

// A "Dice set" choice in the new-game form, before `before`; returns () => the chosen set id.
export function mountSetPicker(form, before) {
  const box = document.createElement("fieldset");
  box.className = "dice-set";
  box.innerHTML = `<legend>Dice set</legend>
    <select id="dice-set" aria-label="Dice set"><option value="">Loading…</option></select>`;
  form.insertBefore(box, before);
  const select = box.querySelector("select");
  setsApi.list().then(({ sets }) => {
    select.innerHTML = sets.map((s) => `<option value="${s.id}">${esc(s.name)}${s.dice ? ` · learnt from ${s.dice} dice` : ""}</option>`).join("");
    box.hidden = sets.length < 2; // one set: nothing to choose
  }).catch(() => { box.hidden = true; });
  return () => (select.value ? Number(select.value) : null);
}

// The "Dice sets" card: each set's name and what it learnt, rename, reset, add a set.
// `info` is /api/info: the longest name is the store's.
export function mountDiceSets(container, info) {
  const card = document.createElement("section");
  card.className = "card dice-sets";
  card.innerHTML = `<h2>Dice sets</h2>
    <p class="hint">The reader learns each set's dice from the photos you confirm. A table with several sets can name them; a new game picks its set.</p>
    <ul class="sets" id="sets"><li class="muted">Loading…</li></ul>
    <form id="new-set" class="new-set" autocomplete="off">
      <input type="text" maxlength="${info.max_set_name_length}" id="new-set-name" placeholder="New set's name" aria-label="New set's name">
      <button type="submit" class="btn">+ Add set</button>
    </form>`;
  container.appendChild(card);
  const list = card.querySelector("#sets");

  async function draw() {
    let sets;
    try {
      ({ sets } = await setsApi.list());
    } catch (err) {
      list.innerHTML = `<li class="error">${esc(err.message)}</li>`;
      return;
    }
    list.innerHTML = sets.map((s) => `<li class="set-row" data-id="${s.id}">
        <input type="text" maxlength="${info.max_set_name_length}" value="${esc(s.name)}" aria-label="Name of the set ${esc(s.name)}" data-rename="${s.id}">
        <span class="learnt">${s.dice ? `learnt from ${s.dice} ${s.dice === 1 ? "die" : "dice"}` : "nothing learnt yet"}${s.damaged ? ` <span class="damaged">· ${esc(damagedText(s))}</span>` : ""}</span>
        <button type="button" class="btn" data-reset="${s.id}" ${s.dice || s.damaged ? "" : "disabled"} aria-label="Reset what ${esc(s.name)} learnt">Reset</button>
      </li>`).join("");
  }

  list.addEventListener("change", async (event) => {
    const id = event.target.dataset.rename;
    if (!id) return;
    try {
      await setsApi.rename(id, event.target.value);
      toast("Set renamed.");
    } catch (err) {
      toast(err.message, "error");
    }
    await draw();
  });
  list.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-reset]");
    if (!button) return;
    if (!confirm("Forget everything this set learnt from your photos? The reader then reads it as it came.")) return;
    try {
      const { forgotten } = await setsApi.reset(button.dataset.reset);
      toast(`Forgot ${forgotten} ${forgotten === 1 ? "die" : "dice"}.`);
    } catch (err) {
      toast(err.message, "error");
    }
    await draw();
  });
  card.querySelector("#new-set").addEventListener("submit", async (event) => {
    event.preventDefault();
    const input = card.querySelector("#new-set-name");
    try {
      await setsApi.create(input.value);
      input.value = "";
      toast("Set added.");
    } catch (err) {
      toast(err.message, "error");
    }
    await draw();
  });
  draw();
  return draw;
}

// Per ink, then per value: what the set learnt of it and whether that changes readings.
export function learntItemsHtml(set) {
  const items = set.learnt || [];
  if (!items.length) return "";
  const row = (item) => `<li data-kind="${esc(item.kind)}" data-name="${esc(item.name)}">${esc(item.kind === "ink" ? `${item.name} ink` : `value ${item.name}`)}:
    learnt from ${item.dice} ${item.dice === 1 ? "die" : "dice"} (${item.checked} checked)${item.in_use ? ", changes readings" : ", not used yet"}</li>`;
  return `<summary>Per ink and value</summary><ul>${items.map(row).join("")}</ul>`;
}

// The turn screen's line: what the game's set learnt, per ink and per value under it. Returns a
// refresh function.
export function mountLearnt(container, gameId) {
  const line = document.createElement("p");
  line.className = "learnt-line muted";
  line.id = "learnt";
  line.setAttribute("role", "status");
  container.appendChild(line);
  const detail = document.createElement("details");
  detail.className = "learnt-detail muted";
  detail.id = "learnt-detail";
  detail.hidden = true;
  container.appendChild(detail);
  // `set`: what the set learnt, as a confirm's reply gives it (else it is asked for).
  let serial = 0;
  const refresh = async (set = null) => {
    const mine = ++serial;
    try {
      const learnt = set || (await setsApi.ofGame(gameId));
      if (mine !== serial) return;
      line.textContent = learntText(learnt);
      const open = detail.open;
      detail.innerHTML = learntItemsHtml(learnt);
      detail.open = open;
      detail.hidden = !detail.innerHTML;
    } catch (err) {
      if (mine === serial) { line.textContent = ""; detail.hidden = true; }
    }
  };
  refresh();
  return refresh;
}
